//! The chart loader from packaged bytes: the input is `chart.tgz`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("chart.tgz");
    if std::fs::write(&path, data).is_ok() {
        let _ = hydrate::helm::template(&path, &hydrate::helm::Options::default());
    }
});
