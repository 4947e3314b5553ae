//! `hydrate diff --since REV` reads REV from git objects with memory no
//! larger than a working-tree render's: files no render reads are never
//! read, and the temporary directory holding REV's files is removed on
//! every exit path (SIGINT and SIGTERM included; after a SIGKILL, by the
//! next run).

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use crate::promote_trust::{bin, demo_repo};
use crate::support::{git, report};

/// The demo repository with three blobs of `size` zero bytes committed
/// under `assets/`, which no environment renders (removed from the
/// working tree again, so they exist only as git objects).
fn demo_with_big_blobs(size: usize) -> tempfile::TempDir {
    let repo = demo_repo();
    let dir = repo.path();
    fs::create_dir(dir.join("assets")).unwrap();
    let zeros = vec![0u8; size];
    for i in 1..=3 {
        fs::write(dir.join(format!("assets/big{i}.bin")), &zeros).unwrap();
    }
    git(dir, &["add", "assets"]);
    git(dir, &["commit", "-q", "-m", "Add assets no render reads"]);
    fs::remove_dir_all(dir.join("assets")).unwrap();
    repo
}

fn command(dir: &Path, tmp: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .arg("--root")
        .arg(dir)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Runs hydrate to the end; its exit status and peak resident set size
/// (KiB). The peak is the kernel's high-water mark of the child's own
/// memory (`VmHWM`), read until it exits: it only grows, so a late read
/// sees an early peak. (`wait4`'s `ru_maxrss` would not do: a child
/// inherits the spawning test process's peak across `exec`.)
fn run_measured(dir: &Path, tmp: &Path, args: &[&str]) -> (ExitStatus, u64) {
    let mut child = command(dir, tmp, args).spawn().unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Some(kib) = fs::read_to_string(&status_file)
            .ok()
            .and_then(|s| high_water(&s))
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        std::thread::yield_now();
    }
}

/// `VmHWM` of a `/proc/<pid>/status`, in KiB.
fn high_water(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// hydrate's export directories in `tmp`.
fn exports(tmp: &Path) -> Vec<String> {
    fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hydrate-export-"))
        .collect()
}

#[test]
fn since_reads_no_blob_that_no_render_reads_and_stays_within_twice_a_render() {
    const SIZE: usize = 64 << 20;
    let repo = demo_with_big_blobs(SIZE);
    let dir = repo.path();
    let tmp = tempfile::tempdir().unwrap();
    // Without the render cache, whose first run derives its key.
    let (st, render) = run_measured(dir, tmp.path(), &["render", "--no-cache"]);
    assert!(st.success(), "render: {st:?}");
    let (st, since) = run_measured(dir, tmp.path(), &["diff", "--since", "HEAD"]);
    assert_eq!(st.code(), Some(0), "diff --since HEAD: {st:?}");
    report(&format!(
        "diff --since over 3 x {} MiB blobs: peak RSS {since} KiB; plain render: {render} KiB",
        SIZE >> 20
    ));
    assert!(
        since <= 2 * render,
        "diff --since peaked at {since} KiB, more than twice a render's {render} KiB"
    );
    // Reading one blob whole would have passed the bound.
    assert!(since > 0 && render > 0, "no measurement");
    assert!(since < (SIZE >> 10) as u64);
    assert_eq!(exports(tmp.path()), Vec::<String>::new());
}

/// Starts `diff --since HEAD`, waits until its export directory exists,
/// sends `sig`; returns how the run ended.
fn signal_mid_run(dir: &Path, tmp: &Path, sig: libc::c_int) -> ExitStatus {
    let mut child = command(dir, tmp, &["diff", "--since", "HEAD"])
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    loop {
        if !exports(tmp).is_empty() {
            // SAFETY: sends a signal to our own child.
            unsafe { libc::kill(pid, sig) };
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::yield_now();
    }
    child.wait().unwrap()
}

#[test]
fn sigint_and_sigterm_mid_run_remove_the_export() {
    let repo = demo_with_big_blobs(4 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let mut caught = 0;
    for sig in [libc::SIGINT, libc::SIGTERM].repeat(4) {
        let status = signal_mid_run(repo.path(), tmp.path(), sig);
        assert_eq!(
            exports(tmp.path()),
            Vec::<String>::new(),
            "signal {sig}: {status:?}"
        );
        if status.signal() == Some(sig) {
            caught += 1;
        }
    }
    report(&format!(
        "diff --since: {caught} of 8 runs ended by SIGINT/SIGTERM mid-run, none left its export"
    ));
    assert!(caught > 0, "no signal reached a run while it ran");
}

#[test]
fn a_sigkilled_runs_export_is_removed_by_the_next_run() {
    let repo = demo_with_big_blobs(4 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let mut left = Vec::new();
    for _ in 0..10 {
        signal_mid_run(repo.path(), tmp.path(), libc::SIGKILL);
        left = exports(tmp.path());
        if !left.is_empty() {
            break;
        }
    }
    assert!(!left.is_empty(), "no SIGKILL reached a run while it ran");
    // Another process's live export (this test's pid) is left alone.
    let live = format!("hydrate-export-{}-0-0", std::process::id());
    fs::create_dir(tmp.path().join(&live)).unwrap();
    let (st, _) = run_measured(repo.path(), tmp.path(), &["diff", "--since", "HEAD"]);
    assert_eq!(st.code(), Some(0));
    assert_eq!(exports(tmp.path()), [live]);
}
