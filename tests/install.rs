//! The install line docs/ci.md documents, run as written: `cargo install
//! --git` of a `file://` clone of this repository at a `v<version>` tag,
//! into a temporary root, then the installed binary's `--version`.
//!
//! A release build of hydrate from nothing takes minutes, so the test is
//! ignored (the runner says so) and runs with `cargo test --test tests
//! install -- --ignored`. Its
//! target directory is `target/install-test`, kept between runs, so a
//! second run rebuilds only what changed.

use std::process::Command;

use crate::support::{self, GitHome};

/// The first line of docs/ci.md that runs `cargo install --locked --git`.
fn documented_line() -> String {
    let doc = std::fs::read_to_string(support::repo().join("docs/ci.md")).unwrap();
    doc.lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo install --locked --git"))
        .expect("docs/ci.md shows the cargo install --git line")
        .to_string()
}

/// The documented line takes the repository and the tag from the
/// variables the slow test below sets.
#[test]
fn documented_cargo_install_git_line_names_repository_and_tag() {
    let line = documented_line();
    assert!(line.contains("\"$HYDRATE_GIT\"") && line.contains("\"$HYDRATE_TAG\""));
}

#[test]
#[ignore = "slow: cargo install --git builds hydrate in release mode (minutes); run with -- --ignored"]
fn documented_cargo_install_git_line_installs_a_binary_that_runs() {
    let line = documented_line();
    let repo = support::repo();
    let head = support::git(&repo, &["rev-parse", "HEAD"]);
    let tmp = tempfile::tempdir().unwrap();
    let home = GitHome::new(tmp.path());
    // A bare clone holding HEAD, tagged as a release would be.
    let clone = tmp.path().join("hydrate.git");
    let status = home
        .command("git")
        .args(["clone", "--quiet", "--bare", "--no-local"])
        .arg(&repo)
        .arg(&clone)
        .status()
        .unwrap();
    assert!(status.success());
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    home.git(&clone, &["tag", &tag, &head]);
    let work = tmp.path().join("gitops");
    std::fs::create_dir(&work).unwrap();
    support::report(&format!("running: {line}"));
    let out = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(&work)
        .env("HYDRATE_GIT", format!("file://{}", clone.display()))
        .env("HYDRATE_TAG", &tag)
        .env("CARGO_TARGET_DIR", repo.join("target/install-test"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = work.join(".hydrate-bin/bin/hydrate");
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert!(version.status.success());
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    support::report(&format!("installed: {version}"));
    let short = head.get(..12).unwrap_or(&head);
    assert_eq!(
        version,
        format!("hydrate {} (commit {short})", env!("CARGO_PKG_VERSION"))
    );
}

/// `hydrate --version`: the crate version and the commit built from (12
/// hex digits), or `unknown` when built outside a git checkout.
#[test]
fn version_names_the_commit() {
    let out = support::hydrate().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("hydrate {} (commit ", env!("CARGO_PKG_VERSION"));
    let commit = text
        .trim()
        .strip_prefix(&prefix)
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_else(|| panic!("unexpected --version: {text}"));
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{text}"
    );
}
