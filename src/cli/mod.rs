//! The command line: parses arguments, calls the library, prints results
//! and maps errors to exit codes through one table (`error.rs`: 0 done,
//! 1 a finding, 2 a usage or runtime error). No business logic lives here.

mod out;

mod affected;
mod approve;
mod cache;
mod commit_report;
mod diff;
mod error;
mod explain;
mod helm;
mod history;
mod init;
mod kustomize;
mod list;
mod pins;
mod promote;
mod render;
mod rollback;
mod set_image;
mod set_value;
mod validate;
mod verify;

pub use helm::template_options as helm_template_options;
pub use kustomize::build_options as kustomize_build_options;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use error::{CommandError, CommandResult, Outcome};

/// `hydrate --version`: the crate version and the commit it was built from
/// (`build.rs`; `unknown` outside a git checkout).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("HYDRATE_COMMIT"),
    ")"
);

/// Render Kubernetes manifests for every app of every environment, offline.
#[derive(Parser)]
#[command(name = "hydrate", version = VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render every app of every environment to its output.
    Render(render::Args),
    /// Write environments/*.yaml from the repository's overlays, charts
    /// and Argo CD/Flux manifests.
    Init(init::Args),
    /// Environments, apps, sources and outputs, discover globs expanded.
    #[command(alias = "apps")]
    List(list::Args),
    /// List the (env, app) pairs whose inputs changed since a revision.
    Affected(affected::Args),
    /// Carry FROM's pins (image tags, chart values) to TO as one commit.
    Promote(promote::Args),
    /// Approve, as a role, the change that brought an environment's pins
    /// (a git note read by the `requires:` gate).
    Approve(approve::Args),
    /// Every pin per app and environment, and what awaits promotion.
    #[command(alias = "status")]
    Pins(pins::Args),
    /// Set kustomize image pins of an environment (CI's image bump).
    SetImage(set_image::Args),
    /// Set a chart app's value pin in an environment.
    SetValue(set_value::Args),
    /// Promotions, image bumps and rollbacks into an environment.
    History(history::Args),
    /// Restore an environment's pins as of an earlier change.
    Rollback(rollback::Args),
    /// Compare two environments, or each environment with a git revision.
    Diff(diff::Args),
    /// Each rendered field of an app with the files and lines that set it,
    /// last step first.
    Explain(explain::Args),
    /// Prove each environment branch is exactly the render of the source
    /// commit it names (exit 1 naming each file that differs).
    Verify(verify::Args),
    /// Check every rendered object offline against its Kubernetes
    /// version's schemas and the repository's CRDs (exit 1 when one is
    /// invalid).
    Validate(validate::Args),
    /// The render cache (`.hydrate/cache`).
    #[command(subcommand)]
    Cache(cache::Command),
    /// Drop-in replacements for kustomize commands.
    #[command(subcommand)]
    Kustomize(kustomize::Command),
    /// Drop-in replacements for helm commands.
    #[command(subcommand)]
    Helm(helm::Command),
}

/// The command line as `hydrate` parses it. Invoked under the name `helm`
/// or `kustomize` (a symlink or a copy, `.exe` allowed), hydrate stands in
/// for that binary: `helm template ...` runs as `hydrate helm template ...`,
/// so tools that shell out to helm or kustomize run hydrate unchanged.
fn command_line() -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let stem = args.first().and_then(|a0| {
        let name = std::path::Path::new(a0).file_name()?.to_str()?;
        Some(name.strip_suffix(".exe").unwrap_or(name).to_string())
    });
    if let Some(tool @ ("helm" | "kustomize")) = stem.as_deref() {
        args.splice(0..1, ["hydrate".into(), tool.into()]);
    }
    if args.get(1).is_some_and(|a| a == "helm") {
        helm::globals_after_subcommand(&mut args, 2);
    }
    args
}

/// Runs the CLI and returns the process exit code.
pub fn run() -> ExitCode {
    let args = command_line();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return error::exit_code(parse_error(&e, &args)),
    };
    let result = match cli.command {
        Command::Render(args) => render::run(args),
        Command::Init(args) => init::run(args),
        Command::List(args) => list::run(args),
        Command::Affected(args) => affected::run(args),
        Command::Promote(args) => promote::run(args),
        Command::Pins(args) => pins::run(args),
        Command::Approve(args) => approve::run(args),
        Command::SetImage(args) => set_image::run(args),
        Command::SetValue(args) => set_value::run(args),
        Command::History(args) => history::run(args),
        Command::Rollback(args) => rollback::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Cache(cmd) => cache::run(cmd),
        Command::Kustomize(cmd) => kustomize::run(cmd).map_err(CommandError::tool),
        Command::Helm(cmd) => helm::run(cmd).map_err(CommandError::tool),
    };
    // Output a line buffer still holds fails here, not silently at exit.
    let result = result.and_then(|o| Ok(out::stdout().flush().map(|()| o)?));
    error::exit_code(result)
}

/// clap's message for a command line it refused (on stderr, exit 2), or
/// the help or version asked for (on stdout, exit 0). The drop-ins exit 1
/// for a flag they do not know, as kustomize's and helm's cobra do.
fn parse_error(e: &clap::Error, args: &[std::ffi::OsString]) -> CommandResult {
    if !e.use_stderr() {
        if std::io::stdout().is_terminal() {
            // In colour; a terminal neither closes nor fills up.
            let _ = e.print();
        } else {
            write!(out::stdout(), "{}", e.render())?;
        }
        return Ok(Outcome::Done);
    }
    let _ = e.print();
    let drop_in = args.get(1).is_some_and(|a| a == "helm" || a == "kustomize");
    Err(CommandError::new(
        if drop_in {
            error::Kind::Tool
        } else {
            error::Kind::Usage
        },
        Vec::new(),
    ))
}
