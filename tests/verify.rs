//! `hydrate verify`: each environment branch against the render of the
//! source commit it names; exit 0 identical, 1 naming each file that
//! differs with the commit that last changed it, 2 when a branch cannot be
//! verified.

use std::fs;
use std::path::Path;

use crate::promote_trust::{demo_repo, run, text};
use crate::support::git;

/// The demo, rendered to its environment branches.
fn rendered_demo() -> tempfile::TempDir {
    let repo = demo_repo();
    let o = run(repo.path(), &["render", "--to", "branch"]);
    assert!(o.status.success(), "{}", text(&o));
    repo
}

/// Commits on `branch` (through a worktree removed afterwards) what `edit`
/// changes, with `message`; returns the commit.
fn commit_on(dir: &Path, branch: &str, message: &str, edit: impl FnOnce(&Path)) -> String {
    let wt = tempfile::tempdir().unwrap();
    let w = wt.path().join("w");
    let w_str = w.to_str().unwrap();
    git(dir, &["worktree", "add", "-q", w_str, branch]);
    edit(&w);
    git(&w, &["add", "-A"]);
    git(&w, &["commit", "-q", "-m", message]);
    let sha = git(&w, &["rev-parse", "HEAD"]);
    git(dir, &["worktree", "remove", "--force", w_str]);
    sha
}

fn scale_web(w: &Path, to: &str) {
    let p = w.join("web/manifest.yaml");
    let text = fs::read_to_string(&p).unwrap();
    let (before, after) = text.split_once("replicas: ").unwrap();
    let rest = after.split_once('\n').unwrap().1;
    fs::write(&p, format!("{before}replicas: {to}\n{rest}")).unwrap();
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_demos_branches_are_identical_to_their_render() {
    let repo = rendered_demo();
    let o = run(repo.path(), &["verify", "--to", "branch"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    for env in ["dev", "staging", "production"] {
        assert!(
            out.contains(&format!("env/{env} ({env}): identical to the render of ")),
            "{out}"
        );
    }
}

#[test]
fn a_hand_edit_is_named_with_its_commit() {
    let repo = rendered_demo();
    let dir = repo.path();
    let hand = commit_on(dir, "env/production", "Scale web by hand", |w| {
        scale_web(w, "9");
        fs::write(w.join("hotfix.yaml"), "kind: ConfigMap\n").unwrap();
    });
    let o = run(dir, &["verify", "--to", "branch", "production"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = stdout(&o);
    let short = &hand[..12];
    for (change, file) in [
        ("changed", "web/manifest.yaml"),
        ("unexpected", "hotfix.yaml"),
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file} not named:\n{out}"));
        assert!(line.trim_start().starts_with(change), "{line}");
        assert!(
            line.contains(&format!(
                "last changed by {short} \"Scale web by hand\" (Dev <dev@example.com>): \
                 a hand edit (no Hydrate-Version trailer)"
            )),
            "{line}"
        );
    }
    assert_eq!(out.lines().count(), 3, "only the two files: {out}");
    let o = run(
        dir,
        &["verify", "--to", "branch", "--output", "json", "production"],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let env = &v["environments"][0];
    assert_eq!(env["status"], "differs");
    assert_eq!(env["tip"], hand.as_str());
    assert_eq!(env["files"][1]["path"], "web/manifest.yaml");
    assert_eq!(env["files"][1]["commit"]["sha"], hand.as_str());
    assert_eq!(
        env["files"][1]["commit"]["hydrateVersion"],
        serde_json::Value::Null
    );
    // The other branches are untouched.
    let o = run(dir, &["verify", "--to", "branch", "dev", "staging"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_commit_by_another_hydrate_version_is_named_with_that_version() {
    let repo = rendered_demo();
    let dir = repo.path();
    let source = git(dir, &["rev-parse", "HEAD"]);
    let message = format!(
        "staging: render {}\n\nHydrate-Source: {source}\nHydrate-Environment: staging\nHydrate-Version: 0.0.9",
        &source[..12]
    );
    let old = commit_on(dir, "env/staging", &message, |w| scale_web(w, "7"));
    let o = run(dir, &["verify", "--to", "branch", "staging"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("(Hydrate-Source of {})", &old[..12])),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("web/manifest.yaml"))
        .unwrap();
    assert!(
        line.contains(&format!(
            "last changed by {} \"staging: render {}\" (Dev <dev@example.com>): \
             hydrate 0.0.9, which renders differently from {}",
            &old[..12],
            &source[..12],
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
}

#[test]
fn a_branch_that_cannot_be_verified_is_an_error_naming_why() {
    let repo = demo_repo();
    let dir = repo.path();
    // No branch yet.
    let o = run(dir, &["verify", "--to", "branch", "dev"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("branch env/dev does not exist here: render with `--to branch` first"),
        "{}",
        text(&o)
    );
    // A branch hydrate never wrote.
    git(dir, &["branch", "env/dev"]);
    let o = run(dir, &["verify", "--to", "branch", "dev"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("names its source commit with a Hydrate-Source trailer"),
        "{}",
        text(&o)
    );
    // A source commit that is not here.
    let missing = "0123456789abcdef0123456789abcdef01234567";
    commit_on(
        dir,
        "env/dev",
        &format!("dev: render\n\nHydrate-Source: {missing}\nHydrate-Version: 0.1.0"),
        |w| fs::write(w.join("x.yaml"), "a: 1\n").unwrap(),
    );
    let o = run(dir, &["verify", "--to", "branch", "dev"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("source commit {missing} (Hydrate-Source of "))
            && text(&o).contains("is not in this repository; fetch it"),
        "{}",
        text(&o)
    );
    // An environment that writes a directory, named.
    let o = run(dir, &["verify", "dev"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("environment `dev` writes the directory rendered/dev"),
        "{}",
        text(&o)
    );
    // None writes a branch.
    let o = run(dir, &["verify"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("no environment writes a branch"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_newer_remote_tracking_branch_is_verified_and_a_shallow_clone_is_told_to_fetch() {
    let origin = rendered_demo();
    let o_dir = origin.path();
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", o_dir.display());
    // A full clone with a local env/dev left behind its remote copy.
    let full = clones.path().join("full");
    git(
        clones.path(),
        &["clone", "-q", &url, full.to_str().unwrap()],
    );
    git(&full, &["branch", "env/dev", "origin/env/dev"]);
    let hand = commit_on(o_dir, "env/dev", "Hand edit on the remote", |w| {
        scale_web(w, "5")
    });
    git(&full, &["fetch", "-q", "origin"]);
    let o = run(&full, &["verify", "--to", "branch", "dev"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).contains(&format!("last changed by {}", &hand[..12])),
        "{}",
        text(&o)
    );
    // A shallow clone has the branches, not their source commit's past.
    git(o_dir, &["commit", "-q", "--allow-empty", "-m", "later"]);
    let shallow = clones.path().join("shallow");
    git(
        clones.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let o = run(&shallow, &["verify", "--to", "branch", "staging"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is not in this shallow clone; fetch more history"),
        "{}",
        text(&o)
    );
}
