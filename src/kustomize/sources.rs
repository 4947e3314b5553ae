//! Files read during one run, each read and parsed once while it is in
//! use: a base shared by every environment's overlay, and a component used
//! by hundreds of them, would otherwise be read and parsed again for each.
//! One [`Sources`] lives as long as one `hydrate render` (or one build when
//! none is given); it is shared by every rayon thread. Only successful reads
//! are kept, so an error is reported by each build that meets it, exactly
//! as without the cache.
//!
//! It is bounded: entries are weighed by an estimate of the memory they
//! hold, and past the budget the least recently used go (a base is read
//! again if it is needed after that; a component many apps use stays). So
//! its memory does not grow with the repository. Callers order the builds
//! so that those sharing files run close together.
//!
//! It must not outlive the run: files can change between runs (promotion
//! edits them, then renders), and it knows nothing of what the files mean.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::model::Kustomization;
use super::resource::read_file;
use super::Error;
use crate::fx::FxBuild;
use crate::lock::lock;
use crate::realpath::Realpath;
use crate::yaml::Node;

/// The default budget, in estimated bytes held. Jobs run grouped by app,
/// so what an app's environments share is reused while it is kept; 16 MB
/// renders the 500-app bench as fast as 48 MB did with 25 MB less peak
/// RSS (docs/performance.md).
pub const DEFAULT_BUDGET: usize = 16 << 20;

/// About how many bytes of parsed nodes one byte of YAML text becomes.
const NODES_PER_TEXT_BYTE: usize = 8;

/// The files of one run, keyed by the path they were read by.
pub struct Sources {
    budget: usize,
    lru: Mutex<Lru>,
    /// Where the run's directories really are ([`Sources::canonical`]).
    real: Realpath,
    /// Told of each file read from disk ([`Sources::with_hook`]).
    hook: Option<ReadHook>,
}

/// Told of every file a [`Sources`] reads from disk: the path as asked
/// for, its metadata (taken from the open file before reading) and its
/// bytes. The render cache hashes the files a render read here, instead
/// of opening each of them again when it stores the result.
pub type ReadHook = Arc<dyn Fn(&Path, &std::fs::Metadata, &[u8]) + Send + Sync>;

/// Directories [`Sources::canonical`] remembers at most (the memo starts
/// over past it): builds run grouped by app, so the directories they share
/// are resolved close together, and the memo stays small at any size.
const REAL_DIRS: usize = 16 << 10;

impl Default for Sources {
    fn default() -> Sources {
        Sources::with_budget(DEFAULT_BUDGET)
    }
}

/// What is kept of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Bytes,
    Resources,
    Kustomization,
}

#[derive(Clone)]
enum Value {
    Bytes(Arc<[u8]>),
    Resources(Arc<Vec<Node>>),
    Kustomization(Arc<Kustomization>),
}

struct Entry {
    value: Value,
    cost: usize,
    used: u64,
}

/// The entries, and their order of last use.
#[derive(Default)]
struct Lru {
    entries: HashMap<(Kind, PathBuf), Entry, FxBuild>,
    by_use: BTreeMap<u64, (Kind, PathBuf)>,
    clock: u64,
    total: usize,
}

impl Lru {
    fn get(&mut self, key: &(Kind, PathBuf)) -> Option<Value> {
        self.clock += 1;
        let now = self.clock;
        let e = self.entries.get_mut(key)?;
        self.by_use.remove(&e.used);
        e.used = now;
        self.by_use.insert(now, key.clone());
        Some(e.value.clone())
    }

    /// Keeps `value`, then drops the least recently used entries (never
    /// the new one) while the total is over `budget`.
    fn put(&mut self, key: (Kind, PathBuf), value: Value, cost: usize, budget: usize) {
        self.clock += 1;
        let now = self.clock;
        if let Some(old) = self.entries.remove(&key) {
            self.by_use.remove(&old.used);
            self.total -= old.cost;
        }
        self.entries.insert(
            key.clone(),
            Entry {
                value,
                cost,
                used: now,
            },
        );
        self.by_use.insert(now, key);
        self.total += cost;
        while self.total > budget {
            let Some((&used, _)) = self.by_use.iter().next() else {
                break;
            };
            if used == now {
                break;
            }
            if let Some(k) = self.by_use.remove(&used) {
                if let Some(e) = self.entries.remove(&k) {
                    self.total -= e.cost;
                }
            }
        }
    }
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lru = lock(&self.lru);
        f.debug_struct("Sources")
            .field("entries", &lru.entries.len())
            .field("weight", &lru.total)
            .field("budget", &self.budget)
            .finish()
    }
}

impl Sources {
    /// Sources that keep about `budget` bytes of files and parsed nodes.
    pub fn with_budget(budget: usize) -> Sources {
        Sources {
            budget,
            lru: Mutex::new(Lru::default()),
            real: Realpath::bounded(REAL_DIRS),
            hook: None,
        }
    }

    /// The same sources, telling `hook` of each file they read from disk.
    pub fn with_hook(mut self, hook: ReadHook) -> Sources {
        self.hook = Some(hook);
        self
    }

    /// `path` with every symlink and `..` resolved, as
    /// `std::fs::canonicalize` (Go's `filepath.EvalSymlinks`) gives it,
    /// and with its error when it fails; each directory on the way is
    /// resolved once per run instead of once per file under it.
    pub fn canonical(&self, path: &Path) -> std::io::Result<PathBuf> {
        match self.real.resolve_leaf(path) {
            Some(real) => Ok(real),
            // The error as the system gives it (and the answer, should the
            // path have appeared since).
            None => std::fs::canonicalize(path),
        }
    }

    fn get(&self, kind: Kind, path: &Path) -> Option<Value> {
        lock(&self.lru).get(&(kind, path.to_path_buf()))
    }

    fn put(&self, kind: Kind, path: &Path, value: Value, cost: usize) {
        lock(&self.lru).put((kind, path.to_path_buf()), value, cost, self.budget);
    }

    /// A file's bytes (`std::fs::read`).
    pub fn read(&self, path: &Path) -> Result<Arc<[u8]>, Error> {
        if let Some(Value::Bytes(b)) = self.get(Kind::Bytes, path) {
            return Ok(b);
        }
        let bytes: Arc<[u8]> = self
            .read_disk(path)
            .map_err(|source| Error::Read {
                path: path.to_path_buf(),
                source,
            })?
            .into();
        let cost = bytes.len() + 128;
        self.put(Kind::Bytes, path, Value::Bytes(bytes.clone()), cost);
        Ok(bytes)
    }

    /// `std::fs::read` of `path`, telling the hook: the file is stated
    /// through its handle before it is read (so the stat is of what was
    /// read), and read into room for one byte more than that size.
    fn read_disk(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let Some(hook) = &self.hook else {
            return std::fs::read(path);
        };
        let f = std::fs::File::open(path)?;
        // Without a stat (std's own read goes on without its size hint),
        // the file is read untold, and the cache hashes it by its path.
        let meta = f.metadata().ok();
        let size = meta
            .as_ref()
            .map_or(0, |m| usize::try_from(m.len()).unwrap_or(0));
        let mut bytes = Vec::with_capacity(size.saturating_add(1));
        f.take(u64::MAX).read_to_end(&mut bytes)?;
        if let Some(meta) = &meta {
            hook(path, meta, &bytes);
        }
        Ok(bytes)
    }

    /// A file's text (`std::fs::read_to_string`: invalid UTF-8 is a read error).
    fn text(&self, path: &Path) -> Result<Arc<[u8]>, Error> {
        let bytes = self.read(path)?;
        match std::str::from_utf8(&bytes) {
            Ok(_) => Ok(bytes),
            Err(_) => Err(Error::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            }),
        }
    }

    /// The resources of a resource file ([`read_file`]).
    pub fn resources(&self, path: &Path) -> Result<Arc<Vec<Node>>, Error> {
        if let Some(Value::Resources(r)) = self.get(Kind::Resources, path) {
            return Ok(r);
        }
        let bytes = self.text(path)?;
        let src = std::str::from_utf8(&bytes).unwrap_or_default();
        let nodes = Arc::new(read_file(path, src)?);
        let cost = src.len() * NODES_PER_TEXT_BYTE + 256;
        self.put(Kind::Resources, path, Value::Resources(nodes.clone()), cost);
        Ok(nodes)
    }

    /// A kustomization file, decoded ([`Kustomization::load`]).
    pub fn kustomization(&self, path: &Path) -> Result<Arc<Kustomization>, Error> {
        if let Some(Value::Kustomization(k)) = self.get(Kind::Kustomization, path) {
            return Ok(k);
        }
        let bytes = self.text(path)?;
        let src = std::str::from_utf8(&bytes).unwrap_or_default();
        let k = Arc::new(Kustomization::parse(path, src)?);
        let cost = src.len() * NODES_PER_TEXT_BYTE + 1024;
        self.put(
            Kind::Kustomization,
            path,
            Value::Kustomization(k.clone()),
            cost,
        );
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_is_told_of_each_file_read_from_disk_once() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cm.yaml");
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
        std::fs::write(&f, text).unwrap();
        type Told = Vec<(PathBuf, u64, Vec<u8>)>;
        let told: Arc<Mutex<Told>> = Arc::default();
        let tell = told.clone();
        let s = Sources::default().with_hook(Arc::new(move |p, m, b| {
            lock(&tell).push((p.to_path_buf(), m.len(), b.to_vec()));
        }));
        s.resources(&f).unwrap();
        s.read(&f).unwrap();
        assert!(s.read(&dir.path().join("absent")).is_err());
        let want = vec![(f.clone(), text.len() as u64, text.as_bytes().to_vec())];
        assert_eq!(*lock(&told), want);
    }

    #[test]
    fn a_file_is_read_once_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("cm.yaml");
        std::fs::write(
            &f,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )
        .unwrap();
        let s = Sources::default();
        let first = s.resources(&f).unwrap();
        // Changed on disk during the run: the run keeps what it read.
        std::fs::write(
            &f,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
        )
        .unwrap();
        let second = s.resources(&f).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        // A new run reads the file again.
        let again = Sources::default().resources(&f).unwrap();
        assert_eq!(
            again[0]
                .get_path(&["metadata", "name"])
                .and_then(Node::as_str),
            Some("b")
        );
    }

    #[test]
    fn an_error_is_reported_at_every_use() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bad.yaml");
        std::fs::write(&f, "kind: [\n").unwrap();
        let s = Sources::default();
        let first = s.resources(&f).unwrap_err().to_string();
        assert_eq!(s.resources(&f).unwrap_err().to_string(), first);
        let bin = dir.path().join("x.bin");
        std::fs::write(&bin, [0xff, 0xfe]).unwrap();
        let utf8 = s.resources(&bin).unwrap_err().to_string();
        assert!(
            utf8.ends_with("stream did not contain valid UTF-8"),
            "{utf8}"
        );
        assert_eq!(&*s.read(&bin).unwrap(), &[0xff, 0xfe]);
        assert!(s.read(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn past_its_budget_it_forgets_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let file = |n: &str| {
            let f = dir.path().join(format!("{n}.yaml"));
            std::fs::write(&f, format!("kind: ConfigMap\nmetadata:\n  name: {n}\n")).unwrap();
            f
        };
        let (a, b, c) = (file("a"), file("b"), file("c"));
        // Room for about two parsed files and their text.
        let s = Sources::with_budget(2 * (40 * NODES_PER_TEXT_BYTE + 256 + 40 + 128));
        let first_a = s.resources(&a).unwrap();
        s.resources(&b).unwrap();
        assert!(
            Arc::ptr_eq(&first_a, &s.resources(&a).unwrap()),
            "a is used again"
        );
        s.resources(&c).unwrap();
        assert!(
            Arc::ptr_eq(&first_a, &s.resources(&a).unwrap()),
            "b went, not a"
        );
        let lru = lock(&s.lru);
        assert!(lru.total <= s.budget, "{} > {}", lru.total, s.budget);
        assert!(!lru.entries.contains_key(&(Kind::Resources, b.clone())));
    }
}
