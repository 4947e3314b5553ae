//! The recorded compatibility goldens, one test case per fixture so that
//! every failing fixture shows at once: `testdata/kustomize/<case>/input`
//! builds to `expected.yaml` (recorded with kustomize v5.7.1), and
//! `testdata/helmcharts/<case>/input` does with `--enable-helm` (recorded
//! with helm v3.17.3 as kustomize's helm command); `testdata/helm/<case>`
//! holds a `chart` that `helm template rel chart` prints as
//! `expected.helm3.yaml` (v3.17.3) and `expected.helm4.yaml` (v4.1.4,
//! `--helm-version 4`), or fails with `expected-error.helmN.txt` on stderr
//! (exit code 1); an `args` file adds arguments, one a line. The goldens are byte
//! equality files from the real tools, not snapshots: never re-record them
//! from hydrate's output. Where the oracles are installed, each golden is
//! also checked against them again.

use std::fs;
use std::path::PathBuf;

use crate::support::{hydrate, need, repo, Need};

/// One module per fixture, each with its golden test and its oracle check;
/// `FIXTURES` lists them so that `every_fixture_has_a_test` can fail when a
/// directory is added without a line here.
macro_rules! goldens {
    ($($name:ident => $suite:literal / $case:literal,)*) => {
        const FIXTURES: &[(&str, &str)] = &[$(($suite, $case)),*];
        $(
            mod $name {
                #[test]
                fn builds_to_expected() {
                    super::builds_to_expected($suite, $case);
                }

                #[test]
                fn expected_matches_the_oracle() {
                    super::expected_matches_the_oracle($suite, $case);
                }
            }
        )*
    };
}

goldens! {
    kustomize_components => "kustomize" / "components",
    kustomize_field_path_leading_separator => "kustomize" / "field-path-leading-separator",
    kustomize_generator_without_sources => "kustomize" / "generator-without-sources",
    kustomize_folded_more_indented => "kustomize" / "folded-more-indented",
    kustomize_generators => "kustomize" / "generators",
    kustomize_json6902_evanphx_v4 => "kustomize" / "json6902-evanphx-v4",
    kustomize_patches => "kustomize" / "patches",
    kustomize_plugins_vars_replacements => "kustomize" / "plugins-vars-replacements",
    kustomize_quoting_and_folding => "kustomize" / "quoting-and-folding",
    kustomize_scalars => "kustomize" / "scalars",
    helmcharts_files_and_flags => "helmcharts" / "files-and-flags",
    helmcharts_inline_values => "helmcharts" / "inline-values",
    helmcharts_overlay => "helmcharts" / "overlay",
    helmcharts_plugin_config => "helmcharts" / "plugin-config",
    helmcharts_subcharts => "helmcharts" / "subcharts",
    helm_alias_version_mismatch => "helm" / "alias-version-mismatch",
    helm_builtin_objects_printed => "helm" / "builtin-objects-printed",
    helm_chart_object_marshalled => "helm" / "chart-object-marshalled",
    helm_dependency_aliased_several_times => "helm" / "dependency-aliased-several-times",
    helm_from_toml_bad_key => "helm" / "from-toml-bad-key",
    helm_from_toml_duplicate_key => "helm" / "from-toml-duplicate-key",
    helm_from_toml_eof_key_separator => "helm" / "from-toml-eof-key-separator",
    helm_from_toml_expected_equals => "helm" / "from-toml-expected-equals",
    helm_from_toml_invalid_value => "helm" / "from-toml-invalid-value",
    helm_from_toml_unterminated_string => "helm" / "from-toml-unterminated-string",
    helm_nested_subcharts_order => "helm" / "nested-subcharts-order",
    helm_values_changed_in_place => "helm" / "values-changed-in-place",
    helm_to_date_multibyte => "helm" / "to-date-multibyte",
    helm_show_only_no_braces => "helm" / "show-only-no-braces",
    helm_show_only_go_match => "helm" / "show-only-go-match",
    helm_scope_shared_by_templates => "helm" / "scope-shared-by-templates",
    helm_helmignore_rules => "helm" / "helmignore-rules",
}

fn case_dir(suite: &str, case: &str) -> PathBuf {
    repo().join("testdata").join(suite).join(case)
}

/// `hydrate kustomize build` prints the recorded `expected.yaml`; for the
/// `helm` suite, `hydrate helm template rel chart` prints each helm
/// version's recorded output.
fn builds_to_expected(suite: &str, case: &str) {
    let dir = case_dir(suite, case);
    if suite == "helm" {
        for (version, flags) in HELM_MODES {
            let out = hydrate()
                .current_dir(&dir)
                .args(["helm", "template", "rel", "chart"])
                .args(extra_args(&dir))
                .args(*flags)
                .output()
                .unwrap();
            if let Some(error) = expected_error(&dir, version) {
                assert_eq!(out.status.code(), Some(1), "{case} ({version}): exit code");
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr),
                    error,
                    "{case} ({version})"
                );
                continue;
            }
            let expected =
                fs::read_to_string(dir.join(format!("expected.{version}.yaml"))).unwrap();
            assert!(
                out.status.success(),
                "{case} ({version}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                expected,
                "{case} ({version})"
            );
        }
        return;
    }
    let expected = fs::read_to_string(dir.join("expected.yaml")).unwrap();
    let flags: &[&str] = match suite {
        "helmcharts" => &["--enable-helm"],
        _ => &[],
    };
    let out = hydrate()
        .args(["kustomize", "build"])
        .args(flags)
        .arg(dir.join("input"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{suite}/{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        expected,
        "{suite}/{case}"
    );
}

/// The recorded `expected.yaml` is still what `kubectl kustomize` prints
/// (with helm v3.17.3 as its helm command for the `helmCharts` fixtures).
fn expected_matches_the_oracle(suite: &str, case: &str) {
    if suite == "helm" {
        helm_expected_matches_the_oracles(case);
        return;
    }
    let Some(kubectl) = need(Need::Kubectl) else {
        return;
    };
    let mut cmd = std::process::Command::new(kubectl);
    cmd.arg("kustomize");
    if suite == "helmcharts" {
        let Some(helm) = need(Need::Helm3) else {
            return;
        };
        cmd.arg("--enable-helm").arg("--helm-command").arg(helm);
    }
    let dir = case_dir(suite, case);
    let want = cmd.arg(dir.join("input")).output().unwrap();
    assert!(
        want.status.success(),
        "{suite}/{case}: {}",
        String::from_utf8_lossy(&want.stderr)
    );
    let expected = fs::read_to_string(dir.join("expected.yaml")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&want.stdout),
        expected,
        "{suite}/{case}: the oracle no longer prints the recorded golden"
    );
}

/// The `helm` suite's modes: the recorded file's version and hydrate's flags.
const HELM_MODES: &[(&str, &[&str])] = &[("helm3", &[]), ("helm4", &["--helm-version", "4"])];

/// A `helm` fixture's `args` file: more arguments after `template rel
/// chart`, one a line (none when absent).
fn extra_args(dir: &std::path::Path) -> Vec<String> {
    fs::read_to_string(dir.join("args"))
        .map(|a| a.lines().map(String::from).collect())
        .unwrap_or_default()
}

/// A `helm` fixture's `expected-error.helmN.txt`: that helm's stderr when it
/// fails (exit code 1); hydrate must print the same and exit the same.
fn expected_error(dir: &std::path::Path, version: &str) -> Option<String> {
    fs::read_to_string(dir.join(format!("expected-error.{version}.txt"))).ok()
}

/// Each recorded `expected.helmN.yaml` is still what that helm prints.
fn helm_expected_matches_the_oracles(case: &str) {
    let dir = case_dir("helm", case);
    for (version, need_it) in [("helm3", Need::Helm3), ("helm4", Need::Helm4)] {
        let Some(helm) = need(need_it) else {
            continue;
        };
        let want = std::process::Command::new(helm)
            .current_dir(&dir)
            .args(["template", "rel", "chart"])
            .args(extra_args(&dir))
            .output()
            .unwrap();
        if let Some(error) = expected_error(&dir, version) {
            assert_eq!(want.status.code(), Some(1), "{case} ({version}): exit code");
            assert_eq!(
                String::from_utf8_lossy(&want.stderr),
                error,
                "{case}: {version} no longer fails as recorded"
            );
            continue;
        }
        assert!(
            want.status.success(),
            "{case} ({version}): {}",
            String::from_utf8_lossy(&want.stderr)
        );
        let expected = fs::read_to_string(dir.join(format!("expected.{version}.yaml"))).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&want.stdout),
            expected,
            "{case}: {version} no longer prints the recorded golden"
        );
    }
}

/// Every fixture directory has its test cases above, and every listed
/// fixture exists.
#[test]
fn every_fixture_has_a_test() {
    let mut on_disk = Vec::new();
    for suite in ["kustomize", "helmcharts", "helm"] {
        for e in fs::read_dir(repo().join("testdata").join(suite)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            on_disk.push(format!("{suite}/{name}"));
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = FIXTURES.iter().map(|(s, c)| format!("{s}/{c}")).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "add each fixture to goldens! in tests/goldens.rs"
    );
}
