//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared corpora and tools: `../shared` next to the repository, or
/// `$HYDRATE_SHARED` when set (relative to the repository root; for git
/// worktrees that sit one level deeper than the main checkout). build.rs
/// probes the same place for `has_shared`.
pub fn shared() -> Option<PathBuf> {
    let p = match std::env::var_os("HYDRATE_SHARED") {
        Some(dir) => repo().join(dir),
        None => repo().join("..").join("shared"),
    };
    p.is_dir().then_some(p)
}

/// An oracle binary under `$HYDRATE_ORACLES` (by default
/// `~/.cache/oracles`), when installed; build.rs probes the same place.
fn oracle(name: &str) -> Option<PathBuf> {
    let dir = match std::env::var_os("HYDRATE_ORACLES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(&std::env::var_os("HOME")?).join(".cache/oracles"),
    };
    let p = dir.join(name);
    p.is_file().then_some(p)
}

/// A program on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// What an optional test needs that a fresh clone does not have. Such a
/// test carries `#[cfg_attr(not(has_…), ignore = "needs …")]` (build.rs
/// sets the cfg where the prerequisite is present), so the test runner
/// reports it as ignored, with the reason, where it cannot check.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// `../shared` (the conformance corpora): `has_shared`.
    Shared,
    /// `~/.cache/oracles/kubectl` (kustomize v5.7.1): `has_kubectl`.
    Kubectl,
    /// `~/.cache/oracles/helm3` (helm v3.17.3): `has_helm3`.
    Helm3,
    /// `~/.cache/oracles/helm4` (helm v4.1.4): `has_helm4`.
    Helm4,
    /// `chromium` on PATH (Debian's `chromium` package): `has_chromium`.
    Chromium,
}

/// The path of what `need` names. The test runs only where build.rs found
/// it, so its absence now fails the test rather than passing it: the
/// machine changed since the build (`touch build.rs` probes again).
pub fn need(need: Need) -> PathBuf {
    let found = match need {
        Need::Shared => shared(),
        Need::Kubectl => oracle("kubectl"),
        Need::Helm3 => oracle("helm3"),
        Need::Helm4 => oracle("helm4"),
        Need::Chromium => on_path("chromium"),
    };
    found.unwrap_or_else(|| {
        panic!("{need:?} was present when the tests were built and is missing now: touch build.rs")
    })
}

/// Prints a line on the terminal whatever `cargo test` captures (counts,
/// timings): libtest captures what the print macros write from a test
/// thread, but not writes through the `std::io::stderr()` handle.
pub fn report(line: &str) {
    use std::io::Write;
    // One write: stderr is unbuffered, and `writeln!` would write each
    // piece apart, between libtest's own lines.
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// The hydrate binary under test.
pub fn hydrate() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("hydrate")
        .expect("the hydrate binary is built by cargo test");
    // The render cache's secret: tests never make a key in the real home.
    cmd.env("HYDRATE_CACHE_KEY", CACHE_KEY);
    cmd
}

/// The `HYDRATE_CACHE_KEY` that [`hydrate`] sets.
pub const CACHE_KEY: &str = "test-cache-key-0123456789abcdef0123456789abcdef";

/// `hydrate render --root ROOT`, ready for more arguments.
pub fn render_at(root: &Path) -> assert_cmd::Command {
    let mut cmd = hydrate();
    cmd.arg("render").arg("--root").arg(root);
    cmd
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A copy of the demo repository (environments/ and testdata/apps/) in a temp dir.
pub fn demo_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &repo().join("environments"),
        &dir.path().join("environments"),
    );
    copy_tree(
        &repo().join("testdata/apps"),
        &dir.path().join("testdata/apps"),
    );
    dir
}

/// Every file under `root`, relative, sorted, without hydrate's own
/// bookkeeping (`.hydrate/`).
pub fn list_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".hydrate") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// A home directory for git with nothing from the machine in it: no system
/// config (`GIT_CONFIG_NOSYSTEM`), a `.gitconfig` with a fixed identity,
/// `main` as the initial branch and no signing. Commands made with
/// [`GitHome::command`] run `git` (or hydrate, which runs `git`) there.
pub struct GitHome {
    /// The directory used as `HOME`.
    pub home: PathBuf,
}

impl GitHome {
    /// Writes `DIR/home/.gitconfig`.
    pub fn new(dir: &Path) -> GitHome {
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            "[user]\n\tname = Dev\n\temail = dev@example.com\n\
             [init]\n\tdefaultBranch = main\n\
             [commit]\n\tgpgsign = false\n\
             [advice]\n\tdetachedHead = false\n",
        )
        .unwrap();
        GitHome { home }
    }

    /// `program` with the isolated git environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE");
        cmd
    }

    /// Runs `git -C DIR ARGS…`, asserts it succeeded, returns its trimmed stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .command("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Whether `git -C DIR ARGS…` succeeds.
    pub fn git_ok(&self, dir: &Path, args: &[&str]) -> bool {
        self.command("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
            .status
            .success()
    }
}

/// Runs `git -C dir ARGS` as a fixed test user (no signing) and returns its
/// stdout with trailing whitespace removed; panics with git's stderr when
/// it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Dev", "-c", "user.email=dev@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git is installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// HEAD, the index and every working-tree file, byte for byte.
pub fn workspace_state(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut state = std::collections::BTreeMap::new();
    state.insert("HEAD".into(), std::fs::read(dir.join(".git/HEAD")).unwrap());
    state.insert(
        "HEAD sha".into(),
        git(dir, &["rev-parse", "HEAD"]).into_bytes(),
    );
    state.insert(
        "index".into(),
        std::fs::read(dir.join(".git/index")).unwrap(),
    );
    // The render cache ignores itself (`.hydrate/cache/.gitignore`); it is
    // hydrate's bookkeeping, as `list_files` treats `.hydrate/`.
    let status: Vec<String> = git(dir, &["status", "--porcelain", "--ignored"])
        .lines()
        .filter(|l| !l.starts_with("!! .hydrate/"))
        .map(str::to_string)
        .collect();
    state.insert("status".into(), status.join("\n").into_bytes());
    for f in list_files(dir) {
        if !f.starts_with(".git/") {
            state.insert(f.clone(), std::fs::read(dir.join(&f)).unwrap());
        }
    }
    state
}

/// xorshift64*, for the kill tests' kill points: small, no dependency,
/// and the same sequence for the same seed everywhere.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// A seed from the clock (odd, so never the generator's fixed point 0),
/// for a test that prints it when it fails.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1
}
