//! hydrate run under the names `helm` and `kustomize` (a symlink, as users
//! install it), by the real clients that shell out to those binaries.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{hydrate, need, repo, Need};

/// A fresh directory holding a symlink named `name` to the hydrate binary.
fn symlink_named(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hydrate"), &link).unwrap();
    (dir, link)
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// kustomize v5.7.1 runs `helm version -c --short`, then `helm template`
/// (with `--generate-name` for a chart without a release name) through
/// `--helm-command`: with a symlink named `helm` to hydrate, every
/// testdata/helmcharts case prints its recorded golden byte for byte.
#[test]
#[cfg_attr(
    not(has_kubectl),
    ignore = "needs kubectl under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn kubectl_kustomize_runs_hydrate_as_its_helm() {
    let kubectl = need(Need::Kubectl);
    let (_dir, helm) = symlink_named("helm");
    let root = repo().join("testdata/helmcharts");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "{cases:?}");
    let mut generate_name = false;
    for case in &cases {
        let kustomization =
            std::fs::read_to_string(find_kustomization(&case.join("input"))).unwrap_or_default();
        generate_name |= !kustomization.contains("releaseName");
        let got = stdout_of(
            Command::new(&kubectl)
                .args(["kustomize", "--enable-helm", "--helm-command"])
                .arg(&helm)
                .arg(case.join("input")),
        );
        let want = std::fs::read_to_string(case.join("expected.yaml")).unwrap();
        assert!(
            got == want,
            "{}: kustomize's output differs from the golden",
            case.display()
        );
    }
    assert!(generate_name, "no case has a chart without a release name");
}

/// The case's top kustomization file.
fn find_kustomization(dir: &Path) -> PathBuf {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_name() == "kustomization.yaml")
        .map(walkdir::DirEntry::into_path)
        .unwrap_or_else(|| dir.join("kustomization.yaml"))
}

/// `helm version --short` and `-c --short` through a symlink named `helm`
/// print helm 3.17.3's string (recorded).
#[test]
fn helm_symlink_prints_helm3_version() {
    let (_dir, helm) = symlink_named("helm");
    for args in [&["version", "--short"][..], &["version", "-c", "--short"]] {
        let got = stdout_of(Command::new(&helm).args(args));
        assert_eq!(got, "v3.17.3+ge4da497\n", "{args:?}");
    }
}

/// The `helm version` forms above, `--template '{{.Version}}'` included,
/// print what helm 3.17.3 itself prints.
#[test]
#[cfg_attr(
    not(has_helm3),
    ignore = "needs helm3 under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn helm_symlink_version_is_the_oracles() {
    let (_dir, helm) = symlink_named("helm");
    let oracle = need(Need::Helm3);
    for args in [
        &["version", "--short"][..],
        &["version", "-c", "--short"],
        &["version", "--template", "{{.Version}}"],
    ] {
        let got = stdout_of(Command::new(&helm).args(args));
        assert_eq!(got, stdout_of(Command::new(&oracle).args(args)), "{args:?}");
    }
}

/// `kustomize build DIR` through a symlink named `kustomize` is
/// `hydrate kustomize build DIR`.
#[test]
fn kustomize_symlink_is_hydrate_kustomize() {
    let (_dir, kustomize) = symlink_named("kustomize");
    let case = repo().join("testdata/helmcharts/inline-values/input");
    let via_link = stdout_of(
        Command::new(&kustomize)
            .args(["build", "--enable-helm"])
            .arg(&case),
    );
    let direct = hydrate()
        .args(["kustomize", "build", "--enable-helm"])
        .arg(&case)
        .output()
        .unwrap();
    assert!(direct.status.success());
    assert_eq!(via_link, String::from_utf8(direct.stdout).unwrap());
    assert!(via_link.contains("kind: "), "{via_link}");
}

/// Flags that need the network or another program are refused, saying why.
#[test]
fn offline_refusals_name_the_flag() {
    let chart = repo().join("testdata/helmcharts/inline-values/input/charts/demo");
    for flag in ["--post-renderer=./x", "--verify"] {
        let out = hydrate()
            .args(["helm", "template", flag])
            .arg(&chart)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(
            err.contains(flag.split('=').next().unwrap()) && err.contains("offline"),
            "{err}"
        );
    }
    let out = hydrate()
        .args(["kustomize", "build", "--enable-alpha-plugins"])
        .arg(repo().join("testdata/helmcharts/inline-values/input"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--enable-alpha-plugins"));
}

/// Cluster-only flags are accepted and change nothing.
#[test]
fn cluster_flags_are_ignored() {
    let chart = repo().join("testdata/helmcharts/inline-values/input/charts/demo");
    let plain = hydrate()
        .args(["helm", "template", "r"])
        .arg(&chart)
        .output()
        .unwrap();
    let flagged = hydrate()
        .args([
            "helm",
            "template",
            "r",
            "--atomic",
            "--wait",
            "--timeout",
            "1m",
        ])
        .args([
            "--kube-context",
            "x",
            "--create-namespace",
            "--dry-run=client",
            "-l",
            "a=b",
        ])
        .arg(&chart)
        .output()
        .unwrap();
    assert!(plain.status.success() && flagged.status.success());
    assert_eq!(plain.stdout, flagged.stdout);
}

/// `kustomize build -o DIR` writes one file per resource, named as
/// kustomize names them (recorded from kubectl v1.35.2 / kustomize v5.7.1):
/// namespace prefixes when namespaced resources span namespaces.
#[test]
fn kustomize_output_dir_writes_one_file_per_resource() {
    let dir = tempfile::tempdir().unwrap();
    let (src, out) = (dir.path().join("src"), dir.path().join("out"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(src.join("kustomization.yaml"), "resources: [r.yaml]\n").unwrap();
    std::fs::write(
        src.join("r.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: A, namespace: one}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n\
         apiVersion: v1\nkind: Namespace\nmetadata: {name: Two}\n---\n\
         apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cr}\n",
    )
    .unwrap();
    hydrate()
        .args(["kustomize", "build", "-o"])
        .arg(&out)
        .arg(&src)
        .assert()
        .success();
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "default_v1_configmap_b.yaml",
            "one_v1_configmap_a.yaml",
            "rbac.authorization.k8s.io_v1_clusterrole_cr.yaml",
            "v1_namespace_two.yaml",
        ]
    );
    let a = std::fs::read_to_string(out.join("one_v1_configmap_a.yaml")).unwrap();
    assert_eq!(
        a,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: A\n  namespace: one\n"
    );
}

/// cobra reads helm's global flags before the subcommand too; helmfile
/// runs `helm --kube-context x template ...` and `helm --debug template`.
#[test]
fn global_flags_before_the_subcommand() {
    let (_dir, helm) = symlink_named("helm");
    let chart = repo().join("testdata/helmcharts/inline-values/input/charts/demo");
    let after = stdout_of(
        Command::new(&helm)
            .args(["template", "r", "-n", "ns"])
            .arg(&chart),
    );
    for before in [
        &["--debug", "-n", "ns", "--kube-context", "x"][..],
        &["--namespace=ns", "--kubeconfig", "/nowhere"],
        &["-nns", "--kube-insecure-skip-tls-verify"],
    ] {
        let got = stdout_of(
            Command::new(&helm)
                .args(before)
                .args(["template", "r"])
                .arg(&chart),
        );
        assert_eq!(got, after, "{before:?}");
    }
    let v = stdout_of(Command::new(&helm).args(["-n", "ns", "--debug", "version", "--short"]));
    assert_eq!(v, "v3.17.3+ge4da497\n");
    // A flag helm does not have is still refused, before or after, with
    // helm's exit code.
    let bad = Command::new(&helm)
        .args(["--bogus", "template", "r"])
        .arg(&chart)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

/// `helm version --template '{{.Version}}'` prints the bare version with
/// no newline, as helm 3.17.3 does.
#[test]
fn version_template_prints_the_bare_version() {
    let (_dir, helm) = symlink_named("helm");
    let args = ["version", "--template", "{{.Version}}"];
    let got = stdout_of(Command::new(&helm).args(args));
    assert_eq!(got, "v3.17.3");
}

/// `kustomize version` through a symlink named `kustomize`, in each of
/// v5.7.1's formats (`kustomize/commands/version`): the bare semver, the
/// deprecated `--short` struct, `-o yaml` and `-o json` provenance, and
/// `--short` with `-o` refused.
#[test]
fn kustomize_version_formats() {
    let (_dir, kustomize) = symlink_named("kustomize");
    let run = |args: &[&str]| {
        Command::new(&kustomize)
            .arg("version")
            .args(args)
            .output()
            .unwrap()
    };
    assert_eq!(
        stdout_of(Command::new(&kustomize).arg("version")),
        "v5.7.1\n"
    );
    let short = run(&["--short"]);
    assert_eq!(
        String::from_utf8_lossy(&short.stdout),
        "{v5.7.1  2025-07-23T12:45:29Z   }\n"
    );
    assert!(String::from_utf8_lossy(&short.stderr).contains("Flag --short has been deprecated"));
    let yaml = stdout_of(Command::new(&kustomize).args(["version", "-o", "yaml"]));
    assert!(
        yaml.starts_with("version: v5.7.1\ngitCommit: 168971a"),
        "{yaml}"
    );
    assert!(
        yaml.contains("\nbuildDate: \"2025-07-23T12:45:29Z\"\n"),
        "{yaml}"
    );
    assert!(yaml.ends_with("goVersion: go1.22.7\n\n"), "{yaml}");
    let json = stdout_of(Command::new(&kustomize).args(["version", "--output", "json"]));
    assert!(
        json.starts_with("{\n  \"version\": \"v5.7.1\",\n  \"gitCommit\": "),
        "{json}"
    );
    assert!(
        json.ends_with(",\n  \"goVersion\": \"go1.22.7\"\n}\n"),
        "{json}"
    );
    let both = run(&["--short", "-o", "json"]);
    assert!(!both.status.success());
    assert!(String::from_utf8_lossy(&both.stderr)
        .contains("--short and --output are mutually exclusive"));
}
