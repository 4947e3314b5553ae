//! `hydrate verify [ENV]...`: each environment branch against the render
//! of the source commit its tip names. Exit 0 when every branch is
//! identical, 1 when a file differs, 2 when a branch cannot be verified.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;

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

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = verify::Options {
        root: args.root,
        envs: args.envs,
        to: args.to.map(|ToArg::Branch| OutputKind::Branch),
        remote: args.remote,
    };
    let verdicts = match verify::run(&opts) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("Error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if args.output == Format::Json {
        println!("{}", serde_json::to_string_pretty(&json(&verdicts))?);
    } else {
        for v in &verdicts {
            print_text(v);
        }
    }
    let code = verdicts.iter().map(Verdict::code).max().unwrap_or(0);
    Ok(ExitCode::from(code))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn print_text(v: &Verdict) {
    let source = match (&v.source, &v.hydrated_by) {
        (Some(s), Some(c)) => format!(
            "the render of {} (Hydrate-Source of {})",
            short(s),
            short(&c.sha)
        ),
        _ => "the render".to_string(),
    };
    match &v.outcome {
        Outcome::Identical => println!("{} ({}): identical to {source}", v.branch, v.env),
        Outcome::Failed(why) => eprintln!("{} ({}): cannot verify: {why}", v.branch, v.env),
        Outcome::Differs(diffs) => {
            println!(
                "{} ({}): {} file(s) differ from {source}",
                v.branch,
                v.env,
                diffs.len()
            );
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
                println!("  {:<10} {}  {by}", d.change.name(), d.path);
            }
        }
    }
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
