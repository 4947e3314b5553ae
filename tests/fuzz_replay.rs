//! Stable stand-in for the fuzz targets: seeds plus a bounded, seeded
//! number of byte mutations through the YAML parse + emit round trip and
//! the Go template parse + execute entry points; no input may panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use hydrate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};
use hydrate::yaml::{parse_all, to_stream, Resolver};

const SEEDS: &[&str] = &[
    "a: 1\nb: [1, 2, {c: d}]\n",
    "k: &x {a: 1}\nl: *x\n---\n- |\n  text\n- 'q'\n",
    "{{ if .a }}{{ range $i, $v := .l }}{{ $i }}={{ $v | quote }}{{ end }}{{ end }}",
    "{{ define \"t\" }}{{ toYaml . | indent 2 }}{{ end }}{{ template \"t\" dict \"a\" (list 1 2) }}",
    "{{ ((printf \"%v\" 1)) }}{{ with $x := 3 }}{{ $x }}{{ else }}no{{ end }}",
];

/// xorshift: deterministic mutations without a dependency.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn mutate(seed: &str, state: &mut u64) -> String {
    let mut b = seed.as_bytes().to_vec();
    for _ in 0..(next(state) % 4 + 1) {
        let at = (next(state) as usize) % (b.len() + 1);
        match next(state) % 3 {
            0 if at < b.len() => {
                b.remove(at);
            }
            1 => b.insert(at, b"{}[]()|:-&*\"'$. \n"[(next(state) % 17) as usize]),
            _ => {
                let from = (next(state) as usize) % (b.len() + 1);
                let piece: Vec<u8> = b[from.min(at)..from.max(at)].to_vec();
                b.splice(at..at, piece.into_iter().take(64));
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn run_one(input: &str, funcs: &Arc<FuncMap>) {
    if let Ok(docs) = parse_all(input, Resolver::V3) {
        let _ = to_stream(&docs);
    }
    let mut set = TemplateSet::new("fuzz", funcs.clone());
    if set.parse("fuzz", input).is_ok() {
        let _ = set.execute("fuzz", Value::Nil, &ExecOptions::default());
    }
}

#[test]
fn seeds_and_mutations_do_not_panic() {
    let funcs = Arc::new(FuncMap::with_sprig());
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut count = 0;
    for seed in SEEDS {
        for i in 0..400 {
            let input = if i == 0 {
                seed.to_string()
            } else {
                mutate(seed, &mut state)
            };
            let r = catch_unwind(AssertUnwindSafe(|| run_one(&input, &funcs)));
            assert!(r.is_ok(), "panic on input {input:?}");
            count += 1;
        }
    }
    assert_eq!(count, SEEDS.len() * 400);
}
