//! `hydrate render` to environment branches in a real git repository: the
//! commits it makes, what it never touches, --check, affected, failures and
//! concurrent writers.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::support::{demo_copy, git, hydrate, workspace_state};

const AUTHOR: &str = "CI Bot <ci@example.com>";
const TIME: &str = "1700000000";

fn git_ok(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The demo as a git repository with one commit on `main`.
fn demo_repo() -> tempfile::TempDir {
    let dir = demo_copy();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "Add the demo"]);
    dir
}

fn render(dir: &Path, extra: &[&str]) -> std::process::Output {
    hydrate()
        .arg("render")
        .arg("--root")
        .arg(dir)
        .args(["--to", "branch"])
        .args(extra)
        .env("HYDRATE_AUTHOR", AUTHOR)
        .env("HYDRATE_TIMESTAMP", TIME)
        .output()
        .unwrap()
}

fn tips(dir: &Path) -> Vec<String> {
    ["env/dev", "env/staging", "env/production"]
        .iter()
        .map(|b| git(dir, &["rev-parse", b]))
        .collect()
}

#[test]
fn render_to_branches_twice() {
    let repo = demo_repo();
    let dir = repo.path();
    let head = git(dir, &["rev-parse", "HEAD"]);
    let before = workspace_state(dir);

    let out = render(dir, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for env in ["dev", "staging", "production"] {
        let branch = format!("env/{env}");
        let message = git(dir, &["log", "-1", "--format=%B", &branch]);
        assert!(
            message.contains(&format!("Hydrate-Source: {head}")),
            "{message}"
        );
        assert!(
            message.contains(&format!("Hydrate-Environment: {env}")),
            "{message}"
        );
        assert!(message.contains("Hydrate-Version: "), "{message}");
        assert_eq!(
            git(dir, &["log", "-1", "--format=%an <%ae> %at", &branch]),
            format!("{AUTHOR} {TIME}")
        );
        for app in ["web", "api", "worker", "redis"] {
            let meta = git(dir, &["show", &format!("{branch}:{app}/hydrator.metadata")]);
            let v: serde_json::Value = serde_json::from_str(&meta).unwrap();
            assert_eq!(v["drySha"], head.as_str());
            let manifest = git(dir, &["show", &format!("{branch}:{app}/manifest.yaml")]);
            assert!(manifest.contains("kind: Deployment"), "{app}");
        }
        assert_eq!(git(dir, &["rev-list", "--count", &branch]), "1");
    }
    let first = tips(dir);
    // The render cache stays in the working tree, out of git and branches.
    assert!(dir.join(".hydrate/cache/.gitignore").is_file());
    for env in ["dev", "staging", "production"] {
        let files = git(
            dir,
            &["ls-tree", "-r", "--name-only", &format!("env/{env}")],
        );
        assert!(!files.contains("cache"), "{files}");
    }
    assert!(!git(dir, &["status", "--porcelain"]).contains(".hydrate"));

    let out = render(dir, &[]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches(": unchanged")
            .count(),
        3
    );
    assert_eq!(tips(dir), first, "the second run must not commit");
    assert_eq!(
        workspace_state(dir),
        before,
        "HEAD, index and working tree must not change"
    );
}

#[test]
fn check_and_affected_name_exactly_what_changed() {
    let repo = demo_repo();
    let dir = repo.path();
    assert!(render(dir, &[]).status.success());
    let out = render(dir, &["--check"]);
    assert!(out.status.success(), "fresh branches are up to date");

    let cm = dir.join("testdata/apps/redis/base/configmap.yaml");
    let text = fs::read_to_string(&cm)
        .unwrap()
        .replace("maxmemory 256mb", "maxmemory 512mb");
    fs::write(&cm, text).unwrap();
    git(dir, &["commit", "-q", "-am", "redis: more memory"]);

    let out = render(dir, &["--check"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let named: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(str::trim)
        .collect();
    assert_eq!(
        named,
        [
            "stale: hydrator.metadata",
            "stale: redis/hydrator.metadata",
            "stale: redis/manifest.yaml",
            "stale: refs/notes/hydrator.metadata",
            "stale: hydrator.metadata",
            "stale: redis/hydrator.metadata",
            "stale: redis/manifest.yaml",
            "stale: refs/notes/hydrator.metadata",
            "stale: hydrator.metadata",
            "stale: redis/hydrator.metadata",
            "stale: redis/manifest.yaml",
            "stale: refs/notes/hydrator.metadata",
        ],
        "{stdout}"
    );

    let out = hydrate()
        .args(["affected", "--since", "HEAD~1", "--root"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "dev/redis\nproduction/redis\nstaging/redis\n"
    );

    // The directory flavour of --check names the same manifests.
    let dirs = hydrate()
        .arg("render")
        .arg("--root")
        .arg(dir)
        .args(["--to", "dir", "--check"])
        .output()
        .unwrap();
    assert_eq!(
        dirs.status.code(),
        Some(1),
        "nothing rendered to directories yet"
    );
}

#[test]
fn a_failing_app_moves_no_branch_and_writes_no_directory() {
    let repo = demo_repo();
    let dir = repo.path();
    assert!(render(dir, &[]).status.success());
    let before = tips(dir);
    fs::write(
        dir.join("testdata/apps/worker/base/service.yaml"),
        "kind: Service\nmetadata:\n  name: [\n",
    )
    .unwrap();
    git(dir, &["commit", "-q", "-am", "break worker"]);
    let out = render(dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/worker:") && err.contains("service.yaml:"),
        "{err}"
    );
    assert_eq!(tips(dir), before);
    let out = hydrate()
        .arg("render")
        .arg("--root")
        .arg(dir)
        .args(["--to", "dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("rendered").exists());
}

#[test]
fn concurrent_renders_lose_no_commit() {
    let repo = demo_repo();
    let dir = repo.path();
    for round in 0..4 {
        // Two writers on the same branch, each adding different files.
        let spawn = |app: &str| {
            Command::new(env!("CARGO_BIN_EXE_hydrate"))
                .arg("render")
                .arg("--root")
                .arg(dir)
                .args(["--to", "branch", "--env", "dev", "--app", app])
                .env("HYDRATE_AUTHOR", AUTHOR)
                .env("HYDRATE_TIMESTAMP", TIME)
                .output()
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| spawn("web"));
            let b = s.spawn(|| spawn("api"));
            (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
        });
        let tip = git(dir, &["rev-parse", "env/dev"]);
        for out in [&a, &b] {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() || stderr.contains("moved while hydrate was writing"),
                "round {round}: {stderr}"
            );
            if let Some(sha) = stdout.split("commit ").nth(1).map(|s| s.trim()) {
                let full = git(dir, &["rev-parse", sha]);
                assert!(
                    git_ok(dir, &["merge-base", "--is-ancestor", &full, &tip]),
                    "round {round}: reported commit {full} is not on env/dev"
                );
            }
        }
        if round == 0 {
            let files = git(dir, &["ls-tree", "-r", "--name-only", "env/dev"]);
            assert!(
                files.contains("web/manifest.yaml") && files.contains("api/manifest.yaml"),
                "{files}"
            );
        }
        // A new source commit so the next round has something to write.
        let cm = dir.join("testdata/apps/web/base/configmap.yaml");
        let mut text = fs::read_to_string(&cm).unwrap();
        text.push_str(&format!("  ROUND_{round}: \"{round}\"\n"));
        fs::write(&cm, text).unwrap();
        let api = dir.join("testdata/apps/api/base/configmap.yaml");
        let mut text = fs::read_to_string(&api).unwrap();
        text.push_str(&format!("  ROUND_{round}: \"{round}\"\n"));
        fs::write(&api, text).unwrap();
        git(dir, &["commit", "-q", "-am", &format!("round {round}")]);
    }
}
