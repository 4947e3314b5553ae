//! Checks against the shared conformance corpus and the real kustomize.
//! Each test skips (and says so) when `../shared` or the oracle is absent.

use std::fs;
use std::path::Path;

use crate::support::{helm3, hydrate, kubectl, repo, shared};

/// A few expected.yaml files of the kustomize corpus, built as plain
/// resources, print back unchanged (the YAML core's round trip).
#[test]
fn conformance_expected_files_round_trip() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared is not present");
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
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), text, "{name}");
        checked += 1;
    }
    assert!(
        checked >= 3,
        "the corpus changed: only {checked} picked cases exist"
    );
}

/// The demo's overlays build byte-identical to `kubectl kustomize`.
#[test]
fn demo_matches_kubectl() {
    let Some(kubectl) = kubectl() else {
        eprintln!("skipped: ~/.cache/oracles/kubectl is not installed");
        return;
    };
    let apps = repo().join("testdata/apps");
    let mut n = 0;
    for app in fs::read_dir(&apps).unwrap() {
        let overlays = app.unwrap().path().join("overlays");
        // Chart apps have no overlays; demo_chart_matches_helm3 checks them.
        let Ok(envs) = fs::read_dir(&overlays) else {
            continue;
        };
        for env in envs {
            let dir = env.unwrap().path();
            compare_with_kubectl(&kubectl, &dir);
            n += 1;
        }
    }
    assert!(n >= 12);
}

fn compare_with_kubectl(kubectl: &Path, dir: &Path) {
    compare_with_flags(kubectl, dir, &[], &[]);
}

fn compare_with_flags(kubectl: &Path, dir: &Path, theirs: &[&std::ffi::OsStr], ours: &[&str]) {
    let want = std::process::Command::new(kubectl)
        .arg("kustomize")
        .args(theirs)
        .arg(dir)
        .output()
        .unwrap();
    let got = hydrate()
        .args(["kustomize", "build"])
        .args(ours)
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(
        want.status.success(),
        got.status.success(),
        "{}",
        dir.display()
    );
    assert_eq!(
        String::from_utf8_lossy(&got.stdout),
        String::from_utf8_lossy(&want.stdout),
        "{}",
        dir.display()
    );
}

/// The recorded goldens in testdata/kustomize still match the oracle.
#[test]
fn recorded_goldens_match_kubectl() {
    let Some(kubectl) = kubectl() else {
        eprintln!("skipped: ~/.cache/oracles/kubectl is not installed");
        return;
    };
    for case in fs::read_dir(repo().join("testdata/kustomize")).unwrap() {
        compare_with_kubectl(&kubectl, &case.unwrap().path().join("input"));
    }
}

/// The `helmCharts` goldens still match kustomize with helm v3.17.3 as its
/// helm command.
#[test]
fn helm_chart_goldens_match_kubectl_with_helm3() {
    let (Some(kubectl), Some(helm)) = (kubectl(), helm3()) else {
        eprintln!("skipped: ~/.cache/oracles/kubectl or helm3 is not installed");
        return;
    };
    let theirs = [
        std::ffi::OsStr::new("--enable-helm"),
        std::ffi::OsStr::new("--helm-command"),
        helm.as_os_str(),
    ];
    for case in fs::read_dir(repo().join("testdata/helmcharts")).unwrap() {
        let dir = case.unwrap().path().join("input");
        compare_with_flags(&kubectl, &dir, &theirs, &["--enable-helm"]);
    }
}

/// The demo's chart app renders byte-identical to `helm template` (helm
/// v3.17.3) with the same release, namespace and values.
#[test]
fn demo_chart_matches_helm3() {
    let Some(helm) = helm3() else {
        eprintln!("skipped: ~/.cache/oracles/helm3 is not installed");
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
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want.stdout),
            "{env}"
        );
    }
}
