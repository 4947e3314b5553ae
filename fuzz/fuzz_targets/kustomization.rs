//! The kustomization loader: the input is `kustomization.yaml` beside one
//! The entry point is `entry::kustomization` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::kustomization(data));
