//! `hydrate history ENV`: promotions, set-image/set-value and rollbacks
//! into an environment, newest first, read from commit trailers.

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandResult, Outcome};
use super::out;
use super::render::Format;
use crate::promote;

#[derive(clap::Args)]
pub struct Args {
    /// The environment.
    env: String,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

pub fn run(args: Args) -> CommandResult {
    let entries = promote::history(&args.root, &args.env)?;
    let mut out = out::stdout();
    if args.output == Format::Json {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "commit": e.sha,
                    "date": crate::output::rfc3339(e.time),
                    "author": e.author,
                    "kind": e.kind.name(),
                    "from": e.from,
                    "promotion": e.promotion,
                    "together": e.together,
                    "pins": e.changes.iter().map(|c| serde_json::json!({
                        "app": c.app, "pin": c.pin, "old": c.old, "new": c.new,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(Outcome::Done);
    }
    if entries.is_empty() {
        writeln!(out, "no recorded changes into {}", args.env)?;
    }
    for e in &entries {
        writeln!(
            out,
            "{}  {:<9}  {}  {}  {}",
            crate::output::rfc3339(e.time),
            e.kind.name(),
            &e.sha[..e.sha.len().min(12)],
            e.author,
            e.from
        )?;
        if !e.together.is_empty() {
            writeln!(out, "    one commit with {}", e.together.join(", "))?;
        }
        for c in &e.changes {
            writeln!(
                out,
                "    {} {}: {} → {}",
                c.app,
                c.pin,
                c.old.as_deref().unwrap_or("(none)"),
                c.new.as_deref().unwrap_or("(none)")
            )?;
        }
    }
    Ok(Outcome::Done)
}
