//! Chart files that are symlinks leading out of the chart but not out of
//! its repository (a library chart under `charts/`, `crds/` linked from
//! elsewhere): helm follows them and logs each on stderr, and so does
//! hydrate; a link that leaves the repository is refused. The fixture,
//! `testdata/helm-symlinks/`, is a repository (`.git` made in the copy)
//! with the links of `symlinks.txt` (`link target` lines) made in the
//! copy; `expected.helmN.yaml` and `expected-stderr.helmN.txt` were
//! recorded from helm v3.17.3 and v4.1.4 with `template rel app
//! --include-crds`, the copy's directory written `ROOT`.

#![cfg(unix)]

use std::path::{Path, PathBuf};

use crate::support::{copy_tree, hydrate, need, repo, Need};

const ARGS: [&str; 4] = ["template", "rel", "app", "--include-crds"];

/// A copy of the fixture with its links made; its canonical path.
fn fixture(with_git: bool) -> (tempfile::TempDir, PathBuf) {
    let src = repo().join("testdata/helm-symlinks");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for part in ["app", "library", "config"] {
        copy_tree(&src.join(part), &root.join(part));
    }
    let links = std::fs::read_to_string(src.join("symlinks.txt")).unwrap();
    for line in links.lines() {
        let (link, target) = line.split_once(' ').unwrap();
        let link = root.join(link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    }
    if with_git {
        std::fs::create_dir(root.join(".git")).unwrap();
    }
    (dir, root)
}

fn expected(version: &str, root: &Path) -> (String, String) {
    let dir = repo().join("testdata/helm-symlinks");
    let read = |f: String| std::fs::read_to_string(dir.join(f)).unwrap();
    let stderr = read(format!("expected-stderr.{version}.txt"));
    (
        read(format!("expected.{version}.yaml")),
        stderr.replace("ROOT", &root.to_string_lossy()),
    )
}

#[test]
fn links_within_the_repository_are_followed_and_logged_as_helm_logs_them() {
    let (_dir, root) = fixture(true);
    for (version, flags) in [("helm3", &[][..]), ("helm4", &["--helm-version", "4"][..])] {
        let out = hydrate()
            .current_dir(&root)
            .arg("helm")
            .args(ARGS)
            .args(flags)
            .output()
            .unwrap();
        let (stdout, stderr) = expected(version, &root);
        assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{version}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), stdout, "{version}");
        assert!(out.status.success(), "{version}");
    }
}

#[test]
fn a_link_leaving_the_repository_is_refused_and_named() {
    // Without `.git`, the chart directory is the repository.
    let (_dir, root) = fixture(false);
    let out = hydrate()
        .current_dir(&root)
        .arg("helm")
        .args(ARGS)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "chart file charts/library is a symlink to {}, which is outside the repository {}",
            root.join("library").display(),
            root.join("app").display()
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// The recorded files are still what helm 3 prints.
#[test]
#[cfg_attr(
    not(has_helm3),
    ignore = "needs helm3 under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn the_recording_matches_helm3() {
    recording_matches("helm3", need(Need::Helm3));
}

/// The recorded files are still what helm 4 prints.
#[test]
#[cfg_attr(
    not(has_helm4),
    ignore = "needs helm4 under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn the_recording_matches_helm4() {
    recording_matches("helm4", need(Need::Helm4));
}

fn recording_matches(version: &str, helm: std::path::PathBuf) {
    let (_dir, root) = fixture(true);
    let out = std::process::Command::new(helm)
        .current_dir(&root)
        .args(ARGS)
        .output()
        .unwrap();
    let (stdout, stderr) = expected(version, &root);
    assert_eq!(String::from_utf8_lossy(&out.stdout), stdout, "{version}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), stderr, "{version}");
}
