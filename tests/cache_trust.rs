//! The render cache cannot be forged into output (issue 28, item 11): an
//! entry edited with its checksum recomputed, the attack on the old
//! format, is ignored, warned about once and rendered again; `--check`
//! still sees the stale output such an entry would have hidden; the key
//! comes from `HYDRATE_CACHE_KEY` or the user's key file, never from the
//! repository. Each attack is also replayed with the right key, which the
//! run then trusts: so the forgery reaches output exactly when it is
//! authentic, and these tests can fail.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

use crate::support::{demo_copy, list_files, render_at, CACHE_KEY};

/// An entry's header up to its MAC: magic, format, kind, key, length.
const SIGNED: usize = 14 + 4 + 1 + 32 + 8;
/// The whole header: the MAC is its last 32 bytes.
const HEADER: usize = SIGNED + 32;

/// How a forger fills the MAC slot.
#[derive(Clone, Copy)]
enum Seal {
    /// The SHA-256 of the payload: format 1's checksum, anyone can make it.
    Checksum,
    /// HMAC-SHA256 under some other secret.
    OtherKey,
    /// HMAC-SHA256 under the run's secret: only a key holder can.
    RightKey,
}

/// `entry` (its header) holding `payload` instead, its length fixed and
/// its MAC slot filled as `seal` says.
fn reseal(entry: &[u8], payload: &[u8], seal: Seal) -> Vec<u8> {
    let mut out = entry[..SIGNED].to_vec();
    out[SIGNED - 8..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    let hmac = |key: &[u8]| {
        let mut m = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap();
        m.update(&out);
        m.update(payload);
        m.finalize().into_bytes().to_vec()
    };
    let tag = match seal {
        Seal::Checksum => Sha256::digest(payload).to_vec(),
        Seal::OtherKey => hmac(b"another-secret-0123456789abcdef0123456789"),
        Seal::RightKey => hmac(CACHE_KEY.as_bytes()),
    };
    out.extend_from_slice(&tag);
    out.extend_from_slice(payload);
    out
}

/// `bytes` with every `from` replaced by `to` (of the same length).
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

/// The result entries (`*.out`) in the cache of `root`.
fn entries(root: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(root.join(".hydrate/cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "out"))
        .collect()
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    list_files(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The `warning[cache]` lines of a run's stderr, each with the line after it.
fn cache_warnings(out: &Output) -> Vec<String> {
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("warning[cache]"))
        .map(|(i, l)| format!("{l}\n{}", lines.get(i + 1).unwrap_or(&"")))
        .collect()
}

/// web's image in every environment (`…/web:1.5.0-rc.1`, `…/web:1.4.3`,
/// `…/shop/web:1.4.2`), and the attacker's version of it.
const WEB: &[u8] = b"/web:1.";
const EVIL: &[u8] = b"/web:6.";

/// Every cached result of web edited to run the attacker's image.
fn forge_web(root: &Path, seal: Seal) -> usize {
    let mut forged = 0;
    for f in entries(root) {
        let entry = std::fs::read(&f).unwrap();
        let payload = &entry[HEADER..];
        let edited = replace(payload, WEB, EVIL);
        if edited != payload {
            std::fs::write(&f, reseal(&entry, &edited, seal)).unwrap();
            forged += 1;
        }
    }
    forged
}

#[test]
fn a_forged_entry_is_ignored_warned_about_once_and_rendered_again() {
    let repo = demo_copy();
    let root = repo.path();
    let first = render_at(root).output().unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(cache_warnings(&first).is_empty());
    let good = tree(&root.join("rendered"));
    for seal in [Seal::Checksum, Seal::OtherKey] {
        assert_eq!(forge_web(root, seal), 3, "web in three environments");
        std::fs::remove_dir_all(root.join("rendered")).unwrap();
        let out = render_at(root).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(tree(&root.join("rendered")), good, "the true output");
        assert_eq!(
            cache_warnings(&out),
            [
                "warning[cache]: .hydrate/cache: a render cache entry failed authentication \
              (written without this run's key, or altered): ignored and rendered again; jobs \
              that share a cache need the same HYDRATE_CACHE_KEY\n  in 3 app(s): dev/web, \
              production/web, staging/web"
            ],
            "one warning: {}",
            text(&out.stderr)
        );
        // The forged entries were replaced: the next run trusts the cache.
        let again = render_at(root).output().unwrap();
        assert!(cache_warnings(&again).is_empty(), "{}", text(&again.stderr));
        assert_eq!(text(&again.stdout).matches(": unchanged").count(), 3);
    }
    // The same edit sealed under the secret is trusted: the attack above
    // reached the cache, and only the MAC kept it out of the output.
    assert_eq!(forge_web(root, Seal::RightKey), 3);
    std::fs::remove_dir_all(root.join("rendered")).unwrap();
    let keyed = render_at(root).output().unwrap();
    assert!(keyed.status.success());
    assert!(cache_warnings(&keyed).is_empty());
    let web = std::fs::read(root.join("rendered/dev/web/manifest.yaml")).unwrap();
    assert!(
        text(&web).contains("ghcr.io/acme-shop/web:6.5.0-rc.1"),
        "{}",
        text(&web)
    );
}

/// `--check` compares a fresh render with the output on disk; a forged
/// entry holding the old render under the new inputs' key would make
/// stale output look up to date.
#[test]
fn check_sees_stale_output_that_a_forged_entry_would_hide() {
    let repo = demo_copy();
    let root = repo.path();
    let run = |args: &[&str]| render_at(root).args(args).output().unwrap();
    assert!(run(&["--no-cache"]).status.success());
    // `--check` writes no output but fills the cache: with exactly
    // staging/status's result (E1), then its result after a change to its
    // values (E2), while the output on disk stays as it was.
    let only = ["--check", "--env", "staging", "--app", "status"];
    assert_eq!(run(&only).status.code(), Some(0));
    let e1 = entries(root);
    assert_eq!(e1.len(), 1);
    let values = root.join("testdata/apps/status/values/staging.yaml");
    let was = std::fs::read_to_string(&values).unwrap();
    std::fs::write(&values, was.replace("replicaCount: 2", "replicaCount: 3")).unwrap();
    assert_eq!(run(&only).status.code(), Some(1), "stale now");
    let e2: Vec<PathBuf> = entries(root).difference(&e1).cloned().collect();
    assert_eq!(e2.len(), 1);
    let old = std::fs::read(e1.first().unwrap()).unwrap();
    let new = std::fs::read(&e2[0]).unwrap();

    std::fs::write(&e2[0], reseal(&new, &old[HEADER..], Seal::Checksum)).unwrap();
    let out = run(&["--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("staging: ") && stdout.contains("STALE: 0 missing, 1 stale, 0 extra"),
        "{stdout}{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("  stale: status/manifest.yaml"), "{stdout}");
    let warned = cache_warnings(&out);
    assert_eq!(warned.len(), 1, "{}", text(&out.stderr));
    assert!(warned[0].contains(": staging/status"), "{}", warned[0]);

    // Control: the same entry under the secret would have hidden it.
    std::fs::write(&e2[0], reseal(&new, &old[HEADER..], Seal::RightKey)).unwrap();
    let hidden = run(&["--check"]);
    assert_eq!(hidden.status.code(), Some(0), "{}", text(&hidden.stdout));
    assert_eq!(text(&hidden.stdout).matches("up to date").count(), 3);
}

/// `hydrate render` without `HYDRATE_CACHE_KEY`, its home and cache
/// directory as given.
fn render_as_user(root: &Path, home: Option<&Path>, xdg: Option<&Path>) -> Output {
    render_as_user_with(root, home, xdg, &[])
}

fn render_as_user_with(
    root: &Path,
    home: Option<&Path>,
    xdg: Option<&Path>,
    args: &[&str],
) -> Output {
    let mut cmd = render_at(root);
    cmd.args(args);
    cmd.env_remove("HYDRATE_CACHE_KEY")
        .env_remove("HOME")
        .env_remove("XDG_CACHE_HOME");
    if let Some(h) = home {
        cmd.env("HOME", h);
    }
    if let Some(x) = xdg {
        cmd.env("XDG_CACHE_HOME", x);
    }
    cmd.output().unwrap()
}

#[test]
fn without_a_shared_key_runs_make_one_user_key_and_share_it() {
    let repo = demo_copy();
    let root = repo.path();
    let home = tempfile::tempdir().unwrap();
    // Four runs at once, each finding no key: one key file, all agree
    // (each later run hits what the others stored, or renders again).
    let runs: Vec<Output> = std::thread::scope(|s| {
        let spawned: Vec<_> = (0..4)
            .map(|_| s.spawn(|| render_as_user(root, Some(home.path()), None)))
            .collect();
        spawned.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for out in &runs {
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(cache_warnings(out).is_empty(), "{}", text(&out.stderr));
    }
    let key = home.path().join(".cache/hydrate/cache-key");
    let made = std::fs::read_to_string(&key).unwrap();
    assert_eq!(made.trim_end().len(), 64);
    assert_eq!(std::fs::read_dir(key.parent().unwrap()).unwrap().count(), 1);
    assert!(!list_files(root).iter().any(|f| f.contains("cache-key")));
    let warm = render_as_user(root, Some(home.path()), None);
    assert!(cache_warnings(&warm).is_empty(), "{}", text(&warm.stderr));
    assert_eq!(text(&warm.stdout).matches(": unchanged").count(), 3);

    // Another user (another key) trusts nothing of this cache.
    let other = tempfile::tempdir().unwrap();
    let theirs = render_as_user(root, None, Some(other.path()));
    assert!(theirs.status.success());
    assert_eq!(cache_warnings(&theirs).len(), 1, "{}", text(&theirs.stderr));
    assert_ne!(
        std::fs::read_to_string(other.path().join("hydrate/cache-key")).unwrap(),
        made
    );
}

#[test]
fn without_home_the_cache_is_off_for_the_run_with_one_warning() {
    let repo = demo_copy();
    let root = repo.path();
    let out = render_as_user(root, None, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let warned = cache_warnings(&out);
    assert_eq!(warned.len(), 1, "{}", text(&out.stderr));
    assert!(warned[0].contains("the render cache is off for this run"));
    assert!(
        !root.join(".hydrate").exists(),
        "no cache, no key in the repository"
    );
    let bypass = render_as_user_with(root, None, None, &["--no-cache"]);
    assert!(bypass.status.success());
    assert!(
        cache_warnings(&bypass).is_empty(),
        "--no-cache needs no key"
    );
}

#[test]
fn a_short_cache_key_is_an_error_naming_the_variable() {
    let repo = demo_copy();
    let root = repo.path();
    let out = render_at(root)
        .env("HYDRATE_CACHE_KEY", "too-short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "Error: HYDRATE_CACHE_KEY is 9 bytes long; it needs at least 32 (a random secret, \
         e.g. the 64 hex digits of `openssl rand -hex 32`)\n"
    );
    assert!(!root.join("rendered").exists() && !root.join(".hydrate").exists());
    // --no-cache needs no key.
    let out = render_at(root)
        .env("HYDRATE_CACHE_KEY", "too-short")
        .arg("--no-cache")
        .output()
        .unwrap();
    assert!(out.status.success());
}
