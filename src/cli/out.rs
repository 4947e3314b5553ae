//! Standard output and standard error for the commands, without panics.
//!
//! `print!` panics when stdout is closed (`hydrate pins | head -1`) or full
//! (`> /dev/full`), after a promotion has already committed. Rust ignores
//! SIGPIPE, so a write to a closed pipe fails with EPIPE; [`Stdout`] takes
//! that as the reader having seen enough: the write "succeeds", nothing
//! more is written, and the command finishes its work and exits with the
//! code of what it did (ripgrep's rule: a broken pipe is not an error). Any
//! other write error (ENOSPC, EIO) is returned, naming stdout, and becomes
//! exit 2. `print!`/`println!` are refused by clippy (`clippy.toml`).
//!
//! Diagnostics go through [`errln!`]: a closed or full stderr loses the
//! line, since there is nowhere left to report that.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set at the first EPIPE: the reader is gone, every later write is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The process's stdout, locked, with the closed-pipe rule above.
pub struct Stdout(io::StdoutLock<'static>);

/// Locks stdout for a command's output.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// Whether a reader closed stdout (a write met EPIPE).
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// EPIPE means the reader left: remember it and report success. Other
/// errors name stdout, so `Error: writing to stdout: No space left on
/// device` says which stream failed.
fn settle<T>(result: io::Result<T>, done: T) -> io::Result<T> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(done)
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("writing to stdout: {e}"))),
        ok => ok,
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if closed() {
            return Ok(buf.len());
        }
        settle(self.0.write(buf), buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if closed() {
            return Ok(());
        }
        settle(self.0.flush(), ())
    }
}

/// Writes one diagnostic line on stderr, ignoring failure.
#[doc(hidden)]
pub fn stderr_line(args: std::fmt::Arguments<'_>) {
    // One write per line, so lines from a progress bar or another thread
    // do not interleave with it.
    let _ = io::stderr()
        .lock()
        .write_all(format!("{args}\n").as_bytes());
}

/// `eprintln!` that never panics: a closed or full stderr drops the line.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::out::stderr_line(format_args!($($arg)*))
    };
}
pub(crate) use errln;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_other_than_a_closed_pipe_names_stdout() {
        let e = settle::<()>(Err(io::Error::from_raw_os_error(28)), ()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert!(
            e.to_string()
                .starts_with("writing to stdout: No space left"),
            "{e}"
        );
    }

    #[test]
    fn a_closed_pipe_is_a_write_that_went_nowhere() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(settle(Err(broken), 5).unwrap(), 5);
        assert!(closed());
    }
}
