//! `hydrate affected --since REF`: the (env, app) pairs whose inputs changed.

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandResult, Outcome};
use super::out;
use super::render::Format;

#[derive(clap::Args)]
pub struct Args {
    /// The revision to compare HEAD with (a sha, a branch, `HEAD~1`, …).
    #[arg(long)]
    since: String,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

pub fn run(args: Args) -> CommandResult {
    let pairs = crate::render::affected(&args.root, &args.since)?;
    let mut out = out::stdout();
    match args.output {
        Format::Text => {
            for (env, app) in &pairs {
                writeln!(out, "{env}/{app}")?;
            }
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = pairs
                .iter()
                .map(|(e, a)| serde_json::json!({ "env": e, "app": a }))
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
    }
    Ok(Outcome::Done)
}
