use std::process::ExitCode;

fn main() -> ExitCode {
    tune_malloc();
    hydrate::run_cli()
}

/// glibc's malloc serves blocks of 128 KiB and more with `mmap`, given
/// back to the system when freed, but each time such a block is freed it
/// raises that threshold to the block's size (up to 32 MiB) and the trim
/// threshold to twice that. A render run frees large blocks all along
/// (growing hash tables, manifests, cache entries), so blocks of several
/// megabytes came from the heap and stayed held there when freed: at
/// 2,000 apps, a cold `hydrate render` peaked at 143-150 MB of RSS,
/// 122-126 MB with the threshold fixed, which turns that adjustment off.
/// 4 MiB rather than the initial 128 KiB: with 128 KiB, `helm template`
/// on a large chart took 17% more page faults; with 4 MiB, 5% fewer than
/// without (docs/performance.md).
///
/// The top pad is how much more than asked the heaps grow by. A worker
/// thread's arena makes its heap that much readable and writable at once,
/// and past that grows it one `mprotect` call per page: `helm template` of
/// kube-prometheus-stack made 4,700 of those calls (1,000 for argo-cd),
/// each taking the address-space lock the other thread's page faults
/// need. 16 MiB brings both to 13 and leaves the cold 2,000-app render's
/// peak RSS as it was (untouched pages are not resident); 32 MiB raised
/// it by 17 MB (a trimmed heap keeps the pad).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    // SAFETY: mallopt sets one malloc parameter and touches no Rust
    // memory; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}
