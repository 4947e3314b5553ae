//! YAML parse, then emit what parsed, then parse the emitted text again.
#![no_main]
use hydrate::yaml::{parse_all, to_stream, Resolver};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for resolver in [Resolver::V2, Resolver::V3] {
        if let Ok(docs) = parse_all(text, resolver) {
            if let Ok(out) = to_stream(&docs) {
                let _ = parse_all(&out, resolver);
            }
        }
    }
});
