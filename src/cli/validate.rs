//! `hydrate validate [--env E] [--app A] [--strict] [--output text|json|sarif]`:
//! every rendered object checked offline against its environment's
//! Kubernetes schemas and the repository's CRDs. Exit 0 when nothing is
//! invalid (warnings allowed), 1 when an object is, 2 when it cannot run.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Outcome};
use super::out::{self, errln};
use crate::env::Selection;
use crate::validate::{self, report};

#[derive(clap::Args)]
pub struct Args {
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Only this environment (repeatable; default: all).
    #[arg(long = "env")]
    envs: Vec<String>,
    /// Only this app (repeatable; default: all).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// A custom resource without a schema is an error, not a warning.
    #[arg(long)]
    strict: bool,
    /// Render without the render cache (`.hydrate/cache`).
    #[arg(long)]
    no_cache: bool,
    /// Output format: text (one line per finding), json
    /// (schemas/validate-output.schema.json) or sarif (SARIF 2.1.0).
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Sarif,
}

pub fn run(args: Args) -> CommandResult {
    let envs = crate::env::load_environments(&args.root).map_err(crate::render::Error::from)?;
    super::list::print_config_warnings(&envs);
    let opts = validate::Options {
        root: args.root.clone(),
        selection: Selection {
            envs: args.envs,
            apps: args.apps,
            shard: None,
        },
        strict: args.strict,
        cache: super::render::cache_secret(args.no_cache, false)?,
    };
    let bar = super::render::progress_bar();
    let progress = |n: usize| super::render::advance(bar.as_ref(), n);
    let result = validate::run(&opts, &envs, &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let r = result.map_err(|e| match e {
        validate::run::Error::Renders(errors) => {
            let lines = errors.iter().map(ToString::to_string).collect();
            CommandError::new(super::error::Kind::Usage, lines).hint(format!(
                "{} render(s) failed; nothing was validated",
                errors.len()
            ))
        }
        other => CommandError::usage(other),
    })?;
    let mut out = out::stdout();
    match args.output {
        Format::Text => {
            for f in &r.findings {
                writeln!(out, "{}", report::text_line(f))?;
            }
            errln!("{}", report::summary(&r));
        }
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&report::json(&r))?)?,
        Format::Sarif => writeln!(out, "{}", serde_json::to_string_pretty(&report::sarif(&r))?)?,
    }
    Ok(Outcome::finding_if(r.errors() > 0))
}
