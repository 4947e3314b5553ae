//! `hydrate pins [ENV]...`: the board of every pin per app and environment,
//! what awaits promotion, and the last promotion into each environment.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandResult, Outcome};
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
    /// Only these environments (all when none).
    envs: Vec<String>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Output format (html: one static page with no external assets).
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

pub fn run(args: Args) -> CommandResult {
    let b = promote::board(&args.root, &args.envs)?;
    let mut out = out::stdout();
    match args.output {
        Format::Text => write!(out, "{}", b.text())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&b.json())?)?,
        Format::Markdown => write!(out, "{}", b.markdown())?,
        Format::Html => write!(out, "{}", b.html())?,
    }
    Ok(Outcome::Done)
}
