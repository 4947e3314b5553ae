//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real
//! `pre-commit` framework (PyPI; ignored, saying so, without it) on a
//! copy of the demo: a stale committed `rendered/` fails the check hook,
//! which names the command that fixes it; the render hook brings it up to
//! date; a repository whose outputs are branches passes the check.
//!
//! The hooks come from a file:// repository holding this repository's
//! `.pre-commit-hooks.yaml`, and run their `language: system` variants
//! with the hydrate under test first on PATH.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{self, git};

/// A git repository holding hydrate's `.pre-commit-hooks.yaml`; its HEAD.
fn hooks_repo(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        support::repo().join(".pre-commit-hooks.yaml"),
        dir.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "hooks"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The demo as a git repository using the hooks, everything committed.
fn gitops(root: &Path, hooks: &Path, rev: &str) {
    let config = format!(
        "repos:\n  - repo: file://{}\n    rev: {rev}\n    hooks:\n      \
         - id: hydrate-check-system\n      - id: hydrate-render-system\n        stages: [manual]\n",
        hooks.display()
    );
    std::fs::write(root.join(".pre-commit-config.yaml"), config).unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "sources"]);
}

/// `pre-commit run --all-files HOOK` in `root`, with the tested hydrate on PATH.
fn run_hook(root: &Path, home: &Path, hook: &str, manual: bool) -> (Output, String) {
    let bin = assert_cmd::cargo::cargo_bin("hydrate");
    let bin_dir = bin.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut cmd = Command::new("pre-commit");
    cmd.args(["run", "--all-files", "--verbose", "--color", "never", hook])
        .current_dir(root)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", home)
        .env("HYDRATE_CACHE_KEY", support::CACHE_KEY);
    if manual {
        cmd.args(["--hook-stage", "manual"]);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    support::report(&format!("$ pre-commit run {hook}\n{text}"));
    (out, text)
}

#[test]
#[cfg_attr(
    not(has_pre_commit),
    ignore = "needs pre-commit on PATH (pip install pre-commit)"
)]
fn stale_committed_output_fails_with_the_fix_and_the_render_hook_fixes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let rev = hooks_repo(&tmp.path().join("hooks"));
    let demo = support::demo_copy();
    let root = demo.path();
    support::render_at(root).assert().success();
    // A committed rendered/ that no longer matches its sources.
    let manifest = root.join("rendered/dev/web/manifest.yaml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("# edited by hand\n");
    std::fs::write(&manifest, text).unwrap();
    gitops(root, &tmp.path().join("hooks"), &rev);
    let home = tmp.path().join("pre-commit-home");

    let (out, text) = run_hook(root, &home, "hydrate-check-system", false);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("stale: web/manifest.yaml"), "{text}");
    assert!(
        text.contains("to fix: hydrate render --env dev && git add rendered/dev"),
        "{text}"
    );

    // The render hook rewrites the file (pre-commit fails it for changing
    // a file); staged, the check passes.
    let (out, text) = run_hook(root, &home, "hydrate-render-system", true);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("files were modified by this hook"), "{text}");
    git(root, &["add", "-A"]);
    let (out, text) = run_hook(root, &home, "hydrate-check-system", false);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("rendered/dev: up to date"), "{text}");
}

#[test]
#[cfg_attr(
    not(has_pre_commit),
    ignore = "needs pre-commit on PATH (pip install pre-commit)"
)]
fn branch_outputs_pass_the_check_hook_when_they_render() {
    let tmp = tempfile::tempdir().unwrap();
    let rev = hooks_repo(&tmp.path().join("hooks"));
    let demo = support::demo_copy();
    let root = demo.path();
    for env in ["dev", "staging", "production"] {
        let file = root.join(format!("environments/{env}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = format!("output:\n  dir: rendered/{env}\n");
        assert!(text.contains(&dir), "{env}: output is rendered/{env}");
        let branch = format!("output:\n  branch: env/{env}\n");
        std::fs::write(&file, text.replace(&dir, &branch)).unwrap();
    }
    gitops(root, &tmp.path().join("hooks"), &rev);
    let home = tmp.path().join("pre-commit-home");
    let (out, text) = run_hook(root, &home, "hydrate-check-system", false);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("note: CI writes the output of dev, production, staging"),
        "{text}"
    );
    assert_eq!(text.matches("note: CI writes").count(), 1, "{text}");
}
