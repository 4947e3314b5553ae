//! Deep recursion without stack overflows. Go grows goroutine stacks up to
//! 1 GB, so Go templates may nest `template`/`include` calls thousands deep
//! (Helm allows 1000 nested includes, Go 100000 nested `template` calls) and
//! parenthesised pipelines 10000 deep. Recursive Rust code continues on a
//! fresh thread with a large stack at fixed depths instead.

use super::Error;

/// The first hop happens early so that callers with small stacks (rayon
/// workers have 2 MiB) are safe; later hops are spaced further apart.
const FIRST_HOP: usize = 32;
const HOP_EVERY: usize = 1024;
const HOP_STACK_BYTES: usize = 256 << 20;

fn must_hop(depth: usize) -> bool {
    depth == FIRST_HOP || (depth > FIRST_HOP && (depth - FIRST_HOP) % HOP_EVERY == 0)
}

/// Runs `f`, on a new big-stack thread when `depth` is a hop point; an
/// error when that thread cannot be started (a tight `ulimit -v`).
pub fn grow<T: Send>(
    depth: usize,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    hop(depth, f).unwrap_or_else(|_| {
        Err(Error::Exec {
            name: String::new(),
            message: "template: recursion too deep".into(),
        })
    })
}

/// Runs `f`, on a new big-stack thread when `depth` is a hop point: the
/// form for recursive walks whose result is not a template error. `Err`
/// gives `f` back when the thread cannot be started (running it here
/// instead would overflow this stack).
pub fn hop<T: Send, F: FnOnce() -> T + Send>(depth: usize, f: F) -> Result<T, F> {
    hop_with(depth, HOP_STACK_BYTES, f)
}

/// [`hop`] with `stack_bytes` for each new thread (walks over values need
/// far less per level than template execution).
pub fn hop_with<T: Send, F: FnOnce() -> T + Send>(
    depth: usize,
    stack_bytes: usize,
    f: F,
) -> Result<T, F> {
    if must_hop(depth) {
        spawn_with(stack_bytes, f)
    } else {
        Ok(f())
    }
}

/// Runs `f` on a new thread with a big stack; `Err(f)` when no thread can
/// be started.
pub fn on_big_stack<T: Send, F: FnOnce() -> T + Send>(f: F) -> Result<T, F> {
    spawn_with(HOP_STACK_BYTES, f)
}

fn spawn_with<T: Send, F: FnOnce() -> T + Send>(stack_bytes: usize, f: F) -> Result<T, F> {
    let mut slot = Some(f);
    let hopped = std::thread::scope(|s| {
        let slot_ref = &mut slot;
        let handle = std::thread::Builder::new()
            .name("gotmpl-deep".into())
            .stack_size(stack_bytes)
            .spawn_scoped(s, move || slot_ref.take().map(|f| f()));
        handle.ok().map(|h| h.join())
    });
    match hopped {
        Some(Ok(Some(r))) => Ok(r),
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        // The thread could not be started.
        _ => match slot.take() {
            Some(f) => Err(f),
            // The thread took `f` and returned, so `hopped` held its result.
            None => unreachable!("big-stack thread ran without a result"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(depth: usize, max: usize) -> Result<usize, Error> {
        if depth == max {
            return Ok(0);
        }
        let buf = std::hint::black_box([depth as u8; 512]);
        let r = grow(depth + 1, || recurse(depth + 1, max))?;
        std::hint::black_box(&buf);
        Ok(r + 1)
    }

    #[test]
    fn hop_points() {
        assert!(must_hop(32));
        assert!(!must_hop(33));
        assert!(must_hop(32 + 1024));
    }

    #[test]
    fn deep_recursion_survives_small_stack() {
        let r = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| recurse(0, 3000))
            .ok()
            .and_then(|h| h.join().ok());
        assert_eq!(r.and_then(|r| r.ok()), Some(3000));
    }
}
