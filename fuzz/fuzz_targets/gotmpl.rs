//! Go template parse and execute with the Sprig function library.
//! The entry point is `entry::gotmpl` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::gotmpl(data));
