//! `hydrate cache clean`: removes the render cache (`.hydrate/cache`).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Remove the render cache of the repository.
    Clean(CleanArgs),
}

#[derive(clap::Args)]
pub struct CleanArgs {
    /// The repository root (holds `environments/` and `.hydrate/cache`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Clean(args) => {
            let freed = crate::env::cache::clean(&args.root)?;
            println!(
                "removed {}: {freed} bytes",
                args.root.join(crate::env::cache::CACHE_DIR).display()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
