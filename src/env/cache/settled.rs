//! What an environment's last run left, so that a run in which nothing an
//! app depends on changed need not render, look up or compare anything
//! for it: ninja's "no work to do" and git's index, made per app.
//!
//! A [`Settled`] record holds, for one environment writing a directory:
//! - the stat of every input its recorded apps' renders read (the files
//!   and directories the cache's index names for them);
//! - the stat of entries of its output directory, taken when that run
//!   knew they held what it rendered;
//! - for each app it can vouch for ([`SettledApp`]): which of those inputs
//!   and entries are its own, its files and their hashes, and what the
//!   report says of it (resources, bytes, warnings);
//! - whether it vouches for the whole environment ([`Settled::whole`]):
//!   every app, and every entry of the directory.
//!
//! It is sealed (HMAC, as every cache entry) under the environment's
//! [`key`]: hydrate's build, the render options, the environment's whole
//! configuration and every job's resolved source. A record under another
//! key, altered, or unauthentic is no record. Only stats older than the
//! run by at least [`super::RACY`] are recorded (an app or entry with a
//! younger one is left out), so a change made within one timestamp tick
//! cannot hide behind it.
//!
//! When every input and every entry of an app still has its recorded
//! stat, its renders would read the same bytes (the cache's own promise
//! for its entries), give the result they gave, and find the directory
//! holding it: the app is unchanged. When that holds for the whole
//! environment, its report is the record's.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::entry::{self, Key, Kind, Reader, Writer};
use super::inputs::Stat;
use super::stat_table::{self, StatTable};
use super::Secret;
use crate::env::{AppWarning, Environment, Job};
use crate::realpath::Unlinked;
use crate::warning::{Warning, WarningKind};

/// An environment's settled state (see the module).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Every input of the recorded apps' renders and its stat, sorted by
    /// name, each once.
    pub inputs: StatTable,
    /// Entries of its output directory (the directory itself as the empty
    /// path) and their `lstat`, in the order `output` walks them: with
    /// [`Settled::complete`], every entry; otherwise only those old enough
    /// to vouch for what they hold.
    pub output: Vec<(PathBuf, Stat)>,
    /// Whether `output` lists every entry of the directory.
    pub complete: bool,
    /// With `complete`, the entries of `output` (indices, ascending) whose
    /// stat was too young to vouch for what they hold: a file written, or
    /// a directory changed, within the racy window of the run that
    /// recorded it. No app's own entries are among them.
    pub young: Vec<usize>,
    /// The directory's spare tree (the live tree the last switch set
    /// aside, see `output::spare`) as that run knew it: every entry and
    /// the young ones. Not vouched for: the run that claims the spare tree
    /// states its directories before it trusts the list.
    pub spare: Option<Listing>,
    /// The apps it vouches for, in the environment's order.
    pub apps: Vec<SettledApp>,
    /// Whether it vouches for the whole environment: every app of it is in
    /// `apps` and `output` is every entry of the directory, none of them
    /// young, so that when
    /// all of them hold, nothing of the environment needs to run.
    pub whole: bool,
}

/// A directory tree as a run listed it: every entry (relative, the
/// directory itself first as the empty path) and its `lstat`, and which
/// were young.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Every entry and its stat.
    pub entries: Vec<(PathBuf, Stat)>,
    /// Indices into `entries` (ascending) of those whose stat was too
    /// young, when listed, to vouch for what they hold (modified within
    /// the racy window of the run that listed them: git's "racily
    /// clean"). A file's unchanged stat still says it is the same file
    /// (its inode); a young directory's does not say that no entry was
    /// added to it within the same tick, so it is read again.
    pub young: Vec<usize>,
}

/// One app of a [`Settled`] record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettledApp {
    /// App name.
    pub app: String,
    /// Its inputs: indices into [`Settled::inputs`], ascending.
    pub inputs: Vec<usize>,
    /// Its entries of the output directory (its files and the directories
    /// holding them, not the output directory itself): indices into
    /// [`Settled::output`], ascending.
    pub output: Vec<usize>,
    /// Its files (relative to the output directory) and the
    /// `sha256:<hex>` of what they hold.
    pub files: Vec<(String, String)>,
    /// Resources rendered.
    pub resources: usize,
    /// Bytes of manifests rendered.
    pub bytes: usize,
    /// The render's warnings.
    pub warnings: Vec<AppWarning>,
}

impl Settled {
    /// The apps whose every input (`inputs`, from [`inputs_fresh`]) and
    /// output entry (`output`, one flag per entry) still has its stat.
    pub fn fresh_apps<'s>(
        &'s self,
        inputs: &'s [bool],
        output: &'s [bool],
    ) -> impl Iterator<Item = &'s SettledApp> + 's {
        let yes = |flags: &[bool], i: &usize| flags.get(*i).copied().unwrap_or(false);
        self.apps.iter().filter(move |a| {
            a.inputs.iter().all(|i| yes(inputs, i)) && a.output.iter().all(|i| yes(output, i))
        })
    }
}

/// For each of `records`, whether each of its inputs still has its
/// recorded stat (one flag per input; all `false` for a record whose
/// inputs are not in name order, which is never trusted). Each path is
/// stated once for all of them (environments share charts, components and
/// bases).
///
/// The names are cut into ranges of about [`CHUNK`] paths of the largest
/// record, and each range is merged, stated and compared on its own core:
/// merging and comparing all of them on one thread, between rounds of
/// stats, left the other core idle for a tenth of a settled run.
///
/// A name that climbs with `..` from a directory in `unlinked` (found
/// this run to have no symlink in its path, by the environments' path
/// checks) is stated where it leads read as text: `overlays/dev/../../base`
/// as `base`, which is mostly another input already stated, and
/// `overlays/dev/../../../../components/x` once a range instead of once
/// an app. At 2,000 apps such names were 16,000 of 83,000 stats, and the
/// longest walks.
pub(crate) fn inputs_fresh(records: &[&Settled], unlinked: &Unlinked) -> Vec<Vec<bool>> {
    let sorted: Vec<Option<&StatTable>> = records
        .iter()
        .map(|s| Some(&s.inputs).filter(|t| t.is_sorted()))
        .collect();
    let tables: Vec<&StatTable> = sorted.iter().flatten().copied().collect();
    let from = Base::of(&absolute_ends(&tables));
    // Range boundaries: every CHUNK-th name of the largest table.
    let bounds: Vec<&str> = tables
        .iter()
        .max_by_key(|t| t.len())
        .map(|t| {
            (CHUNK..t.len())
                .step_by(CHUNK)
                .filter_map(|i| t.get(i).map(|(p, _)| p))
                .collect()
        })
        .unwrap_or_default();
    let cuts: Vec<Vec<usize>> = tables
        .iter()
        .map(|t| {
            let inner = bounds.iter().map(|b| t.position(b));
            std::iter::once(0).chain(inner).chain([t.len()]).collect()
        })
        .collect();
    // For each range, each table's flags for its inputs in that range.
    let parts: Vec<Vec<Vec<bool>>> = (0..=bounds.len())
        .into_par_iter()
        .map(|r| {
            let spans: Vec<std::ops::Range<usize>> = cuts
                .iter()
                .map(|c| c.get(r).copied().unwrap_or(0)..c.get(r + 1).copied().unwrap_or(0))
                .collect();
            let names = stat_table::merged_spans(&tables, &spans);
            let stated = stat_names(&names, &from, unlinked);
            tables
                .iter()
                .zip(spans)
                .map(|(t, span)| {
                    // Both in name order: one pass, no hashing of paths.
                    let mut here = names.iter().zip(&stated);
                    span.filter_map(|i| t.get(i))
                        .map(|(name, was)| {
                            let now = here.find(|(n, _)| **n >= name);
                            now.is_some_and(|(n, now)| *n == name && now.as_ref() == Some(was))
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut fresh: Vec<Vec<bool>> = tables.iter().map(|t| Vec::with_capacity(t.len())).collect();
    for part in parts {
        for (all, flags) in fresh.iter_mut().zip(part) {
            all.extend(flags);
        }
    }
    let mut fresh = fresh.into_iter();
    records
        .iter()
        .zip(&sorted)
        .map(|(s, sorted)| match sorted {
            Some(_) => fresh.next().unwrap_or_default(),
            None => vec![false; s.inputs.len()],
        })
        .collect()
}

/// The stat of each of `names` (sorted, each once) from `from`, or from
/// `unlinked` when the path checks took it this run; a name [`lexical`]
/// reads as text is stated as that text, once for all the names that read
/// so (found among `names` when it is one).
fn stat_names(names: &[&str], from: &Base, unlinked: &Unlinked) -> Vec<Option<Stat>> {
    let read: Vec<Option<String>> = names.iter().map(|n| lexical(n, unlinked)).collect();
    let mut stated: Vec<Option<Stat>> = names
        .iter()
        .zip(&read)
        .map(|(n, read)| match read {
            // An app directory the path checks stated this run is not
            // stated again (6,000 of them at 2,000 apps).
            None => match unlinked.get(std::ffi::OsStr::new(n)) {
                Some(seen) => Some(Stat::from(seen)),
                None => from.stat(n),
            },
            Some(_) => None,
        })
        .collect();
    let mut elsewhere: HashMap<&str, Option<Stat>> = HashMap::new();
    for (i, to) in read.iter().enumerate() {
        let Some(to) = to.as_deref() else {
            continue;
        };
        let here = names
            .binary_search(&to)
            .ok()
            .filter(|j| read.get(*j).is_some_and(Option::is_none))
            .and_then(|j| stated.get(j).copied());
        let st = match here {
            Some(st) => st,
            None => *elsewhere.entry(to).or_insert_with(|| from.stat(to)),
        };
        if let Some(slot) = stated.get_mut(i) {
            *slot = st;
        }
    }
    stated
}

/// `name` (absolute) with its `..` parts read as text, when they follow a
/// directory in `unlinked` and nothing after them climbs again: then each
/// `..` leads to the directory before it, as the text says (the parts it
/// climbs over are no symlinks), and the name leads where the text does.
/// `None` for any other name (stated as it is).
fn lexical(name: &str, unlinked: &Unlinked) -> Option<String> {
    // On the text, not on `Path` components: 88,000 names at 2,000 apps,
    // and parsing each into components cost 6% of a settled run. Names are
    // spelled as inputs are (absolute, no `.` parts, no doubled slashes);
    // one spelled otherwise is at worst not read (`None`: stated as it
    // is), which is always sound.
    let (from, climb) = name.match_indices("/..").find_map(|(i, _)| {
        let (from, climb) = name.split_at_checked(i)?;
        let after = climb.strip_prefix("/..")?;
        (after.is_empty() || after.starts_with('/')).then_some((from, climb))
    })?;
    let mut up = 0;
    let mut rest = climb;
    while let Some(after) = rest.strip_prefix("/..") {
        if !(after.is_empty() || after.starts_with('/')) {
            break;
        }
        up += 1;
        rest = after;
    }
    let plain = rest
        .split('/')
        .skip(1)
        .all(|p| !matches!(p, "" | "." | ".."));
    if !plain || !from.starts_with('/') || !unlinked.contains(std::ffi::OsStr::new(from)) {
        return None;
    }
    // `up` parts off `from`; "" is the root, and above it is nothing.
    let mut above = from;
    for _ in 0..up {
        above = above.rsplit_once('/')?.0;
    }
    Some(match (above, rest) {
        ("", "") => "/".to_string(),
        _ => format!("{above}{rest}"),
    })
}

/// The first and last absolute name of each table, sorted: where
/// [`Base::of`] finds the directory all absolute names share (it reads
/// only the first and last of them).
fn absolute_ends<'t>(tables: &[&'t StatTable]) -> Vec<&'t str> {
    let mut ends: Vec<&str> = Vec::new();
    for t in tables {
        // Sorted by bytes: the names starting with `/` are one run.
        let (start, end) = (t.position("/"), t.position("0"));
        if end > start {
            ends.extend(t.get(start).map(|(p, _)| p));
            ends.extend(end.checked_sub(1).and_then(|e| t.get(e)).map(|(p, _)| p));
        }
    }
    ends.sort_unstable();
    ends
}

/// Names stated per range (each range is merged, stated and compared on
/// one core); small under test, so that a test crosses ranges with a few
/// files.
const CHUNK: usize = if cfg!(test) { 64 } else { 8192 };

/// The directory every name is under, opened once, so that each stat
/// walks only what follows it (the repository root, typically: its own
/// path is then not walked from `/` a hundred thousand times).
struct Base {
    /// The directory's path as the names spell it, up to its final `/`.
    #[cfg(target_os = "linux")]
    prefix: Vec<u8>,
    #[cfg(target_os = "linux")]
    dir: Option<std::fs::File>,
}

impl Base {
    /// The longest directory the sorted `names` that are absolute all start
    /// with, spelled the same (their bytes, up to a `/`): each of them is
    /// then that directory's path joined with the rest of it, exactly.
    /// (Relative names are stated from the working directory as before.)
    #[cfg(target_os = "linux")]
    fn of(names: &[&str]) -> Base {
        // Sorted by bytes: the names starting with `/` are one run.
        let first_byte = |n: &&str| n.as_bytes().first().copied();
        let start = names.partition_point(|n| first_byte(n) < Some(b'/'));
        let end = names.partition_point(|n| first_byte(n) <= Some(b'/'));
        let (Some(first), Some(last)) = (
            names.get(start),
            end.checked_sub(1)
                .and_then(|e| names.get(e).filter(|_| e >= start)),
        ) else {
            return Base {
                prefix: Vec::new(),
                dir: None,
            };
        };
        let (a, b) = (first.as_bytes(), last.as_bytes());
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let prefix: Vec<u8> = match a
            .get(..common)
            .and_then(|c| c.iter().rposition(|&x| x == b'/'))
        {
            // At least `/x/`: the root directory itself gains nothing.
            Some(slash) if slash > 0 => a.get(..=slash).unwrap_or_default().to_vec(),
            _ => Vec::new(),
        };
        let dir = match prefix.is_empty() {
            true => None,
            false => {
                use std::os::unix::ffi::OsStrExt;
                std::fs::File::open(std::ffi::OsStr::from_bytes(&prefix)).ok()
            }
        };
        Base { prefix, dir }
    }

    #[cfg(not(target_os = "linux"))]
    fn of(_names: &[&str]) -> Base {
        Base {}
    }

    /// [`Stat::of`] `name`.
    #[cfg(target_os = "linux")]
    fn stat(&self, name: &str) -> Option<Stat> {
        use std::os::fd::AsFd;
        use std::os::unix::ffi::OsStrExt;
        let rest = name.as_bytes().strip_prefix(self.prefix.as_slice());
        match (&self.dir, rest) {
            (Some(dir), Some(rest)) if !rest.is_empty() => {
                Stat::at(dir.as_fd(), Path::new(std::ffi::OsStr::from_bytes(rest)))
            }
            _ => Stat::of(Path::new(name)),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn stat(&self, name: &str) -> Option<Stat> {
        Stat::of(Path::new(name))
    }
}

/// The key an environment's record is sealed under: hydrate's build, the
/// render options that change a result (`strict`), the environment's
/// whole configuration and each of its jobs (app and resolved source, in
/// plan order), their paths relative to the repository root `root`. Any
/// change to them is another key, so the record is ignored. (A record's
/// inputs are named absolute, but it never outlives a move or a copy: its
/// output tree's stats, inodes among them, are those of this place only,
/// and the long way that writes a new one goes through the cache, whose
/// keys hold where the repository is.)
pub fn key(build: &str, root: &Path, env: &Environment, jobs: &[&Job], strict: bool) -> Key {
    let mut h = Sha256::new();
    h.update(b"hydrate settled environment\0");
    h.update(build.as_bytes());
    h.update(b"\0");
    // The environment's own paths relative to the root too (its file and
    // its warnings' are joined to the root as the command line spelled
    // it).
    let mut env = env.clone();
    env.file = under(root, &env.file);
    for w in &mut env.warnings {
        w.file = w.file.as_deref().map(|f| under(root, f));
    }
    // Formatted straight into the hash: at 2,000 apps an environment's
    // text is over a megabyte, built and copied for nothing.
    let _ = write!(
        Hashing(&mut h),
        "{:?}\0{strict}\0{env:?}\0",
        crate::env::build_options(None)
    );
    for j in jobs {
        for field in [j.app.as_bytes(), j.env.as_bytes()] {
            h.update((field.len() as u64).to_le_bytes());
            h.update(field);
        }
        j.source.key_into(root, &mut h);
    }
    h.finalize().into()
}

/// Text written into a hash as it is formatted ([`key`]).
struct Hashing<'h>(&'h mut Sha256);

impl std::fmt::Write for Hashing<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

/// `path` relative to `root` when it is below it.
fn under(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// Where environment `env` writing directory `dir` keeps its record in
/// cache directory `cache`: one file per environment and output, named by
/// a hash of both (so a name needs no escaping).
pub fn path(cache: &Path, env: &str, dir: &Path) -> PathBuf {
    let mut h = Sha256::new();
    h.update(b"hydrate settled record\0");
    h.update(env.as_bytes());
    h.update(b"\0");
    h.update(dir.as_os_str().as_encoded_bytes());
    let name: Key = h.finalize().into();
    cache.join(format!("{}.settled", entry::hex(&name)))
}

/// The record at `path` sealed under `key`, if there is one and it is
/// authentic.
pub fn load(path: &Path, key: &Key, secret: &Secret) -> Option<Settled> {
    let bytes = std::fs::read(path).ok()?;
    let payload = entry::open(&bytes, Kind::Settled, key, secret).ok()?;
    decode(payload)
}

/// `s` sealed under `key`, ready to be written; `None` when it cannot be
/// stored faithfully (a path that is not UTF-8).
pub fn encode(s: &Settled, key: &Key, secret: &Secret) -> Option<Vec<u8>> {
    let files: usize = s.apps.iter().map(|a| a.files.len() * 120 + 64).sum();
    let spare = s.spare.as_ref().map_or(0, |l| l.entries.len());
    let entries = (s.output.len() + spare) * 80;
    let mut w = Writer::for_entry(s.inputs.len() * 48 + entries + files + 64);
    s.inputs.write(&mut w);
    write_entries(&mut w, &s.output)?;
    // 0: some entries, 1: every entry (some young), 2: whole.
    w.byte(match (s.whole, s.complete) {
        (true, _) => 2,
        (false, true) => 1,
        (false, false) => 0,
    });
    write_indices(&mut w, &s.young)?;
    match &s.spare {
        None => w.byte(0),
        Some(l) => {
            w.byte(1);
            write_entries(&mut w, &l.entries)?;
            write_indices(&mut w, &l.young)?;
        }
    }
    w.u64(s.apps.len() as u64);
    for a in &s.apps {
        w.str(&a.app);
        write_indices(&mut w, &a.inputs)?;
        write_indices(&mut w, &a.output)?;
        w.u64(a.files.len() as u64);
        for (path, hash) in &a.files {
            w.str(path);
            w.str(hash);
        }
        w.u64(a.resources as u64);
        w.u64(a.bytes as u64);
        w.u64(a.warnings.len() as u64);
        for aw in &a.warnings {
            w.str(&aw.env);
            write_warning(&mut w, &aw.warning)?;
        }
    }
    Some(w.seal(Kind::Settled, key, secret))
}

fn decode(payload: &[u8]) -> Option<Settled> {
    let mut r = Reader::new(payload);
    let inputs = StatTable::read(&mut r)?;
    let output = read_entries(&mut r)?;
    let (whole, complete) = match r.byte()? {
        0 => (false, false),
        1 => (false, true),
        2 => (true, true),
        _ => return None,
    };
    let young = read_indices(&mut r, output.len())?;
    if !young.is_empty() && (whole || !complete) {
        return None;
    }
    let spare = match r.byte()? {
        0 => None,
        1 => {
            let entries = read_entries(&mut r)?;
            let young = read_indices(&mut r, entries.len())?;
            Some(Listing { entries, young })
        }
        _ => return None,
    };
    let n = r.count()?;
    let mut apps = Vec::with_capacity(n);
    for _ in 0..n {
        let app = r.str()?.to_string();
        let own_inputs = read_indices(&mut r, inputs.len())?;
        let own_output = read_indices(&mut r, output.len())?;
        let n = r.count()?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            files.push((r.str()?.to_string(), r.str()?.to_string()));
        }
        let resources = usize::try_from(r.u64()?).ok()?;
        let bytes = usize::try_from(r.u64()?).ok()?;
        let n = r.count()?;
        let mut warnings = Vec::with_capacity(n);
        for _ in 0..n {
            let env = r.str()?.to_string();
            warnings.push(AppWarning {
                env,
                app: app.clone(),
                warning: read_warning(&mut r)?,
            });
        }
        apps.push(SettledApp {
            app,
            inputs: own_inputs,
            output: own_output,
            files,
            resources,
            bytes,
            warnings,
        });
    }
    if !r.at_end() {
        return None;
    }
    Some(Settled {
        inputs,
        output,
        complete,
        young,
        spare,
        apps,
        whole,
    })
}

/// Entries and their stats: the count, then each path and its stat (as a
/// difference from the one before).
fn write_entries(w: &mut Writer, entries: &[(PathBuf, Stat)]) -> Option<()> {
    w.u64(entries.len() as u64);
    let mut last = Stat::default();
    for (p, st) in entries {
        w.str(p.to_str()?);
        stat_table::write_stat(w, &last, st);
        last = *st;
    }
    Some(())
}

fn read_entries(r: &mut Reader<'_>) -> Option<Vec<(PathBuf, Stat)>> {
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    let mut last = Stat::default();
    for _ in 0..n {
        let p = PathBuf::from(r.str()?);
        last = stat_table::read_stat(r, &last)?;
        out.push((p, last));
    }
    Some(out)
}

/// Ascending indices as their count and the gaps between them, each a
/// LEB128 number (an app's inputs are mostly neighbours in name order: a
/// byte each). `None` when they are not ascending.
fn write_indices(w: &mut Writer, indices: &[usize]) -> Option<()> {
    w.varint(indices.len() as u64);
    let mut next = 0usize;
    for &i in indices {
        w.varint(i.checked_sub(next)? as u64);
        next = i + 1;
    }
    Some(())
}

/// Indices [`write_indices`] wrote, each below `len`.
fn read_indices(r: &mut Reader, len: usize) -> Option<Vec<usize>> {
    let n = r.count_varint()?;
    let mut out = Vec::with_capacity(n);
    let mut next = 0usize;
    for _ in 0..n {
        let gap = usize::try_from(r.varint()?).ok()?;
        let i = next.checked_add(gap)?;
        if i >= len {
            return None;
        }
        out.push(i);
        next = i + 1;
    }
    Some(out)
}

/// A warning as entries store it: kind, message, file, line + 1 (0: none).
pub(super) fn write_warning(w: &mut Writer, wn: &Warning) -> Option<()> {
    w.str(wn.kind.as_str());
    w.str(&wn.message);
    match &wn.file {
        Some(f) => w.opt_str(Some(f.to_str()?)),
        None => w.opt_str(None),
    }
    w.u64(wn.line.map_or(0, |l| u64::from(l) + 1));
    Some(())
}

/// A warning [`write_warning`] wrote.
pub(super) fn read_warning(r: &mut Reader) -> Option<Warning> {
    let kind = WarningKind::from_name(r.str()?)?;
    let message = r.str()?.to_string();
    let file = r.opt_str()?.map(PathBuf::from);
    let line = match r.u64()? {
        0 => None,
        l => Some(u32::try_from(l - 1).ok()?),
    };
    Some(Warning {
        kind,
        message,
        file,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(b: u8) -> Secret {
        Secret::from_text(&[b'a' + b; 32]).unwrap()
    }

    fn stat(n: u64) -> Stat {
        Stat {
            id: [1, n, 10 + n, 0o100644],
            times: [(1_700_000_000, 5), (-3, 999_999_999)],
        }
    }

    fn table(rows: impl IntoIterator<Item = (String, Stat)>) -> StatTable {
        let mut t = StatTable::default();
        for (p, st) in rows {
            t.push(&p, st).unwrap();
        }
        t
    }

    fn record() -> Settled {
        Settled {
            inputs: table(
                [
                    "apps/web/base",
                    "apps/web/base/k.yaml",
                    "apps/wéb",
                    "charts/x",
                ]
                .iter()
                .zip(1..)
                .map(|(n, i)| (n.to_string(), stat(i))),
            ),
            output: vec![
                (PathBuf::new(), stat(2)),
                ("web".into(), stat(5)),
                ("web/m.yaml".into(), stat(3)),
            ],
            complete: true,
            young: vec![],
            spare: None,
            apps: vec![
                SettledApp {
                    app: "web".into(),
                    inputs: vec![0, 1, 3],
                    output: vec![2],
                    files: vec![("web/m.yaml".into(), "sha256:00ff".into())],
                    resources: 4,
                    bytes: 300,
                    warnings: vec![AppWarning {
                        env: "dev".into(),
                        app: "web".into(),
                        warning: Warning {
                            kind: WarningKind::Deprecation,
                            message: "'commonLabels' is deprecated".into(),
                            file: Some("apps/web/kustomization.yaml".into()),
                            line: Some(0),
                        },
                    }],
                },
                // Far apart (several bytes a gap), and nothing at all.
                SettledApp {
                    app: "db".into(),
                    inputs: vec![2],
                    output: vec![],
                    ..SettledApp::default()
                },
            ],
            whole: true,
        }
    }

    #[test]
    fn indices_round_trip_and_out_of_range_ones_are_refused() {
        for v in [vec![], vec![0], vec![0, 1, 2, 200, 70_000, 1 << 40]] {
            let mut w = Writer::default();
            write_indices(&mut w, &v).unwrap();
            let payload = w.buf;
            let mut r = Reader::new(&payload);
            assert_eq!(read_indices(&mut r, usize::MAX), Some(v.clone()));
            assert!(r.at_end());
            if let Some(last) = v.last() {
                let mut r = Reader::new(&payload);
                assert_eq!(read_indices(&mut r, *last), None, "one past the end");
            }
        }
        let mut w = Writer::default();
        assert_eq!(write_indices(&mut w, &[3, 3]), None, "not ascending");
    }

    #[test]
    fn a_record_opens_only_under_its_key_and_secret() {
        let d = tempfile::tempdir().unwrap();
        let p = path(d.path(), "dev", Path::new("rendered/dev"));
        let k = [7u8; 32];
        std::fs::write(&p, encode(&record(), &k, &secret(1)).unwrap()).unwrap();
        assert_eq!(load(&p, &k, &secret(1)), Some(record()));
        assert_eq!(load(&p, &[8u8; 32], &secret(1)), None, "another key");
        assert_eq!(load(&p, &k, &secret(2)), None, "another secret");
        let mut bytes = std::fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&p, bytes).unwrap();
        assert_eq!(load(&p, &k, &secret(1)), None, "altered");
    }

    /// A record that lists every entry, some young, opens as written; one
    /// that claims young entries and the whole environment is refused.
    #[test]
    fn young_entries_round_trip_only_in_a_complete_record() {
        let d = tempfile::tempdir().unwrap();
        let p = path(d.path(), "dev", Path::new("rendered/dev"));
        let k = [7u8; 32];
        let young = Settled {
            whole: false,
            young: vec![0, 1],
            ..record()
        };
        std::fs::write(&p, encode(&young, &k, &secret(1)).unwrap()).unwrap();
        assert_eq!(load(&p, &k, &secret(1)), Some(young.clone()));
        let partial = Settled {
            complete: false,
            young: vec![],
            ..young.clone()
        };
        std::fs::write(&p, encode(&partial, &k, &secret(1)).unwrap()).unwrap();
        assert_eq!(load(&p, &k, &secret(1)), Some(partial));
        for bad in [
            Settled {
                whole: true,
                ..young.clone()
            },
            Settled {
                complete: false,
                ..young
            },
        ] {
            std::fs::write(&p, encode(&bad, &k, &secret(1)).unwrap()).unwrap();
            assert_eq!(load(&p, &k, &secret(1)), None);
        }
    }

    #[test]
    fn each_environment_and_output_has_its_own_record() {
        let c = Path::new("c");
        let dev = path(c, "dev", Path::new("rendered/dev"));
        assert_ne!(dev, path(c, "prod", Path::new("rendered/dev")));
        assert_ne!(dev, path(c, "dev", Path::new("rendered/dev2")));
        assert!(dev.to_string_lossy().ends_with(".settled"));
    }

    #[test]
    fn stats_from_the_common_directory_are_the_paths_stats() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("apps/web");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("k.yaml"), "a").unwrap();
        let names: Vec<String> = [
            "apps/web/k.yaml",
            "apps/web/../web/k.yaml",
            "apps/web/.",
            "apps",
            "apps/gone",
        ]
        .iter()
        .map(|r| d.path().join(r).to_str().unwrap().to_string())
        .chain(["/".to_string()])
        .collect();
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let absolute: Vec<&str> = sorted
            .iter()
            .copied()
            .filter(|n| n.starts_with('/') && *n != "/")
            .collect();
        for one in [&sorted[..], &sorted[..2], &sorted[1..3], &absolute[..]] {
            let base = Base::of(one);
            for n in &names {
                assert_eq!(base.stat(n), Stat::of(Path::new(n)), "{n:?}");
            }
        }
        #[cfg(target_os = "linux")]
        assert_eq!(
            Base::of(&absolute).prefix,
            format!("{}/", d.path().display()).into_bytes(),
            "the absolute names share their directory"
        );
    }

    #[test]
    fn inputs_are_fresh_until_one_is_touched() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("many")).unwrap();
        let f = d.path().join("k.yaml");
        std::fs::write(&f, "a").unwrap();
        let path = |p: &Path| p.to_str().unwrap().to_string();
        let s = Settled {
            inputs: table([(path(&f), Stat::of(&f).unwrap())]),
            ..Settled::default()
        };
        let other = Settled {
            inputs: table([(path(d.path()), Stat::of(d.path()).unwrap())]),
            ..Settled::default()
        };
        assert_eq!(
            inputs_fresh(&[&s, &other, &s], &Unlinked::default()),
            [[true]; 3]
        );
        std::fs::write(&f, "b").unwrap();
        assert_eq!(
            inputs_fresh(&[&s, &other], &Unlinked::default()),
            [[false], [true]],
            "rewritten"
        );
        std::fs::remove_file(&f).unwrap();
        assert_eq!(
            inputs_fresh(&[&s], &Unlinked::default()),
            [[false]],
            "removed"
        );
        let mut unsorted = other.clone();
        let first = unsorted
            .inputs
            .get(0)
            .map(|(p, st)| (p.to_string(), *st))
            .unwrap();
        unsorted.inputs.push(&first.0, first.1).unwrap();
        assert_eq!(
            inputs_fresh(&[&unsorted], &Unlinked::default()),
            [[false, false]],
            "not in order"
        );
        // More inputs than one round states: every one is compared.
        let many: Vec<(String, Stat)> = (0..CHUNK + 10)
            .map(|i| {
                let p = d.path().join(format!("many/f{i:06}"));
                std::fs::write(&p, "").unwrap();
                (path(&p), Stat::of(&p).unwrap())
            })
            .collect();
        let big = Settled {
            inputs: table(many.clone()),
            ..Settled::default()
        };
        let few = Settled {
            inputs: table(many[..1].to_vec()),
            ..Settled::default()
        };
        let all = |f: &Vec<bool>| f.iter().all(|x| *x);
        let fresh = inputs_fresh(&[&big, &few], &Unlinked::default());
        assert_eq!((fresh[0].len(), fresh[1].len()), (CHUNK + 10, 1));
        assert!(fresh.iter().all(all));
        std::fs::write(d.path().join(format!("many/f{:06}", CHUNK + 5)), "x").unwrap();
        let fresh = inputs_fresh(&[&big, &few], &Unlinked::default());
        let stale: Vec<usize> = (0..fresh[0].len()).filter(|i| !fresh[0][*i]).collect();
        assert_eq!(
            stale,
            [CHUNK + 5],
            "only the file touched, in the second round"
        );
        assert!(all(&fresh[1]));
        // An app is fresh when its inputs and entries all are.
        let two = Settled {
            inputs: table(many[..3].to_vec()),
            output: vec![(PathBuf::new(), stat(1))],
            complete: true,
            young: vec![],
            spare: None,
            apps: vec![
                SettledApp {
                    app: "a".into(),
                    inputs: vec![0, 1],
                    ..SettledApp::default()
                },
                SettledApp {
                    app: "b".into(),
                    inputs: vec![2],
                    output: vec![0],
                    ..SettledApp::default()
                },
            ],
            whole: true,
        };
        let names = |f: &[bool], o: &[bool]| -> Vec<String> {
            two.fresh_apps(f, o).map(|a| a.app.clone()).collect()
        };
        assert_eq!(names(&[true; 3], &[true]), ["a", "b"]);
        assert_eq!(names(&[true, false, true], &[true]), ["b"]);
        assert_eq!(names(&[true; 3], &[false]), ["a"]);
    }

    /// A pool of files in a few directories, with their stats, made once.
    fn pool() -> &'static (tempfile::TempDir, Vec<(String, Stat)>) {
        static POOL: std::sync::OnceLock<(tempfile::TempDir, Vec<(String, Stat)>)> =
            std::sync::OnceLock::new();
        POOL.get_or_init(|| {
            let d = tempfile::tempdir().unwrap();
            let mut files = Vec::new();
            for i in 0..300 {
                let dir = d.path().join(format!("d{}", i % 7));
                std::fs::create_dir_all(&dir).unwrap();
                let p = dir.join(format!("f{i:03}"));
                std::fs::write(&p, "x").unwrap();
                files.push((p.to_str().unwrap().to_string(), Stat::of(&p).unwrap()));
            }
            files.sort_by(|a, b| a.0.cmp(&b.0));
            (d, files)
        })
    }

    proptest::proptest! {
        /// Cut into ranges and merged on every core, each record's flags
        /// are what stating its inputs one by one gives: an existing file
        /// with its stat is fresh; a wrong stat, a missing or a relative
        /// path that is not there is not; a record out of order is all
        /// stale.
        #[test]
        fn ranges_flag_each_input_as_stating_it_alone_does(
            picks in proptest::collection::vec(
                proptest::collection::vec((0usize..320, 0u8..8), 0..250),
                0..5,
            ),
            unsorted in proptest::option::of(0usize..5),
        ) {
            let (_, files) = pool();
            let records: Vec<Settled> = picks
                .iter()
                .enumerate()
                .map(|(r, rows)| {
                    let mut rows: Vec<(String, Stat)> = rows
                        .iter()
                        .map(|&(i, how)| match files.get(i) {
                            Some((p, _)) if how == 0 => (p.clone(), stat(9)),
                            Some((p, st)) if how == 1 => (format!("{p}.gone"), *st),
                            Some((p, st)) => (p.clone(), *st),
                            None => (format!("rel/missing{i}"), stat(1)),
                        })
                        .collect();
                    rows.sort_by(|a, b| a.0.cmp(&b.0));
                    rows.dedup_by(|a, b| a.0 == b.0);
                    if unsorted == Some(r) {
                        rows.reverse();
                    }
                    Settled {
                        inputs: table(rows),
                        ..Settled::default()
                    }
                })
                .collect();
            let refs: Vec<&Settled> = records.iter().collect();
            let want: Vec<Vec<bool>> = records
                .iter()
                .map(|s| {
                    let ok = s.inputs.is_sorted();
                    s.inputs
                        .iter()
                        .map(|(p, st)| ok && Stat::of(Path::new(p)).as_ref() == Some(st))
                        .collect()
                })
                .collect();
            proptest::prop_assert_eq!(inputs_fresh(&refs, &Unlinked::default()), want);
        }
    }

    #[cfg(unix)]
    #[test]
    fn climbs_read_as_text_only_from_directories_without_links() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir_all(root.join("a/o/dev")).unwrap();
        std::fs::create_dir_all(root.join("a/base")).unwrap();
        std::fs::write(root.join("a/base/k.yaml"), "").unwrap();
        std::os::unix::fs::symlink("a/o", root.join("l")).unwrap();
        let real = crate::realpath::Realpath::default();
        for p in ["a/o/dev", "l/dev", "a/base/k.yaml"] {
            real.resolve(&root.join(p)).unwrap();
        }
        let unlinked = real.unlinked();
        let at = |p: &str| format!("{}/{p}", root.display());
        let read = |p: &str| lexical(&at(p), &unlinked);
        assert_eq!(read("a/o/dev/../../base"), Some(at("a/base")));
        assert_eq!(read("a/o/dev/.."), Some(at("a/o")));
        assert_eq!(read("a/o/dev/../../../x/y"), Some(at("x/y")));
        assert_eq!(read("l/dev/../../base"), None, "through a link");
        assert_eq!(read("a/o/dev/../x/../y"), None, "climbs again");
        assert_eq!(read("a/base/k.yaml/../x"), None, "a file");
        assert_eq!(read("a/o/dev/k.yaml"), None, "no climb");
        assert_eq!(read("a/o/../o/dev"), Some(at("a/o/dev")));
        let deep = format!("a/o/dev{}", "/..".repeat(64));
        assert_eq!(read(&deep), None, "above the root");
    }

    /// [`lexical`] as `Path` components read it (its first form): the
    /// reference the text-based one must agree with.
    fn lexical_by_components(name: &str, unlinked: &Unlinked) -> Option<String> {
        use std::path::Component;
        let mut parts = Path::new(name).components().peekable();
        let mut from = PathBuf::new();
        while let Some(p) = parts.next_if(|p| !matches!(p, Component::ParentDir)) {
            from.push(p);
        }
        let mut up = 0;
        while parts
            .next_if(|p| matches!(p, Component::ParentDir))
            .is_some()
        {
            up += 1;
        }
        let rest: PathBuf = parts.collect();
        let plain = rest.components().all(|p| matches!(p, Component::Normal(_)));
        if up == 0 || !plain || !from.is_absolute() || !unlinked.contains(from.as_os_str()) {
            return None;
        }
        let above = from.ancestors().nth(up)?;
        let to = match rest.as_os_str().is_empty() {
            true => above.to_path_buf(),
            false => above.join(rest),
        };
        to.into_os_string().into_string().ok()
    }

    /// A tree with a link in it, resolved: its root and what it found.
    fn climbing_tree() -> (&'static Path, &'static Unlinked) {
        static TREE: std::sync::OnceLock<(tempfile::TempDir, PathBuf, Unlinked)> =
            std::sync::OnceLock::new();
        let (_, root, unlinked) = TREE.get_or_init(|| {
            let d = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(d.path()).unwrap();
            for p in ["a/o/dev", "a/base", "x"] {
                std::fs::create_dir_all(root.join(p)).unwrap();
            }
            std::fs::write(root.join("a/base/k"), "").unwrap();
            std::os::unix::fs::symlink("a/o", root.join("l")).unwrap();
            let real = crate::realpath::Realpath::default();
            for p in ["a/o/dev", "a/base/k", "l/dev", "x"] {
                real.resolve(&root.join(p)).unwrap();
            }
            let unlinked = real.unlinked();
            (d, root, unlinked)
        });
        (root, unlinked)
    }

    proptest::proptest! {
        /// On names spelled as inputs are, the text reading and the
        /// components reading agree; on any other spelling the text
        /// reading is the components one or nothing (stated as spelled).
        #[test]
        fn climbs_read_from_the_text_as_from_the_components(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "o", "dev", "base", "k", "l", "x", "..", "..", "..x", ".", "",
                ]),
                0..10,
            ),
        ) {
            let (root, unlinked) = climbing_tree();
            let name = format!("{}/{}", root.display(), parts.join("/"));
            let normal = parts.iter().all(|p| !matches!(*p, "" | "."));
            let text = lexical(&name, unlinked);
            let want = lexical_by_components(&name, unlinked);
            if normal {
                proptest::prop_assert_eq!(text, want);
            } else {
                proptest::prop_assert!(text.is_none() || text == want, "{name}: {text:?} {want:?}");
            }
        }
    }
}
