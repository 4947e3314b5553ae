//! Promotion as safe as git's own commits: the index lock, committed bytes
//! only, exact rollbacks, history through merges, symlinked sources.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::support::{demo_copy, git, hydrate};

/// The demo as a git repository whose rendered output is ignored.
pub fn demo_repo() -> tempfile::TempDir {
    let dir = demo_copy();
    fs::write(dir.path().join(".gitignore"), "/rendered\n.hydrate/\n").unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "Add the demo"]);
    dir
}

pub fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    hydrate()
        .args(args)
        .arg("--root")
        .arg(dir)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .output()
        .expect("hydrate runs")
}

pub fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file of the working tree and the git index, path → bytes.
pub fn state(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name == ".git" || name == "rendered" || name == ".hydrate" {
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let md = fs::symlink_metadata(&p).unwrap();
            if md.file_type().is_symlink() {
                let t = fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if md.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out.insert(
        "<index>".into(),
        git(root, &["ls-files", "-s"]).into_bytes(),
    );
    out.insert(
        "<HEAD>".into(),
        git(root, &["rev-parse", "HEAD"]).into_bytes(),
    );
    out
}

/// `git status --porcelain` is empty and `git fsck` finds no error.
pub fn assert_clean(dir: &Path) {
    assert_eq!(git(dir, &["status", "--porcelain"]), "", "git status");
    let fsck = std::process::Command::new("git")
        .args(["fsck", "--no-dangling"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "git fsck: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert!(!dir.join(".git/index.lock").exists(), "index.lock left");
}

/// Every file `hydrate render` writes for `env`, path → bytes.
fn rendered(dir: &Path, env: &str) -> BTreeMap<String, String> {
    let _ = fs::remove_dir_all(dir.join("rendered"));
    let o = run(dir, &["render", "--env", env, "--to", "dir", "--no-cache"]);
    assert!(o.status.success(), "{}", text(&o));
    let base = dir.join("rendered").join(env);
    let mut out = BTreeMap::new();
    for f in crate::support::list_files(&base) {
        out.insert(f.clone(), fs::read_to_string(base.join(&f)).unwrap());
    }
    let _ = fs::remove_dir_all(dir.join("rendered"));
    out
}

/// The hydrate binary, for processes the test drives itself.
pub fn bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_hydrate"))
}

fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn an_existing_index_lock_stops_every_command_with_gits_message_and_changes_nothing() {
    let repo = demo_repo();
    let dir = repo.path();
    let lock = dir.join(".git/index.lock");
    fs::write(&lock, b"someone else's").unwrap();
    let before = state(dir);
    for args in [
        &["promote", "staging", "production"][..],
        &[
            "set-image",
            "dev",
            "ghcr.io/acme-shop/web=ghcr.io/acme-shop/web:9.9.9",
        ],
        &["set-value", "dev", "status", "image.tag=7.7.7"],
        &["rollback", "production", "--steps", "1"],
    ] {
        let o = run(dir, args);
        assert_ne!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(&format!(
                "Unable to create '{}': File exists.",
                lock.display()
            )) && t.contains("Another git process seems to be running in this repository"),
            "{args:?}: {t}"
        );
        assert_eq!(state(dir), before, "{args:?} changed something");
        assert_eq!(fs::read(&lock).unwrap(), b"someone else's");
    }
}

#[test]
fn only_committed_bytes_are_promoted() {
    let repo = demo_repo();
    let dir = repo.path();
    // A local experiment in a TO file the promotion edits: refused, named.
    let prod = dir.join("testdata/apps/web/overlays/production/kustomization.yaml");
    let committed = fs::read_to_string(&prod).unwrap();
    fs::write(&prod, committed.replace("count: 4", "count: 40")).unwrap();
    for extra in [&[][..], &["--branch"]] {
        let mut args = vec!["promote", "staging", "production", "--app", "web"];
        args.extend_from_slice(extra);
        let o = run(dir, &args);
        assert_ne!(o.status.code(), Some(0), "{}", text(&o));
        assert!(
            text(&o).contains(
                "uncommitted changes in testdata/apps/web/overlays/production/kustomization.yaml"
            ),
            "{}",
            text(&o)
        );
    }
    fs::write(&prod, &committed).unwrap();
    // A dirty FROM file: its uncommitted value is never promoted.
    let staging = dir.join("testdata/apps/web/overlays/staging/kustomization.yaml");
    let s = fs::read_to_string(&staging).unwrap();
    fs::write(&staging, s.replace("1.4.3", "9.9.9")).unwrap();
    for extra in [&[][..], &["--branch"]] {
        let mut args = vec!["promote", "staging", "production", "--app", "web"];
        args.extend_from_slice(extra);
        let o = run(dir, &args);
        assert_ne!(o.status.code(), Some(0), "{}", text(&o));
        assert!(
            text(&o).contains(
                "uncommitted changes in testdata/apps/web/overlays/staging/kustomization.yaml"
            ),
            "{}",
            text(&o)
        );
    }
    fs::write(&staging, &s).unwrap();
    // A dirty file the promotion neither reads nor edits stays the user's:
    // not committed, not staged, not reverted.
    let pdb = dir.join("testdata/apps/web/overlays/production/pdb.yaml");
    let mine = format!("{}# my note\n", fs::read_to_string(&pdb).unwrap());
    fs::write(&pdb, &mine).unwrap();
    let o = run(dir, &["promote", "staging", "production", "--app", "web"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        git(dir, &["show", "--stat", "--format=", "HEAD"])
            .lines()
            .next()
            .unwrap_or_default()
            .split('|')
            .next()
            .unwrap_or_default()
            .trim(),
        "testdata/apps/web/overlays/production/kustomization.yaml"
    );
    assert_eq!(
        git(dir, &["status", "--porcelain"]),
        " M testdata/apps/web/overlays/production/pdb.yaml"
    );
    assert_eq!(fs::read_to_string(&pdb).unwrap(), mine);
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    let from = git(dir, &["rev-parse", "HEAD~1"]);
    assert!(
        msg.contains(&format!("Hydrate-Promoted-From: staging@{from}")),
        "{msg}"
    );
}

#[test]
fn rollback_steps_and_to_restore_the_render_byte_for_byte() {
    let repo = demo_repo();
    let dir = repo.path();
    let base = head(dir);
    let before = rendered(dir, "production");
    let o = run(dir, &["promote", "staging", "production"]);
    assert!(o.status.success(), "{}", text(&o));
    let promoted = rendered(dir, "production");
    assert_ne!(promoted, before);
    // One recorded change, undone by --steps 1.
    let o = run(dir, &["rollback", "production", "--steps", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rendered(dir, "production"), before);
    assert_clean(dir);
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        msg.contains(&format!("Hydrate-Rollback-To: {base}")),
        "{msg}"
    );
    // The added pins went: worker and api have no newTag again.
    assert_eq!(
        git(dir, &["diff", &base, "HEAD", "--stat"]),
        "",
        "the sources are as they were"
    );
    // A rollback of the rollback brings the promotion back.
    let o = run(dir, &["rollback", "production", "--steps", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rendered(dir, "production"), promoted);
    // --to the commit before the promotion.
    let o = run(dir, &["rollback", "production", "--to", &base]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rendered(dir, "production"), before);
    assert_clean(dir);
    let o = run(dir, &["history", "production"]);
    let t = text(&o);
    assert_eq!(t.matches("rollback ").count(), 3, "{t}");
}

#[test]
fn a_promotion_merged_with_no_ff_is_in_history_and_rolls_back() {
    let repo = demo_repo();
    let dir = repo.path();
    let before = rendered(dir, "production");
    let o = run(dir, &["promote", "staging", "production", "--branch"]);
    assert!(o.status.success(), "{}", text(&o));
    let branch = git(
        dir,
        &["branch", "--list", "promote/*", "--format=%(refname:short)"],
    );
    // Someone commits on main meanwhile; GitLab's merge makes a merge commit.
    fs::write(dir.join("NOTES.md"), "notes\n").unwrap();
    git(dir, &["add", "NOTES.md"]);
    git(dir, &["commit", "-q", "-m", "notes"]);
    git(
        dir,
        &["merge", "-q", "--no-ff", "-m", "Merge promotion", &branch],
    );
    let o = run(dir, &["history", "production"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("promotion"), "{t}");
    assert!(
        t.contains("web ghcr.io/acme-shop/web:newTag: 1.4.2 → 1.4.3"),
        "{t}"
    );
    let o = run(dir, &["pins", "production", "--output", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let board: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        board["environments"][0]["lastPromotion"]["commit"].is_string(),
        "{board}"
    );
    let o = run(dir, &["rollback", "production", "--steps", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rendered(dir, "production"), before);
    assert!(
        dir.join("NOTES.md").exists(),
        "a rollback restores pins only"
    );
    assert_clean(dir);
}

#[cfg(unix)]
#[test]
fn a_symlinked_kustomization_is_edited_through_and_stays_a_link() {
    let repo = demo_repo();
    let dir = repo.path();
    let overlay = dir.join("testdata/apps/web/overlays/production");
    fs::rename(
        overlay.join("kustomization.yaml"),
        overlay.join("kustomization.shared.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "kustomization.shared.yaml",
        overlay.join("kustomization.yaml"),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(
        dir,
        &["commit", "-q", "-m", "production's kustomization is shared"],
    );
    let o = run(
        dir,
        &[
            "set-image",
            "production",
            "ghcr.io/acme-shop/web=registry.acme.internal/shop/web:1.5.0",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let tree = git(
        dir,
        &["ls-tree", "HEAD", "testdata/apps/web/overlays/production/"],
    );
    assert!(
        tree.lines()
            .any(|l| l.starts_with("120000 blob") && l.ends_with("production/kustomization.yaml")),
        "{tree}"
    );
    assert!(fs::symlink_metadata(overlay.join("kustomization.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
    let shared = fs::read_to_string(overlay.join("kustomization.shared.yaml")).unwrap();
    assert!(shared.contains("newTag: \"1.5.0\""), "{shared}");
    assert_eq!(
        git(dir, &["show", "--stat", "--format=", "HEAD"])
            .lines()
            .next()
            .unwrap_or_default()
            .split('|')
            .next()
            .unwrap_or_default()
            .trim(),
        "testdata/apps/web/overlays/production/kustomization.shared.yaml"
    );
    assert_clean(dir);
    // A link out of the repository is refused, nothing changes.
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("k.yaml"),
        fs::read_to_string(overlay.join("kustomization.shared.yaml")).unwrap(),
    )
    .unwrap();
    fs::remove_file(overlay.join("kustomization.yaml")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("k.yaml"),
        overlay.join("kustomization.yaml"),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "link out"]);
    let before = state(dir);
    let o = run(
        dir,
        &[
            "set-image",
            "production",
            "ghcr.io/acme-shop/web=registry.acme.internal/shop/web:1.6.0",
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(state(dir), before);
}

#[test]
fn concurrent_bumps_in_one_checkout_both_commit_and_agree() {
    let runs: usize = std::env::var("HYDRATE_RACE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let repo = demo_repo();
    let dir = repo.path();
    for i in 0..runs {
        let tag = format!("9.9.{i}");
        let value = format!("image.tag=7.7.{i}");
        let spawn = |args: Vec<String>| {
            std::process::Command::new(bin())
                .args(&args)
                .arg("--root")
                .arg(dir)
                .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
                .env("HYDRATE_TIMESTAMP", "1700000000")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let a = spawn(vec![
            "set-image".into(),
            "dev".into(),
            format!("ghcr.io/acme-shop/web=ghcr.io/acme-shop/web:{tag}"),
        ]);
        let b = spawn(vec![
            "set-value".into(),
            "dev".into(),
            "status".into(),
            value.clone(),
        ]);
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        assert!(a.status.success(), "run {i}: {}", text(&a));
        assert!(b.status.success(), "run {i}: {}", text(&b));
        // HEAD, the index and the working tree agree on every path.
        assert_clean(dir);
        let web = git(
            dir,
            &[
                "show",
                "HEAD:testdata/apps/web/overlays/dev/kustomization.yaml",
            ],
        );
        assert!(web.contains(&tag), "run {i}: {web}");
        let values = git(dir, &["show", "HEAD:testdata/apps/status/values/dev.yaml"]);
        assert!(values.contains(&format!("7.7.{i}")), "run {i}: {values}");
    }
    crate::support::report(&format!(
        "concurrent bumps: {runs} runs, HEAD, index and working tree agreed every time"
    ));
}
