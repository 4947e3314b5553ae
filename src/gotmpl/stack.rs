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

/// Runs `f`, on a new big-stack thread when `depth` is a hop point.
pub fn grow<T: Send>(
    depth: usize,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    if !must_hop(depth) {
        return f();
    }
    let mut slot = Some(f);
    let hopped = std::thread::scope(|s| {
        let slot_ref = &mut slot;
        let handle = std::thread::Builder::new()
            .name("gotmpl-deep".into())
            .stack_size(HOP_STACK_BYTES)
            .spawn_scoped(s, move || slot_ref.take().map(|f| f()));
        handle.ok().map(|h| h.join())
    });
    match hopped {
        Some(Ok(Some(r))) => r,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        // The thread could not be started: continue on this stack.
        _ => match slot.take() {
            Some(f) => f(),
            None => Err(Error::Exec {
                name: String::new(),
                message: "template: recursion too deep".into(),
            }),
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
