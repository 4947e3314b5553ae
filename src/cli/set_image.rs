//! `hydrate set-image` and `hydrate set-value`: the last-mile pin bumps a
//! CI job makes, as commits with the promotion conventions.

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandError, CommandResult, Outcome};
use super::out::{self, errln};
use crate::promote::{self, Assignment, ImageSpec, SetReport};

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

#[derive(clap::Args)]
pub struct ValueArgs {
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

/// What a killed run's recovery did, and what this run could not finish
/// after its commit: on stderr, as warnings.
pub(super) fn print_notes(recovered: &[String], outcome: Option<&promote::Outcome>) {
    for n in recovered {
        errln!("note: {n}");
    }
    for n in outcome.iter().flat_map(|o| &o.remaining) {
        errln!("warning: {n}");
    }
}

/// What was changed and committed. The commit is made before anything is
/// printed: an error printing says that it stands.
pub(super) fn print_report(r: &SetReport, what: &str) -> CommandResult {
    print_notes(&r.recovered, r.outcome.as_ref());
    let committed = r.outcome.as_ref().and_then(|o| o.commit.as_ref());
    write_report(&mut out::stdout(), r, what).map_err(|e| match committed {
        Some(c) => CommandError::from(e).hint(format!(
            "{what}: committed {c} before the error; the commit stands"
        )),
        None => e.into(),
    })?;
    Ok(Outcome::Done)
}

fn write_report(out: &mut impl Write, r: &SetReport, what: &str) -> std::io::Result<()> {
    if let (true, Some(c)) = (
        r.items.is_empty(),
        r.outcome.as_ref().and_then(|o| o.commit.as_ref()),
    ) {
        return writeln!(
            out,
            "{what}: committed {c} (a killed run made it; this run finished it)"
        );
    }
    if r.items.is_empty() {
        return writeln!(out, "{what}: nothing to change");
    }
    for it in &r.items {
        writeln!(
            out,
            "  {} {}: {} → {}",
            it.app,
            it.pin,
            it.old.as_deref().unwrap_or("(none)"),
            it.new.as_deref().unwrap_or("(none)")
        )?;
    }
    if let Some(o) = &r.outcome {
        match &o.commit {
            Some(c) => writeln!(out, "{what}: committed {c}")?,
            None => writeln!(out, "{what}: files edited, nothing committed")?,
        }
    }
    Ok(())
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

pub fn run_value(args: ValueArgs) -> CommandResult {
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
