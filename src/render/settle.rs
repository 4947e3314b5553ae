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

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::SystemTime;

use rayon::prelude::*;

use super::{EnvReport, Options};
use crate::env::cache::settled::{self, Settled};
use crate::env::cache::{self, Key, Name, Secret, Stat};
use crate::env::{self, Environment, Job, Output};
use crate::output;

/// The records of one run.
pub(super) struct Settle<'a> {
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
        let eligible = envs
            .iter()
            .filter(|e| written.contains(e.name.as_str()) && !e.validate)
            .filter_map(|e| match &e.output {
                Output::Dir(d) => {
                    let jobs = by_env.get(e.name.as_str()).map_or(&[][..], Vec::as_slice);
                    let key = settled::key(cache::build(), e, jobs, opts.strict);
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
            dir,
            secret,
            started,
            eligible,
        })
    }

    /// The environments whose record still holds, with their reports
    /// (read from the record: nothing of theirs needs to run).
    pub fn check(&self, root: &std::path::Path) -> BTreeMap<String, EnvReport> {
        let records: Vec<(&str, &Eligible, Settled)> = self
            .eligible
            .par_iter()
            .filter_map(|(name, it)| {
                let s = settled::load(&it.path, &it.key, &self.secret)?;
                Some((*name, it, s))
            })
            .collect();
        let fresh =
            settled::inputs_unchanged(&records.iter().map(|(_, _, s)| s).collect::<Vec<_>>());
        records
            .into_par_iter()
            .zip(fresh)
            .filter(|((_, it, s), fresh)| {
                *fresh && output::tree_unchanged(root, &it.dir, &s.output)
            })
            .map(|((name, it, s), _)| (name.to_string(), report(it.env, s)))
            .collect()
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

    /// The environments (of those eligible) whose output tree the stage
    /// records when it opens.
    pub fn recorded(&self) -> BTreeSet<&str> {
        self.eligible.keys().copied().collect()
    }

    /// Each eligible environment's inputs and their trusted stats, as the
    /// cache saw them this run (before [`env::Cache::finish`]).
    pub fn inputs(
        &self,
        cache: &env::Cache,
        jobs: &[Job],
    ) -> BTreeMap<String, Option<Vec<(Name, Stat)>>> {
        self.eligible
            .keys()
            .map(|name| {
                let mine: Vec<&Job> = jobs.iter().filter(|j| j.env == *name).collect();
                (name.to_string(), cache.trusted_inputs(&mine))
            })
            .collect()
    }

    /// Records environment `report.env` when this run found it unchanged
    /// the long way (nothing written, nothing to say, nothing failed) and
    /// every stat it was judged by can be trusted: `inputs` from
    /// [`Settle::inputs`], `output` the tree the stage saw when it opened,
    /// before any file was compared. Best effort.
    pub fn record(
        &self,
        report: &EnvReport,
        inputs: Option<Vec<(Name, Stat)>>,
        output: Option<Vec<(PathBuf, Stat)>>,
    ) {
        let Some(it) = self.eligible.get(report.env.as_str()) else {
            return;
        };
        let clean = !report.written
            && report.changed_files.is_empty()
            && report.notices.is_empty()
            && report.failed.is_empty()
            && report.check.is_none();
        let (Some(inputs), Some(output), true) = (inputs, output, clean) else {
            return;
        };
        if output.is_empty() || !output.iter().all(|(_, s)| s.trusted(self.started)) {
            return;
        }
        let s = Settled {
            inputs,
            output,
            apps: report.apps,
            resources: report.resources,
            bytes: report.bytes,
            warnings: report.warnings.clone(),
        };
        if let (Some(bytes), Ok(())) = (
            settled::encode(&s, &it.key, &self.secret),
            cache::ensure_dir(&self.dir),
        ) {
            cache::write_in(&self.dir, &it.path, &bytes);
        }
    }
}

/// The report of an environment its record answers for: what the run
/// that recorded it reported, nothing written.
fn report(e: &Environment, s: Settled) -> EnvReport {
    let target = match &e.output {
        Output::Dir(dir) => dir.display().to_string(),
        Output::Branch(_) => String::new(),
    };
    EnvReport::before_writing(&e.name, target, [s.apps, s.resources, s.bytes], s.warnings)
}
