//! `hydrate render --to branch` as a CI job runs it: in fresh clones of a
//! repository whose environment branches live on a remote (a bare
//! repository reached through `file://`, cloned with the `git` CLI). Commits
//! build on the remote tips, `--push` publishes them and rebuilds a commit
//! that another clone beat, `--next` starts from the environment branch,
//! and shallow clones say that they are shallow.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{demo_copy, GitHome};

const AUTHOR: &str = "CI Bot <ci@example.com>";
const TIME: &str = "1700000000";
const ENVS: [&str; 3] = ["dev", "staging", "production"];

/// A bare remote holding the demo on `main`, and clones of it.
struct World {
    dir: tempfile::TempDir,
    git: GitHome,
    bare: PathBuf,
    url: String,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let git = GitHome::new(dir.path());
        let seed = dir.path().join("seed");
        crate::support::copy_tree(demo_copy().path(), &seed);
        git.git(&seed, &["init", "-q"]);
        git.git(&seed, &["add", "-A"]);
        git.git(&seed, &["commit", "-q", "-m", "Add the demo"]);
        let bare = dir.path().join("remote.git");
        git.git(dir.path(), &["init", "-q", "--bare", "remote.git"]);
        let url = format!("file://{}", bare.display());
        git.git(&seed, &["push", "-q", &url, "main"]);
        World {
            dir,
            git,
            bare,
            url,
        }
    }

    /// `git clone [EXTRA…] URL NAME`.
    fn clone(&self, name: &str, extra: &[&str]) -> PathBuf {
        let mut args = vec!["clone", "-q"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[&self.url, name]);
        self.git.git(self.dir.path(), &args);
        self.dir.path().join(name)
    }

    /// `hydrate render --to branch ARGS… --output json` in `clone`.
    fn render(&self, clone: &Path, args: &[&str]) -> Output {
        self.render_at(clone, TIME, args)
    }

    fn render_at(&self, clone: &Path, time: &str, args: &[&str]) -> Output {
        self.render_as(clone, time, "json", args)
    }

    /// `hydrate render --to branch ARGS…` as a person reads it.
    fn render_text(&self, clone: &Path, args: &[&str]) -> Output {
        self.render_as(clone, TIME, "text", args)
    }

    fn render_as(&self, clone: &Path, time: &str, format: &str, args: &[&str]) -> Output {
        self.git
            .command(env!("CARGO_BIN_EXE_hydrate"))
            .arg("render")
            .arg("--root")
            .arg(clone)
            .args(["--to", "branch", "--output", format])
            .args(args)
            .env("HYDRATE_AUTHOR", AUTHOR)
            .env("HYDRATE_TIMESTAMP", time)
            .output()
            .unwrap()
    }

    /// Where `branch` is on the remote, if it exists there.
    fn remote_tip(&self, branch: &str) -> Option<String> {
        let r = format!("refs/heads/{branch}");
        self.git
            .git_ok(&self.bare, &["rev-parse", "--verify", "-q", &r])
            .then(|| self.git.git(&self.bare, &["rev-parse", &r]))
    }

    fn remote_tips(&self) -> Vec<Option<String>> {
        ENVS.iter()
            .map(|e| self.remote_tip(&format!("env/{e}")))
            .collect()
    }

    /// Commits a change to `file` (appending `line`) in `clone`.
    fn change(&self, clone: &Path, file: &str, find: &str, replace: &str) {
        let path = clone.join(file);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains(find), "{file} has no {find:?}");
        fs::write(&path, text.replacen(find, replace, 1)).unwrap();
        self.git
            .git(clone, &["commit", "-q", "-am", &format!("change {file}")]);
    }
}

/// The run succeeded; its JSON report.
fn ok(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// env name → the commit the report names (None: no commit).
fn commits(report: &serde_json::Value) -> Vec<(String, Option<String>)> {
    report["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["env"].as_str().unwrap().to_string(),
                e["commit"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn fresh_clone_with_nothing_changed_commits_nothing_then_builds_on_the_remote_tip() {
    let w = World::new();
    let a = w.clone("a", &[]);
    let report = ok(&w.render(&a, &["--push"]));
    let pushed_by_a = commits(&report);
    for (env, commit) in &pushed_by_a {
        let commit = commit
            .as_deref()
            .unwrap_or_else(|| panic!("{env}: no commit"));
        assert_eq!(w.remote_tip(&format!("env/{env}")).as_deref(), Some(commit));
    }
    for e in report["environments"].as_array().unwrap() {
        assert_eq!(e["pushed"], "origin");
        assert_eq!(e["push"]["status"], "pushed", "{e}");
    }

    // B: a fresh clone, env/* exist only as origin/env/*.
    let b = w.clone("b", &[]);
    assert!(!w
        .git
        .git_ok(&b, &["rev-parse", "-q", "--verify", "refs/heads/env/dev"]));
    let before = w.remote_tips();
    let report = ok(&w.render(&b, &[]));
    for (env, commit) in commits(&report) {
        assert_eq!(commit, None, "{env}: nothing changed, so no commit");
    }
    // The local branches were fast-forwarded to the remote tips.
    for (env, commit) in &pushed_by_a {
        let local = w.git.git(&b, &["rev-parse", &format!("env/{env}")]);
        assert_eq!(Some(local), commit.clone());
    }
    let report = ok(&w.render(&b, &["--push"]));
    assert!(commits(&report).iter().all(|(_, c)| c.is_none()));
    assert_eq!(w.remote_tips(), before, "a no-op pushes nothing new");
    for (env, push) in pushes(&report) {
        assert_eq!(push["status"], "unchanged", "{env}");
    }

    // A source change in B: its commit's parent is A's, and the push is a fast-forward.
    w.change(
        &b,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    let report = ok(&w.render(&b, &["--push"]));
    for ((env, commit), (_, from_a)) in commits(&report).iter().zip(&pushed_by_a) {
        let commit = commit
            .as_deref()
            .unwrap_or_else(|| panic!("{env}: no commit"));
        let parent = w.git.git(&b, &["rev-parse", &format!("{commit}^")]);
        assert_eq!(Some(parent), from_a.clone(), "{env}");
        assert_eq!(w.remote_tip(&format!("env/{env}")).as_deref(), Some(commit));
        assert_eq!(
            w.git
                .git(&w.bare, &["rev-list", "--count", &format!("env/{env}")]),
            "2"
        );
        let files = w
            .git
            .git(&b, &["diff", "--name-only", &format!("{commit}^"), commit]);
        assert_eq!(
            files, "hydrator.metadata\nredis/hydrator.metadata\nredis/manifest.yaml",
            "{env}"
        );
    }
}

#[test]
fn check_in_a_fresh_clone_of_an_up_to_date_remote_passes() {
    let w = World::new();
    let a = w.clone("a", &[]);
    ok(&w.render(&a, &["--push"]));
    let b = w.clone("b", &[]);
    let report = ok(&w.render(&b, &["--check"]));
    for e in report["environments"].as_array().unwrap() {
        assert_eq!(e["check"]["upToDate"], true, "{e}");
    }
    // And it still sees a stale branch as stale.
    w.change(
        &b,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    let out = w.render(&b, &["--check"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["environments"][0]["check"]["stale"],
        serde_json::json!([
            "hydrator.metadata",
            "redis/hydrator.metadata",
            "redis/manifest.yaml"
        ])
    );
}

#[test]
fn a_diverged_branch_stops_the_run_naming_both_commits_and_pushes_nothing() {
    let w = World::new();
    let a = w.clone("a", &[]);
    ok(&w.render(&a, &["--push"]));
    let b = w.clone("b", &[]);
    ok(&w.render(&b, &[]));
    // A moves env/production on the remote.
    w.change(
        &a,
        "testdata/apps/web/overlays/production/pdb.yaml",
        "minAvailable: 2",
        "minAvailable: 3",
    );
    ok(&w.render(&a, &["--push"]));
    // B commits its own change to every environment locally, without pushing.
    w.change(
        &b,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    ok(&w.render(&b, &["--env", "production"]));
    // dev and staging would take B's change too, but production has diverged.
    let remote_before = w.remote_tips();
    let local = |env: &str| w.git.git(&b, &["rev-parse", &format!("env/{env}")]);
    let local_before: Vec<String> = ENVS.iter().map(|e| local(e)).collect();
    let out = w.render(&b, &["--push"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let production_remote = remote_before[2].clone().unwrap();
    assert!(
        err.contains("env/production has diverged from origin/env/production"),
        "{err}"
    );
    assert!(
        err.contains(&local_before[2]),
        "names the local commit: {err}"
    );
    assert!(
        err.contains(&production_remote),
        "names the remote commit: {err}"
    );
    assert_eq!(w.remote_tips(), remote_before, "nothing pushed");
    let local_after: Vec<String> = ENVS.iter().map(|e| local(e)).collect();
    assert_eq!(local_after, local_before, "nothing written");
}

#[test]
fn push_without_a_remote_says_so_and_writes_nothing() {
    let w = World::new();
    let seed = w.dir.path().join("seed");
    let out = w.render(&seed, &["--push"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--push: env/dev has no remote to push to"),
        "{err}"
    );
    assert!(!w.git.git_ok(
        &seed,
        &["rev-parse", "-q", "--verify", "refs/heads/env/dev"]
    ));
    let out = w.render(&seed, &["--push", "--remote", "upstream"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no remote named `upstream`: this repository has no remote"),
        "{err}"
    );
}

/// Runs two renders at once, each in its own clone.
fn at_once(w: &World, a: (&Path, &str, &[&str]), b: (&Path, &str, &[&str])) -> [Output; 2] {
    std::thread::scope(|s| {
        let ta = s.spawn(|| w.render_at(a.0, a.1, a.2));
        let tb = s.spawn(|| w.render_at(b.0, b.1, b.2));
        [ta.join().unwrap(), tb.join().unwrap()]
    })
}

/// Every reported commit is on the remote branch of its environment.
fn assert_on_remote(w: &World, reports: &[serde_json::Value], round: usize) {
    for report in reports {
        for (env, commit) in commits(report) {
            let Some(commit) = commit else { continue };
            let tip = w.remote_tip(&format!("env/{env}")).unwrap();
            assert!(
                w.git
                    .git_ok(&w.bare, &["merge-base", "--is-ancestor", &commit, &tip]),
                "round {round}: reported commit {commit} is not on the remote env/{env} ({tip})"
            );
        }
    }
}

#[test]
fn two_clones_pushing_at_once_both_succeed() {
    let w = World::new();
    let a = w.clone("a", &[]);
    let b = w.clone("b", &[]);
    let seed = w.dir.path().join("seed");
    for round in 0..3 {
        // Both clones render the same source, with different commit times,
        // so the loser's commit is rebuilt on the winner's and found a no-op.
        let [ra, rb] = at_once(
            &w,
            (&a, "1700000001", &["--push"]),
            (&b, "1700000002", &["--push"]),
        );
        let (ra, rb) = (ok(&ra), ok(&rb));
        assert_on_remote(&w, &[ra.clone(), rb.clone()], round);
        for env in ENVS {
            let made = [&ra, &rb]
                .iter()
                .flat_map(|r| commits(r))
                .filter(|(e, c)| e == env && c.is_some())
                .count();
            assert_eq!(made, 1, "round {round}: {env}: exactly one clone commits");
        }
        let fresh = w.clone(&format!("check{round}"), &[]);
        ok(&w.render(&fresh, &["--check"]));
        // A new source commit on main for the next round.
        w.change(
            &seed,
            "testdata/apps/web/base/configmap.yaml",
            &format!("API_BASE_URL: /api/v{}", round + 1),
            &format!("API_BASE_URL: /api/v{}", round + 2),
        );
        w.git.git(&seed, &["push", "-q", &w.url, "main"]);
        for c in [&a, &b] {
            w.git.git(c, &["pull", "-q", "--ff-only"]);
        }
    }
}

#[test]
fn two_shards_in_two_clones_pushing_at_once_both_succeed() {
    let w = World::new();
    let a = w.clone("a", &[]);
    let b = w.clone("b", &[]);
    let seed = w.dir.path().join("seed");
    for round in 0..3 {
        let [ra, rb] = at_once(
            &w,
            (&a, TIME, &["--push", "--shard", "1/2"]),
            (&b, TIME, &["--push", "--shard", "2/2"]),
        );
        let (ra, rb) = (ok(&ra), ok(&rb));
        assert_on_remote(&w, &[ra, rb], round);
        // The remote branches hold every app's output, as a full render has it.
        let fresh = w.clone(&format!("check{round}"), &[]);
        let check = w.render(&fresh, &["--check"]);
        assert!(
            check.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&check.stdout)
        );
        for env in ENVS {
            let files = w.git.git(
                &w.bare,
                &["ls-tree", "-r", "--name-only", &format!("env/{env}")],
            );
            for app in ["web", "api", "worker", "redis"] {
                assert!(
                    files.contains(&format!("{app}/manifest.yaml")),
                    "round {round}: {env}: {files}"
                );
            }
        }
        // Change every app for the next round.
        for app in ["web", "api", "worker", "redis"] {
            let cm = seed.join(format!("testdata/apps/{app}/base/kustomization.yaml"));
            let text = fs::read_to_string(&cm).unwrap();
            let text = match text.split_once("commonAnnotations:") {
                Some((before, _)) => before.to_string(),
                None => text,
            };
            fs::write(
                &cm,
                format!("{text}commonAnnotations:\n  round: \"{round}\"\n"),
            )
            .unwrap();
        }
        w.git
            .git(&seed, &["commit", "-q", "-am", &format!("round {round}")]);
        w.git.git(&seed, &["push", "-q", &w.url, "main"]);
        for c in [&a, &b] {
            w.git.git(c, &["pull", "-q", "--ff-only"]);
        }
    }
}

#[test]
fn next_branch_starts_from_the_environment_branch() {
    let w = World::new();
    let a = w.clone("a", &[]);
    ok(&w.render(&a, &["--push"]));
    w.change(
        &a,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    ok(&w.render(&a, &["--next", "--push"]));
    for repo in [&a, &w.bare] {
        assert!(w.git.git_ok(
            repo,
            &[
                "merge-base",
                "--is-ancestor",
                "env/production",
                "env/production-next"
            ]
        ));
    }
    let diff = w.git.git(
        &a,
        &[
            "diff",
            "--name-only",
            "env/production",
            "env/production-next",
        ],
    );
    assert_eq!(
        diff,
        "hydrator.metadata\nredis/hydrator.metadata\nredis/manifest.yaml"
    );
    let diff = w.git.git(
        &a,
        &[
            "diff",
            "env/production",
            "env/production-next",
            "--",
            "redis/manifest.yaml",
        ],
    );
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(changed, ["-    maxmemory 256mb", "+    maxmemory 512mb"]);

    // A later render builds on env/production-next.
    let first_next = w.git.git(&a, &["rev-parse", "env/production-next"]);
    w.change(
        &a,
        "testdata/apps/redis/base/configmap.yaml",
        "appendonly no",
        "appendonly yes",
    );
    ok(&w.render(&a, &["--next", "--push"]));
    assert_eq!(
        w.git.git(&a, &["rev-parse", "env/production-next^"]),
        first_next
    );

    // The proposal is merged (a merge commit on env/production); the next
    // one starts from the merged tip.
    let merged = w.dir.path().join("merger");
    w.git.git(
        w.dir.path(),
        &["clone", "-q", "-b", "env/production", &w.url, "merger"],
    );
    w.git.git(
        &merged,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Promote",
            "origin/env/production-next",
        ],
    );
    w.git
        .git(&merged, &["push", "-q", "origin", "env/production"]);
    let merge = w.git.git(&merged, &["rev-parse", "HEAD"]);
    w.change(
        &a,
        "testdata/apps/redis/base/configmap.yaml",
        "protected-mode no",
        "protected-mode yes",
    );
    ok(&w.render(&a, &["--next", "--push", "--env", "production"]));
    assert_eq!(
        w.git.git(&w.bare, &["rev-parse", "env/production-next^"]),
        merge
    );
}

#[test]
fn affected_in_a_shallow_clone_asks_for_more_depth() {
    let w = World::new();
    let seed = w.dir.path().join("seed");
    w.change(
        &seed,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    w.git.git(&seed, &["push", "-q", &w.url, "main"]);
    let shallow = w.clone("shallow", &["--depth", "1"]);
    let out = w
        .git
        .command(env!("CARGO_BIN_EXE_hydrate"))
        .args(["affected", "--since", "HEAD~1", "--root"])
        .arg(&shallow)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: HEAD~1 is not in this shallow clone; fetch with more depth \
         (GIT_DEPTH: 0 / fetch-depth: 0)\n"
    );
    // With the history it works.
    w.git.git(&shallow, &["fetch", "-q", "--unshallow"]);
    let out = w
        .git
        .command(env!("CARGO_BIN_EXE_hydrate"))
        .args(["affected", "--since", "HEAD~1", "--root"])
        .arg(&shallow)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "dev/redis\nproduction/redis\nstaging/redis\n"
    );
}

#[test]
fn push_carries_the_notes_ref_and_merges_notes_another_clone_pushed() {
    let w = World::new();
    let a = w.clone("a", &[]);
    let b = w.clone("b", &[]);
    let note = |clone: &Path, text: &str| {
        w.git.git(
            clone,
            &[
                "notes",
                "--ref=hydrator.metadata",
                "add",
                "-m",
                text,
                "HEAD",
            ],
        )
    };
    note(&a, "from a");
    ok(&w.render(&a, &["--push"]));
    assert_eq!(
        w.git
            .git(&w.bare, &["rev-parse", "refs/notes/hydrator.metadata"]),
        w.git
            .git(&a, &["rev-parse", "refs/notes/hydrator.metadata"])
    );
    // B's notes were made without A's: its notes push is rejected, merged, pushed.
    note(&b, "from b");
    ok(&w.render(&b, &["--push"]));
    let notes = w.git.git(
        &w.bare,
        &["notes", "--ref=hydrator.metadata", "show", "main"],
    );
    assert_eq!(notes, "from a\nfrom b");
}

/// Installs `script` as the bare remote's `pre-receive` hook.
fn pre_receive(w: &World, script: &str) {
    let hook = w.bare.join("hooks/pre-receive");
    fs::write(&hook, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// env → its `push` report (`to`, `status`, `reason`, `remote`).
fn pushes(report: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    report["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["env"].as_str().unwrap().to_string(), e["push"].clone()))
        .collect()
}

#[test]
fn a_push_the_remote_refuses_reports_each_branch_rejected_with_its_lines() {
    let w = World::new();
    pre_receive(
        &w,
        "#!/bin/sh\necho 'env branches are protected' >&2\nexit 1\n",
    );
    let a = w.clone("a", &[]);
    let out = w.render(&a, &["--push"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (env, push) in pushes(&report) {
        assert_eq!(
            push,
            serde_json::json!({
                "to": "origin",
                "status": "rejected",
                "reason": "pre-receive hook declined",
                "remote": ["env branches are protected"],
            }),
            "{env}"
        );
    }
    assert_eq!(w.remote_tips(), [None, None, None]);
}

/// A hook that declines any push holding `env/production` (a pre-receive
/// hook judges the whole push, so git reports every ref of it declined).
const PRODUCTION_FROZEN: &str = "#!/bin/sh\n\
    while read old new ref; do\n\
      if [ \"$ref\" = refs/heads/env/production ]; then\n\
        echo 'production is frozen until Monday' >&2\n\
        echo 'ask #release to lift the freeze' >&2\n\
        exit 1\n\
      fi\n\
    done\n";

#[test]
fn a_hook_refusing_production_leaves_the_others_pushed_and_says_why() {
    let w = World::new();
    pre_receive(&w, PRODUCTION_FROZEN);
    let a = w.clone("a", &[]);
    let out = w.render_text(&a, &["--push"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("$ hydrate render --to branch --push\n{stdout}");
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    let tail = |l: &str| l.split_once(", commit ").map(|(_, t)| t[12..].to_string());
    assert!(lines[0].starts_with("dev: "), "{stdout}");
    assert_eq!(tail(lines[0]).as_deref(), Some(", pushed to origin"));
    assert!(lines[1].starts_with("production: "), "{stdout}");
    assert_eq!(
        tail(lines[1]).as_deref(),
        Some(", REJECTED by origin (pre-receive hook declined)")
    );
    assert_eq!(lines[2], "  remote: production is frozen until Monday");
    assert_eq!(lines[3], "  remote: ask #release to lift the freeze");
    assert!(lines[4].starts_with("staging: "), "{stdout}");
    assert_eq!(tail(lines[4]).as_deref(), Some(", pushed to origin"));
    let local = |b: &str| w.git.git(&a, &["rev-parse", b]);
    let tips = w.remote_tips();
    assert_eq!(tips[0], Some(local("env/dev")));
    assert_eq!(tips[1], Some(local("env/staging")));
    assert_eq!(tips[2], None, "production was not pushed");
    assert!(w.git.git_ok(
        &w.bare,
        &[
            "rev-parse",
            "--verify",
            "-q",
            "refs/notes/hydrator.metadata"
        ]
    ));

    // Again, as JSON: dev and staging are on the remote already.
    let out = w.render(&a, &["--push"]);
    let json = String::from_utf8_lossy(&out.stdout);
    println!("$ hydrate render --to branch --push --output json\n{json}");
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let unchanged = serde_json::json!({
        "to": "origin", "status": "unchanged", "reason": null, "remote": [],
    });
    assert_eq!(
        pushes(&report),
        [
            ("dev".to_string(), unchanged.clone()),
            (
                "production".to_string(),
                serde_json::json!({
                    "to": "origin",
                    "status": "rejected",
                    "reason": "pre-receive hook declined",
                    "remote": ["production is frozen until Monday", "ask #release to lift the freeze"],
                })
            ),
            ("staging".to_string(), unchanged),
        ]
    );
    let envs = report["environments"].as_array().unwrap();
    let pushed: Vec<serde_json::Value> = envs.iter().map(|e| e["pushed"].clone()).collect();
    assert_eq!(
        pushed,
        serde_json::json!(["origin", null, "origin"])
            .as_array()
            .unwrap()[..]
    );
    assert_eq!(w.remote_tips()[2], None);
}

#[test]
fn a_push_another_clone_beat_is_rebuilt_on_its_commit() {
    let w = World::new();
    let a = w.clone("a", &[]);
    ok(&w.render(&a, &["--push"]));
    let b = w.clone("b", &[]);
    // B commits an api change to env/dev, unpushed; A changes web.
    w.change(
        &b,
        "testdata/apps/api/base/kustomization.yaml",
        "resources:",
        "commonAnnotations:\n  from: b\nresources:",
    );
    let from_b = commits(&ok(&w.render(&b, &["--env", "dev", "--app", "api"])));
    let from_b = from_b[0].1.clone().unwrap();
    w.change(
        &a,
        "testdata/apps/web/base/kustomization.yaml",
        "resources:",
        "commonAnnotations:\n  from: a\nresources:",
    );
    // Just before A's push goes out, B pushes: A's push is rejected once.
    let hook = a.join(".git/hooks/pre-push");
    let once = w.dir.path().join("b-pushed");
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\nunset GIT_DIR\n[ -e '{once}' ] && exit 0\ntouch '{once}'\n\
             git -C '{b}' push -q origin env/dev >&2\n",
            once = once.display(),
            b = b.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let report = ok(&w.render(&a, &["--env", "dev", "--app", "web", "--push"]));
    assert!(once.exists(), "the hook ran");
    let commit = commits(&report)[0].1.clone().unwrap();
    assert_eq!(w.remote_tip("env/dev"), Some(commit.clone()));
    assert_eq!(w.git.git(&a, &["rev-parse", &format!("{commit}^")]), from_b);
    let changed = w.git.git(&a, &["diff", "--name-only", &from_b, &commit]);
    assert_eq!(
        changed,
        "hydrator.metadata\nweb/hydrator.metadata\nweb/manifest.yaml"
    );
    for (app, who) in [("web", "a"), ("api", "b")] {
        let manifest = w
            .git
            .git(&w.bare, &["show", &format!("env/dev:{app}/manifest.yaml")]);
        assert!(
            manifest.contains(&format!("from: {who}")),
            "{app}: {manifest}"
        );
    }
}

#[test]
fn check_in_a_shallow_clone_missing_history_asks_for_more_depth() {
    let w = World::new();
    let a = w.clone("a", &[]);
    ok(&w.render(&a, &["--push"]));
    let s = w.clone("shallow", &["--depth", "1", "--no-single-branch"]);
    ok(&w.render(&s, &["--env", "dev"]));
    // The remote moves on; a depth-1 fetch cuts the history joining the two tips.
    w.change(
        &a,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    ok(&w.render(&a, &["--push"]));
    w.git.git(&s, &["fetch", "-q", "--depth", "1", "origin"]);
    let out = w.render(&s, &["--check", "--env", "dev"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the history joining env/dev (")
            && err.contains(") and origin/env/dev (")
            && err.ends_with(
                ") is not in this shallow clone; fetch with more depth \
                 (GIT_DEPTH: 0 / fetch-depth: 0)\n"
            ),
        "{err}"
    );
    w.git.git(&s, &["fetch", "-q", "--unshallow", "origin"]);
    let out = w.render(&s, &["--check", "--env", "dev"]);
    assert_eq!(out.status.code(), Some(1), "stale, and now it can tell");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["environments"][0]["check"]["stale"],
        serde_json::json!([
            "hydrator.metadata",
            "redis/hydrator.metadata",
            "redis/manifest.yaml"
        ])
    );
}

#[test]
fn a_depth_1_clone_renders_on_the_remote_branches_and_pushes() {
    // actions/checkout's default: one commit of main, no env branches.
    let w = World::new();
    let a = w.clone("a", &[]);
    let first = commits(&ok(&w.render(&a, &["--push"])));
    let seed = w.dir.path().join("seed");
    w.change(
        &seed,
        "testdata/apps/redis/base/configmap.yaml",
        "maxmemory 256mb",
        "maxmemory 512mb",
    );
    w.git.git(&seed, &["push", "-q", &w.url, "main"]);
    let s = w.clone("shallow", &["--depth", "1"]);
    assert!(!w
        .git
        .git_ok(&s, &["rev-parse", "-q", "--verify", "origin/env/dev"]));
    let report = ok(&w.render(&s, &["--push"]));
    for ((env, commit), (_, before)) in commits(&report).iter().zip(&first) {
        let commit = commit
            .as_deref()
            .unwrap_or_else(|| panic!("{env}: no commit"));
        assert_eq!(w.remote_tip(&format!("env/{env}")).as_deref(), Some(commit));
        let parent = w.git.git(&w.bare, &["rev-parse", &format!("{commit}^")]);
        assert_eq!(Some(parent), before.clone(), "{env}");
    }
}

#[test]
fn a_refused_notes_ref_is_a_notice_on_the_branches_it_went_with() {
    let w = World::new();
    pre_receive(
        &w,
        "#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in refs/notes/*) \
         echo 'notes are not allowed here' >&2; exit 1;; esac\ndone\n",
    );
    let a = w.clone("a", &[]);
    let report = ok(&w.render(&a, &["--push"]));
    for e in report["environments"].as_array().unwrap() {
        assert_eq!(e["push"]["status"], "pushed", "{e}");
        assert_eq!(
            e["notices"],
            serde_json::json!([
                "refs/notes/hydrator.metadata was rejected by origin (pre-receive hook declined)\n  \
                 remote: notes are not allowed here"
            ]),
            "{e}"
        );
    }
    assert!(w.remote_tips().iter().all(Option::is_some));
}
