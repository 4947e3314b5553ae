//! YAML parse, then emit what parsed, then parse the emitted text again.
//! The entry point is `entry::yaml_roundtrip` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::yaml_roundtrip(data));
