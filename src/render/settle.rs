//! Environments that need no work: before anything renders, each
//! environment that writes a directory is checked against the record its
//! last clean run left ([`env::cache::settled`]); one whose inputs and
//! output directory all still have their recorded stats is reported from
//! the record, without a lookup, a render, a comparison or a stage. An
//! environment found unchanged the long way gets a record for the next
//! run.
//!
//! Only a complete run (no `--app`, no shard) that writes (not `--check`)
//! and does not validate uses records: those are the runs whose outcome
//! for an unchanged environment is "unchanged" and nothing else. A record
//! is removed before its environment is staged, so a run killed while
//! writing leaves none behind and the next run looks (and recovers) the
//! long way.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rayon::prelude::*;

use super::sink::Finished;
use super::{EnvReport, Options};
use crate::env::cache::settled::{self, Settled, SettledApp};
use crate::env::cache::Listing;
use crate::env::cache::{self, Key, Secret, Stat, StatTable};
use crate::env::{self, Environment, Job, Output};
use crate::output;
use crate::realpath::Unlinked;

/// The records of one run.
pub(super) struct Settle<'a> {
    /// The repository root (output directories are relative to it).
    root: PathBuf,
    /// The cache directory and the secret records are sealed under.
    dir: PathBuf,
    secret: Secret,
    /// When the run started: only stats older than this by
    /// [`cache::RACY`] go into a record.
    started: SystemTime,
    /// The environments that can have a record: each with its output
    /// directory, key and record file.
    eligible: BTreeMap<&'a str, Eligible<'a>>,
}

struct Eligible<'a> {
    env: &'a Environment,
    dir: PathBuf,
    key: Key,
    path: PathBuf,
}

impl<'a> Settle<'a> {
    /// The records `opts` lets this run use for the environments in
    /// `written`, whose jobs are `jobs`; `None` when it uses none.
    pub fn new(
        opts: &Options,
        envs: &'a [Environment],
        jobs: &[Job],
        written: &BTreeSet<&str>,
        complete: bool,
        started: SystemTime,
    ) -> Option<Settle<'a>> {
        if !complete || opts.check || opts.validate {
            return None;
        }
        let secret = opts.cache.clone()?;
        let dir = cache::dir_of(&opts.root)?;
        let mut by_env: BTreeMap<&str, Vec<&Job>> = BTreeMap::new();
        for j in jobs {
            by_env.entry(j.env.as_str()).or_default().push(j);
        }
        // Each environment's key on its own core: its configuration's text
        // and every job are hashed, tens of milliseconds at 2,000 apps.
        let eligible = envs
            .par_iter()
            .filter(|e| written.contains(e.name.as_str()) && !e.validate)
            .filter_map(|e| match &e.output {
                Output::Dir(d) => {
                    let jobs = by_env.get(e.name.as_str()).map_or(&[][..], Vec::as_slice);
                    let key = settled::key(cache::build(), &opts.root, e, jobs, opts.strict);
                    let path = settled::path(&dir, &e.name, d);
                    let it = Eligible {
                        env: e,
                        dir: d.clone(),
                        key,
                        path,
                    };
                    Some((e.name.as_str(), it))
                }
                Output::Branch(_) => None,
            })
            .collect();
        Some(Settle {
            root: opts.root.clone(),
            dir,
            secret,
            started,
            eligible,
        })
    }

    /// What the records say: the environments whose record still holds
    /// as a whole, with their reports (read from the record: nothing of
    /// theirs needs to run), and for the others, the apps whose record
    /// still holds.
    /// `unlinked`: directories this run found to have no symlink in them
    /// ([`settled::inputs_fresh`]).
    pub fn check(&self, unlinked: &Unlinked) -> Checked {
        let records: Vec<(&str, &Eligible, Settled)> = self
            .eligible
            .par_iter()
            .filter_map(|(name, it)| {
                let s = settled::load(&it.path, &it.key, &self.secret)?;
                Some((*name, it, s))
            })
            .collect();
        let fresh = settled::inputs_fresh(
            &records.iter().map(|(_, _, s)| s).collect::<Vec<_>>(),
            unlinked,
        );
        let verdicts: Vec<(&str, Verdict)> = records
            .into_par_iter()
            .zip(fresh)
            .map(|((name, it, s), inputs)| {
                let output = output::tree_fresh(&self.root, &it.dir, &s.output);
                (name, verdict(it.env, s, &inputs, &output))
            })
            .collect();
        let mut checked = Checked::default();
        for (name, v) in verdicts {
            match v {
                Verdict::Whole(report) => {
                    checked.whole.insert(name.to_string(), *report);
                }
                Verdict::Kept(kept) if !kept.apps.is_empty() => {
                    checked.kept.insert(name.to_string(), kept);
                }
                Verdict::Kept(_) => {}
            }
        }
        checked
    }

    /// Removes the records of the environments about to be staged: a run
    /// killed while writing one leaves no record claiming it unchanged.
    pub fn forget<'n>(&self, envs: impl IntoIterator<Item = &'n str>) {
        for name in envs {
            if let Some(it) = self.eligible.get(name) {
                let _ = std::fs::remove_file(&it.path);
            }
        }
    }

    /// Each app's inputs and their trusted stats, by environment and app,
    /// as the cache saw them this run (before [`env::Cache::finish`]) for
    /// the apps rendered, and as their record had them for the apps `kept`
    /// (stated again this run, unchanged).
    pub fn inputs(
        &self,
        cache: Option<&env::Cache>,
        jobs: &[Job],
        kept: BTreeMap<String, KeptApps>,
    ) -> Inputs {
        let mine: Vec<&Job> = jobs
            .iter()
            .filter(|j| self.eligible.contains_key(j.env.as_str()))
            .collect();
        let mut out = Inputs::default();
        if let Some(c) = cache {
            let trusted = c.trusted_inputs(&mine);
            for (j, inputs) in mine.iter().zip(trusted.jobs) {
                if let Some(inputs) = inputs {
                    let at = Share {
                        table: 0,
                        at: inputs,
                    };
                    out.apps.insert((j.env.clone(), j.app.clone()), at);
                }
            }
            out.tables.push(trusted.table);
        }
        for (env, k) in kept {
            let table = out.tables.len();
            for app in k.apps {
                // An app with an index past u32 (never, in practice) has
                // no known inputs, so no record.
                let at: Option<Vec<u32>> =
                    app.inputs.iter().map(|i| u32::try_from(*i).ok()).collect();
                if let Some(at) = at {
                    out.apps.insert((env.clone(), app.app), Share { table, at });
                }
            }
            out.tables.push(k.inputs);
        }
        out
    }

    /// Records each environment of `reports` (see [`Settle::record`]), on
    /// every core: `apps` its renders (and apps taken as they were),
    /// `left` what its directory write left.
    pub fn record_all(
        &self,
        reports: &[EnvReport],
        apps: &BTreeMap<String, Vec<Finished>>,
        inputs: &Inputs,
        left: &BTreeMap<String, DirLeft>,
    ) {
        reports.par_iter().for_each(|r| {
            let Some(it) = self.eligible.get(r.env.as_str()) else {
                return;
            };
            let left = left.get(&r.env);
            let seen = Seen {
                inputs,
                spare: left.and_then(|l| l.spare.clone()),
                files: left.map(|l| &l.files),
                // After a switch this is the new tree; a file compared
                // (or written) after the run started has a modification
                // time too young to vouch for it.
                output: left.and_then(|l| output::stat_entries(&self.root, &it.dir, &l.tree)),
            };
            let apps = apps.get(&r.env).map_or(&[][..], Vec::as_slice);
            self.record(r, apps, seen);
        });
    }

    /// Records environment `report.env` after this run wrote it or found it
    /// unchanged: each of its `apps` whose inputs (from [`Settle::inputs`])
    /// and files (`files`, from the write) all have trusted stats, and
    /// whether the record vouches for the whole environment (every app,
    /// every entry of `output`, nothing to say, nothing failed). `output`
    /// is the directory's tree after this run wrote or compared it. Best
    /// effort.
    pub fn record(&self, report: &EnvReport, apps: &[Finished], seen: Seen) {
        let Some(it) = self.eligible.get(report.env.as_str()) else {
            return;
        };
        let (Some(files), Some(tree), None) = (seen.files, seen.output, &report.check) else {
            return;
        };
        // A file's content moves its modification time: an entry modified
        // before the racy window vouches for what it holds, whatever its
        // change time (a hard link moves that). The others are young.
        let is_young: Vec<bool> = tree
            .iter()
            .map(|(_, s)| !s.modified_before(self.started))
            .collect();
        let untrusted = is_young.iter().any(|y| *y);
        // The record lists every entry, young ones too, when few
        // directories are young: the next run then knows the tree from it,
        // reading only those directories (after a change of one app, the
        // app's). When many are (the first run wrote them all), reading the
        // tree costs about as much, and only the old entries are kept.
        let dirs = tree.iter().filter(|(_, s)| s.is_dir()).count();
        let young_dirs = tree
            .iter()
            .zip(&is_young)
            .filter(|((_, s), y)| **y && s.is_dir())
            .count();
        let complete = young_dirs * 4 <= dirs;
        let (output, young): (Vec<(PathBuf, Stat)>, Vec<usize>) = match complete {
            true => {
                let young = (0..tree.len()).filter(|i| is_young[*i]).collect();
                (tree, young)
            }
            false => {
                let old = tree.into_iter().zip(&is_young).filter(|(_, y)| !**y);
                (old.map(|(e, _)| e).collect(), Vec::new())
            }
        };
        // An app's own entries must vouch for what they hold.
        let at: HashMap<&Path, usize> = output
            .iter()
            .enumerate()
            .filter(|(i, _)| young.binary_search(i).is_err())
            .map(|(i, (p, _))| (p.as_path(), i))
            .collect();
        let mut recorded: Vec<(SettledApp, Vec<(&str, &Stat)>)> = Vec::new();
        for f in apps.iter().filter(|f| f.refused.is_empty()) {
            let key = (report.env.clone(), f.app.clone());
            let (Some(inputs), Some(files)) = (seen.inputs.of(&key), files.get(&f.app)) else {
                continue;
            };
            let own: Option<Vec<usize>> = files
                .iter()
                .map(|(p, _)| at.get(Path::new(p)).copied())
                .collect();
            let Some(mut own) = own else { continue };
            own.sort_unstable();
            let app = SettledApp {
                app: f.app.clone(),
                inputs: Vec::new(),
                output: own,
                files: files.clone(),
                resources: f.resources,
                bytes: f.bytes,
                warnings: f.warnings.clone(),
            };
            recorded.push((app, inputs));
        }
        let whole = !untrusted
            && recorded.len() == apps.len()
            && report.notices.is_empty()
            && report.failed.is_empty()
            && !output.is_empty();
        if recorded.is_empty() && !whole {
            return;
        }
        let mut names: Vec<(&str, &Stat)> = recorded
            .iter()
            .flat_map(|(_, inputs)| inputs.iter().copied())
            .collect();
        names.sort_unstable_by(|a, b| a.0.cmp(b.0));
        names.dedup_by(|a, b| a.0 == b.0);
        let apps = recorded
            .into_iter()
            .map(|(mut app, inputs)| {
                app.inputs = inputs
                    .iter()
                    .filter_map(|(n, _)| names.binary_search_by(|(m, _)| m.cmp(n)).ok())
                    .collect();
                app.inputs.sort_unstable();
                app.inputs.dedup();
                app
            })
            .collect();
        let text = names.iter().map(|(n, _)| n.len()).sum();
        let mut table = StatTable::with_capacity(names.len(), text);
        for (name, st) in names {
            if table.push(name, *st).is_none() {
                return;
            }
        }
        let s = Settled {
            inputs: table,
            output,
            complete,
            young,
            spare: seen.spare,
            apps,
            whole,
        };
        if let (Some(bytes), Ok(())) = (
            settled::encode(&s, &it.key, &self.secret),
            cache::ensure_dir(&self.dir),
        ) {
            cache::write_in(&self.dir, &it.path, &bytes);
        }
    }
}

/// What the records said ([`Settle::check`]).
#[derive(Default)]
pub(super) struct Checked {
    /// Environment → its report, for those answered whole.
    pub whole: BTreeMap<String, EnvReport>,
    /// Environment → the apps answered by its record, for those that go
    /// the long way with the others.
    pub kept: BTreeMap<String, KeptApps>,
}

/// The apps of one environment answered by its record.
pub(super) struct KeptApps {
    /// The record's inputs and their stats (each of the apps' is as
    /// recorded, and found so again).
    pub inputs: StatTable,
    /// What the record holds of each app: its inputs are indices into
    /// `inputs`.
    pub apps: Vec<SettledApp>,
    /// The record's output tree and its young entries, when the record
    /// lists all of it and every entry was found with its recorded stat
    /// this run: the live directory as it is, known without reading it
    /// but for its young directories ([`crate::output::Stage::open_with`]).
    pub tree: Option<Listing>,
    /// The spare tree as the record lists it (checked when claimed).
    pub spare: Option<Listing>,
}

impl KeptApps {
    /// What `render` keeps of each app, as if it had rendered (its files
    /// are in the live directory already; see [`crate::output::Stage::keep`]).
    pub fn finished<'s>(&'s self, env: &'s str) -> impl Iterator<Item = Finished> + 's {
        self.apps.iter().map(move |a| Finished {
            env: env.to_string(),
            app: a.app.clone(),
            files: Ok(BTreeMap::new()),
            refused: Vec::new(),
            resources: a.resources,
            bytes: a.bytes,
            warnings: a.warnings.clone(),
        })
    }
}

/// App → its files (relative to the output directory) and their hashes,
/// as a directory write left them.
pub(super) type AppFiles = BTreeMap<String, Vec<(String, String)>>;

/// What an environment's directory write left.
pub(super) struct DirLeft {
    /// Its apps' files and their hashes.
    pub files: AppFiles,
    /// Every entry of the directory, as [`crate::output::DirPlan::apply`] left it.
    pub tree: Vec<PathBuf>,
    /// The spare tree as this run knows it, if it does: the live tree it
    /// listed when the switch set that aside, or the record's list when
    /// nothing was switched.
    pub spare: Option<Listing>,
}

/// Each app's inputs and their trusted stats, by (environment, app): one
/// shared table per source instead of a (name, stat) pair per app and
/// input (at 10,000 apps those pairs alone were over a hundred megabytes).
#[derive(Default)]
pub(super) struct Inputs {
    /// Tables of inputs and their stats, each sorted by name: the cache's
    /// for the apps rendered, and each kept environment's record's.
    tables: Vec<StatTable>,
    /// (environment, app) → its share of one table.
    apps: BTreeMap<(String, String), Share>,
}

/// An app's inputs: ascending indices (`at`) into one of [`Inputs`]'
/// tables (`table`).
struct Share {
    table: usize,
    at: Vec<u32>,
}

impl Inputs {
    /// The inputs of (environment, app) and their stats, if known.
    fn of(&self, key: &(String, String)) -> Option<Vec<(&str, &Stat)>> {
        let share = self.apps.get(key)?;
        let table = self.tables.get(share.table)?;
        let at = |i: &u32| table.get(usize::try_from(*i).ok()?);
        share.at.iter().map(at).collect()
    }
}

/// What a run saw of one environment, for [`Settle::record`].
pub(super) struct Seen<'a> {
    /// [`Settle::inputs`].
    pub inputs: &'a Inputs,
    /// Each app written → its files and their hashes.
    pub files: Option<&'a AppFiles>,
    /// The spare tree, as [`DirLeft::spare`].
    pub spare: Option<Listing>,
    /// The output directory's tree holding what the run rendered.
    pub output: Option<Vec<(PathBuf, Stat)>>,
}

/// What one environment's record says, given which of its inputs and
/// output entries still have their stats.
enum Verdict {
    /// It holds as a whole: the environment's report.
    Whole(Box<EnvReport>),
    /// The apps it still holds for.
    Kept(KeptApps),
}

fn verdict(e: &Environment, s: Settled, inputs: &[bool], output: &[bool]) -> Verdict {
    let all = |flags: &[bool]| flags.iter().all(|f| *f);
    if s.whole && all(inputs) && all(output) {
        return Verdict::Whole(Box::new(report(e, s)));
    }
    let apps = s.fresh_apps(inputs, output).cloned().collect();
    Verdict::Kept(KeptApps {
        inputs: s.inputs,
        apps,
        // Only a complete record lists every entry: another leaves out the
        // entries too young to vouch for themselves.
        tree: (s.complete && all(output)).then_some(Listing {
            entries: s.output,
            young: s.young,
        }),
        spare: s.spare,
    })
}

/// The report of an environment its record answers for: what the run
/// that recorded it reported, nothing written.
fn report(e: &Environment, s: Settled) -> EnvReport {
    let target = match &e.output {
        Output::Dir(dir) => dir.display().to_string(),
        Output::Branch(_) => String::new(),
    };
    let counts = [
        s.apps.len(),
        s.apps.iter().map(|a| a.resources).sum(),
        s.apps.iter().map(|a| a.bytes).sum(),
    ];
    let warnings = s.apps.into_iter().flat_map(|a| a.warnings).collect();
    EnvReport::before_writing(&e.name, target, counts, warnings)
}
