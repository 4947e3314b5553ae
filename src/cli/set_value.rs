//! `hydrate set-value`: the last-mile bump of one chart value a CI job
//! makes, as a commit with the promotion conventions (the report:
//! `commit_report`).

use std::path::PathBuf;

use super::commit_report::print_report;
use super::error::CommandResult;
use crate::promote::{self, Assignment};

#[derive(clap::Args)]
pub struct Args {
    /// The environment.
    env: String,
    /// The chart app.
    app: String,
    /// `PATH=VALUE`, e.g. `image.tag=2.4.0`.
    #[arg(value_parser = Assignment::parse)]
    assignment: Assignment,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Edit the files, commit nothing.
    #[arg(long)]
    no_commit: bool,
}

/// Malformed arguments never get here: clap refuses them through the
/// value parsers (exit 2, nothing read or written).
pub fn run(args: Args) -> CommandResult {
    let who = super::render::identity(&args.root)?;
    let r = promote::set_value(
        &args.root,
        &args.env,
        &args.app,
        &args.assignment,
        args.no_commit,
        &who,
    )?;
    print_report(&r, "set-value")
}
