//! The cache's index, `<cache>/index`: one file read at the start of a run
//! and written at its end (only when something changed), so an unchanged
//! run opens one file per job (its result) instead of re-reading every
//! input and a list of inputs per job. It holds:
//! - the stat index: for each input path, its [`Stat`] when it was last
//!   hashed and that hash ([`super::inputs::Hasher`] decides when a stat is
//!   trusted);
//! - per job key: the inputs its last render read (which the result's key
//!   hashes) and how long that render took (the heaviest jobs start first).
//!
//! Paths are stored once, in a table the entries refer to. The file is an
//! [`entry`](super::entry) of its own kind, authenticated as entries are:
//! a forged stat or job record could otherwise make a run compute the key
//! of an older result. A corrupt, truncated, foreign or unauthentic index
//! is recognised and the run starts from an empty one. It reads and writes
//! nothing but the file it is given.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::entry::{self, Key, Kind, Reader, Refused, Writer};
use super::inputs::{Fx, Known, Name, Stat};
use super::secret::Secret;
use super::stat_table;

/// What the index remembers about one job (by job key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The inputs its last render read ([`super::inputs::of`]); shared,
    /// as jobs share most of their inputs and a lookup needs the list
    /// without the lock; each path is the stat index's and the hash
    /// memo's allocation of it.
    pub inputs: Arc<[Name]>,
    /// How long that render took, in microseconds.
    pub micros: u64,
}

/// The whole index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// The stat index.
    pub stats: Known,
    /// Job key -> its last render.
    pub jobs: HashMap<Key, JobRecord>,
}

/// The key the index is sealed under (it is the only entry of its kind;
/// the layout's version is in it, so an index of another layout is
/// foreign).
fn key() -> Key {
    Sha256::digest(b"hydrate cache index\0layout 2").into()
}

/// The index in `path`, empty when absent or unreadable; why it is not
/// trusted when it is not a whole index sealed under `secret`.
pub fn load(path: &Path, secret: &Secret) -> Result<Index, Refused> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(Index::default());
    };
    decode(entry::open(&bytes, Kind::Index, &key(), secret)?).ok_or(Refused::Foreign)
}

/// The bytes of `index` as a sealed entry; paths that are not UTF-8 are
/// left out (with the jobs that read them: those render every run).
pub fn encode(index: &Index, secret: &Secret) -> Vec<u8> {
    encode_parts(
        index.stats.iter().map(|(p, (st, k))| (&**p, st, k)),
        &index.jobs,
        secret,
    )
}

/// [`encode`] of a stat index given as its entries (each path once), so
/// that a caller can chain two maps instead of merging them into a copy.
///
/// The layout is dense, as git's index v4 is: the paths sorted, each
/// stored once as the length it shares with the one before and the rest;
/// the stats in path order, each as the gap to its path's number and its
/// fields' differences from the stat before (small numbers, LEB128); a
/// job's inputs as differences between their numbers, in the job's own
/// order (which its result's key hashes). At 10,000 apps the index went
/// from 108 MB of fixed-width fields to a third of that, which is both
/// what a cold run holds to write it and what an unchanged run reads.
pub fn encode_parts<'a>(
    stats: impl Iterator<Item = (&'a OsStr, &'a Stat, &'a Key)>,
    jobs: &'a HashMap<Key, JobRecord>,
    secret: &Secret,
) -> Vec<u8> {
    let mut stats: Vec<(&str, &Stat, &Key)> = stats
        .filter_map(|(p, st, k)| Some((p.to_str()?, st, k)))
        .collect();
    // Stable: what was learnt comes sorted, so a cold run's stats are one
    // run already and cost a compare each (paths share long prefixes: a
    // compare is a long memcmp).
    stats.sort_by(|a, b| a.0.cmp(b.0));
    stats.dedup_by(|a, b| a.0 == b.0);
    // Names, not copies: at 10,000 apps a list of each job's paths was
    // 23 MB.
    let jobs: Vec<(&Key, &JobRecord)> = jobs
        .iter()
        .filter(|(_, rec)| rec.inputs.iter().all(|p| p.to_str().is_some()))
        .collect();
    let mut table: Vec<&str> = stats.iter().map(|(p, _, _)| *p).collect();
    // Numbers by hash, not by binary search: at 10,000 apps the jobs name
    // 1.4 million inputs, and searching was a quarter of a one-base run.
    // One map both finds the inputs the stat index does not hold and, once
    // the table is sorted, numbers every path (a set beside it for the
    // first was 6-11 MB more at the end of a cold 10,000-app run).
    let mut ids: HashMap<&str, u64, BuildHasherDefault<Fx>> =
        HashMap::with_capacity_and_hasher(table.len(), BuildHasherDefault::default());
    ids.extend(table.iter().map(|p| (*p, 0)));
    let mut extra: Vec<&str> = jobs
        .iter()
        .flat_map(|(_, rec)| rec.inputs.iter().filter_map(|p| p.to_str()))
        .filter(|p| !ids.contains_key(p))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    ids.extend(extra.iter().map(|p| (*p, 0)));
    table.extend(extra);
    // The stats' paths are sorted, and the few inputs the stat index does
    // not hold (unreadable ones) follow: a stable sort merges the runs.
    table.sort();
    table.dedup();
    for (i, p) in table.iter().enumerate() {
        if let Some(n) = ids.get_mut(p) {
            *n = i as u64;
        }
    }
    let id = |p: &str| ids.get(p).copied().unwrap_or_default();
    let paths: usize = table.iter().map(|s| s.len() / 3 + 2).sum();
    let inputs: usize = jobs.iter().map(|(_, rec)| rec.inputs.len() * 2).sum();
    let mut w = Writer::for_entry(16 + paths + stats.len() * 56 + jobs.len() * 40 + inputs);
    w.varint(table.len() as u64);
    let mut last: &[u8] = &[];
    for s in &table {
        let s = s.as_bytes();
        let shared = s.iter().zip(last).take_while(|(a, b)| a == b).count();
        w.varint(shared as u64);
        let rest = s.get(shared..).unwrap_or_default();
        w.varint(rest.len() as u64);
        w.buf.extend_from_slice(rest);
        last = s;
    }
    w.varint(stats.len() as u64);
    let (mut next, mut prev) = (0u64, Stat::default());
    for (p, st, k) in &stats {
        let i = id(p);
        w.varint(i.wrapping_sub(next));
        next = i + 1;
        stat_table::write_stat(&mut w, &prev, st);
        prev = **st;
        w.buf.extend_from_slice(*k);
    }
    w.varint(jobs.len() as u64);
    for (k, rec) in &jobs {
        w.buf.extend_from_slice(*k);
        w.varint(rec.micros);
        w.varint(rec.inputs.len() as u64);
        let mut before = 0u64;
        for p in rec.inputs.iter() {
            let i = id(p.to_str().unwrap_or_default());
            w.signed(i.wrapping_sub(before) as i64);
            before = i;
        }
    }
    w.seal(Kind::Index, &key(), secret)
}

/// 32 bytes, as a key.
fn read_key(r: &mut Reader) -> Option<Key> {
    let mut k = [0u8; 32];
    for b in &mut k {
        *b = r.byte()?;
    }
    Some(k)
}

fn decode(payload: &[u8]) -> Option<Index> {
    let mut r = Reader::new(payload);
    let n = r.count_varint()?;
    let mut table: Vec<Name> = Vec::with_capacity(n);
    let mut path: Vec<u8> = Vec::new();
    for _ in 0..n {
        let shared = usize::try_from(r.varint()?).ok()?;
        if shared > path.len() {
            return None;
        }
        path.truncate(shared);
        let len = usize::try_from(r.varint()?).ok()?;
        path.extend_from_slice(r.take(len)?);
        table.push(Name::from(OsStr::new(std::str::from_utf8(&path).ok()?)));
    }
    let at = |i: u64| table.get(usize::try_from(i).ok()?).cloned();
    let mut index = Index::default();
    let n = r.count_varint()?;
    index.stats.reserve(n);
    let (mut next, mut prev) = (0u64, Stat::default());
    for _ in 0..n {
        let i = next.checked_add(r.varint()?)?;
        next = i.checked_add(1)?;
        prev = stat_table::read_stat(&mut r, &prev)?;
        let k = read_key(&mut r)?;
        index.stats.insert(at(i)?, (prev, k));
    }
    for _ in 0..r.count_varint()? {
        let k = read_key(&mut r)?;
        let micros = r.varint()?;
        let m = r.count_varint()?;
        let mut inputs = Vec::with_capacity(m);
        let mut before = 0u64;
        for _ in 0..m {
            before = before.wrapping_add(r.signed()? as u64);
            inputs.push(at(before)?);
        }
        let inputs = inputs.into();
        index.jobs.insert(k, JobRecord { inputs, micros });
    }
    r.at_end().then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(inputs: &[&str], micros: u64) -> JobRecord {
        JobRecord {
            inputs: inputs.iter().map(|p| Name::from(OsStr::new(p))).collect(),
            micros,
        }
    }

    fn sample() -> Index {
        let mut index = Index::default();
        let st = Stat {
            id: [1, 2, 3, 0o100644],
            times: [(1_700_000_000, 5), (-1, 999_999_999)],
        };
        index
            .stats
            .insert(Name::from(OsStr::new("r/a/k.yaml")), (st, [9; 32]));
        index
            .stats
            .insert(Name::from(OsStr::new("r/a")), (st, [8; 32]));
        index
            .jobs
            .insert([1; 32], job(&["r/a", "r/a/k.yaml", "r/b"], 1234));
        // A job's inputs keep their order (its result's key hashes it),
        // also when it is not the table's: `Path` order puts `a/b`
        // before `a-b`, bytes after.
        index
            .jobs
            .insert([2; 32], job(&["r/a/k.yaml", "r/a-b", "r/a"], 0));
        index
    }

    proptest::proptest! {
        #[test]
        fn any_index_round_trips(
            stats in proptest::collection::btree_map("[a-c/é]{0,8}", (proptest::prelude::any::<[u64; 4]>(), proptest::prelude::any::<[(i64, i64); 2]>(), proptest::prelude::any::<u8>()), 0..30),
            jobs in proptest::collection::vec(proptest::collection::vec("[a-c/é]{0,8}", 0..8), 0..6),
        ) {
            let mut index = Index::default();
            for (p, (id, times, k)) in stats {
                index.stats.insert(Name::from(OsStr::new(&p)), (Stat { id, times }, [k; 32]));
            }
            for (n, inputs) in jobs.into_iter().enumerate() {
                let inputs = inputs.iter().map(|p| Name::from(OsStr::new(p))).collect();
                index.jobs.insert([n as u8; 32], JobRecord { inputs, micros: n as u64 * 1000 });
            }
            let secret = Secret::from_text(&[b's'; 32]).unwrap();
            let bytes = encode(&index, &secret);
            let payload = entry::open(&bytes, Kind::Index, &key(), &secret).unwrap();
            proptest::prop_assert_eq!(decode(payload), Some(index));
        }
    }

    #[test]
    fn round_trips_and_rejects_damage() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("index");
        let secret = Secret::from_text(&[b's'; 32]).unwrap();
        assert_eq!(load(&p, &secret), Ok(Index::default()), "absent");
        let bytes = encode(&sample(), &secret);
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(load(&p, &secret), Ok(sample()));
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            assert_eq!(load(&p, &secret), Err(Refused::Foreign), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&p, flipped).unwrap();
        assert_eq!(load(&p, &secret), Err(Refused::Unauthentic), "flipped");
        let other = entry::seal(Kind::Output, &key(), b"", &secret);
        std::fs::write(&p, other).unwrap();
        assert_eq!(load(&p, &secret), Err(Refused::Foreign), "another kind");
        std::fs::write(&p, &bytes).unwrap();
        let another = Secret::from_text(&[b't'; 32]).unwrap();
        assert_eq!(
            load(&p, &another),
            Err(Refused::Unauthentic),
            "another secret"
        );
    }
}
