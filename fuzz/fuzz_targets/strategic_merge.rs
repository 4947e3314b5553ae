//! Strategic merge patches: the input is the patch a kustomization applies
//! The entry point is `entry::strategic_merge` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::strategic_merge(data));
