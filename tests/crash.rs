//! Template inputs that used to abort hydrate (stack overflow) or exhaust
//! memory: deep `if` nesting and deep parentheses render as helm renders
//! them; `tpl` calling itself stops with an error naming the template.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::hydrate;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// Runs `helm template rel c` on a chart with the given extra files and
/// returns (exit code, stdout, stderr, time).
fn template(files: &[(&str, &str)]) -> (Option<i32>, String, String, Duration) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = dir.path().join("c");
    write(
        &chart,
        "Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    for (name, text) in files {
        write(&chart, name, text);
    }
    let start = Instant::now();
    let out = hydrate()
        .current_dir(dir.path())
        .args(["helm", "template", "rel", "c"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !err.contains("panicked") && !err.contains("overflow"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout, err, start.elapsed())
}

#[test]
fn five_thousand_nested_ifs_render() {
    let text = format!(
        "{}x: 1\n{}",
        "{{ if true }}".repeat(5000),
        "{{ end }}".repeat(5000)
    );
    let (code, out, err, took) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 1\n"), "{out}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn ten_thousand_and_one_nested_parentheses_render() {
    let n = 10_001;
    let text = format!("x: {{{{ {}1{} }}}}\n", "(".repeat(n), ")".repeat(n));
    let (code, out, err, took) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 1\n"), "{out}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn tpl_calling_itself_stops_by_depth() {
    let files = [
        ("values.yaml", "x: \"{{ tpl .Values.x . }}\"\n"),
        ("templates/a.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let (code, _, err, took) = template(&files);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("a.yaml") && err.contains("tpl nested more than 1000"),
        "{err}"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn tpl_doubling_its_output_stops_by_size() {
    let files = [
        (
            "values.yaml",
            "x: \"{{ tpl .Values.x . }}{{ tpl .Values.x . }}\"\n",
        ),
        ("templates/a.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let (code, _, err, took) = template(&files);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("a.yaml") && err.contains("tpl"), "{err}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}
