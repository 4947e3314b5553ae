//! The chart loader from packaged bytes: the input is `chart.tgz`.
//! The entry point is `entry::chart_tgz` (shared with tests/fuzz_replay.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../entry.rs"]
mod entry;

fuzz_target!(|data: &[u8]| entry::chart_tgz(data));
