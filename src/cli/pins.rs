//! `hydrate pins [ENV]...`: the board of what each app runs in each
//! environment, what awaits promotion, and the last change into each.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Outcome};
use super::out;

use crate::promote;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Markdown,
    Html,
}

#[derive(clap::Args)]
pub struct Args {
    /// Only these environments, in this order (all, in promotion order,
    /// when none).
    envs: Vec<String>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Output format (html: one static page with no external assets).
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
    /// Instead of the board: every pin, why it is one and the file and
    /// line that set it (text or json).
    #[arg(long)]
    explain: bool,
}

pub fn run(args: Args) -> CommandResult {
    if args.explain {
        let reasons = promote::explain_pins(&args.root, &args.envs)?;
        let mut out = out::stdout();
        match args.output {
            Format::Json => writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&promote::reasons_json(&reasons))?
            )?,
            Format::Text => write!(out, "{}", promote::reasons_text(&reasons))?,
            Format::Markdown | Format::Html => {
                return Err(CommandError::usage(
                    "--explain prints text or json (--output text|json)",
                ))
            }
        }
        return Ok(Outcome::Done);
    }
    // The board's clock: now, or HYDRATE_NOW / HYDRATE_TIMESTAMP (stable snapshots).
    let now = super::render::now(&args.root)?;
    let b = promote::board(&args.root, &args.envs, now)?;
    let mut out = out::stdout();
    match args.output {
        Format::Text => write!(out, "{}", b.text())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&b.json())?)?,
        Format::Markdown => write!(out, "{}", b.markdown())?,
        Format::Html => write!(out, "{}", b.html())?,
    }
    Ok(Outcome::Done)
}
