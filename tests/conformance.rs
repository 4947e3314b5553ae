//! Checks against the shared conformance corpus and the real tools. Each
//! test skips (and says so, see `support::need`) when `../shared` or the
//! oracle is absent. Each loop reports every failing item, not the first.
//! The goldens' oracle checks are in `goldens`, the corpora in `corpus`.

use std::fs;
use std::path::Path;

use crate::support::{hydrate, need, repo, Need};

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
fn conformance_expected_files_round_trip() {
    let Some(shared) = need(Need::Shared) else {
        return;
    };
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

/// The demo's overlays build byte-identical to `kubectl kustomize`.
#[test]
fn demo_matches_kubectl() {
    let Some(kubectl) = need(Need::Kubectl) else {
        return;
    };
    let apps = repo().join("testdata/apps");
    let mut n = 0;
    let mut failures = Vec::new();
    for app in fs::read_dir(&apps).unwrap() {
        let overlays = app.unwrap().path().join("overlays");
        // Chart apps have no overlays; demo_chart_matches_helm3 checks them.
        let Ok(envs) = fs::read_dir(&overlays) else {
            continue;
        };
        for env in envs {
            let dir = env.unwrap().path();
            failures.extend(compare_with_kubectl(&kubectl, &dir));
            n += 1;
        }
    }
    assert!(n >= 12);
    assert_none_failed("overlays", &failures);
}

/// `kubectl kustomize DIR` and `hydrate kustomize build DIR` agree, or why not.
fn compare_with_kubectl(kubectl: &Path, dir: &Path) -> Option<String> {
    let want = std::process::Command::new(kubectl)
        .arg("kustomize")
        .arg(dir)
        .output()
        .unwrap();
    let got = hydrate()
        .args(["kustomize", "build"])
        .arg(dir)
        .output()
        .unwrap();
    if want.status.success() != got.status.success() {
        return Some(format!(
            "{}: kubectl {}, hydrate {}",
            dir.display(),
            want.status,
            got.status
        ));
    }
    (want.stdout != got.stdout).then(|| format!("{}: output differs", dir.display()))
}

/// The demo's chart app renders byte-identical to `helm template` (helm
/// v3.17.3) with the same release, namespace and values.
#[test]
fn demo_chart_matches_helm3() {
    let Some(helm) = need(Need::Helm3) else {
        return;
    };
    let repo = crate::support::demo_copy();
    let out = crate::support::render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let chart = repo.path().join("testdata/apps/status/chart");
    let mut failures = Vec::new();
    for (env, ns, extra) in [
        (
            "dev",
            "status-dev",
            &[
                "--set-string",
                "serviceAccount.annotations.acme-shop\\.example/sandbox=true",
            ][..],
        ),
        ("staging", "status-staging", &[][..]),
        ("production", "status", &[][..]),
    ] {
        let values = repo
            .path()
            .join(format!("testdata/apps/status/values/{env}.yaml"));
        let want = std::process::Command::new(&helm)
            .args(["template", "status"])
            .arg(&chart)
            .arg("-f")
            .arg(&values)
            .args(["--namespace", ns, "--include-crds"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            want.status.success(),
            "{}",
            String::from_utf8_lossy(&want.stderr)
        );
        let got = fs::read(
            repo.path()
                .join(format!("rendered/{env}/status/manifest.yaml")),
        )
        .unwrap();
        if got != want.stdout {
            failures.push(format!("{env}: output differs"));
        }
    }
    assert_none_failed("status chart", &failures);
}
