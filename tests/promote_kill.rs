//! kill -9 at random moments of promote, set-image, set-value and rollback:
//! the repository is left in the old state or the new one (or, while the
//! killed run's index lock is still there, a state the next run completes),
//! and rerunning the command converges with one commit at most.
//!
//! `HYDRATE_KILL_SEED` replays a run (each test prints its seed);
//! `HYDRATE_KILLS` sets the number of kills per command (default 50).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::promote_trust::{assert_clean, bin, demo_repo, run, state, text};
use crate::support::{git, report, Rng};

fn seed() -> u64 {
    std::env::var("HYDRATE_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        })
}

fn kills() -> usize {
    std::env::var("HYDRATE_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50)
}

fn tree(dir: &Path, rev: &str) -> String {
    git(dir, &["rev-parse", &format!("{rev}^{{tree}}")])
}

/// Kills `args` at random moments, `kills()` times, from the state after
/// `setup` in the demo repository; checks each outcome and that a rerun
/// converges.
fn kill_test(name: &str, setup: &[&[&str]], args: &[&str]) {
    kill_test_in(demo_repo(), name, setup, args);
}

/// [`kill_test`] in `repo`.
fn kill_test_in(repo: tempfile::TempDir, name: &str, setup: &[&[&str]], args: &[&str]) {
    let seed = seed();
    let mut rng = Rng(seed);
    let dir = repo.path();
    let first = git(dir, &["rev-parse", "HEAD"]);
    for s in setup {
        let o = run(dir, s);
        assert!(o.status.success(), "setup {s:?}: {}", text(&o));
    }
    // `{first}`: the commit before the setup.
    let args: Vec<String> = args.iter().map(|a| a.replace("{first}", &first)).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let args = &args[..];
    let base = git(dir, &["rev-parse", "HEAD"]);
    let before = state(dir);
    // One uninterrupted run: the new state, and how long a run takes.
    let t0 = Instant::now();
    let o = run(dir, args);
    let took = t0.elapsed();
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let expected = tree(dir, "HEAD");
    assert_ne!(expected, tree(dir, &base), "{args:?} changed nothing");
    git(dir, &["reset", "-q", "--hard", &base]);
    let (mut old, mut new, mut completed) = (0, 0, 0);
    let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    for i in 0..kills() {
        // Half the kills anywhere in the run, half in its last part, where
        // the commit is made.
        let delay = if i % 2 == 0 {
            rng.below(micros * 11 / 10)
        } else {
            micros / 2 + rng.below(micros * 6 / 10)
        };
        let mut child = std::process::Command::new(bin())
            .args(args)
            .arg("--root")
            .arg(dir)
            .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
            .env("HYDRATE_TIMESTAMP", "1700000000")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay));
        let _ = child.kill();
        let _ = child.wait();
        let ctx = format!("{name}: kill {i} after {delay} µs (seed {seed})");
        let head = git(dir, &["rev-parse", "HEAD"]);
        let lock = dir.join(".git/index.lock");
        let moved = head != base;
        if moved {
            assert_eq!(git(dir, &["rev-parse", "HEAD~1"]), base, "{ctx}");
            assert_eq!(tree(dir, "HEAD"), expected, "{ctx}");
        }
        if lock.exists() {
            // The killed run's lock is still held: git refuses to commit,
            // so no state in between can be committed by mistake.
            let marker = std::fs::read_to_string(&lock).unwrap_or_default();
            assert!(marker.starts_with("hydrate-index-lock"), "{ctx}: {marker}");
            let c = std::process::Command::new("git")
                .args(["commit", "-q", "--allow-empty", "-m", "user"])
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(
                !c.status.success(),
                "{ctx}: git commit went through the lock"
            );
            if moved {
                completed += 1;
            } else {
                old += 1;
            }
        } else if moved {
            assert_eq!(git(dir, &["status", "--porcelain"]), "", "{ctx}");
            new += 1;
        } else {
            assert_eq!(state(dir), before, "{ctx}");
            old += 1;
        }
        // Rerunning converges: one commit in all, clean.
        let o = run(dir, args);
        assert!(o.status.success(), "{ctx}: rerun: {}", text(&o));
        assert_eq!(git(dir, &["rev-parse", "HEAD~1"]), base, "{ctx}: rerun");
        assert_eq!(tree(dir, "HEAD"), expected, "{ctx}: rerun");
        assert_clean(dir);
        let leftovers = git(dir, &["status", "--porcelain", "--ignored"]);
        assert!(
            !leftovers.contains(".hydrate-"),
            "{ctx}: temporary files left: {leftovers}"
        );
        git(dir, &["reset", "-q", "--hard", &base]);
    }
    report(&format!(
        "kill test {name}: {} kills (seed {seed}, run {} ms): {old} before the commit, {new} after it, {completed} committed and finished by the rerun",
        kills(),
        took.as_millis()
    ));
}

#[test]
fn kill_promote() {
    kill_test("promote", &[], &["promote", "staging", "production"]);
}

/// `promote --together` (the graph fixture, canary promoted first): both
/// regions in one commit, under the same transaction.
#[test]
fn kill_promote_together() {
    kill_test_in(
        crate::graph::fixture(""),
        "promote --together",
        &[
            &["set-image", "dev", "example/web:1.1.0"],
            &["promote", "dev"],
            &["promote", "staging", "canary"],
        ],
        &["promote", "staging", "--together"],
    );
}

#[test]
fn kill_set_image() {
    kill_test(
        "set-image",
        &[],
        &[
            "set-image",
            "production",
            "ghcr.io/acme-shop/web=registry.acme.internal/shop/web:1.5.0",
        ],
    );
}

#[test]
fn kill_set_value() {
    kill_test(
        "set-value",
        &[],
        &["set-value", "production", "status", "image.tag=2.3.9"],
    );
}

/// `--to` (a rerun after a complete `--steps 1` would undo the rollback
/// itself, as `git revert HEAD` twice does; a rerun after a kill does not:
/// the journal names the operation, see `the_retry_of_a_killed_rollback…`).
#[test]
fn kill_rollback() {
    kill_test(
        "rollback",
        &[&["promote", "staging", "production"]],
        &["rollback", "production", "--to", "{first}"],
    );
}
