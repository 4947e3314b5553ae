//! Deep recursion without stack overflows. Go grows goroutine stacks up to
//! 1 GB, so Go templates may nest `template`/`include` calls thousands deep
//! (Helm allows 1000 nested includes, Go 100000 nested `template` calls) and
//! parenthesised pipelines hundreds of thousands deep. Recursive Rust code
//! continues on a fresh thread with its own stack instead: once at a fixed
//! early depth (the caller's stack size is unknown), then whenever the
//! stack of the current hop thread is nearly used up. Each hop thread's
//! stack is a lazily mapped region, so memory grows with the depth
//! actually reached, in debug and release builds alike.

use std::cell::Cell;

/// The first hop happens early so that callers with small stacks (rayon
/// workers have 2 MiB) are safe.
const FIRST_HOP: usize = 32;
/// Stack of each hop thread: its address space is reserved, its pages are
/// touched only as deep as the recursion goes.
const HOP_STACK_BYTES: usize = 64 << 20;
/// Stack for [`on_big_stack`]: code that recurses without checking
/// (the YAML emitter, 10,000 levels at most).
const BIG_STACK_BYTES: usize = 256 << 20;
/// A hop thread hops on once less than this is left: more than one level
/// of any recursion here takes between two checks, unoptimised.
const RED_ZONE: usize = 8 << 20;

thread_local! {
    /// On a hop thread: the lowest stack address recursion may reach
    /// before hopping on (stacks grow down on every supported target).
    static LIMIT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// An address in the current stack frame.
#[inline(always)]
fn stack_pointer() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

fn must_hop(depth: usize) -> bool {
    match LIMIT.with(Cell::get) {
        Some(limit) => stack_pointer() < limit,
        None => depth >= FIRST_HOP,
    }
}

/// What a recursion reports when no thread could be started to go deeper
/// (a tight `ulimit -v`); Go would die of a stack overflow there.
pub const NO_STACK: &str = "nested too deep for the stack available";

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
    spawn_with(BIG_STACK_BYTES, f)
}

/// Runs `f` on a new thread with `stack_bytes` of stack (for recursive
/// code outside this crate, sized to its input); `Err(f)` when no thread
/// can be started.
pub fn with_stack<T: Send, F: FnOnce() -> T + Send>(stack_bytes: usize, f: F) -> Result<T, F> {
    spawn_with(stack_bytes, f)
}

fn spawn_with<T: Send, F: FnOnce() -> T + Send>(stack_bytes: usize, f: F) -> Result<T, F> {
    let mut slot = Some(f);
    let hopped = std::thread::scope(|s| {
        let slot_ref = &mut slot;
        let handle = std::thread::Builder::new()
            .name("gotmpl-deep".into())
            .stack_size(stack_bytes)
            .spawn_scoped(s, move || {
                let top = stack_pointer();
                let usable = stack_bytes.saturating_sub(RED_ZONE.min(stack_bytes / 2));
                LIMIT.with(|l| l.set(Some(top.saturating_sub(usable))));
                slot_ref.take().map(|f| f())
            });
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

    fn recurse(depth: usize, max: usize) -> Result<usize, ()> {
        if depth == max {
            return Ok(0);
        }
        let buf = std::hint::black_box([depth as u8; 512]);
        let r = hop(depth + 1, || recurse(depth + 1, max)).map_err(|_| ())??;
        std::hint::black_box(&buf);
        Ok(r + 1)
    }

    #[test]
    fn hop_points() {
        assert!(must_hop(FIRST_HOP));
        assert!(!must_hop(FIRST_HOP - 1));
        // On a hop thread only the stack left counts.
        assert_eq!(on_big_stack(|| must_hop(FIRST_HOP + 1)).ok(), Some(false));
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
