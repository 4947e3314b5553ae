//! `hydrate approve ENV --as ROLE [--app APP] [--push [REMOTE]]`: parse
//! arguments, call `promote::approve`, say which commits were approved.

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandResult, Outcome};
use super::out;
use crate::promote;

#[derive(clap::Args)]
pub struct Args {
    /// The environment whose current change is approved (the FROM of the
    /// promotions whose `requires:` gate asks for ROLE).
    env: String,
    /// The role approving (`requires: [qa]` asks for `qa`).
    #[arg(long = "as", value_name = "ROLE")]
    role: String,
    /// Only these apps (repeatable).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// Push refs/notes/hydrate-approvals to REMOTE (default origin).
    #[arg(long, num_args = 0..=1, default_missing_value = "origin", value_name = "REMOTE")]
    push: Option<String>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(args: Args) -> CommandResult {
    let who = super::render::identity(&args.root)?;
    let done = promote::approve(&args.root, &args.env, &args.role, &args.apps, &who)?;
    let mut out = out::stdout();
    for a in &done {
        let short = a.sha.get(..12).unwrap_or(&a.sha);
        let what = if a.added {
            "approved"
        } else {
            "already approved"
        };
        writeln!(
            out,
            "{}: {what} {short} as {} ({})",
            a.app,
            args.role,
            promote::APPROVALS_REF
        )?;
    }
    if let Some(remote) = &args.push {
        promote::push_approvals(&args.root, remote, &who)?;
        writeln!(out, "pushed {} to {remote}", promote::APPROVALS_REF)?;
    }
    Ok(Outcome::Done)
}
