//! The render cache in `<root>/.hydrate/cache/`: content-addressed, so a
//! render whose inputs are unchanged is not run again, and authenticated,
//! so the cache can make hydrate faster but never wrong: every entry and
//! the index carry an HMAC-SHA256 under a [`Secret`] kept outside the
//! repository, and anything that does not verify (written by someone
//! without the secret, or altered) is rendered again, with a warning.
//!
//! As ccache's "direct mode" keeps them:
//! - the [`index`] remembers, per job key, the inputs the job's last render
//!   read ([`inputs::of`] its `files_read`, named absolute). The job key
//!   hashes hydrate's build, the render options, where the repository is
//!   (as its inputs are spelled) and the job's whole resolved configuration.
//!   It also holds the stat index, so inputs whose `stat` is unchanged are
//!   not read again, and each job's last render time (heaviest first).
//! - `<input key>.out`: a rendered result. The input key hashes the job key
//!   and, for every input, its path and what it holds now. A render reads
//!   the same inputs as long as they hold the same bytes, so an unchanged
//!   input key means an unchanged result.
//!
//! An entry (or index) that is corrupt, truncated, of another format,
//! under another key or unauthentic is ignored and overwritten by the next
//! render. Entries are found by their key, a hash of the inputs, which
//! nothing in the cache directory can choose: a file there is at most
//! ignored.
//! Entries are written to a temporary file and renamed, so concurrent runs
//! (shards on one runner) never see half an entry; the index is merged
//! with the one on disk when written, so they do not lose each other's
//! jobs. The cache is bounded: after a run that stored a 256th of the
//! bound (or, by chance, one that stored less), the least recently used
//! entries (by modification time, refreshed on a hit at most hourly) go
//! until it fits. Failing to read or write the cache never fails
//! a render. It writes nowhere but its directory, which holds a
//! `.gitignore` of `*` so git never picks it up.
//!
//! Beside a result, `<findings key>.val` holds what validation found in it
//! ([`Cache::store_findings`]), keyed by the result's input key and a tag
//! the validator chooses (its format and the Kubernetes version); the
//! schemas are compiled into hydrate, so the build in the job key covers
//! them. A caller that validates ([`Cache::with_findings`]) gets, on a
//! hit, those findings and identity-only documents, or, when none are
//! stored, whole documents to validate.

mod entry;
mod index;
mod inputs;
pub(crate) mod secret;
pub mod settled;
mod stat_table;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use self::entry::{Kind, Reader, Refused, Writer};
use self::index::{Index, JobRecord};
use super::{AppWarning, Job, Rendered};
use crate::fx::FxBuild;
use crate::k8s::{Body, Gvk, Object, ObjectId};
use crate::warning::{Warning, WarningKind};
use crate::yaml::Node;

/// Where the cache lives, relative to the repository root.
pub const CACHE_DIR: &str = ".hydrate/cache";

pub use self::entry::Key;
pub use self::inputs::{Name, Stat, RACY};
pub use self::secret::Secret;
pub use self::settled::Listing;
pub use self::stat_table::StatTable;

/// The index's file name in the cache directory.
const INDEX: &str = "index";

/// At most this many newly learnt stats (and no new job record) leave the
/// index unwritten ([`Cache::finish`]): hashing that many small files
/// again costs less than rewriting the index of a large repository.
const LEARNT_UNWRITTEN: usize = 64;

/// The default size bound.
pub const DEFAULT_LIMIT: u64 = 1 << 30;

/// A hit refreshes its entries' time only when older than this, so an
/// unchanged run does not write to every entry.
const TOUCH_AFTER: Duration = Duration::from_secs(3600);

/// The render cache of one run.
pub struct Cache {
    dir: PathBuf,
    /// What entries and the index are authenticated under.
    secret: Secret,
    /// Whether the index on disk failed authentication (every job then
    /// misses, and says why).
    index_unauthentic: bool,
    /// Whether there was an index and it was trusted (a foreign or
    /// unauthentic one is always replaced).
    index_usable: bool,
    /// hydrate's version and build; part of every job key.
    build: String,
    /// The render options every job renders with, as their `Debug` text
    /// (part of every job key; formatted once, not once per job).
    options: String,
    limit: u64,
    /// Shared with the hook that hashes what renders read
    /// ([`Cache::read_hook`]).
    hasher: Arc<inputs::Hasher>,
    /// The working directory, asked once: relative inputs are spelled
    /// from it ([`inputs::of`]); `None` when it cannot be read or is not
    /// UTF-8 (then they stay relative).
    cwd: Option<PathBuf>,
    /// The repository root as the run spelled it (the cache directory's
    /// `.hydrate/cache` taken off; empty for a cache elsewhere): jobs are
    /// keyed by their paths relative to it.
    root: PathBuf,
    /// Job key -> its last render, as loaded and updated by this run.
    jobs: Mutex<HashMap<Key, JobRecord>>,
    /// Whether a hit carries every object's whole document (parsed from
    /// its printed text) instead of only its identity: asked for by
    /// callers that read fields (validation).
    whole_documents: bool,
    /// Environments whose guards never read a Secret's values (`secrets:
    /// allow`): their Secrets come back identity-only like any object,
    /// instead of parsed again from their printed text on every hit.
    secrets_unread: std::collections::HashSet<String>,
    /// Environment → the tag its validation findings are stored under
    /// ([`Cache::with_findings`]).
    findings_tags: HashMap<String, String>,
    /// (environment, app) → the input key of its result in this run, for
    /// [`Cache::store_findings`].
    result_keys: Mutex<HashMap<(String, String), Key>>,
    /// (environment, app) → stored findings a hit found
    /// ([`Cache::take_findings`]).
    found_findings: Mutex<HashMap<(String, String), Vec<u8>>>,
    /// The index file's stat when this run loaded it (`None`: no index).
    loaded: Option<inputs::Stat>,
    /// Whether `jobs` changed (the index is then written).
    jobs_changed: std::sync::atomic::AtomicBool,
    hits: AtomicUsize,
    stored: AtomicUsize,
    /// Bytes of the entries stored (see [`Cache::evict`]).
    stored_bytes: std::sync::atomic::AtomicU64,
    unauthentic: AtomicUsize,
}

/// Inputs of some jobs with their trusted stats ([`Cache::trusted_inputs`]).
#[derive(Debug, Default)]
pub struct TrustedInputs {
    /// Every trusted input of the jobs and its stat, sorted by name, each
    /// once (an input whose name is not UTF-8 is not trusted: a record
    /// cannot hold it).
    pub table: StatTable,
    /// Per job, in the order asked: its inputs as ascending indices into
    /// `table`; `None` for a job without a record or with an input whose
    /// stat is not trusted.
    pub jobs: Vec<Option<Vec<u32>>>,
}

/// What the cache holds for a job.
pub enum Lookup {
    /// Its result.
    Hit(Rendered),
    /// Nothing usable: render it.
    Miss,
    /// An entry or the index failed authentication: render it, and say
    /// so ([`Cache::unauthentic_warning`]).
    Unauthentic,
}

impl Lookup {
    /// The result, on a hit.
    pub fn hit(self) -> Option<Rendered> {
        match self {
            Lookup::Hit(r) => Some(r),
            _ => None,
        }
    }
}

/// How a run used the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Renders answered from the cache.
    pub hits: usize,
    /// Renders stored.
    pub stored: usize,
    /// Inputs read and hashed.
    pub inputs_hashed: usize,
    /// Inputs the stat index answered for (not read).
    pub inputs_indexed: usize,
    /// Entries that failed authentication (rendered again).
    pub unauthentic: usize,
}

impl Cache {
    /// The cache of the repository at `root`, for this build of hydrate
    /// (entries another build wrote are not trusted).
    ///
    /// There is no cache (every job renders) when `.hydrate` or its
    /// `cache` is a symlink or not a directory: hydrate never writes
    /// through a symlink, and the cache must stay inside the repository.
    pub fn open(root: &Path, secret: Secret) -> Option<Cache> {
        let dir = dir_of(root)?;
        Some(Cache::at(dir, build().to_string(), DEFAULT_LIMIT, secret))
    }

    /// A cache in `dir` for `build` (hydrate's version and build), holding
    /// at most about `limit` bytes, its entries authenticated under
    /// `secret`.
    pub fn at(dir: PathBuf, build: String, limit: u64, secret: Secret) -> Cache {
        // Stat before reading: a write after this moves the stat, and
        // `finish` then merges with what was written.
        let loaded = inputs::Stat::of(&dir.join(INDEX));
        let found = index::load(&dir.join(INDEX), &secret);
        let index_unauthentic = found == Err(Refused::Unauthentic);
        let index_usable = loaded.is_some() && found.is_ok();
        let Index { stats, jobs } = found.unwrap_or_default();
        let root = match dir.ends_with(CACHE_DIR) {
            true => dir.ancestors().nth(2).map(Path::to_path_buf),
            false => None,
        };
        let cwd = working_dir();
        // The inputs an entry names are spelled absolute: the job keys are
        // this location's, so a repository copied or moved with its
        // cache finds none of the entries that name the old place's files.
        let here = match &root {
            Some(root) => inputs::spelled(root, cwd.as_deref()),
            None => PathBuf::new(),
        };
        Cache {
            root: root.unwrap_or_default(),
            loaded,
            dir,
            secret,
            index_unauthentic,
            index_usable,
            build,
            options: format!("{:?}\0{here:?}\0", super::build_options(None)),
            limit,
            hasher: Arc::new(inputs::Hasher::new(stats)),
            cwd,
            jobs: Mutex::new(jobs),
            whole_documents: false,
            secrets_unread: Default::default(),
            findings_tags: HashMap::new(),
            result_keys: Mutex::default(),
            found_findings: Mutex::default(),
            jobs_changed: Default::default(),
            hits: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            stored_bytes: Default::default(),
            unauthentic: AtomicUsize::new(0),
        }
    }

    /// The same cache, for a validating caller: `tags` maps each validated
    /// environment to what its findings are stored under. A hit whose
    /// findings are stored carries identity-only documents (and the
    /// findings, [`Cache::take_findings`]); any other hit carries whole
    /// documents, to be validated (and stored, [`Cache::store_findings`]).
    pub fn with_findings(mut self, tags: HashMap<String, String>) -> Cache {
        self.whole_documents = true;
        self.findings_tags = tags;
        self
    }

    /// The same cache, told that the guards of `envs` let Secrets through
    /// unread (`secrets: allow`, a directory output's default): a hit in
    /// those environments carries its Secrets identity-only. Parsing every
    /// Secret back from its printed text was about a tenth of an unchanged
    /// run on the 500-app bench (one Secret per app).
    pub fn with_secrets_unread(mut self, envs: impl IntoIterator<Item = String>) -> Cache {
        self.secrets_unread = envs.into_iter().collect();
        self
    }

    /// The key of the findings of the result under `ik`, validated under
    /// `tag`.
    fn findings_key(ik: &Key, tag: &str) -> Key {
        let mut h = Sha256::new();
        h.update(b"hydrate findings\0");
        h.update(ik);
        h.update(tag.as_bytes());
        h.finalize().into()
    }

    /// The stored findings of the result under `ik` for `job`, if any.
    fn read_findings(&self, job: &Job, ik: &Key) -> Option<Vec<u8>> {
        let tag = self.findings_tags.get(&job.env)?;
        let fk = Self::findings_key(ik, tag);
        let bytes = self.read(&fk, Kind::Findings)?;
        entry::open(&bytes, Kind::Findings, &fk, &self.secret)
            .ok()
            .map(<[u8]>::to_vec)
    }

    /// The findings a hit for `env`/`app` found stored (taken: asked once).
    pub fn take_findings(&self, env: &str, app: &str) -> Option<Vec<u8>> {
        let mut found = self.found_findings.lock().ok()?;
        found.remove(&(env.to_string(), app.to_string()))
    }

    /// Stores what validation found in the result of `env`/`app` rendered
    /// or found in this run, beside it. Best effort, as [`Cache::store`].
    pub fn store_findings(&self, env: &str, app: &str, payload: &[u8]) {
        let Some(tag) = self.findings_tags.get(env) else {
            return;
        };
        let ik = self
            .result_keys
            .lock()
            .ok()
            .and_then(|k| k.get(&(env.to_string(), app.to_string())).copied());
        let Some(ik) = ik else { return };
        if self.ensure_dir().is_err() {
            return;
        }
        let fk = Self::findings_key(&ik, tag);
        let mut w = Writer::for_entry(payload.len());
        w.buf.extend_from_slice(payload);
        let sealed = w.seal(Kind::Findings, &fk, &self.secret);
        if self.write(&self.path(&fk, Kind::Findings), &sealed) {
            self.stored_something(sealed.len());
        }
    }

    fn remember_key(&self, job: &Job, ik: Key) {
        if self.findings_tags.contains_key(&job.env) {
            if let Ok(mut k) = self.result_keys.lock() {
                k.insert((job.env.clone(), job.app.clone()), ik);
            }
        }
    }

    /// Hits and stores so far.
    pub fn stats(&self) -> Stats {
        let (inputs_hashed, inputs_indexed) = self.hasher.counts();
        Stats {
            hits: self.hits.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            inputs_hashed,
            inputs_indexed,
            unauthentic: self.unauthentic.load(Ordering::Relaxed),
        }
    }

    /// For each of `jobs`: every input its render read, as the index
    /// records it, with the stat it had when this run hashed it (or the
    /// stat index vouched for it); `None` for a job with no record or with
    /// a stat that cannot be trusted ([`RACY`]): what a
    /// [`settled::Settled`] record needs. The inputs are one shared table
    /// with each job's share as indices into it: at 2,000 apps, one
    /// (name, stat) pair per job and input was a third of the run's peak
    /// memory. Called before [`Cache::finish`], which frees the run's memos.
    pub fn trusted_inputs(&self, jobs: &[&Job]) -> TrustedInputs {
        let keys: Vec<Key> = jobs.iter().map(|j| self.job_key(j)).collect();
        let Ok(records) = self.jobs.lock() else {
            return TrustedInputs {
                table: StatTable::default(),
                jobs: vec![None; jobs.len()],
            };
        };
        let each: Vec<Option<&[Name]>> = keys
            .iter()
            .map(|k| Some(&*records.get(k)?.inputs))
            .collect();
        // The records name 1.4 million inputs at 10,000 apps, a quarter
        // million distinct. A path is one allocation however many records
        // name it (see `Name`), so the allocation tells most repeats apart
        // without comparing paths; the sort then orders the distinct ones
        // (and merges any path held by two allocations).
        let mut each_once: HashSet<*const u8, FxBuild> = HashSet::default();
        let mut names: Vec<&Name> = each
            .iter()
            .flatten()
            .flat_map(|v| v.iter())
            .filter(|n| each_once.insert(address(n)))
            .collect();
        names.sort_unstable();
        names.dedup();
        // Each name's place in the table: only trusted ones have one.
        let text = names.iter().map(|n| n.len()).sum();
        let mut table = StatTable::with_capacity(names.len(), text);
        let mut at: Vec<Option<u32>> = Vec::with_capacity(names.len());
        let mut names_told = names.iter();
        self.hasher.trusted_stats(&names, |st| {
            let n = names_told.next();
            at.push(place(&mut table, n.and_then(|n| n.to_str()), st));
        });
        // Each name's place, by its allocation (the path's bytes are
        // searched only for an allocation `names` does not hold).
        let by_address: HashMap<*const u8, usize, FxBuild> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (address(n), i))
            .collect();
        let jobs = each
            .into_iter()
            .map(|inputs| {
                let inputs = inputs?;
                let mut mine = Vec::with_capacity(inputs.len());
                for n in inputs {
                    let i = match by_address.get(&address(n)) {
                        Some(i) => *i,
                        None => names.binary_search(&n).ok()?,
                    };
                    mine.push((*at.get(i)?)?);
                }
                mine.sort_unstable();
                mine.dedup();
                Some(mine)
            })
            .collect();
        TrustedInputs { table, jobs }
    }

    /// The key of a job: this build, the render options and the job's
    /// resolved configuration (every field, so a new option is never left
    /// out of the key).
    fn job_key(&self, job: &Job) -> Key {
        let mut h = Sha256::new();
        h.update(b"hydrate render cache\0");
        h.update(self.build.as_bytes());
        h.update(b"\0");
        h.update(self.options.as_bytes());
        job.source.key_into(&self.root, &mut h);
        h.finalize().into()
    }

    /// The key of a result: the job key and what each input holds now.
    fn input_key(&self, job_key: &Key, paths: &[inputs::Name]) -> Key {
        let mut h = Sha256::new();
        h.update(job_key);
        for p in paths {
            let bytes = p.as_encoded_bytes();
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
            h.update(self.hasher.hash_name(p));
        }
        h.finalize().into()
    }

    fn path(&self, key: &Key, kind: Kind) -> PathBuf {
        let ext = match kind {
            Kind::Index => "index",
            Kind::Output => "out",
            Kind::Findings => "val",
            Kind::Settled => "settled",
        };
        self.dir.join(format!("{}.{ext}", entry::hex(key)))
    }

    /// Reads an entry, refreshing its time when it is old.
    fn read(&self, key: &Key, kind: Kind) -> Option<Vec<u8>> {
        let mut f = std::fs::File::open(self.path(key, kind)).ok()?;
        let meta = f.metadata().ok()?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).ok()?);
        f.read_to_end(&mut bytes).ok()?;
        let now = SystemTime::now();
        if meta
            .modified()
            .is_ok_and(|m| now.duration_since(m).unwrap_or_default() > TOUCH_AFTER)
        {
            let _ = f.set_modified(now);
        }
        Some(bytes)
    }

    /// The cached result of `job`, if its inputs are unchanged since it
    /// was stored and its entry is intact and authentic.
    pub fn lookup(&self, job: &Job) -> Lookup {
        let jk = self.job_key(job);
        let known = self.jobs.lock().ok();
        let Some(paths) = known.and_then(|j| j.get(&jk).map(|r| r.inputs.clone())) else {
            return match self.index_unauthentic {
                true => Lookup::Unauthentic,
                false => Lookup::Miss,
            };
        };
        let ik = self.input_key(&jk, &paths);
        let Some(bytes) = self.read(&ik, Kind::Output) else {
            return Lookup::Miss;
        };
        let payload = match entry::open(&bytes, Kind::Output, &ik, &self.secret) {
            Ok(p) => p,
            Err(Refused::Foreign) => return Lookup::Miss,
            Err(Refused::Unauthentic) => {
                self.unauthentic.fetch_add(1, Ordering::Relaxed);
                return Lookup::Unauthentic;
            }
        };
        let findings = self.read_findings(job, &ik);
        let needs = Needs {
            always: self.whole_documents && findings.is_none(),
            secrets: !self.secrets_unread.contains(&job.env),
        };
        match decode_rendered(payload, job, needs) {
            Some(r) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                self.remember_key(job, ik);
                if let (Some(f), Ok(mut found)) = (findings, self.found_findings.lock()) {
                    found.insert((job.env.clone(), job.app.clone()), f);
                }
                Lookup::Hit(r)
            }
            None => Lookup::Miss,
        }
    }

    /// The warning for a job rendered again because its entry (or the
    /// index) failed authentication: one text for every such job, so it is
    /// printed once, naming them.
    pub fn unauthentic_warning(&self) -> Warning {
        Warning::new(
            WarningKind::Cache,
            format!(
                "a render cache entry failed authentication (written without this run's \
                 key, or altered): ignored and rendered again; jobs that share a cache \
                 need the same {}",
                secret::VAR
            ),
            Some(self.dir.clone()),
        )
    }

    /// What kustomize is to tell the cache of each file it reads (see
    /// [`inputs::Hasher::saw_file`]): the file is then hashed from the
    /// bytes the render read, not opened again by [`Cache::store`] (a cold
    /// run read every input twice, a third of its system calls).
    pub fn read_hook(&self) -> crate::kustomize::ReadHook {
        let hasher = self.hasher.clone();
        let cwd = self.cwd.clone();
        Arc::new(move |path, meta, bytes| {
            let name = inputs::spelled(path, cwd.as_deref());
            hasher.saw_file(name.as_os_str(), inputs::Stat::of_metadata(meta), bytes);
        })
    }

    /// Stores `r`, the result of rendering `job`, which took `took`.
    /// Best effort: a cache that cannot be written is no cache.
    pub fn store(&self, job: &Job, r: &Rendered, took: Duration) {
        let Some(payload) = encode_rendered(r) else {
            return;
        };
        let paths = inputs::of(&r.files_read, self.cwd.as_deref(), |p| {
            self.hasher.typed_entry(p.as_os_str(), None).2
        });
        if paths.iter().any(|p| p.to_str().is_none()) {
            return;
        }
        // Each path as the hasher holds it: one allocation per distinct
        // path, however many job records name it.
        let paths: Arc<[inputs::Name]> = paths
            .iter()
            .map(|p| self.hasher.entry(p.as_os_str(), None).0)
            .collect();
        let jk = self.job_key(job);
        let ik = self.input_key(&jk, &paths);
        if self.ensure_dir().is_err() {
            return;
        }
        self.remember_key(job, ik);
        let sealed = payload.seal(Kind::Output, &ik, &self.secret);
        if !self.write(&self.path(&ik, Kind::Output), &sealed) {
            return;
        }
        let record = JobRecord {
            inputs: paths,
            micros: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        };
        if let Ok(mut jobs) = self.jobs.lock() {
            // A new render time alone is not worth rewriting the index.
            let same = jobs.get(&jk).is_some_and(|was| was.inputs == record.inputs);
            if !same {
                jobs.insert(jk, record);
                self.jobs_changed.store(true, Ordering::Relaxed);
            }
        }
        self.stored_something(sealed.len());
    }

    /// Counts an entry of `len` bytes stored.
    fn stored_something(&self, len: usize) {
        self.stored.fetch_add(1, Ordering::Relaxed);
        let len = u64::try_from(len).unwrap_or(u64::MAX);
        self.stored_bytes.fetch_add(len, Ordering::Relaxed);
    }

    /// The order to run `jobs` in: heaviest first, by each job's last
    /// render time; jobs never rendered (their weight unknown) before all
    /// others, in plan order. Both cores stay busy to the end instead of
    /// one finishing a long chart render alone.
    pub fn order(&self, jobs: &[Job]) -> Vec<usize> {
        let known = self.jobs.lock().ok();
        let weight = |j: &Job| {
            known
                .as_ref()
                .and_then(|k| k.get(&self.job_key(j)).map(|r| r.micros))
                .unwrap_or(u64::MAX)
        };
        let mut order: Vec<(u64, usize)> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| (weight(j), i))
            .collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        order.into_iter().map(|(_, i)| i).collect()
    }

    /// At the end of a run: evicts (see [`Cache::evict`]) and writes the
    /// index when it learnt anything, merged with the index on disk (which
    /// a concurrent run may have written) so neither loses the other's
    /// jobs. The last use of the cache in a run: its job records are
    /// moved into the index, not copied.
    pub fn finish(&self) {
        self.evict();
        let jobs_changed = self.jobs_changed.load(Ordering::Relaxed);
        if !(self.hasher.changed() || jobs_changed) || self.ensure_dir().is_err() {
            return;
        }
        // Taken, not copied: the run is over, and at 2,000 apps the
        // records and the stat index are tens of megabytes each.
        let learnt = self.hasher.take_learnt();
        // The stat index is a memo: a path it does not know (or knows an
        // older stat of) is read and hashed again, never trusted wrongly.
        // A few new stats and no new job record are not worth rewriting an
        // index of every input (at 10,000 apps, 357,000 stats and a
        // quarter of the CPU of a run after one file changed): the next
        // runs hash those few files again until enough are new.
        if !jobs_changed && self.index_usable && learnt.len() <= LEARNT_UNWRITTEN {
            return;
        }
        let Ok(mut jobs) = self.jobs.lock().map(|mut j| std::mem::take(&mut *j)) else {
            return;
        };
        let prior = self.hasher.prior();
        let path = self.dir.join(INDEX);
        let bytes = if inputs::Stat::of(&path) == self.loaded {
            // Nobody wrote the index since this run loaded it (or found
            // none, as a cold run does): `prior` and the job records
            // already hold it, so it is not loaded again, and `prior` is
            // chained behind what was learnt, not copied. (Copied into one
            // map, a cold run's 10,000 apps took 120 MB more at its peak.)
            let learns =
                |p: &std::ffi::OsStr| learnt.binary_search_by(|(n, _, _)| (**n).cmp(p)).is_ok();
            let rest = prior
                .iter()
                .filter(|(p, _)| !learns(p))
                .map(|(p, (st, k))| (&**p, st, k));
            let learnt = learnt.iter().map(|(p, st, k)| (&**p, st, k));
            index::encode_parts(learnt.chain(rest), &jobs, &self.secret)
        } else {
            let mut stats: inputs::Known =
                learnt.into_iter().map(|(p, st, k)| (p, (st, k))).collect();
            for (p, e) in prior {
                stats.entry(p.clone()).or_insert(*e);
            }
            // An index that fails authentication adds nothing.
            let on_disk = index::load(&path, &self.secret).unwrap_or_default();
            for (k, rec) in on_disk.jobs {
                jobs.entry(k).or_insert(rec);
            }
            for (p, e) in on_disk.stats {
                stats.entry(p).or_insert(e);
            }
            index::encode(&Index { stats, jobs }, &self.secret)
        };
        self.write(&path, &bytes);
    }

    /// Creates the directory with its `.gitignore` and `CACHEDIR.TAG`.
    fn ensure_dir(&self) -> std::io::Result<()> {
        ensure_dir(&self.dir)
    }

    /// Writes an entry ([`write_in`]).
    fn write(&self, path: &Path, bytes: &[u8]) -> bool {
        write_in(&self.dir, path, bytes)
    }

    /// After a run that stored entries, when a check is due (see
    /// [`check_due`]): removes the least recently used ones until the
    /// cache holds at most 90% of its bound. A cache that a
    /// sample shows to be far below its bound is not stated entry by entry
    /// (see [`far_below`]): after a change of one app, stating thousands
    /// of entries to find nothing to remove was most of this pass.
    pub fn evict(&self) {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let stored = self.stored_bytes.load(Ordering::Relaxed);
        if self.stats().stored == 0 || !check_due(stored, self.limit, u64::from(nanos)) {
            return;
        }
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let names: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .filter(|e| is_entry_name(&e.file_name().to_string_lossy()))
            .map(|e| e.path())
            .collect();
        if far_below(&names, self.limit) {
            return;
        }
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = names
            .into_iter()
            .filter_map(|path| {
                let m = std::fs::symlink_metadata(&path).ok()?;
                Some((m.modified().ok()?, m.len(), path))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.limit {
            return;
        }
        entries.sort();
        let goal = self.limit / 10 * 9;
        for (_, len, path) in entries {
            if total <= goal {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// A cache is checked against its bound about once per this fraction of
/// it stored (see [`check_due`]).
const CHECKS_PER_BOUND: u64 = 256;

/// Whether a run that stored `stored` bytes in a cache bounded by `limit`
/// checks its size, given a uniform `draw` (the clock's nanoseconds): a
/// run that stored a 256th of the bound always does, one that stored less
/// with the chance its share of that, so that the cache is checked about
/// once per 256th of its bound stored, whichever runs stored it (as git
/// runs `gc --auto` only past a number of loose objects). Listing the
/// cache directory costs the same whatever a run stored: after one base
/// changed it was 2.4% of a 500-app run, and it grows with the cache. A
/// cache is over its bound by about that 256th at most, on average.
fn check_due(stored: u64, limit: u64, draw: u64) -> bool {
    let every = (limit / CHECKS_PER_BOUND).max(1);
    stored >= every || draw % every < stored
}

/// Entries stated to estimate a cache's size.
const SAMPLE: usize = 256;

/// Whether the cache entries `names` hold well under `limit` bytes, judged
/// from a sample as git's `gc --auto` judges a repository from one
/// directory of objects: entries are named by a hash, so every k-th name
/// (from an offset that changes from run to run) is a fair sample, and
/// the sample's mean size times the number of entries estimates the
/// whole. Well under means that estimate is at most half the bound. (The
/// largest sampled entry times the count, the test before, failed
/// whenever the sample held an environment's record, megabytes beside
/// entries of kilobytes, and the whole cache was stated, a tenth of a
/// one-base run at 2,000 apps.) A cache the estimate misjudges is
/// caught by a later run's sample, from another offset; the bound is
/// about, not exact. A cache with few entries is always stated whole.
fn far_below(names: &[PathBuf], limit: u64) -> bool {
    let step = names.len() / SAMPLE;
    if step < 2 {
        return false;
    }
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let offset = usize::try_from(nanos).unwrap_or(0) % step;
    let (mut sampled, mut bytes) = (0u64, 0u64);
    for path in names.iter().skip(offset).step_by(step) {
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                sampled += 1;
                bytes = bytes.saturating_add(m.len());
            }
            // Gone (another run evicted it): no estimate.
            Err(_) => return false,
        }
    }
    let n = u64::try_from(names.len()).unwrap_or(u64::MAX);
    // n × (bytes / sampled) ≤ limit / 2, without dividing.
    n.saturating_mul(bytes).saturating_mul(2) <= limit.saturating_mul(sampled)
}

/// Adds `name` with its trusted stat `st` to `table`; its place there, or
/// `None` when it has no trusted stat (or is not UTF-8).
fn place(table: &mut StatTable, name: Option<&str>, st: Option<Stat>) -> Option<u32> {
    let i = u32::try_from(table.len()).ok()?;
    table.push(name?, st?)?;
    Some(i)
}

/// Where `name`'s bytes are allocated: one path's identity among the
/// shared [`Name`]s of a run (two allocations of one path are two
/// identities, which callers merge by comparing bytes).
fn address(name: &Name) -> *const u8 {
    Arc::as_ptr(name).cast::<u8>()
}

/// The cache directory of the repository at `root`, or `None` when there
/// can be none: `.hydrate` or its `cache` is a symlink or not a directory
/// (hydrate never writes through a symlink, and the cache must stay
/// inside the repository). It need not exist yet.
pub fn dir_of(root: &Path) -> Option<PathBuf> {
    let mut at = root.to_path_buf();
    for part in Path::new(CACHE_DIR).components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if !m.file_type().is_dir() => return None,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(_) => return None,
        }
    }
    Some(root.join(CACHE_DIR))
}

/// The working directory as inputs are spelled from it ([`inputs::of`]):
/// `None` when it cannot be read or is not UTF-8 (they then stay
/// relative).
fn working_dir() -> Option<PathBuf> {
    std::env::current_dir()
        .ok()
        .filter(|d| d.to_str().is_some())
}

/// This build of hydrate, as keys name it: by what it was compiled from
/// (build.rs: `record_build_id`), never by the running executable, which
/// in a program embedding the library is the host.
pub fn build() -> &'static str {
    env!("HYDRATE_BUILD_ID")
}

/// Creates cache directory `dir` with its `.gitignore` and `CACHEDIR.TAG`.
pub fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    let ignore = dir.join(".gitignore");
    if ignore.is_file() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n\
         # hydrate's render cache; `hydrate cache clean` removes it.\n",
    )?;
    std::fs::write(ignore, "*\n")
}

/// Writes `bytes` to `path` in cache directory `dir` through a temporary
/// file renamed into place ([`tempfile::NamedTempFile::persist`], as
/// `output` writes files): private to the user (0600), named `.tmp-…` so
/// that `clean` knows it. Best effort: whether it was written.
pub fn write_in(dir: &Path, path: &Path, bytes: &[u8]) -> bool {
    use std::io::Write as _;
    tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.persist(path).map(drop).map_err(|e| e.error)
        })
        .is_ok()
}

/// `<64 hex>.in`, `.out`, `.val` or `.settled`: the only files eviction
/// and `clean` delete besides the cache's own bookkeeping.
fn is_entry_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".in")
        .or_else(|| name.strip_suffix(".out"))
        .or_else(|| name.strip_suffix(".val"))
        .or_else(|| name.strip_suffix(".settled"));
    stem.is_some_and(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `hydrate cache clean`: removes the cache of the repository at `root`
/// (its entries, temporary files and bookkeeping, then the directory if
/// it is empty). Returns how many bytes were freed.
pub fn clean(root: &Path) -> std::io::Result<u64> {
    let dir = root.join(CACHE_DIR);
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut freed = 0;
    for e in rd {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = is_entry_name(&name)
            || name.starts_with(".tmp-")
            || name == INDEX
            || name == ".gitignore"
            || name == "CACHEDIR.TAG";
        if ours && e.file_type()?.is_file() {
            freed += e.metadata()?.len();
            std::fs::remove_file(e.path())?;
        }
    }
    let _ = std::fs::remove_dir(&dir);
    Ok(freed)
}

/// A result as stored: the manifest, each object's identity, source and
/// printed text (as a range of the manifest when it is one), the warnings
/// and the files read, in a writer ready to be sealed in place (the
/// payload is not copied again). `None` when it cannot be stored
/// faithfully (a path that is not UTF-8).
fn encode_rendered(r: &Rendered) -> Option<Writer> {
    let paths: usize = r.files_read.iter().map(|p| p.as_os_str().len() + 8).sum();
    let mut w = Writer::for_entry(r.manifest.len() + 128 * r.objects.len() + paths + 64);
    w.str(&r.manifest);
    w.u64(r.objects.len() as u64);
    let mut from = 0;
    for o in &r.objects {
        for s in [&o.id.gvk.group, &o.id.gvk.version, &o.id.gvk.kind] {
            w.str(s);
        }
        w.str(&o.id.namespace);
        w.str(&o.id.name);
        w.opt_str(o.source.as_deref());
        // Objects are printed in order, each right where the last ended
        // or after a `---` line: looked for there before searching (a
        // search of a long needle first builds its tables).
        let rest = r.manifest.get(from..).unwrap_or_default();
        let here = |skip: &str| {
            rest.strip_prefix(skip)
                .is_some_and(|t| t.starts_with(o.printed.as_str()))
                .then_some(skip.len())
        };
        match here("")
            .or_else(|| here("---\n"))
            .or_else(|| rest.find(o.printed.as_str()))
        {
            Some(at) if !o.printed.is_empty() => {
                w.byte(0);
                w.u64((from + at) as u64);
                w.u64(o.printed.len() as u64);
                from += at + o.printed.len();
            }
            _ => {
                w.byte(1);
                w.str(&o.printed);
            }
        }
    }
    w.u64(r.warnings.len() as u64);
    for aw in &r.warnings {
        settled::write_warning(&mut w, &aw.warning)?;
    }
    w.u64(r.files_read.len() as u64);
    for p in &r.files_read {
        w.str(p.to_str()?);
    }
    Some(w)
}

fn decode_rendered(payload: &[u8], job: &Job, needs: Needs) -> Option<Rendered> {
    let mut r = Reader::new(payload);
    let manifest = r.str()?.to_string();
    let n = r.count()?;
    let mut objects = Vec::with_capacity(n);
    for _ in 0..n {
        let gvk = Gvk {
            group: r.str()?.to_string(),
            version: r.str()?.to_string(),
            kind: r.str()?.to_string(),
        };
        let id = ObjectId {
            gvk,
            namespace: r.str()?.to_string(),
            name: r.str()?.to_string(),
        };
        let source = r.opt_str()?.map(str::to_string);
        let printed = match r.byte()? {
            0 => {
                let at = usize::try_from(r.u64()?).ok()?;
                let len = usize::try_from(r.u64()?).ok()?;
                manifest.get(at..at.checked_add(len)?)?.to_string()
            }
            1 => r.str()?.to_string(),
            _ => return None,
        };
        let node = match whole_document(&id, &printed, needs) {
            Whole::Needed(Some(n)) => Body::Whole(Arc::new(n)),
            Whole::Needed(None) => return None,
            Whole::NotNeeded => Body::IdentityOnly,
        };
        objects.push(Object {
            node,
            id,
            printed,
            source,
        });
    }
    let n = r.count()?;
    let mut warnings = Vec::with_capacity(n);
    for _ in 0..n {
        warnings.push(AppWarning {
            env: job.env.clone(),
            app: job.app.clone(),
            warning: settled::read_warning(&mut r)?,
        });
    }
    let n = r.count()?;
    let files_read = (0..n)
        .map(|_| r.str().map(PathBuf::from))
        .collect::<Option<Vec<_>>>()?;
    if !r.at_end() {
        return None;
    }
    Some(Rendered {
        env: job.env.clone(),
        app: job.app.clone(),
        objects,
        manifest,
        files_read,
        warnings,
    })
}

/// Whether a cached object needs its whole document back.
enum Whole {
    /// It does: parsed from its printed text (`None` if that fails, so the
    /// entry is not trusted).
    Needed(Option<Node>),
    /// Its identity is all that is read.
    NotNeeded,
}

/// Which objects of a hit need their whole document.
#[derive(Clone, Copy)]
struct Needs {
    /// Every object (a validating caller with no stored findings).
    always: bool,
    /// Secrets (the environment's secret guard reads their values).
    secrets: bool,
}

/// `render`'s guards read more than identity: a `Secret`'s `data` and
/// `stringData` (the secret guard, unless it lets Secrets through unread)
/// and `metadata.generateName` (an object with no name; the determinism
/// guard). Those objects get their whole document back, parsed from the
/// printed text, so a cache hit is judged exactly as a fresh render is.
fn whole_document(id: &ObjectId, printed: &str, needs: Needs) -> Whole {
    let secret = needs.secrets && id.gvk.kind == "Secret";
    if !needs.always && !secret && !id.name.is_empty() {
        return Whole::NotNeeded;
    }
    let doc = crate::yaml::parse_all(printed, crate::yaml::Resolver::V3)
        .ok()
        .and_then(|docs| docs.into_iter().find(|d| d.as_map().is_some()));
    Whole::Needed(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path, n: usize, size: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let p = dir.join(format!("{i:064x}.out"));
                std::fs::write(&p, vec![b'x'; size]).unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn a_run_that_stored_little_checks_the_bound_now_and_then() {
        let limit = 256 * 1000;
        assert!(check_due(1000, limit, 999), "a 256th of the bound: always");
        assert!(check_due(5000, limit, 999));
        let due = (0..1000).filter(|draw| check_due(10, limit, *draw)).count();
        assert_eq!(due, 10, "ten bytes: one draw in a hundred");
        assert!(!check_due(0, limit, 0));
        assert!(check_due(1, 0, 7), "no bound to speak of: always");
    }

    /// A sample spares stating every entry only when the cache is well
    /// below its bound; a small cache is stated whole.
    #[test]
    fn only_a_cache_far_below_its_bound_skips_the_full_pass() {
        let d = tempfile::tempdir().unwrap();
        let many = entries(d.path(), 600, 100);
        assert!(far_below(&many, 600 * 100 * 2), "half the bound");
        assert!(!far_below(&many, 600 * 100 * 2 - 1), "just over half");
        assert!(!far_below(&many[..300], u64::MAX), "few: always stated");
        // One large entry among small ones (an environment's record) is
        // weighed as one entry, not as if every entry were that large.
        std::fs::write(&many[0], vec![b'x'; 100 * 600]).unwrap();
        let mean = (599 * 100 + 100 * 600) / 600;
        let at_most = |limit: u64| (0..50).all(|_| far_below(&many, limit));
        assert!(at_most(2 * 600 * 2 * mean), "a record sampled or not");
        assert!(
            !far_below(&many, 600 * 100 * 2 - 1),
            "small ones alone exceed it"
        );
        // Every entry gone (another run cleaned the cache): no estimate.
        for p in &many {
            std::fs::remove_file(p).unwrap();
        }
        assert!(!far_below(&many, u64::MAX));
    }
}
