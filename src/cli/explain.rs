//! `hydrate explain ENV APP [KIND/NAME] [FIELD-PATH]`: each rendered field
//! of the selection with the chain of files and lines that set it.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Outcome};
use super::out;
use crate::explain::{self, Selection};

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// The environment.
    env: String,
    /// The app.
    app: String,
    /// Only this resource (`Kind/name`, rendered or original name).
    resource: Option<String>,
    /// Only this field, or the fields below it, in the diff's syntax
    /// (`spec.template.spec.containers[name=api].image`).
    field: Option<String>,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

pub fn run(args: Args) -> CommandResult {
    let sel = Selection {
        resource: args.resource,
        field: args.field,
    };
    let e = explain::explain(&args.root, &args.env, &args.app, &sel).map_err(error)?;
    let mut out = out::stdout();
    match args.output {
        Format::Text => write!(out, "{}", explain::text(&e))?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&explain::json(&e))?)?,
    }
    Ok(Outcome::Done)
}

/// A missing environment, app or field is a usage error; a render that
/// fails is a runtime one.
pub(super) fn error(e: explain::Error) -> CommandError {
    match e {
        explain::Error::Env(e) => e.into(),
        explain::Error::NotFound(_) | explain::Error::Selection(_) => CommandError::usage(e),
        explain::Error::Render { .. } => CommandError::runtime(e),
    }
}
