//! The command line: parses arguments, calls the library, prints results
//! and maps errors to exit codes (0 ok, 1 failure, 2 usage). No business
//! logic lives here.

mod affected;
mod diff;
mod helm;
mod kustomize;
mod render;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Render Kubernetes manifests for every app of every environment, offline.
#[derive(Parser)]
#[command(name = "hydrate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render every app of every environment to its output.
    Render(render::Args),
    /// List the (env, app) pairs whose inputs changed since a revision.
    Affected(affected::Args),
    /// Compare two environments, or each environment with a git revision.
    Diff(diff::Args),
    /// Drop-in replacements for kustomize commands.
    #[command(subcommand)]
    Kustomize(kustomize::Command),
    /// Drop-in replacements for helm commands.
    #[command(subcommand)]
    Helm(helm::Command),
}

/// Runs the CLI and returns the process exit code.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Render(args) => render::run(args),
        Command::Affected(args) => affected::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Kustomize(cmd) => kustomize::run(cmd),
        Command::Helm(cmd) => helm::run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`hydrate … | head`) is not an error.
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            ExitCode::from(1)
        }
    }
}
