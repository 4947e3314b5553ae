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
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::entry::{self, Key, Kind, Reader, Refused, Writer};
use super::inputs::{Known, Name, Stat};
use super::secret::Secret;

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

/// The key the index is sealed under (it is the only entry of its kind).
fn key() -> Key {
    Sha256::digest(b"hydrate cache index").into()
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
/// left out (with the jobs that read them: those render every run). The
/// path table comes first but is built in a first pass, so every field is
/// written once, straight into the entry (at 2,000 apps the index is
/// about 20 MB; staging its parts and the payload cost as much again).
pub fn encode(index: &Index, secret: &Secret) -> Vec<u8> {
    encode_parts(
        index.stats.iter().map(|(p, (st, k))| (&**p, st, k)),
        &index.jobs,
        secret,
    )
}

/// [`encode`] of a stat index given as its entries (each path once), so
/// that a caller can chain two maps instead of merging them into a copy.
pub fn encode_parts<'a>(
    stats: impl Iterator<Item = (&'a OsStr, &'a Stat, &'a Key)>,
    jobs: &'a HashMap<Key, JobRecord>,
    secret: &Secret,
) -> Vec<u8> {
    let mut table = Table::default();
    let stats: Vec<(u64, &Stat, &Key)> = stats
        .filter_map(|(p, st, k)| Some((table.id(p)?, st, k)))
        .collect();
    let jobs: Vec<(&Key, &JobRecord)> = jobs
        .iter()
        .filter(|(_, rec)| rec.inputs.iter().all(|p| table.id(p).is_some()))
        .collect();
    let paths: usize = table.list.iter().map(|s| s.len() + 8).sum();
    let inputs: usize = jobs.iter().map(|(_, r)| r.inputs.len()).sum();
    let mut w = Writer::for_entry(24 + paths + stats.len() * 112 + jobs.len() * 56 + inputs * 8);
    w.u64(table.list.len() as u64);
    for s in &table.list {
        w.str(s);
    }
    w.u64(stats.len() as u64);
    for (i, st, k) in stats {
        w.u64(i);
        for v in st.id {
            w.u64(v);
        }
        for (s, ns) in st.times {
            w.u64(s as u64);
            w.u64(ns as u64);
        }
        w.bytes(k);
    }
    w.u64(jobs.len() as u64);
    for (k, rec) in jobs {
        w.bytes(k);
        w.u64(rec.micros);
        w.u64(rec.inputs.len() as u64);
        for p in rec.inputs.iter() {
            w.u64(table.id(p).unwrap_or_default());
        }
    }
    w.seal(Kind::Index, &key(), secret)
}

/// Paths, each stored once and referred to by number.
#[derive(Default)]
struct Table<'a> {
    list: Vec<&'a str>,
    ids: HashMap<&'a str, u64>,
}

impl<'a> Table<'a> {
    /// The number of `p`; `None` when it is not UTF-8.
    fn id(&mut self, p: &'a OsStr) -> Option<u64> {
        let s = p.to_str()?;
        let next = self.list.len() as u64;
        let id = *self.ids.entry(s).or_insert(next);
        if id == next {
            self.list.push(s);
        }
        Some(id)
    }
}

fn decode(payload: &[u8]) -> Option<Index> {
    let mut r = Reader::new(payload);
    let n = r.count()?;
    let table = (0..n)
        .map(|_| r.str().map(|s| Name::from(OsStr::new(s))))
        .collect::<Option<Vec<_>>>()?;
    let path =
        |r: &mut Reader| -> Option<Name> { table.get(usize::try_from(r.u64()?).ok()?).cloned() };
    let mut index = Index::default();
    for _ in 0..r.count()? {
        let p = path(&mut r)?;
        let id = [r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        let mut times = [(0i64, 0i64); 2];
        for t in &mut times {
            *t = (r.u64()? as i64, r.u64()? as i64);
        }
        let k: Key = r.bytes()?.try_into().ok()?;
        index.stats.insert(p, (Stat { id, times }, k));
    }
    for _ in 0..r.count()? {
        let k: Key = r.bytes()?.try_into().ok()?;
        let micros = r.u64()?;
        let inputs = (0..r.count()?)
            .map(|_| path(&mut r))
            .collect::<Option<Vec<_>>>()?;
        let inputs = inputs.into();
        index.jobs.insert(k, JobRecord { inputs, micros });
    }
    r.at_end().then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        index.jobs.insert(
            [1; 32],
            JobRecord {
                inputs: ["r/a", "r/a/k.yaml", "r/b"]
                    .iter()
                    .map(|p| Name::from(OsStr::new(p)))
                    .collect(),
                micros: 1234,
            },
        );
        index
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
