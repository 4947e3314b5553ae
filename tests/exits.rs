//! Every command's exit code, from the one table (docs/exit-codes.md),
//! and what it does when stdout is closed or full: issue 28, items 8 and 9.
//!
//! Each command runs on a fresh git copy of the demo (a `set-image` bump on
//! top of the first commit, so history, rollback, affected and diff --since
//! have something to show) four ways: stdout a pipe whose reader has left,
//! stdout `/dev/full`, an unknown environment and an unknown app. Nothing
//! panics. A closed stdout ends quietly with the code of what the command
//! did; a full one is an error naming stdout (exit 2; 1 for the drop-ins,
//! as kustomize does); a command that committed says the commit stands.

#![cfg(target_os = "linux")]

use std::fs::File;
use std::os::fd::FromRawFd;
use std::path::Path;
use std::process::{Output, Stdio};

use crate::support::{copy_tree, demo_copy, git, hydrate, repo};

const FULL: &str = "Error: writing to stdout: No space left on device (os error 28)";

/// The demo as a git repository: the demo, then a set-image bump into dev.
fn demo_repo() -> tempfile::TempDir {
    let dir = demo_copy();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "Add the demo"]);
    let out = run(
        dir.path(),
        &["set-image", "dev", "ghcr.io/acme-shop/web:1.5.0"],
        Stdio::null(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

/// The write end of a pipe whose read end is already closed: the first
/// write fails with EPIPE, as under `hydrate … | head -0`.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors we then own; the read end is
    // closed at once, the write end handed to the child.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(File::from_raw_fd(fds[1]))
    }
}

fn full() -> Stdio {
    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
}

fn run(dir: &Path, args: &[&str], stdout: Stdio) -> Output {
    let mut cmd = std::process::Command::new(hydrate().get_program());
    cmd.current_dir(dir)
        .args(args)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    cmd.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"])
}

/// One command: its arguments, the code it exits with when done, and the
/// same command naming an unknown environment and an unknown app (where it
/// takes them).
struct Case {
    args: &'static [&'static str],
    done: i32,
    commits: bool,
    unknown_env: Option<&'static [&'static str]>,
    unknown_app: Option<&'static [&'static str]>,
}

impl Case {
    fn drop_in(&self) -> bool {
        matches!(self.args.first(), Some(&"kustomize" | &"helm"))
    }

    fn check(&self) {
        let what = self.args.join(" ");
        // Closed stdout: the work stands, the code says what was done.
        let dir = demo_repo();
        let before = head(dir.path());
        let out = run(dir.path(), self.args, closed_pipe());
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{what} | closed: {err}");
        assert_eq!(out.status.code(), Some(self.done), "{what} | closed: {err}");
        assert_eq!(head(dir.path()) != before, self.commits, "{what}: {err}");
        // Full stdout: an error naming stdout; a commit made stands.
        let dir = demo_repo();
        let before = head(dir.path());
        let out = run(dir.path(), self.args, full());
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{what} > full: {err}");
        let code = if self.drop_in() { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(code), "{what} > full: {err}");
        assert_eq!(err.lines().next(), Some(FULL), "{what} > full: {err}");
        assert_eq!(head(dir.path()) != before, self.commits, "{what}: {err}");
        if self.commits {
            let stands = format!("committed {} before the error", head(dir.path()));
            assert!(err.contains(&stands), "{what} > full: {err}");
        }
        for args in [self.unknown_env, self.unknown_app].into_iter().flatten() {
            let what = args.join(" ");
            let dir = demo_repo();
            let before = head(dir.path());
            let out = run(dir.path(), args, Stdio::null());
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{what}: {err}");
            assert_eq!(out.status.code(), Some(2), "{what}: {err}");
            assert!(
                err.starts_with("Error: ") && err.contains("nope"),
                "{what}: {err}"
            );
            assert_eq!(head(dir.path()), before, "{what}: {err}");
        }
    }
}

/// One test per command, so they run in parallel and fail apart.
macro_rules! cases {
    ($($name:ident: $args:expr, done $done:literal, commits $commits:literal,
       env $env:expr, app $app:expr;)*) => {
        $(
            #[test]
            fn $name() {
                Case {
                    args: $args,
                    done: $done,
                    commits: $commits,
                    unknown_env: $env,
                    unknown_app: $app,
                }
                .check();
            }
        )*
    };
}

const WEB: &str = "ghcr.io/acme-shop/web:1.6.0";

cases! {
    render: &["render"], done 0, commits false,
        env Some(&["render", "--env", "nope"]), app Some(&["render", "--app", "nope"]);
    render_check: &["render", "--check"], done 1, commits false,
        env Some(&["render", "--check", "--env", "nope"]),
        app Some(&["render", "--check", "--app", "nope"]);
    render_json: &["render", "--output", "json"], done 0, commits false,
        env Some(&["render", "--output", "json", "--env", "nope"]),
        app Some(&["render", "--output", "json", "--app", "nope"]);
    list: &["list"], done 0, commits false,
        env Some(&["list", "--env", "nope"]), app None;
    affected: &["affected", "--since", "HEAD~1"], done 0, commits false,
        env None, app None;
    promote: &["promote", "dev", "staging"], done 0, commits true,
        env Some(&["promote", "nope", "staging"]),
        app Some(&["promote", "dev", "staging", "--app", "nope"]);
    promote_dry_run: &["promote", "dev", "staging", "--dry-run"], done 0, commits false,
        env Some(&["promote", "dev", "nope", "--dry-run"]),
        app Some(&["promote", "dev", "staging", "--dry-run", "--app", "nope"]);
    pins: &["pins"], done 0, commits false,
        env Some(&["pins", "nope"]), app None;
    set_image: &["set-image", "dev", WEB], done 0, commits true,
        env Some(&["set-image", "nope", WEB]),
        app Some(&["set-image", "dev", "--app", "nope", WEB]);
    set_value: &["set-value", "dev", "status", "image.tag=9.9.9"], done 0, commits true,
        env Some(&["set-value", "nope", "status", "image.tag=9.9.9"]),
        app Some(&["set-value", "dev", "nope", "image.tag=9.9.9"]);
    history: &["history", "dev"], done 0, commits false,
        env Some(&["history", "nope"]), app None;
    rollback: &["rollback", "dev"], done 0, commits true,
        env Some(&["rollback", "nope"]), app None;
    diff: &["diff", "dev", "staging"], done 1, commits false,
        env Some(&["diff", "dev", "nope"]),
        app Some(&["diff", "dev", "staging", "--app", "nope"]);
    diff_since: &["diff", "--since", "HEAD~1"], done 1, commits false,
        env Some(&["diff", "--since", "HEAD~1", "--env", "nope"]),
        app Some(&["diff", "--since", "HEAD~1", "--app", "nope"]);
    validate: &["validate", "--output", "json"], done 0, commits false,
        env Some(&["validate", "--env", "nope"]), app Some(&["validate", "--app", "nope"]);
    explain: &["explain", "dev", "web"], done 0, commits false,
        env Some(&["explain", "nope", "web"]), app Some(&["explain", "dev", "nope"]);
    cache_clean: &["cache", "clean"], done 0, commits false, env None, app None;
    help: &["--help"], done 0, commits false, env None, app None;
    kustomize_build: &["kustomize", "build", "testdata/apps/web/overlays/dev"],
        done 0, commits false, env None, app None;
    kustomize_version: &["kustomize", "version"], done 0, commits false, env None, app None;
    helm_template: &["helm", "template", "r", "testdata/apps/status/chart"],
        done 0, commits false, env None, app None;
    helm_version: &["helm", "version"], done 0, commits false, env None, app None;
}

/// `init` with stdout closed writes the environment files and exits 0;
/// with stdout full it stops before writing anything and exits 2.
#[test]
fn init() {
    let fixture = || {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(
            &repo().join("testdata/init/per-app-overlays/repo"),
            dir.path(),
        );
        dir
    };
    let dir = fixture();
    let out = run(dir.path(), &["init"], closed_pipe());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(dir.path().join("environments").is_dir(), "{err}");
    let dir = fixture();
    let out = run(dir.path(), &["init"], full());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().next(), Some(FULL), "{err}");
    assert!(!dir.path().join("environments").exists(), "{err}");
}

/// A full stderr loses the message, never panics: the code still says what
/// happened.
#[test]
fn a_full_stderr_changes_no_exit_code() {
    let dir = demo_repo();
    let out = std::process::Command::new(hydrate().get_program())
        .current_dir(dir.path())
        .args(["history", "nope"])
        .stdout(Stdio::null())
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A usage mistake is 2 whatever the command (a promotion held by a
/// policy is 1: tests/promote.rs); a drop-in's unknown flag is 1, as
/// helm's and kustomize's cobra exit.
#[test]
fn usage_errors_exit_2_and_drop_ins_exit_as_their_tools() {
    let dir = demo_repo();
    let code = |args: &[&str]| run(dir.path(), args, Stdio::null()).status.code();
    assert_eq!(code(&["render", "--bogus"]), Some(2));
    assert_eq!(code(&["set-value", "dev", "status", "no-equals"]), Some(2));
    assert_eq!(code(&["kustomize", "build", "--bogus"]), Some(1));
    assert_eq!(code(&["helm", "template", "--bogus", "x"]), Some(1));
}

/// `verify` needs environment branches, so it runs after `render --to
/// branch`: closed stdout ends with the code of the check (0: the branches
/// are the render), a full one is the stdout error, an unknown environment
/// is 2.
#[test]
fn verify() {
    let dir = demo_repo();
    let out = run(dir.path(), &["render", "--to", "branch"], Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(dir.path(), &["verify", "--to", "branch"], closed_pipe());
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    let out = run(dir.path(), &["verify", "--to", "branch"], full());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().next(), Some(FULL), "{err}");
    let out = run(
        dir.path(),
        &["verify", "--to", "branch", "nope"],
        Stdio::null(),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("Error: ") && err.contains("nope"), "{err}");
}
