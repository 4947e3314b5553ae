//! `hydrate rollback ENV [--to COMMIT | --steps N]`: restore an
//! environment's pins as of an earlier change, as a new commit.

use std::path::PathBuf;

use super::error::CommandResult;
use crate::promote::{self, Rollback};

#[derive(clap::Args)]
pub struct Args {
    /// The environment.
    env: String,
    /// Restore the pins as they were after this commit.
    #[arg(long, conflicts_with = "steps")]
    to: Option<String>,
    /// Restore the pins as they were N recorded changes ago (default 1).
    #[arg(long)]
    steps: Option<usize>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(args: Args) -> CommandResult {
    let target = match args.to {
        Some(c) => Rollback::To(c),
        None => Rollback::Steps(args.steps.unwrap_or(1)),
    };
    let who = super::render::identity(&args.root)?;
    let r = promote::rollback(&args.root, &args.env, &target, &who)?;
    super::commit_report::print_report(&r, "rollback")
}
