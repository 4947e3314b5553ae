//! What an environment's last clean run left, so that a run in which
//! nothing the environment depends on changed need not render, look up or
//! compare anything for it: ninja's "no work to do" and git's index, made
//! per environment.
//!
//! A [`Settled`] record holds, for one environment writing a directory:
//! - the stat of every input its apps' renders read (the files and
//!   directories the cache's index names for them);
//! - the stat of every entry of its output directory, taken before that
//!   run compared the directory with what it rendered and found it equal;
//! - what the report says of it (apps, resources, bytes, warnings).
//!
//! It is sealed (HMAC, as every cache entry) under the environment's
//! [`key`]: hydrate's build, the render options, the environment's whole
//! configuration and every job's resolved source. A record under another
//! key, altered, or unauthentic is no record. It is only written when
//! every stat in it is older than the run by at least [`super::RACY`], so
//! a change made within one timestamp tick cannot hide behind it.
//!
//! When every input and every output entry still has its recorded stat,
//! each render would read the same bytes (the cache's own promise for its
//! entries), give the result it gave, and find the directory holding it:
//! the environment is unchanged, and its report is the record's.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::entry::{self, Key, Kind, Reader, Writer};
use super::inputs::{Name, Stat};
use super::Secret;
use crate::env::{AppWarning, Environment, Job};
use crate::warning::{Warning, WarningKind};

/// An environment's settled state (see the module).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Every input of its renders and its stat, sorted by name.
    pub inputs: Vec<(Name, Stat)>,
    /// Every entry of its output directory (the directory itself as the
    /// empty path) and its `lstat`, in the order `output` walks them.
    pub output: Vec<(PathBuf, Stat)>,
    /// Apps rendered.
    pub apps: usize,
    /// Resources rendered.
    pub resources: usize,
    /// Bytes of manifests rendered.
    pub bytes: usize,
    /// The renders' warnings.
    pub warnings: Vec<AppWarning>,
}

/// Which of `records` have every input still at its recorded stat. Each
/// path is stated once for all of them (environments share charts,
/// components and bases), on every core, in name order a chunk at a time;
/// once every record has a changed input, nothing more is stated.
pub fn inputs_unchanged(records: &[&Settled]) -> Vec<bool> {
    let mut names: Vec<&Name> = records
        .iter()
        .flat_map(|s| s.inputs.iter().map(|(n, _)| n))
        .collect();
    // Each record's inputs are sorted: a stable sort finds those runs and
    // merges them.
    names.sort();
    names.dedup();
    let from = Base::of(&names);
    let mut ok: Vec<bool> = records.iter().map(|s| is_sorted(&s.inputs)).collect();
    // Each record's next input to compare.
    let mut at: Vec<usize> = vec![0; records.len()];
    for chunk in names.chunks(CHUNK) {
        if !ok.contains(&true) {
            break;
        }
        let stated: Vec<Option<Stat>> = chunk.par_iter().map(|n| from.stat(n)).collect();
        for ((s, ok), at) in records.iter().zip(&mut ok).zip(&mut at) {
            // Both in name order: one pass, no hashing of paths.
            let mut here = chunk.iter().zip(&stated);
            while let (true, Some((name, was))) = (*ok, s.inputs.get(*at)) {
                if chunk.last().is_some_and(|last| name > *last) {
                    break;
                }
                *ok = here
                    .find(|(n, _)| **n >= name)
                    .is_some_and(|(n, now)| *n == name && now.as_ref() == Some(was));
                *at += 1;
            }
        }
    }
    ok.iter()
        .zip(records)
        .zip(&at)
        .map(|((ok, s), at)| *ok && *at == s.inputs.len())
        .collect()
}

/// Names stated per round (a round's stats are compared before the next);
/// small under test, so that a test crosses rounds with a few files.
const CHUNK: usize = if cfg!(test) { 64 } else { 8192 };

/// Whether `inputs` are sorted by name, each once (as a record holds
/// them; any other order is not trusted to compare).
fn is_sorted(inputs: &[(Name, Stat)]) -> bool {
    inputs.is_sorted_by(|a, b| a.0 < b.0)
}

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
    fn of(names: &[&Name]) -> Base {
        // Sorted by bytes: the names starting with `/` are one run.
        let first_byte = |n: &&Name| n.as_encoded_bytes().first().copied();
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
        let (a, b) = (first.as_encoded_bytes(), last.as_encoded_bytes());
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
    fn of(_names: &[&Name]) -> Base {
        Base {}
    }

    /// [`Stat::of`] `name`.
    #[cfg(target_os = "linux")]
    fn stat(&self, name: &Name) -> Option<Stat> {
        use std::os::fd::AsFd;
        use std::os::unix::ffi::OsStrExt;
        let rest = name.as_encoded_bytes().strip_prefix(self.prefix.as_slice());
        match (&self.dir, rest) {
            (Some(dir), Some(rest)) if !rest.is_empty() => {
                Stat::at(dir.as_fd(), Path::new(std::ffi::OsStr::from_bytes(rest)))
            }
            _ => Stat::of(Path::new(&**name)),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn stat(&self, name: &Name) -> Option<Stat> {
        Stat::of(Path::new(&**name))
    }
}

/// The key an environment's record is sealed under: hydrate's build, the
/// render options that change a result (`strict`), the environment's
/// whole configuration and each of its jobs (app and resolved source, in
/// plan order). Any change to them is another key, so the record is
/// ignored.
pub fn key(build: &str, env: &Environment, jobs: &[&Job], strict: bool) -> Key {
    let mut h = Sha256::new();
    h.update(b"hydrate settled environment\0");
    h.update(build.as_bytes());
    h.update(b"\0");
    h.update(format!("{:?}\0{strict}\0{env:?}\0", crate::env::build_options(None)).as_bytes());
    for j in jobs {
        h.update(format!("{}\0{:?}\0{:?}\0", j.app, j.env, j.source).as_bytes());
    }
    h.finalize().into()
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
    let names: usize = s.inputs.iter().map(|(n, _)| n.len() / 2 + 80).sum();
    let mut w = Writer::for_entry(names + s.output.len() * 120 + 64);
    w.u64(s.inputs.len() as u64);
    // Sorted names share long prefixes: each is stored as the length it
    // shares with the one before and the rest (a record is half the size).
    let mut last: &[u8] = &[];
    for (name, st) in &s.inputs {
        let name = name.to_str()?.as_bytes();
        let shared = name.iter().zip(last).take_while(|(a, b)| a == b).count();
        w.u64(shared as u64);
        w.bytes(name.get(shared..)?);
        write_stat(&mut w, st);
        last = name;
    }
    w.u64(s.output.len() as u64);
    for (p, st) in &s.output {
        w.str(p.to_str()?);
        write_stat(&mut w, st);
    }
    for n in [s.apps, s.resources, s.bytes] {
        w.u64(n as u64);
    }
    w.u64(s.warnings.len() as u64);
    for aw in &s.warnings {
        w.str(&aw.env);
        w.str(&aw.app);
        write_warning(&mut w, &aw.warning)?;
    }
    Some(w.seal(Kind::Settled, key, secret))
}

fn decode(payload: &[u8]) -> Option<Settled> {
    let mut r = Reader::new(payload);
    let n = r.count()?;
    let mut inputs = Vec::with_capacity(n);
    let mut name: Vec<u8> = Vec::new();
    for _ in 0..n {
        let shared = usize::try_from(r.u64()?).ok()?;
        name.truncate(shared);
        if name.len() != shared {
            return None;
        }
        name.extend_from_slice(r.bytes()?);
        let text = std::str::from_utf8(&name).ok()?;
        inputs.push((Name::from(std::ffi::OsStr::new(text)), read_stat(&mut r)?));
    }
    let n = r.count()?;
    let mut output = Vec::with_capacity(n);
    for _ in 0..n {
        let p = PathBuf::from(r.str()?);
        output.push((p, read_stat(&mut r)?));
    }
    let mut counts = [0usize; 3];
    for c in &mut counts {
        *c = usize::try_from(r.u64()?).ok()?;
    }
    let n = r.count()?;
    let mut warnings = Vec::with_capacity(n);
    for _ in 0..n {
        let env = r.str()?.to_string();
        let app = r.str()?.to_string();
        warnings.push(AppWarning {
            env,
            app,
            warning: read_warning(&mut r)?,
        });
    }
    if !r.at_end() {
        return None;
    }
    let [apps, resources, bytes] = counts;
    Some(Settled {
        inputs,
        output,
        apps,
        resources,
        bytes,
        warnings,
    })
}

fn write_stat(w: &mut Writer, s: &Stat) {
    for v in s.id {
        w.u64(v);
    }
    for (secs, nanos) in s.times {
        w.u64(secs as u64);
        w.u64(nanos as u64);
    }
}

fn read_stat(r: &mut Reader) -> Option<Stat> {
    let mut id = [0u64; 4];
    for v in &mut id {
        *v = r.u64()?;
    }
    let mut times = [(0i64, 0i64); 2];
    for t in &mut times {
        *t = (r.u64()? as i64, r.u64()? as i64);
    }
    Some(Stat { id, times })
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

    fn record() -> Settled {
        Settled {
            inputs: [
                "apps/web/base",
                "apps/web/base/k.yaml",
                "apps/wéb",
                "charts/x",
            ]
            .iter()
            .zip(1..)
            .map(|(n, i)| (Name::from(std::ffi::OsStr::new(n)), stat(i)))
            .collect(),
            output: vec![(PathBuf::new(), stat(2)), ("web/m.yaml".into(), stat(3))],
            apps: 1,
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
        }
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
        let names: Vec<Name> = [
            "apps/web/k.yaml",
            "apps/web/../web/k.yaml",
            "apps/web/.",
            "apps",
            "apps/gone",
        ]
        .iter()
        .map(|r| Name::from(d.path().join(r).as_os_str()))
        .chain([Name::from(std::ffi::OsStr::new("/"))])
        .collect();
        let mut sorted: Vec<&Name> = names.iter().collect();
        sorted.sort_unstable();
        let absolute: Vec<&Name> = sorted
            .iter()
            .copied()
            .filter(|n| {
                n.as_encoded_bytes().starts_with(b"/")
                    && **n != Name::from(std::ffi::OsStr::new("/"))
            })
            .collect();
        for one in [&sorted[..], &sorted[..2], &sorted[1..3], &absolute[..]] {
            let base = Base::of(one);
            for n in &names {
                assert_eq!(base.stat(n), Stat::of(Path::new(&**n)), "{n:?}");
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
    fn inputs_are_unchanged_until_one_is_touched() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("many")).unwrap();
        let f = d.path().join("k.yaml");
        std::fs::write(&f, "a").unwrap();
        let name = Name::from(f.as_os_str());
        let s = Settled {
            inputs: vec![(name, Stat::of(&f).unwrap())],
            ..Settled::default()
        };
        let other = Settled {
            inputs: vec![(
                Name::from(d.path().as_os_str()),
                Stat::of(d.path()).unwrap(),
            )],
            ..Settled::default()
        };
        assert_eq!(inputs_unchanged(&[&s, &other, &s]), [true, true, true]);
        std::fs::write(&f, "b").unwrap();
        assert_eq!(inputs_unchanged(&[&s, &other]), [false, true], "rewritten");
        std::fs::remove_file(&f).unwrap();
        assert_eq!(inputs_unchanged(&[&s]), [false], "removed");
        let mut unsorted = other.clone();
        unsorted.inputs.push(unsorted.inputs[0].clone());
        assert_eq!(inputs_unchanged(&[&unsorted]), [false], "not in order");
        // More inputs than one round states: every one is compared.
        let many: Vec<(Name, Stat)> = (0..CHUNK + 10)
            .map(|i| {
                let p = d.path().join(format!("many/f{i:06}"));
                std::fs::write(&p, "").unwrap();
                (Name::from(p.as_os_str()), Stat::of(&p).unwrap())
            })
            .collect();
        let big = Settled {
            inputs: many.clone(),
            ..Settled::default()
        };
        let few = Settled {
            inputs: many[..1].to_vec(),
            ..Settled::default()
        };
        assert_eq!(inputs_unchanged(&[&big, &few]), [true, true]);
        std::fs::write(d.path().join(format!("many/f{:06}", CHUNK + 5)), "x").unwrap();
        assert_eq!(inputs_unchanged(&[&big, &few]), [false, true]);
    }
}
