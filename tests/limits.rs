//! go-yaml's limits through every YAML entry point: an alias bomb and a
//! document nested 50,000 deep fail fast (exit 1) with an error naming the
//! file, from kustomize resources and patches, helm values and Chart.yaml,
//! environment files, and the template functions `fromYaml`/`fromJson`.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::support::{hydrate, render_at};

/// The "billion laughs" document: nine levels of nine aliases (9^9 strings).
fn alias_bomb() -> String {
    let mut s = format!("a: &a [{}]\n", ["\"lol\""; 9].join(","));
    for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        s.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    s
}

/// 100 KB of flow sequences nested 50,000 deep.
fn deep() -> String {
    format!("{}{}", "[".repeat(50_000), "]".repeat(50_000))
}

const ALIASING: &str = "excessive aliasing";
const DEPTH: &str = "exceeded max depth";

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// Runs `cmd` and checks: exit 1 for the drop-ins (as kustomize and helm
/// exit), 2 for hydrate's own commands (bad input), stderr names `file` and
/// says `what`. How fast is measured on the release binary by
/// benches/limits.sh (issue 14's 2 s bound), not by a wall-clock assertion.
fn fails_fast(mut cmd: assert_cmd::Command, file: &str, what: &str) {
    let drop_in = cmd
        .get_args()
        .next()
        .is_some_and(|a| a == "kustomize" || a == "helm");
    let out = cmd
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    let code = if drop_in { 1 } else { 2 };
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert!(err.contains(file) && err.contains(what), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty(), "printed output on failure");
}

fn kustomize_resource(payload: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "kustomization.yaml", "resources:\n- bad.yaml\n");
    write(dir.path(), "bad.yaml", payload);
    let mut cmd = hydrate();
    cmd.args(["kustomize", "build"]).arg(dir.path());
    fails_fast(cmd, "bad.yaml", what);
}

/// kustomize drops the cause here ("unable to parse SM or JSON patch from
/// [path: ...]", PatchTransformer's Config) and so do we: the file is named.
fn kustomize_patch(payload: &str) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        dir.path(),
        "kustomization.yaml",
        "resources:\n- cm.yaml\npatches:\n- path: patch.yaml\n",
    );
    write(
        dir.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    write(dir.path(), "patch.yaml", payload);
    let mut cmd = hydrate();
    cmd.args(["kustomize", "build"]).arg(dir.path());
    fails_fast(cmd, "patch.yaml", "unable to parse SM or JSON patch");
}

/// A chart `c` whose files are the given ones over a minimal valid chart.
fn helm_chart(files: &[(&str, &str)], file: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = dir.path().join("c");
    write(
        &chart,
        "Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    write(&chart, "templates/cm.yaml", "kind: ConfigMap\n");
    for (name, text) in files {
        write(&chart, name, text);
    }
    let mut cmd = hydrate();
    cmd.current_dir(dir.path())
        .args(["helm", "template", "rel", "c"]);
    fails_fast(cmd, file, what);
}

fn environment_file(payload: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "environments/dev.yaml", payload);
    fails_fast(render_at(dir.path()), "dev.yaml", what);
    // Nothing written: no output directory, no staging or cache files.
    let left: Vec<String> = walkdir::WalkDir::new(dir.path())
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

/// helm's `fromYaml` returns `{Error: ...}` instead of failing: the template
/// fails with it, as a chart checking its input would.
const FROM_YAML: &str =
    "{{ $v := fromYaml (.Files.Get \"data.yaml\") }}{{ if $v.Error }}{{ fail $v.Error }}{{ end }}";

#[test]
fn alias_bomb_in_a_kustomize_resource() {
    kustomize_resource(&alias_bomb(), ALIASING);
}

#[test]
fn deep_kustomize_resource() {
    kustomize_resource(&deep(), DEPTH);
}

#[test]
fn alias_bomb_in_a_kustomize_patch() {
    kustomize_patch(&alias_bomb());
}

#[test]
fn deep_kustomize_patch() {
    kustomize_patch(&deep());
}

#[test]
fn alias_bomb_in_helm_values() {
    helm_chart(&[("values.yaml", &alias_bomb())], "values.yaml", ALIASING);
}

#[test]
fn deep_helm_values() {
    helm_chart(&[("values.yaml", &deep())], "values.yaml", DEPTH);
}

#[test]
fn alias_bomb_in_chart_yaml() {
    let bomb = format!("apiVersion: v2\nname: c\nversion: 0.1.0\n{}", alias_bomb());
    helm_chart(&[("Chart.yaml", &bomb)], "Chart.yaml", ALIASING);
}

#[test]
fn deep_chart_yaml() {
    let deep = format!("apiVersion: v2\nname: c\nversion: 0.1.0\nx: {}\n", deep());
    helm_chart(&[("Chart.yaml", &deep)], "Chart.yaml", DEPTH);
}

#[test]
fn alias_bomb_in_an_environment_file() {
    environment_file(&alias_bomb(), ALIASING);
}

#[test]
fn deep_environment_file() {
    environment_file(&deep(), DEPTH);
}

#[test]
fn alias_bomb_through_from_yaml() {
    let files = [
        ("templates/cm.yaml", FROM_YAML),
        ("data.yaml", &alias_bomb()),
    ];
    helm_chart(&files, "cm.yaml", ALIASING);
}

#[test]
fn deep_document_through_from_yaml() {
    let files = [("templates/cm.yaml", FROM_YAML), ("data.yaml", &deep())];
    helm_chart(&files, "cm.yaml", DEPTH);
}

#[test]
fn deep_document_through_from_json() {
    let tpl = "{{ $v := mustFromJson (.Files.Get \"data.json\") }}";
    let files = [("templates/cm.yaml", tpl), ("data.json", &deep())];
    helm_chart(&files, "cm.yaml", DEPTH);
}

/// 20,000 aliases of one scalar (142 KB of `values.yaml`) are within
/// go-yaml's alias budget: helm 3.17 renders them in 0.7 s, 59 MB.
#[test]
fn twenty_thousand_flat_aliases_in_values_render() {
    let mut values = String::from("x: &x 1\n");
    for i in 1..=20_000 {
        values.push_str(&format!("k{i}: *x\n"));
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = dir.path().join("c");
    write(
        &chart,
        "Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    write(&chart, "values.yaml", &values);
    write(&chart, "templates/cm.yaml", "x: {{ .Values.k20000 }}\n");
    let out = hydrate()
        .current_dir(dir.path())
        .args(["helm", "template", "rel", "c"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout.ends_with("x: 1\n"), "{stdout}");
}
