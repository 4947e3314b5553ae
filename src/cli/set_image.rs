//! `hydrate set-image`: the last-mile image bump a CI job makes, as a
//! commit with the promotion conventions (the report: `commit_report`).

use std::path::PathBuf;

use super::commit_report::print_report;
use super::error::CommandResult;
use crate::promote::{self, ImageSpec};

#[derive(clap::Args)]
pub struct Args {
    /// The environment.
    env: String,
    /// `NAME=NEWNAME[:TAG][@DIGEST]` or `NAME[:TAG][@DIGEST]`, as `kustomize
    /// edit set image` takes it; `*` as NEWNAME, TAG or DIGEST keeps the
    /// entry's value, a part not given is removed.
    #[arg(required = true, value_parser = ImageSpec::parse)]
    images: Vec<ImageSpec>,
    /// Only these apps (repeatable); one app also adds a missing entry.
    #[arg(long = "app")]
    apps: Vec<String>,
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
    let r = promote::set_image(
        &args.root,
        &args.env,
        &args.apps,
        &args.images,
        args.no_commit,
        &who,
    )?;
    print_report(&r, "set-image")
}
