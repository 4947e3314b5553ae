//! `hydrate render --keep-going`: one app with a remote base (which hydrate
//! refuses offline) keeps its previous output, whole, while the others are
//! written; without the flag nothing is written.

use std::fs;
use std::path::Path;

use crate::support::{demo_copy, git, list_files, render_at, workspace_state};

const REMOTE: &str = "https://github.com/acme-shop/web-extras//base?ref=v1.2.0";

/// Breaks the demo's dev `web` (a remote base) and changes dev `worker`'s
/// image, so that a run has one app to keep and one to write.
fn break_web_change_worker(root: &Path) {
    let web = root.join("testdata/apps/web/overlays/dev/kustomization.yaml");
    let text = fs::read_to_string(&web).unwrap();
    let text = text.replacen(
        "  - ../../base\n",
        &format!("  - ../../base\n  - {REMOTE}\n"),
        1,
    );
    assert!(text.contains(REMOTE));
    fs::write(&web, text).unwrap();
    let worker = root.join("testdata/apps/worker/overlays/dev/kustomization.yaml");
    let text = fs::read_to_string(&worker).unwrap();
    assert!(text.contains("newTag: 0.10.0-beta.1"));
    fs::write(&worker, text.replace("0.10.0-beta.1", "0.10.0-beta.2")).unwrap();
}

/// Every file under `dir`, with its bytes (hydrate's bookkeeping included).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn directories_keep_the_failed_apps_previous_files_and_write_the_others() {
    let repo = demo_copy();
    let root = repo.path();
    render_at(root).arg("-q").assert().success();
    let web_before = snapshot(&root.join("rendered/dev/web"));
    let worker_before = fs::read(root.join("rendered/dev/worker/manifest.yaml")).unwrap();
    break_web_change_worker(root);

    // Without --keep-going: all or nothing, exit 2.
    let before = list_files(root)
        .into_iter()
        .map(|f| (fs::read(root.join(&f)).unwrap(), f))
        .collect::<Vec<_>>();
    let out = render_at(root).arg("-q").assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("nothing was written"), "{stderr}");
    let after = list_files(root)
        .into_iter()
        .map(|f| (fs::read(root.join(&f)).unwrap(), f))
        .collect::<Vec<_>>();
    assert!(before == after, "a failed run without --keep-going wrote");

    // With it: the others are written, web stays, exit 1, the error last.
    let out = render_at(root)
        .args(["-q", "--keep-going"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stdout.contains("dev: 4 apps,")
            && stdout.contains("1 app(s) FAILED (previous output kept)"),
        "{stdout}"
    );
    let tail = stderr
        .split_once("1 app(s) failed to render; their previous output was kept:\n")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no failure report at the end: {stderr}"));
    assert!(tail.starts_with("error: dev/web: "), "{tail}");
    assert!(
        tail.contains(REMOTE) && tail.contains("remote resource"),
        "{tail}"
    );
    assert!(
        tail.contains("web's previous output in rendered/dev is kept"),
        "{tail}"
    );
    assert_eq!(snapshot(&root.join("rendered/dev/web")), web_before);
    let worker = fs::read(root.join("rendered/dev/worker/manifest.yaml")).unwrap();
    assert_ne!(worker, worker_before);
    assert!(String::from_utf8_lossy(&worker).contains("worker:0.10.0-beta.2"));
    // The ownership manifest still lists the kept files, so a later run
    // (when web renders again) prunes and replaces them as its own.
    let owned = fs::read_to_string(root.join("rendered/dev/.hydrate/owned")).unwrap();
    assert!(owned.contains("web/manifest.yaml"), "{owned}");

    // The next run with web fixed is a normal one.
    let web = root.join("testdata/apps/web/overlays/dev/kustomization.yaml");
    let text = fs::read_to_string(&web).unwrap();
    fs::write(&web, text.replace(&format!("  - {REMOTE}\n"), "")).unwrap();
    render_at(root).arg("-q").assert().success();
    assert_eq!(snapshot(&root.join("rendered/dev/web")), web_before);
}

#[test]
fn json_lists_the_failed_apps() {
    let repo = demo_copy();
    let root = repo.path();
    break_web_change_worker(root);
    let out = render_at(root)
        .args(["-q", "--keep-going", "--output", "json"])
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let dev = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["env"] == "dev")
        .unwrap();
    assert_eq!(dev["failed"][0]["app"], "web");
    assert!(dev["failed"][0]["error"].as_str().unwrap().contains(REMOTE));
    // Never rendered before: nothing to keep, and nothing half-written.
    assert!(!root.join("rendered/dev/web").exists());
    assert!(root.join("rendered/dev/worker/manifest.yaml").is_file());
}

#[test]
fn a_branch_keeps_the_failed_apps_previous_tree_in_the_new_commit() {
    let repo = demo_copy();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Add the demo"]);
    let render = |extra: &[&str]| {
        let mut cmd = render_at(dir);
        cmd.args(["-q", "--to", "branch"])
            .args(extra)
            .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
            .env("HYDRATE_TIMESTAMP", "1700000000");
        cmd
    };
    render(&[]).assert().success();
    let web_tree = git(dir, &["rev-parse", "env/dev:web"]);
    let first = git(dir, &["rev-parse", "env/dev"]);
    break_web_change_worker(dir);
    git(dir, &["commit", "-q", "-am", "web: a remote base"]);
    let tips =
        |d: &Path| ["env/dev", "env/staging", "env/production"].map(|b| git(d, &["rev-parse", b]));
    let before = tips(dir);
    let state = workspace_state(dir);

    render(&[]).assert().code(2);
    assert_eq!(
        tips(dir),
        before,
        "a failed run without --keep-going moved a branch"
    );

    let out = render(&["--keep-going"]).assert().code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("web's previous output in branch:env/dev is kept"),
        "{stderr}"
    );
    assert_eq!(git(dir, &["rev-parse", "env/dev~1"]), first);
    assert_eq!(git(dir, &["rev-parse", "env/dev:web"]), web_tree);
    let worker = git(dir, &["show", "env/dev:worker/manifest.yaml"]);
    assert!(worker.contains("worker:0.10.0-beta.2"), "{worker}");
    let message = git(dir, &["log", "-1", "--format=%B", "env/dev"]);
    assert!(
        message.contains("Hydrate-Kept: web (render failed; previous output kept)"),
        "{message}"
    );
    // Staging and production did not change: no commit.
    assert_eq!(tips(dir)[1..], before[1..]);
    // The working tree, the index and HEAD are untouched; the repository is whole.
    assert!(workspace_state(dir) == state);
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
    git(dir, &["fsck", "--strict", "--no-progress"]);
}
