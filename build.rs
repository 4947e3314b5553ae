//! Records the commit hydrate is built from, for `hydrate --version`.
//!
//! `HYDRATE_COMMIT` is the first 12 hex digits of `git rev-parse HEAD` in
//! the crate's directory (a clone, or the checkout `cargo install --git`
//! makes). Outside
//! a git checkout (a crates.io package, a tarball) or without `git` on
//! PATH it is `unknown`: the build never fails for want of git.

// A build script speaks to cargo through its stdout (`cargo:` lines).
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn main() {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&dir);
    // Only a checkout whose top level is this crate: a crate unpacked
    // inside some other repository must not report that repository's HEAD.
    let top = git(dir, &["rev-parse", "--show-toplevel"]);
    let ours = top.is_some_and(|t| {
        let (t, d) = (Path::new(&t).canonicalize(), dir.canonicalize());
        matches!((t, d), (Ok(t), Ok(d)) if t == d)
    });
    let commit = ours
        .then(|| git(dir, &["rev-parse", "--short=12", "HEAD"]))
        .flatten();
    let commit = commit
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=HYDRATE_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself, the branch it names and the
    // packed refs. Only files that exist (a missing one reruns every build).
    if ours {
        for name in ["HEAD", "packed-refs"] {
            watch(dir, name);
        }
        if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
            watch(dir, &branch);
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

/// `cargo:rerun-if-changed` for `git rev-parse --git-path NAME`, when present.
fn watch(dir: &Path, name: &str) {
    if let Some(p) = git(dir, &["rev-parse", "--git-path", name]) {
        let p = dir.join(p);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
