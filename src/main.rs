use std::process::ExitCode;

/// jemalloc, not the system's malloc. A render allocates and frees
/// millions of small blocks (parse trees, resources, emitted text) on
/// every core at once, and glibc's malloc and free were a fifth of a cold
/// run's CPU (with its arenas' locks and `malloc_consolidate`). Cold
/// renders, same build, fresh clones, ext4: 500 apps 2.17-2.32 s ->
/// 1.59-1.94 s, 2,000 apps 10.1 -> 8.7 s, 10,000 apps 57.0 -> 45.0 s, at
/// 81 -> 89 MB, 139 -> 148 MB and 431 -> 432 MB of peak RSS; unchanged and
/// settled runs and one chart's `helm template` within the noise
/// (docs/performance.md). mimalloc was as fast at 500 apps and held
/// 10-20 MB more.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    hydrate::run_cli()
}
