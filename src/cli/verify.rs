//! `hydrate verify [ENV]...`: each environment branch against the render
//! of the source commit its tip names. Exit 0 when every branch is
//! identical, 1 when a file differs, 2 when a branch cannot be verified.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Kind, Outcome as Exit};
use super::out;
use super::render::Format;
use crate::render::OutputKind;
use crate::verify::{self, Outcome, Verdict};

#[derive(clap::Args)]
pub struct Args {
    /// Only these environments (default: every one that writes a branch).
    envs: Vec<String>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// `branch`: verify `env/<env>` also for environments configured with a
    /// directory (what `hydrate render --to branch` writes).
    #[arg(long, value_enum)]
    to: Option<ToArg>,
    /// The remote whose copy of each branch counts when newer (default:
    /// the branch's upstream, else `origin`).
    #[arg(long, value_name = "NAME")]
    remote: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum ToArg {
    Branch,
}

pub fn run(args: Args) -> CommandResult {
    let opts = verify::Options {
        root: args.root,
        envs: args.envs,
        to: args.to.map(|ToArg::Branch| OutputKind::Branch),
        remote: args.remote,
    };
    let verdicts = verify::run(&opts)?;
    let mut out = out::stdout();
    if args.output == Format::Json {
        writeln!(out, "{}", serde_json::to_string_pretty(&json(&verdicts))?)?;
    } else {
        for v in &verdicts {
            print_text(&mut out, v)?;
        }
    }
    // A branch that could not be verified is an error; a file that
    // differs is a finding.
    let failed: Vec<String> = verdicts
        .iter()
        .filter_map(|v| match &v.outcome {
            Outcome::Failed(why) => Some(format!("{} ({}): cannot verify: {why}", v.branch, v.env)),
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        return Err(CommandError::new(Kind::Usage, failed));
    }
    Ok(Exit::finding_if(
        verdicts
            .iter()
            .any(|v| matches!(v.outcome, Outcome::Differs(_))),
    ))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn print_text(out: &mut impl Write, v: &Verdict) -> std::io::Result<()> {
    let source = match (&v.source, &v.hydrated_by) {
        (Some(s), Some(c)) => format!(
            "the render of {} (Hydrate-Source of {})",
            short(s),
            short(&c.sha)
        ),
        _ => "the render".to_string(),
    };
    match &v.outcome {
        Outcome::Identical => writeln!(out, "{} ({}): identical to {source}", v.branch, v.env)?,
        // Reported as the command's error.
        Outcome::Failed(_) => {}
        Outcome::Differs(diffs) => {
            writeln!(
                out,
                "{} ({}): {} file(s) differ from {source}",
                v.branch,
                v.env,
                diffs.len()
            )?;
            for d in diffs {
                let by = match &d.commit {
                    Some(c) => format!(
                        "last changed by {} \"{}\" ({}): {}",
                        short(&c.sha),
                        c.subject,
                        c.author,
                        c.made_by()
                    ),
                    None => "never on the branch".to_string(),
                };
                writeln!(out, "  {:<10} {}  {by}", d.change.name(), d.path)?;
            }
        }
    }
    Ok(())
}

fn json(verdicts: &[Verdict]) -> serde_json::Value {
    let commit = |c: &verify::Commit| {
        serde_json::json!({
            "sha": c.sha,
            "subject": c.subject,
            "author": c.author,
            "hydrateVersion": c.version,
            "madeBy": c.made_by(),
        })
    };
    let envs: Vec<serde_json::Value> = verdicts
        .iter()
        .map(|v| {
            let (status, files, error) = match &v.outcome {
                Outcome::Identical => ("identical", Vec::new(), None),
                Outcome::Failed(why) => ("error", Vec::new(), Some(why.clone())),
                Outcome::Differs(diffs) => (
                    "differs",
                    diffs
                        .iter()
                        .map(|d| {
                            serde_json::json!({
                                "path": d.path,
                                "change": d.change.name(),
                                "commit": d.commit.as_ref().map(commit),
                            })
                        })
                        .collect(),
                    None,
                ),
            };
            serde_json::json!({
                "env": v.env,
                "branch": v.branch,
                "tip": v.tip,
                "source": v.source,
                "hydratedBy": v.hydrated_by.as_ref().map(commit),
                "status": status,
                "error": error,
                "files": files,
            })
        })
        .collect();
    serde_json::json!({ "environments": envs })
}
