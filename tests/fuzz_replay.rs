//! Stable stand-in for the fuzz targets (`fuzz/`): seeds plus a bounded,
//! seeded number of byte mutations through the YAML parse + emit round
//! trip, Go template parse + execute, the kustomization loader (with JSON
//! 6902 and strategic-merge patches, seeded from `testdata/kustomize`) and
//! the chart loader from `.tgz` bytes (seeded from `testdata/helmcharts`);
//! no input may panic.

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

/// Copies of the files directly in `dir`.
fn files_of(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let Ok(e) = e else { continue };
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e
            .path()
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().into_owned());
        if let (Ok(rel), Ok(data)) = (rel, std::fs::read(e.path())) {
            out.push((rel, data));
        }
    }
    out
}

fn mutate_bytes(b: &[u8], state: &mut u64) -> Vec<u8> {
    mutate(&String::from_utf8_lossy(b), state).into_bytes()
}

/// Each testdata kustomization with one of its files mutated, built in a
/// temporary copy (JSON 6902 and strategic-merge patches, generators, the
/// kustomization loader itself).
#[test]
fn kustomize_builds_of_mutated_testdata_do_not_panic() {
    let root = crate::support::repo().join("testdata/kustomize");
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut count = 0;
    for case in ["patches", "json6902-evanphx-v4", "generators", "scalars"] {
        let files = files_of(&root.join(case).join("input"));
        if files.is_empty() {
            continue;
        }
        for i in 0..60 {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let pick = (next(&mut state) as usize) % files.len();
            for (n, (rel, data)) in files.iter().enumerate() {
                let path = dir.path().join(rel);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
                }
                let data = if i > 0 && n == pick {
                    mutate_bytes(data, &mut state)
                } else {
                    data.clone()
                };
                std::fs::write(&path, data).unwrap_or_else(|e| panic!("{e}"));
            }
            let opts = hydrate::kustomize::Options::default();
            let r = catch_unwind(AssertUnwindSafe(|| {
                hydrate::kustomize::build(dir.path(), &opts).is_ok()
            }));
            assert!(r.is_ok(), "panic in {case}, mutated {}", files[pick].0);
            // The unmutated seed builds, so mutations start from real input.
            assert!(i > 0 || matches!(r, Ok(true)), "seed {case} does not build");
            count += 1;
        }
    }
    assert!(count >= 180, "{count}");
}

fn targz(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (rel, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        let _ = tar.append_data(&mut h, format!("platform/{rel}"), data.as_slice());
    }
    let raw = tar.into_inner().unwrap_or_default();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = std::io::Write::write_all(&mut gz, &raw);
    gz.finish().unwrap_or_default()
}

/// A packaged chart with one file mutated, or its gzip bytes mutated,
/// rendered from the `.tgz` (the chart loader's archive path).
#[test]
fn charts_from_mutated_tgz_bytes_do_not_panic() {
    let chart = crate::support::repo().join("testdata/helmcharts/subcharts/input/vendor/platform");
    let files = files_of(&chart);
    assert!(!files.is_empty(), "no seed chart at {}", chart.display());
    let mut state = 0x5851_F42D_4C95_7F2D_u64;
    for i in 0..150 {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut files = files.clone();
        let bytes = if i % 3 == 2 {
            mutate_bytes(&targz(&files), &mut state)
        } else {
            let pick = (next(&mut state) as usize) % files.len();
            if i > 0 {
                files[pick].1 = mutate_bytes(&files[pick].1, &mut state);
            }
            targz(&files)
        };
        let path = dir.path().join("platform-0.1.0.tgz");
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let opts = hydrate::helm::Options::default();
        let r = catch_unwind(AssertUnwindSafe(|| {
            hydrate::helm::template(&path, &opts).is_ok()
        }));
        assert!(r.is_ok(), "panic on mutation {i}");
        assert!(
            i > 0 || matches!(r, Ok(true)),
            "the seed chart does not render"
        );
    }
}

#[path = "../fuzz/entry.rs"]
mod entry;

/// How long one regression input may run before it counts as a hang.
const REPLAY_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Replays `data` through the fuzz target `run` on a thread named after the
/// input, with the 8 MiB stack a fuzz binary's main thread has: a panic or
/// hang is returned as an error naming the input; a stack overflow aborts
/// the test binary, and Rust's message names the thread, hence the input.
fn replay(name: &str, run: entry::Target, data: Vec<u8>) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("fuzz-replay {name}"))
        .stack_size(8 << 20)
        .spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| run(&data)));
            let _ = tx.send(r.is_ok());
        });
    if let Err(e) = spawned {
        return Err(format!("{name}: cannot start: {e}"));
    }
    match rx.recv_timeout(REPLAY_LIMIT) {
        Ok(true) => Ok(()),
        Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(format!("{name}: panicked"))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            Err(format!("{name}: still running after {REPLAY_LIMIT:?}"))
        }
    }
}

/// Every input the cargo-fuzz runs found a fault with (minimized, then
/// fixed in the library) replays through its target's entry point:
/// `testdata/fuzz/<target>/<input>`, one file per case, each failure named.
#[test]
fn fuzz_regressions_replay() {
    let root = crate::support::repo().join("testdata/fuzz");
    let mut failures = Vec::new();
    let mut count = 0;
    for e in walkdir::WalkDir::new(&root).min_depth(1).max_depth(1) {
        let Ok(e) = e else { continue };
        let target = e.file_name().to_string_lossy().into_owned();
        let known = entry::TARGETS.iter().find(|(t, _)| *t == target);
        let Some((_, run)) = known else {
            failures.push(format!("{target}: no such fuzz target"));
            continue;
        };
        for (input, data) in files_of(e.path()) {
            let name = format!("{target}/{input}");
            if let Err(e) = replay(&name, *run, data) {
                failures.push(e);
            }
            count += 1;
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The directory holds a sample of the libFuzzer corpora too, so an
    // empty or unreadable directory means the replay silently checks
    // nothing.
    assert!(
        count > 0,
        "no fuzz regression inputs under {}",
        root.display()
    );
    #[allow(clippy::disallowed_macros)] // libtest captures a test's output
    {
        println!("replayed {count} fuzz regression inputs");
    }
}
