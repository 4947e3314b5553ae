use std::process::ExitCode;

fn main() -> ExitCode {
    hydrate::cli::run()
}
