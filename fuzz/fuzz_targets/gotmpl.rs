//! Go template parse and execute with the Sprig function library.
#![no_main]
use std::sync::Arc;

use hydrate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut set = TemplateSet::new("fuzz", Arc::new(FuncMap::with_sprig()));
    if set.parse("fuzz", text).is_ok() {
        let _ = set.execute("fuzz", Value::Nil, &ExecOptions::default());
    }
});
