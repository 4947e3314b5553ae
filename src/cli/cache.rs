//! `hydrate cache clean`: removes the render cache (`.hydrate/cache`) and
//! the output directories' spare trees (`.hydrate/spare`).

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandError, CommandResult, Outcome};
use super::out;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Remove the render cache of the repository, and the spare trees kept
    /// for its output directories.
    Clean(CleanArgs),
}

#[derive(clap::Args)]
pub struct CleanArgs {
    /// The repository root (holds `environments/` and `.hydrate/cache`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(cmd: Command) -> CommandResult {
    match cmd {
        Command::Clean(args) => {
            let dir = args.root.join(crate::env::cache::CACHE_DIR);
            let freed = crate::env::cache::clean(&args.root)
                .map_err(|e| CommandError::runtime(format!("{}: {e}", dir.display())))?;
            writeln!(out::stdout(), "removed {}: {freed} bytes", dir.display())?;
            let spare = args.root.join(crate::output::SPARE_DIR);
            let trees = crate::output::clean_spare_trees(&args.root)
                .map_err(|e| CommandError::runtime(format!("{}: {e}", spare.display())))?;
            if trees > 0 {
                writeln!(out::stdout(), "removed {}: {trees} trees", spare.display())?;
            }
            Ok(Outcome::Done)
        }
    }
}
