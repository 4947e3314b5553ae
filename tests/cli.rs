//! The command line, driven as a user would: outputs, errors, exit codes.

use std::fs;

use crate::support::{demo_copy, hydrate, list_files, render_at, repo};

/// kustomize's own error without `--enable-helm`; an unvendored chart says
/// how to vendor it; neither writes anything.
#[test]
fn helm_charts_need_the_flag_and_a_vendored_chart() {
    let case = repo().join("testdata/helmcharts/inline-values/input");
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(&case)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("kustomization.yaml") && err.contains("must specify --enable-helm"));
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "helmCharts:\n- name: podinfo\n  repo: https://stefanprodan.github.io/podinfo\n  version: 6.5.0\n",
    )
    .unwrap();
    let target = dir.path().join("out.yaml");
    let out = hydrate()
        .args(["kustomize", "build", "--enable-helm", "-o"])
        .arg(&target)
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("kustomization.yaml:2"), "{err}");
    assert!(err.contains("helm pull --untar --untardir"), "{err}");
    assert!(!target.exists());
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- cm.yaml\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b\n",
    )
    .unwrap();
    let out_file = dir.path().join("out.yaml");
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.path())
        .arg("-o")
        .arg(&out_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cm.yaml:"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out_file.exists(), "nothing may be written on error");
}

#[test]
fn missing_resource_and_unknown_field() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- nope.yaml\n",
    )
    .unwrap();
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.yaml"));

    fs::write(
        dir.path().join("kustomization.yaml"),
        "resourcez:\n- nope.yaml\n",
    )
    .unwrap();
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("kustomization.yaml:1") && err.contains("unknown field \"resourcez\""),
        "{err}"
    );
}

#[test]
fn unsupported_field_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "validators:\n- v.yaml\n",
    )
    .unwrap();
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not supported yet: validators"));
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_usage_exits_2() {
    let out = hydrate()
        .args(["render", "--shard", "sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// kustomize (cobra) exits 1 for a flag value it refuses; so does the drop-in.
#[test]
fn bad_usage_of_a_drop_in_exits_1_as_the_tool_does() {
    let out = hydrate()
        .args(["kustomize", "build", "--reorder", "sideways"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn render_twice_changes_nothing() {
    let repo = demo_copy();
    let out = render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = list_files(&repo.path().join("rendered"));
    assert_eq!(files.len(), 15, "{files:?}");
    assert!(files.contains(&"production/api/manifest.yaml".to_string()));
    let before: Vec<_> = files
        .iter()
        .map(|f| {
            fs::metadata(repo.path().join("rendered").join(f))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    let out = render_at(repo.path()).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("unchanged").count(), 3, "{stdout}");
    let after: Vec<_> = files
        .iter()
        .map(|f| {
            fs::metadata(repo.path().join("rendered").join(f))
                .unwrap()
                .modified()
                .unwrap()
        })
        .collect();
    assert_eq!(before, after, "a second run must not touch any file");
}

#[test]
fn one_failing_app_writes_nothing() {
    let repo = demo_copy();
    let broken = repo.path().join("testdata/apps/api/base/deployment.yaml");
    fs::write(
        &broken,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: [\n",
    )
    .unwrap();
    let out = render_at(repo.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/api:") && err.contains("deployment.yaml:"),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert!(!repo.path().join("rendered").exists());
}

#[test]
fn render_filters_by_env_and_app() {
    let repo = demo_copy();
    let out = render_at(repo.path())
        .args(["--env", "staging", "--app", "web"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        list_files(&repo.path().join("rendered")),
        ["staging/web/manifest.yaml"]
    );
    let out = render_at(repo.path())
        .args(["--env", "qa"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown environment is a usage error"
    );
}

#[test]
fn unknown_environment_key_names_file_and_line() {
    let repo = demo_copy();
    fs::write(
        repo.path().join("environments/dev.yaml"),
        "name: dev\napps:\n  - name: web\n    kustomise: testdata/apps/web/overlays/dev\n",
    )
    .unwrap();
    let out = render_at(repo.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dev.yaml:4") && err.contains("kustomise"),
        "{err}"
    );
}

#[test]
fn per_resource_layout_and_pruning_keep_foreign_files() {
    let repo = demo_copy();
    let env_file = repo.path().join("environments/production.yaml");
    let text = fs::read_to_string(&env_file).unwrap();
    let text = text.replace(
        "output:\n  dir: rendered/production",
        "output:\n  dir: rendered/production\n  layout: resources",
    );
    assert!(
        text.contains("layout: resources"),
        "demo env format changed"
    );
    fs::write(&env_file, &text).unwrap();
    let out = render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prod = repo.path().join("rendered/production");
    let files = list_files(&prod);
    assert!(
        files.iter().all(|f| !f.ends_with("manifest.yaml")),
        "{files:?}"
    );
    assert!(
        files.iter().any(|f| f.starts_with("web/deployment.apps-")),
        "{files:?}"
    );
    let one = fs::read_to_string(
        prod.join(
            files
                .iter()
                .find(|f| f.starts_with("web/deployment.apps-"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(one.starts_with("apiVersion: apps/v1\n") && !one.contains("\n---\n"));

    // A file hydrate did not write survives; a dropped app's files go.
    fs::write(prod.join("web/NOTES.md"), "mine\n").unwrap();
    let text = fs::read_to_string(&env_file).unwrap();
    let start = text
        .find("  - name: redis")
        .expect("redis app in production");
    fs::write(&env_file, &text[..start]).unwrap();
    let out = render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = list_files(&prod);
    assert!(files.iter().all(|f| !f.starts_with("redis/")), "{files:?}");
    assert!(files.contains(&"web/NOTES.md".to_string()));
    assert!(
        !prod.join("redis").exists(),
        "the emptied app directory is removed"
    );
}

#[test]
fn shards_cover_the_plan_and_json_output() {
    let repo = demo_copy();
    let mut all = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let out = render_at(repo.path())
            .args(["--shard", shard, "--output", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for e in v["environments"].as_array().unwrap() {
            all.extend(
                e["changedFiles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| format!("{}/{}", e["env"].as_str().unwrap(), f.as_str().unwrap())),
            );
        }
    }
    all.sort();
    assert_eq!(all.len(), 15, "{all:?}");
    assert_eq!(list_files(&repo.path().join("rendered")), all);
    let bad = render_at(repo.path())
        .args(["--shard", "4/3"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// `helm template --output-dir`: files per template, `wrote` lines, and
/// `--helm-version 4`'s default kube version.
#[test]
fn helm_template_output_dir_and_helm4() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = tmp.path().join("c");
    std::fs::create_dir_all(chart.join("templates")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "kind: ConfigMap\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version }}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = hydrate()
        .current_dir(tmp.path())
        .args([
            "helm",
            "template",
            "rel",
            "c",
            "--helm-version",
            "4",
            "--output-dir",
            "out",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "wrote out/c/templates/cm.yaml\n\n"
    );
    let written = std::fs::read_to_string(tmp.path().join("out/c/templates/cm.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        written,
        "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\ndata:\n  kube: v1.35.0\n"
    );
}

/// A chart directory `c` with this `Chart.yaml` and an empty `templates/`.
fn chart_with(chart_yaml: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("c");
    fs::create_dir_all(chart.join("templates")).unwrap();
    fs::write(chart.join("Chart.yaml"), chart_yaml).unwrap();
    (dir, chart)
}

/// A dependency that is not vendored says which one and how to vendor it;
/// `--validate` is accepted with a note (there is no cluster to ask).
#[test]
fn helm_missing_dependency_and_validate() {
    let (_dir, chart) = chart_with(
        "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n- name: redis\n  version: 17.0.0\n  repository: https://charts.bitnami.com/bitnami\n",
    );
    let out = hydrate()
        .args(["helm", "template", "x"])
        .arg(&chart)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("missing in charts/ directory: redis"), "{err}");
    assert!(
        err.contains("redis 17.0.0 from https://charts.bitnami.com/bitnami"),
        "{err}"
    );
    fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 1.0.0\n",
    )
    .unwrap();
    fs::write(chart.join("templates/cm.yaml"), "kind: ConfigMap\n").unwrap();
    let out = hydrate()
        .args(["helm", "template", "x", "--validate"])
        .arg(&chart)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--validate"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "---\n# Source: c/templates/cm.yaml\nkind: ConfigMap\n"
    );
}

/// Every missing dependency is named at once, in Chart.yaml's order, as
/// helm's CheckDependencies does (recorded with helm 3.17), so a user
/// vendors them all in one go instead of one per run.
#[test]
fn helm_names_every_missing_dependency() {
    let (_dir, chart) = chart_with(
        "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n\
         - {name: redis, version: 17.0.0, repository: https://charts.bitnami.com/bitnami}\n\
         - {name: common, version: 2.0.0, repository: 'file://../common'}\n\
         - {name: pg, version: 1.0.0}\n",
    );
    let out = hydrate()
        .args(["helm", "template", "x"])
        .arg(&chart)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: \
             redis, common, pg\n"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "vendor the dependencies (redis 17.0.0 from https://charts.bitnami.com/bitnami, \
             common 2.0.0 from file://../common) into"
        ),
        "{err}"
    );
}

/// A chart app that fails names the environment, the app and the chart,
/// and no environment is written.
#[test]
fn failing_chart_app_writes_nothing() {
    let repo = demo_copy();
    fs::write(
        repo.path()
            .join("testdata/apps/status/chart/templates/broken.yaml"),
        "kind: ConfigMap\nmetadata:\n  name: {{ .Values.nope.deeper }}\n",
    )
    .unwrap();
    let out = render_at(repo.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("dev/status"), "{err}");
    assert!(err.contains("testdata/apps/status/chart"), "{err}");
    assert!(err.contains("broken.yaml"), "{err}");
    assert!(!repo.path().join("rendered").exists());
}

/// A remote resource (hydrate renders offline) names the entry and says how
/// to vendor it, instead of only "not supported".
#[test]
fn a_remote_resource_says_how_to_vendor_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n- https://github.com/acme/base//deploy?ref=v1\n",
    )
    .unwrap();
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("\"https://github.com/acme/base//deploy?ref=v1\" is a remote resource and hydrate renders offline"),
        "{err}"
    );
    assert!(err.contains("kustomize localize"), "{err}");
}
