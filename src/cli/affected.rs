//! `hydrate affected --since REF`: the (env, app) pairs whose inputs changed.

use std::path::PathBuf;
use std::process::ExitCode;

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

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let pairs = crate::render::affected(&args.root, &args.since)?;
    match args.output {
        Format::Text => {
            for (env, app) in &pairs {
                println!("{env}/{app}");
            }
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = pairs
                .iter()
                .map(|(e, a)| serde_json::json!({ "env": e, "app": a }))
                .collect();
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
