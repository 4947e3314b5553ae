//! What a branch write would commit for one environment rendered from a
//! given source commit, without writing anything: `hydrate verify`
//! compares it with the branch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::sink::Sink;
use super::{env_output, guard, Error, Options};
use crate::env::{self, Environment, Output, Selection};
use crate::git::SourceCommit;
use crate::output::EnvOutput;

/// Renders every app of environment `e` (loaded from `root`; its output
/// must be a branch) and returns its output as `hydrate render` would
/// commit it with `source` as the source commit and `origin_url` as the
/// `origin` remote's URL. The secret and determinism guards apply as in a
/// render.
pub fn branch_output(
    root: &Path,
    e: &Environment,
    source: &SourceCommit,
    origin_url: Option<&str>,
) -> Result<EnvOutput, Error> {
    if !matches!(e.output, Output::Branch(_)) {
        return Err(Error::Usage(format!(
            "environment {} does not write a branch",
            e.name
        )));
    }
    let envs = std::slice::from_ref(e);
    let jobs = env::plan(root, envs, &Selection::default());
    let opts = Options {
        root: root.to_path_buf(),
        check: true,
        ..Options::default()
    };
    let written = BTreeSet::from([e.name.as_str()]);
    // A branch environment has no stage: the files stay with each render.
    let sink = Sink::open(&opts, envs, &written, &BTreeMap::new());
    let mut finished =
        env::render_each(&jobs, None, &|| {}, &|r| sink.finish(r, None)).map_err(Error::Renders)?;
    guard(&mut finished)?;
    env_output(root, e, &mut finished, true, Some((source, origin_url)))
}
