//! The explain self-check (issue 32, item 5) over the shared conformance
//! corpora (`../shared/conformance`), when present: every scalar of every
//! rendered object is held by its explained source line, after the step's
//! documented transformation, or named by the step that made it
//! (`hydrate::explain::check_kustomizations`/`check_charts`). The demo and
//! the golden fixtures are checked by the library's own tests
//! (`explain::check`).
//!
//! Every kustomize case without flags is checked; a chart case is checked
//! when its arguments are the release, the chart and `-f`/`--set`/
//! `--namespace` (others are counted as not checked). A case that does not
//! render (an expected error) is counted as not rendered.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value as Json;

use hydrate::env::ChartApp;
use hydrate::explain::{check_charts_with, check_kustomizations, Checked};

use crate::support::{need, report, Need};

/// Cases whose failures are known provenance gaps, each with why; their
/// failures are printed, not counted.
const KNOWN: &[(&str, &str)] = &[(
    "replacementtransformer__TestReplacementTransformerWithSuffixTransformerAndRejectUsingRegex",
    "a replacement into a base resource's list item renamed by it keeps the item's old place",
)];

/// `failures` without the known ones, which are reported.
fn unknown(failures: Vec<String>) -> Vec<String> {
    let (known, rest): (Vec<String>, Vec<String>) = failures.into_iter().partition(|f| {
        KNOWN
            .iter()
            .any(|(case, _)| f.starts_with(&format!("{case}:")))
    });
    for f in &known {
        report(&format!("known gap: {f}"));
    }
    rest
}

/// The corpus's cases; the tests run only where build.rs found ../shared,
/// so a missing corpus there fails rather than passes.
fn corpus(sub: &str) -> PathBuf {
    let dir = need(Need::Shared)
        .join("conformance")
        .join(sub)
        .join("cases");
    assert!(dir.is_dir(), "{} is not present", dir.display());
    dir
}

fn cases(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|d| d.join("case.json").is_file())
        .collect();
    out.sort();
    out
}

fn meta(dir: &Path) -> Json {
    let text = std::fs::read_to_string(dir.join("case.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The sum of per-case checks, in case order.
fn merged(parts: Vec<Checked>) -> Checked {
    let mut all = Checked::default();
    for c in parts {
        all.fields += c.fields;
        all.located += c.located;
        all.synthesised += c.synthesised;
        all.not_rendered.extend(c.not_rendered);
        all.failures.extend(c.failures);
        for (by, n) in c.named {
            *all.named.entry(by).or_default() += n;
        }
    }
    all
}

#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn every_kustomize_corpus_field_is_explained() {
    let dir = corpus("kustomize");
    let all = cases(&dir);
    let plain: Vec<&PathBuf> = all
        .iter()
        .filter(|d| {
            let m = meta(d);
            m["flags"].as_array().is_some_and(Vec::is_empty) && d.join("input").is_dir()
        })
        .collect();
    let parts = plain
        .par_iter()
        .map(|d| {
            let target = meta(d)["target"].as_str().unwrap_or(".").to_string();
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            let mut c = check_kustomizations(d, &[Path::new("input").join(target)]);
            for f in &mut c.failures {
                *f = format!("{name}: {f}");
            }
            c
        })
        .collect();
    let c = merged(parts);
    report(&format!(
        "explain check kustomize corpus ({} of {} cases, those without flags): {}",
        plain.len(),
        all.len(),
        c.summary()
    ));
    assert!(c.fields > 0);
    let failures = unknown(c.failures);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The chart app a case's `helm template` arguments describe, if they are
/// only the release, the chart and values.
fn chart_app(dir: &Path) -> Option<ChartApp> {
    let m = meta(dir);
    let args: Vec<&str> = m["args"]
        .as_array()?
        .iter()
        .filter_map(Json::as_str)
        .collect();
    let ["template", release, chart, rest @ ..] = args.as_slice() else {
        return None;
    };
    let mut app = ChartApp {
        chart: dir.join(chart),
        release_name: release.to_string(),
        ..Default::default()
    };
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match *a {
            "-f" | "--values" => app.value_files.push(dir.join(it.next()?)),
            "--set" => app.set.push(it.next()?.to_string()),
            "-n" | "--namespace" => app.namespace = it.next()?.to_string(),
            _ => return None,
        }
    }
    Some(app)
}

#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn every_helm_corpus_field_is_explained() {
    let dir = corpus("helm");
    let all = cases(&dir);
    let apps: Vec<(String, ChartApp)> = all
        .iter()
        .filter_map(|d| Some((d.file_name()?.to_string_lossy().into_owned(), chart_app(d)?)))
        .collect();
    let parts = apps
        .par_iter()
        .map(|(name, app)| {
            let mut c = check_charts_with(Path::new("/"), std::slice::from_ref(app));
            for f in &mut c.failures {
                *f = format!("{name}: {f}");
            }
            c
        })
        .collect();
    let c = merged(parts);
    report(&format!(
        "explain check helm corpus ({} of {} cases, those of release, chart and values): {}",
        apps.len(),
        all.len(),
        c.summary()
    ));
    assert!(c.fields > 0);
    assert!(c.failures.is_empty(), "{:#?}", c.failures);
}
