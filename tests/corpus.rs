//! The shared conformance corpora (`../shared/conformance`), run in-process
//! through the library when present, and classified as their `run` scripts
//! classify a command's result: `exact` (success, stdout byte-identical),
//! `error-ok` (the oracle failed and so did we), anything else fails; a
//! panic fails even where an error was expected. Each test fails when its
//! counts drop below what main scores (the floors below), and prints its
//! counts line.
//!
//! Cases are parsed by the CLI's own argument parsers and rendered through
//! `kustomize::build` and `helm::template`; the `run` scripts' working
//! directory (the case directory) is emulated by resolving the relative
//! paths of the arguments against it. Cases run in parallel on rayon's pool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Instant;

use base64::Engine as _;
use rayon::prelude::*;
use serde_json::Value as Json;

use hydrate::helm::SetKind;

use crate::support::{copy_tree, need, report, Need};

/// What main scored when these tests were written; a count below fails.
/// `worded`: vectors helm fails on whose message helm's stderr contains.
const KUSTOMIZE_FLOOR: Floor = Floor {
    exact: 455,
    error_ok: 80,
    vectors: 0,
    worded: 0,
};
const HELM3_FLOOR: Floor = Floor {
    exact: 181,
    error_ok: 98,
    vectors: 593,
    worded: 38,
};
const HELM4_FLOOR: Floor = Floor {
    exact: 155,
    error_ok: 124,
    vectors: 593,
    worded: 35,
};

struct Floor {
    exact: usize,
    error_ok: usize,
    vectors: usize,
    worded: usize,
}

/// One case's class, as the `run` scripts name them.
enum Class {
    Exact,
    ErrorOk,
    Fail(String),
}

/// What a run printed: stdout, or the error that made it exit non-zero.
type Outcome = Result<String, String>;

/// Runs `f`, turning a panic into a failure that no expectation accepts.
fn contained(f: impl FnOnce() -> Outcome) -> Result<Outcome, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("panicked: {msg}")
    })
}

/// `expected`: the oracle's stdout, or `None` when the oracle failed.
fn classify(expected: Option<&[u8]>, got: Result<Outcome, String>) -> Class {
    match (expected, got) {
        (_, Err(panic)) => Class::Fail(panic),
        (None, Ok(Err(_))) => Class::ErrorOk,
        (None, Ok(Ok(_))) => Class::Fail("expected an error, succeeded".into()),
        (Some(_), Ok(Err(e))) => Class::Fail(format!("failed: {}", first_line(&e))),
        (Some(want), Ok(Ok(out))) if out.as_bytes() == want => Class::Exact,
        (Some(_), Ok(Ok(_))) => Class::Fail("output differs".into()),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The counts of a corpus run.
struct Tally {
    cases: usize,
    exact: usize,
    error_ok: usize,
    failures: Vec<String>,
}

impl Tally {
    fn of(results: Vec<(String, Class)>) -> Tally {
        let mut t = Tally {
            cases: results.len(),
            exact: 0,
            error_ok: 0,
            failures: Vec::new(),
        };
        for (name, class) in results {
            match class {
                Class::Exact => t.exact += 1,
                Class::ErrorOk => t.error_ok += 1,
                Class::Fail(why) => t.failures.push(format!("{name}: {why}")),
            }
        }
        t
    }

    /// Fails when a count dropped below `floor`, listing what failed.
    fn check(&self, what: &str, floor: &Floor, vectors: Option<&Vectors>) {
        let mut low = self.exact < floor.exact || self.error_ok < floor.error_ok;
        let mut counts = format!(
            "{} exact (floor {}), {} error-ok (floor {})",
            self.exact, floor.exact, self.error_ok, floor.error_ok
        );
        if let Some(v) = vectors {
            low |= v.passed < floor.vectors || v.worded_as_helm < floor.worded;
            counts += &format!(
                ", vectors {}/{} (floor {}), {} error messages worded as helm's (floor {})",
                v.passed, v.total, floor.vectors, v.worded_as_helm, floor.worded
            );
        }
        assert!(
            !low,
            "{what}: {counts}; failing:\n{}",
            self.failures.join("\n")
        );
    }
}

/// The corpus directory under `../shared/conformance`.
fn corpus(sub: &str) -> PathBuf {
    let dir = need(Need::Shared).join("conformance").join(sub);
    assert!(dir.is_dir(), "../shared/conformance/{sub} is not present");
    dir
}

/// The case directories (those holding `case.json`), sorted.
fn case_dirs(cases: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn name_of(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// `kustomize/run`: every case builds `CMD + flags + [target]` in
/// `<case>/input`; `expected.yaml` or `expected-error.txt` says what the
/// oracle did.
#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn kustomize_corpus_scores_at_least_main() {
    let root = corpus("kustomize");
    let start = Instant::now();
    let dirs = case_dirs(&root.join("cases"));
    let results: Vec<(String, Class)> = dirs.par_iter().filter_map(|d| kustomize_case(d)).collect();
    let t = Tally::of(results);
    report(&format!(
        "kustomize conformance (in-process): {} exact, {} error-ok, {} failed of {} ({:.1}s)",
        t.exact,
        t.error_ok,
        t.failures.len(),
        t.cases,
        start.elapsed().as_secs_f64()
    ));
    t.check("kustomize corpus", &KUSTOMIZE_FLOOR, None);
}

fn kustomize_case(dir: &Path) -> Option<(String, Class)> {
    let expected = match std::fs::read(dir.join("expected.yaml")) {
        Ok(bytes) => Some(bytes),
        Err(_) if dir.join("expected-error.txt").is_file() => None,
        Err(_) => return None,
    };
    let meta = read_json(&dir.join("case.json"));
    let mut args = strings(&meta["flags"]);
    args.push(meta["target"].as_str().unwrap_or(".").to_string());
    // The runner creates the empty directories git does not keep; the
    // corpus stays read-only here, so such a case builds from a copy.
    let empty = strings(&meta["empty_dirs"]);
    let mut input = dir.join("input");
    let incomplete = !input.is_dir() || empty.iter().any(|e| !input.join(e).is_dir());
    let copy = incomplete.then(|| tempfile::tempdir().unwrap());
    if let Some(copy) = &copy {
        if input.is_dir() {
            copy_tree(&input, copy.path());
        }
        for e in &empty {
            std::fs::create_dir_all(copy.path().join(e)).unwrap();
        }
        input = copy.path().to_path_buf();
    }
    let got = contained(|| {
        let (target, opts) = hydrate::kustomize_build_options(&args).map_err(|e| e.to_string())?;
        let build =
            hydrate::kustomize::build(&input.join(target), &opts).map_err(|e| e.to_string())?;
        Ok(build.to_yaml())
    });
    Some((name_of(dir), classify(expected.as_deref(), got)))
}

#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn helm3_corpus_scores_at_least_main() {
    helm_corpus("helm3", &[], &HELM3_FLOOR);
}

#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn helm4_corpus_scores_at_least_main() {
    helm_corpus("helm4", &["--helm-version", "4"], &HELM4_FLOOR);
}

/// `helm/run --oracle ORACLE`: every case runs `CMD + args` in its
/// directory and compares with `expected.ORACLE.yaml` or
/// `expected-error.ORACLE.txt`; then the function vectors.
fn helm_corpus(oracle: &str, cmd: &[&str], floor: &Floor) {
    let root = corpus("helm");
    let dirs = case_dirs(&root.join("cases"));
    let recorded = |d: &PathBuf| d.join(format!("expected.{oracle}.yaml")).is_file();
    assert!(
        dirs.iter().any(recorded),
        "the helm corpus has no {oracle} expectations"
    );
    let start = Instant::now();
    let results: Vec<(String, Class)> = dirs
        .par_iter()
        .map(|d| (name_of(d), helm_case(d, oracle, cmd)))
        .collect();
    let t = Tally::of(results);
    let v = vectors(&root.join("functions"), oracle, cmd);
    report(&format!(
        "helm conformance ({oracle}, in-process): {} exact, {} error-ok, {} failed of {}; \
         functions: {}/{}; error messages worded as helm's: {}/{} ({:.1}s)",
        t.exact,
        t.error_ok,
        t.failures.len(),
        t.cases,
        v.passed,
        v.total,
        v.worded_as_helm,
        v.both_failed,
        start.elapsed().as_secs_f64()
    ));
    if v.passed < floor.vectors || v.worded_as_helm < floor.worded {
        report(&format!("failing vectors:\n{}", v.failures.join("\n")));
    }
    t.check(&format!("helm corpus ({oracle})"), floor, Some(&v));
}

fn helm_case(dir: &Path, oracle: &str, cmd: &[&str]) -> Class {
    let meta = read_json(&dir.join("case.json"));
    let mut args = strings(&meta["args"]);
    if args.first().is_some_and(|a| a == "template") {
        args.remove(0);
    }
    let expected = std::fs::read(dir.join(format!("expected.{oracle}.yaml"))).ok();
    if expected.is_none() && !dir.join(format!("expected-error.{oracle}.txt")).is_file() {
        return Class::Fail(format!("no expected output for oracle {oracle}"));
    }
    classify(expected.as_deref(), helm_template(dir, cmd, &args))
}

/// `hydrate helm template CMD ARGS` run in `cwd`: what it prints on stdout.
fn helm_template(cwd: &Path, cmd: &[&str], args: &[String]) -> Result<Outcome, String> {
    let argv: Vec<String> = cmd
        .iter()
        .map(|s| s.to_string())
        .chain(args.iter().cloned())
        .collect();
    contained(|| {
        let (chart, mut opts) = hydrate::helm_template_options(&argv).map_err(|e| e.to_string())?;
        opts.values_files = opts.values_files.iter().map(|f| cwd.join(f)).collect();
        for (kind, pairs) in &mut opts.sets {
            if matches!(kind, SetKind::File) {
                *pairs = resolve_set_file(cwd, pairs);
            }
        }
        let rendered =
            hydrate::helm::template(&cwd.join(chart), &opts).map_err(|e| e.to_string())?;
        // The CLI prints one `wrote` line per --output-dir file first.
        let mut out: String = rendered
            .files
            .iter()
            .map(|f| format!("wrote {}\n", f.path))
            .collect();
        out.push_str(&rendered.output);
        Ok(out)
    })
}

/// `--set-file key=path,...` with each path made relative to `cwd`.
fn resolve_set_file(cwd: &Path, pairs: &str) -> String {
    pairs
        .split(',')
        .map(|pair| match pair.split_once('=') {
            Some((k, path)) => format!("{k}={}", cwd.join(path).display()),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The function vectors' results.
struct Vectors {
    passed: usize,
    total: usize,
    failures: Vec<String>,
    /// Of the vectors helm fails on that we fail on too: how many of our
    /// messages helm's stderr contains (the CLI prints `Error: MESSAGE`).
    worded_as_helm: usize,
    both_failed: usize,
}

/// The function vectors: `functions/chart` rendered once, and each vector
/// that needs its own chart (`functions/errors/<id>/chart`) rendered alone;
/// each `vNNNN: "<base64>"` line is decoded and compared with
/// `expected_ORACLE`.
fn vectors(functions: &Path, oracle: &str, cmd: &[&str]) -> Vectors {
    let mut out = Vectors {
        passed: 0,
        total: 0,
        failures: Vec::new(),
        worded_as_helm: 0,
        both_failed: 0,
    };
    let path = functions.join("vectors.json");
    if !path.is_file() {
        return out;
    }
    let Json::Array(all) = read_json(&path) else {
        panic!("{}: not a list", path.display());
    };
    let args: Vec<String> = ["vec", "chart", "--namespace", "vecns"]
        .map(String::from)
        .to_vec();
    let main = match helm_template(functions, cmd, &args) {
        Ok(Ok(out)) => Ok(decode(&out)),
        Ok(Err(e)) | Err(e) => Err(first_line(&e).to_string()),
    };
    // (failure, Some(worded as helm) where both failed)
    let results: Vec<(Option<String>, Option<bool>)> = all
        .par_iter()
        .map(|v| {
            let id = v["id"].as_str().unwrap_or("?");
            let want = expected_bytes(v, oracle);
            let chart = v["chart"].as_str().unwrap_or("chart");
            let (failure, worded) = if chart == "chart" {
                let failure = match (&main, want.as_deref()) {
                    (Err(e), _) => Some(format!("vectors chart failed: {e}")),
                    (Ok(_), None) => Some(format!("no expectation for {oracle}")),
                    (Ok(got), Some(w)) if got.get(id).and_then(Option::as_deref) == Some(w) => None,
                    (Ok(got), Some(w)) => Some(format!("got {:?} want {w:?}", got.get(id))),
                };
                (failure, None)
            } else {
                let dir = functions.join(Path::new(chart).parent().unwrap_or(Path::new(".")));
                own_chart_vector(
                    &dir,
                    cmd,
                    &args,
                    id,
                    want.as_deref(),
                    &v[format!("error_{oracle}").as_str()],
                )
            };
            (failure.map(|f| format!("functions/{id}: {f}")), worded)
        })
        .collect();
    out.total = all.len();
    for (failure, worded) in results {
        match failure {
            Some(f) => out.failures.push(f),
            None => out.passed += 1,
        }
        if let Some(worded) = worded {
            out.both_failed += 1;
            out.worded_as_helm += usize::from(worded);
        }
    }
    out
}

/// A vector rendered from its own chart in `dir`: its failure, and where
/// helm fails too, whether helm's stderr holds our message.
fn own_chart_vector(
    dir: &Path,
    cmd: &[&str],
    args: &[String],
    id: &str,
    want: Option<&[u8]>,
    helm_error: &Json,
) -> (Option<String>, Option<bool>) {
    let failure = match (helm_template(dir, cmd, args), want) {
        (Err(panic), _) => Some(panic),
        (Ok(Err(e)), None) => {
            let worded = helm_error.as_str().is_some_and(|h| h.contains(e.trim()));
            return (None, Some(worded));
        }
        (Ok(Ok(_)), None) => Some("the oracle fails but we succeeded".into()),
        (Ok(Err(e)), Some(_)) => Some(format!("failed: {}", first_line(&e))),
        (Ok(Ok(out)), Some(w)) if decode(&out).get(id).and_then(Option::as_deref) == Some(w) => {
            None
        }
        (Ok(Ok(_)), Some(w)) => Some(format!("output differs from {w:?}")),
    };
    (failure, None)
}

/// The `  vNNNN: "<base64>"` lines of a render (`None`: not base64).
fn decode(out: &str) -> BTreeMap<String, Option<Vec<u8>>> {
    static LINE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"(?m)^  (v\d{4}): "?([A-Za-z0-9+/=]*)"?\s*$"#).unwrap()
    });
    LINE.captures_iter(out)
        .map(|c| {
            let bytes = base64::engine::general_purpose::STANDARD.decode(&c[2]).ok();
            (c[1].to_string(), bytes)
        })
        .collect()
}

/// `expected_ORACLE`: a string, `{"base64": ...}` when not UTF-8, or null
/// when the oracle failed.
fn expected_bytes(v: &Json, oracle: &str) -> Option<Vec<u8>> {
    match &v[format!("expected_{oracle}").as_str()] {
        Json::String(s) => Some(s.as_bytes().to_vec()),
        Json::Object(m) => m
            .get("base64")
            .and_then(Json::as_str)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok()),
        _ => None,
    }
}
