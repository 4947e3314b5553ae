//! The secret that authenticates the render cache's entries (HMAC-SHA256,
//! as Turborepo signs its remote cache): an entry is trusted only when it
//! was written under the same secret, so a file someone else put in
//! `.hydrate/cache/` (an artifact from another job, a checkout that ships
//! one) is never rendered into output.
//!
//! The secret is `HYDRATE_CACHE_KEY` when set (how CI jobs that pass the
//! cache between them share it), else the user's own key in
//! `$XDG_CACHE_HOME/hydrate/cache-key` (`~/.cache/hydrate/cache-key`),
//! made on first use: 32 random bytes as 64 hex digits, mode 0600, outside
//! every repository. Without either (no `HOME`, a key directory that
//! cannot be written) the cache is off for the run, with a warning: a key
//! is never kept in the repository the cache is in. This module reads the
//! environment only through [`Source`], which the CLI fills.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit};
use sha2::Sha256;

use crate::warning::{Warning, WarningKind};

/// The variable that holds a shared secret.
pub const VAR: &str = "HYDRATE_CACHE_KEY";

/// The fewest bytes a secret may have (after surrounding whitespace).
pub const MIN_LEN: usize = 32;

/// The key file, below the user's cache directory.
const KEY_FILE: &str = "hydrate/cache-key";

/// A secret that authenticates cache entries: the bytes of a text of at
/// least [`MIN_LEN`] bytes, used as the HMAC key. Its `Debug` hides it.
#[derive(Clone)]
pub struct Secret {
    text: Vec<u8>,
    /// HMAC-SHA256 keyed with `text`, cloned for each entry.
    keyed: Hmac<Sha256>,
}

impl PartialEq for Secret {
    fn eq(&self, other: &Secret) -> bool {
        self.text == other.text
    }
}

impl Eq for Secret {}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// `text` without surrounding ASCII whitespace (a secret pasted into a
    /// CI variable often ends in a newline); `None` when shorter than
    /// [`MIN_LEN`] bytes.
    pub fn from_text(text: &[u8]) -> Option<Secret> {
        let text = text.trim_ascii();
        if text.len() < MIN_LEN {
            return None;
        }
        // HMAC takes a key of any length (RFC 2104: longer ones are hashed).
        let keyed = <Hmac<Sha256> as KeyInit>::new_from_slice(text).ok()?;
        Some(Secret {
            text: text.to_vec(),
            keyed,
        })
    }

    /// A fresh HMAC-SHA256 under this secret.
    pub(super) fn mac(&self) -> Hmac<Sha256> {
        self.keyed.clone()
    }
}

/// What the secret is found from: the process environment, read by the CLI.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// `HYDRATE_CACHE_KEY`.
    pub var: Option<OsString>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache_home: Option<OsString>,
    /// `HOME`.
    pub home: Option<OsString>,
}

impl Source {
    /// Reads the three variables.
    pub fn from_env() -> Source {
        Source {
            var: std::env::var_os(VAR),
            xdg_cache_home: std::env::var_os("XDG_CACHE_HOME"),
            home: std::env::var_os("HOME"),
        }
    }

    /// Where the user's key file is: below `$XDG_CACHE_HOME` when it is an
    /// absolute path (the XDG base directory spec ignores relative ones),
    /// else below `$HOME/.cache`; `None` without either.
    pub fn key_file(&self) -> Option<PathBuf> {
        let absolute =
            |v: &Option<OsString>| v.as_ref().map(PathBuf::from).filter(|p| p.is_absolute());
        let dir = absolute(&self.xdg_cache_home)
            .or_else(|| absolute(&self.home).map(|h| h.join(".cache")))?;
        Some(dir.join(KEY_FILE))
    }
}

/// A `HYDRATE_CACHE_KEY` that cannot be used: an error (exit 2), never
/// ignored, since ignoring it would silently stop sharing a cache.
#[derive(Debug, thiserror::Error)]
#[error(
    "{VAR} is {len} bytes long; it needs at least {MIN_LEN} (a random secret, e.g. \
     the 64 hex digits of `openssl rand -hex 32`)"
)]
pub struct Error {
    /// Its length after surrounding whitespace.
    pub len: usize,
}

/// The secret for this run: `Ok(Ok(secret))`, or `Ok(Err(warning))` when
/// the cache is off for the run (no `HOME`, a key file that cannot be read
/// or made), or `Err` for a `HYDRATE_CACHE_KEY` too short to use.
pub fn resolve(src: &Source) -> Result<Result<Secret, Warning>, Error> {
    if let Some(v) = &src.var {
        let bytes = v.as_encoded_bytes();
        return Secret::from_text(bytes).map(Ok).ok_or(Error {
            len: bytes.trim_ascii().len(),
        });
    }
    let Some(path) = src.key_file() else {
        return Ok(Err(off(
            None,
            "neither HYDRATE_CACHE_KEY nor HOME (or XDG_CACHE_HOME) is set, so there is no \
             key to authenticate the render cache with",
        )));
    };
    Ok(user_key(&path).map_err(|why| off(Some(path), &why)))
}

/// The warning of a run without the cache.
fn off(file: Option<PathBuf>, why: &str) -> Warning {
    Warning::new(
        WarningKind::Cache,
        format!("{why}; the render cache is off for this run (set {VAR} to a secret of {MIN_LEN} bytes or more)"),
        file,
    )
}

/// The user's key in `path`, made there when absent. Two runs making it at
/// once end up with one key: each writes a temporary file and links it to
/// `path`, which only one link can create; the other reads the winner's.
fn user_key(path: &Path) -> Result<Secret, String> {
    match read_key(path) {
        Ok(Some(s)) => return Ok(s),
        Ok(None) => {}
        Err(why) => return Err(why),
    }
    let dir = path.parent().ok_or("the key file has no directory")?;
    create_private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).map_err(|e| format!("no random bytes for a new key: {e}"))?;
    let text: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = dir.join(format!(".cache-key.{}.{}", std::process::id(), &text[..16]));
    let made = write_private(&tmp, format!("{text}\n").as_bytes())
        .and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match made {
        Ok(()) => Secret::from_text(text.as_bytes()).ok_or_else(|| "a short key".to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match read_key(path) {
            Ok(Some(s)) => Ok(s),
            Ok(None) => Err("the key file vanished while it was made".into()),
            Err(why) => Err(why),
        },
        Err(e) => Err(format!("cannot write a new key: {e}")),
    }
}

/// The key in `path`; `Ok(None)` when there is no file.
fn read_key(path: &Path) -> Result<Option<Secret>, String> {
    match std::fs::read(path) {
        Ok(bytes) => Secret::from_text(&bytes).map(Some).ok_or_else(|| {
            format!(
                "holds no key (at least {MIN_LEN} bytes expected; hydrate writes 64 hex \
                 digits); remove it and hydrate makes a new one"
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read the key: {e}")),
    }
}

/// `dir` and its missing parents, readable by the user alone.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
}

/// A new file at `path` (never an existing one) holding `bytes`, readable
/// by the user alone, on disk before it is linked into place.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = o.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(var: Option<&str>, xdg: Option<&Path>, home: Option<&Path>) -> Source {
        Source {
            var: var.map(OsString::from),
            xdg_cache_home: xdg.map(OsString::from),
            home: home.map(OsString::from),
        }
    }

    #[test]
    fn the_variable_wins_and_must_be_long_enough() {
        let long = "0123456789abcdef0123456789abcdef";
        let s = resolve(&source(Some(&format!(" {long}\n")), None, None));
        assert_eq!(
            s.unwrap().unwrap(),
            Secret::from_text(long.as_bytes()).unwrap()
        );
        for short in ["", "   ", &long[1..]] {
            let e = resolve(&source(Some(short), None, None)).unwrap_err();
            assert!(e.to_string().starts_with("HYDRATE_CACHE_KEY is "), "{e}");
        }
        assert_eq!(
            format!("{:?}", Secret::from_text(long.as_bytes())),
            "Some(Secret(..))"
        );
    }

    #[test]
    fn the_user_key_is_made_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let src = source(None, None, Some(&home));
        let path = home.join(".cache/hydrate/cache-key");
        assert_eq!(src.key_file(), Some(path.clone()));
        let first = resolve(&src).unwrap().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.len(), 65);
        assert!(text.trim_end().bytes().all(|b| b.is_ascii_hexdigit()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        assert_eq!(resolve(&src).unwrap().unwrap(), first, "the same key again");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
        // XDG_CACHE_HOME, when absolute, is used instead of ~/.cache.
        let xdg = dir.path().join("xdg");
        let other = source(None, Some(&xdg), Some(&home));
        assert_eq!(other.key_file(), Some(xdg.join("hydrate/cache-key")));
        assert_ne!(resolve(&other).unwrap().unwrap(), first);
        let relative = source(None, Some(Path::new("rel")), Some(&home));
        assert_eq!(relative.key_file(), Some(path));
    }

    #[test]
    fn racing_runs_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let src = source(None, Some(dir.path()), None);
        let keys: Vec<Secret> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| resolve(&src).unwrap().unwrap()))
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let on_disk = std::fs::read(dir.path().join("hydrate/cache-key")).unwrap();
        let kept = Secret::from_text(&on_disk).unwrap();
        assert!(keys.iter().all(|k| *k == kept));
        let left = std::fs::read_dir(dir.path().join("hydrate"))
            .unwrap()
            .count();
        assert_eq!(left, 1, "temporary files removed");
    }

    #[test]
    fn without_a_usable_key_file_the_cache_is_off_with_a_warning() {
        let w = resolve(&source(None, None, None)).unwrap().unwrap_err();
        assert_eq!(w.kind, WarningKind::Cache);
        assert!(w.message.contains("no key"), "{}", w.message);
        let dir = tempfile::tempdir().unwrap();
        // A key file that holds no key is the user's: left alone.
        let path = dir.path().join("hydrate/cache-key");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "short\n").unwrap();
        let w = resolve(&source(None, Some(dir.path()), None))
            .unwrap()
            .unwrap_err();
        assert_eq!(w.file.as_deref(), Some(path.as_path()));
        assert!(w.message.contains("holds no key"), "{}", w.message);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "short\n");
        // A cache directory that cannot be made (a file in its place).
        let blocked = dir.path().join("blocked");
        std::fs::write(&blocked, "").unwrap();
        let w = resolve(&source(None, Some(&blocked), None))
            .unwrap()
            .unwrap_err();
        assert!(w.message.contains("Not a directory"), "{}", w.message);
        assert!(w.message.contains("off for this run"), "{}", w.message);
    }

    #[cfg(unix)]
    #[test]
    fn an_unwritable_cache_directory_turns_the_cache_off() {
        // A cache home that is a file: nothing can be created under it,
        // whoever runs the test (root writes through a directory's mode).
        let dir = tempfile::tempdir().unwrap();
        let ro = dir.path().join("not-a-directory");
        std::fs::write(&ro, "").unwrap();
        let w = resolve(&source(None, Some(&ro), None))
            .unwrap()
            .unwrap_err();
        assert!(
            w.message.contains("the render cache is off"),
            "{}",
            w.message
        );
        assert_eq!(
            w.file.as_deref(),
            Some(ro.join("hydrate/cache-key").as_path())
        );
        assert_eq!(std::fs::read(&ro).unwrap(), b"", "nothing written");
    }
}
