//! Checks against the shared conformance corpus and the real tools. Each
//! test is reported as ignored (see `support::Need`) when `../shared` or the
//! oracle is absent. Each loop reports every failing item, not the first.
//! The goldens' oracle checks are in `goldens`, the demo's in `demo`, the
//! corpora in `corpus`.

use std::fs;

use crate::support::{hydrate, need, Need};

/// Fails listing every failure, when there is one.
fn assert_none_failed(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{what}: {} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A few expected.yaml files of the kustomize corpus, built as plain
/// resources, print back unchanged (the YAML core's round trip).
#[test]
#[cfg_attr(not(has_shared), ignore = "needs ../shared (the conformance corpora)")]
fn conformance_expected_files_round_trip() {
    let shared = need(Need::Shared);
    let cases = shared.join("conformance/kustomize/cases");
    let picks = [
        "stringquoteblank__TestLongLineBreaks",
        "configmaps__TestIssue3393",
        "variableref__TestVarRefBig",
        "baseandoverlaymedium__TestMediumOverlay",
        "multibytecharacter__TestMultibyteCharInConfigMap",
    ];
    let mut checked = 0;
    let mut failures = Vec::new();
    for name in picks {
        let expected = cases.join(name).join("expected.yaml");
        let Ok(text) = fs::read_to_string(&expected) else {
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("expected.yaml"), &text).unwrap();
        fs::write(
            dir.path().join("kustomization.yaml"),
            "resources:\n- expected.yaml\n",
        )
        .unwrap();
        let out = hydrate()
            .args(["kustomize", "build"])
            .arg(dir.path())
            .output()
            .unwrap();
        checked += 1;
        if !out.status.success() {
            failures.push(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
        } else if out.stdout != text.as_bytes() {
            failures.push(format!("{name}: does not print back unchanged"));
        }
    }
    assert!(
        checked >= 3,
        "the corpus changed: only {checked} picked cases exist"
    );
    assert_none_failed("round trips", &failures);
}
