//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` next to the repository, when present.
pub fn shared() -> Option<PathBuf> {
    let p = repo().join("..").join("shared");
    p.is_dir().then_some(p)
}

/// The kubectl oracle (kustomize v5.7.1), when installed.
pub fn kubectl() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let p = Path::new(&home).join(".cache/oracles/kubectl");
    p.is_file().then_some(p)
}

/// The helm v3.17.3 oracle, when installed.
pub fn helm3() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let p = Path::new(&home).join(".cache/oracles/helm3");
    p.is_file().then_some(p)
}

/// The hydrate binary under test.
pub fn hydrate() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("hydrate").expect("the hydrate binary is built by cargo test")
}

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
