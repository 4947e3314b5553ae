//! JSON 6902 patches: the input is the patch file a kustomization applies
//! The entry point is `entry::json_patch` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::json_patch(data));
