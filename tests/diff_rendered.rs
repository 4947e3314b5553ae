//! `hydrate diff --rendered` reads environment branches (a branch output's
//! tip, or with `--rendered-from origin/` the remote-tracking branches a
//! `git fetch` brings), and no error names a temporary directory.

use std::fs;
use std::path::Path;

use crate::support::{demo_copy, git, hydrate};

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// The demo as a repository on `main`; with `branches`, every environment
/// writes its branch `env/<name>` instead of `rendered/<name>`.
fn demo_repo(branches: bool) -> tempfile::TempDir {
    let dir = demo_copy();
    if branches {
        for env in ["dev", "staging", "production"] {
            let file = dir.path().join(format!("environments/{env}.yaml"));
            let text = fs::read_to_string(&file).unwrap();
            let from = format!("  dir: rendered/{env}\n");
            assert!(text.contains(&from), "{env}.yaml");
            fs::write(
                &file,
                text.replace(&from, &format!("  branch: env/{env}\n")),
            )
            .unwrap();
        }
    }
    git(dir.path(), &["init", "-q", "-b", "main"]);
    commit_all(dir.path(), "Add the demo");
    dir
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hydrate()
        .current_dir(dir)
        .args(args)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rendered_reads_the_environment_branches() {
    let repo = demo_repo(true);
    let dir = repo.path();
    // Before any render: the error names the refs and the command.
    let (code, _, stderr) = run(dir, &["diff", "--rendered", "staging", "production"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("branch env/staging does not exist")
            && stderr.contains("refs/heads/env/staging")
            && stderr.contains("`hydrate render --env staging` creates it"),
        "{stderr}"
    );
    let (code, _, stderr) = run(dir, &["render", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, rendered, stderr) = run(dir, &["diff", "--rendered", "staging", "production"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(rendered.contains("staging → production"), "{rendered}");
    // The branches hold what the sources render to: the same diff.
    let (_, live, _) = run(dir, &["diff", "staging", "production"]);
    assert_eq!(rendered, live);
    // Nothing on the branches differs between an environment and itself.
    let (code, same, stderr) = run(dir, &["diff", "--rendered", "staging", "staging"]);
    assert_eq!(code, 0, "{same}{stderr}");
}

#[test]
fn rendered_from_reads_another_remotes_branches() {
    let ci = demo_repo(false);
    let remote = tempfile::tempdir().unwrap();
    let bare = remote.path().join("demo.git");
    git(
        remote.path(),
        &["init", "-q", "--bare", "-b", "main", "demo.git"],
    );
    let url = bare.display().to_string();
    git(ci.path(), &["remote", "add", "origin", &url]);
    git(ci.path(), &["push", "-q", "origin", "main"]);
    // A laptop's clone, before CI wrote any branch.
    let laptop = tempfile::tempdir().unwrap();
    git(laptop.path(), &["clone", "-q", &url, "work"]);
    let work = laptop.path().join("work");
    let args = [
        "diff",
        "--rendered-from",
        "origin/",
        "staging",
        "production",
    ];
    let (code, _, stderr) = run(&work, &args);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("origin/env/staging does not exist")
            && stderr.contains("refs/remotes/origin/env/staging")
            && stderr.contains("hydrate render --to branch --env staging --push")
            && stderr.contains("`git fetch origin`"),
        "{stderr}"
    );
    // CI writes and pushes the branches; the laptop fetches them (no
    // local env/* branch is made).
    let (code, _, stderr) = run(ci.path(), &["render", "-q", "--to", "branch", "--push"]);
    assert_eq!(code, 0, "{stderr}");
    git(&work, &["fetch", "-q", "origin"]);
    assert_eq!(git(&work, &["branch", "--list", "env/*"]), "");
    let (code, from_remote, stderr) = run(&work, &args);
    assert_eq!(code, 1, "{stderr}");
    let (_, live, _) = run(&work, &["diff", "staging", "production"]);
    assert_eq!(from_remote, live);
    // A full ref prefix reads the same refs.
    let full = [
        "diff",
        "--rendered-from",
        "refs/remotes/origin/",
        "staging",
        "production",
    ];
    assert_eq!(run(&work, &full).1, live);
    // A prefix that is no remote says so.
    let (code, _, stderr) = run(
        &work,
        &[
            "diff",
            "--rendered-from",
            "upstream/",
            "staging",
            "production",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("upstream/env/staging does not exist")
            && stderr.contains("`upstream/` names no remote"),
        "{stderr}"
    );
    // `--rendered` alone reads the directories these environments
    // configure, and points at --rendered-from for CI's branches.
    let (code, _, stderr) = run(&work, &["diff", "--rendered", "staging", "production"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("rendered/staging: no committed output")
            && stderr.contains("--rendered-from origin/"),
        "{stderr}"
    );
}

#[test]
fn no_error_names_a_temporary_directory() {
    let repo = demo_repo(false);
    let dir = repo.path();
    // rendered/ is not committed: REF has no output to read.
    let (code, _, stderr) = run(dir, &["diff", "--rendered", "--since", "HEAD"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("rendered/dev (at HEAD): no committed output for `dev`"),
        "{stderr}"
    );
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_string_lossy();
    assert!(!stderr.contains(tmp.trim_end_matches('/')), "{stderr}");
    assert!(!stderr.contains("temporary"), "{stderr}");
}
