//! Bad configuration, one fixture per case (issue 13, the configuration
//! side): each runs `hydrate render` in `<tmp>/repo` next to
//! `<tmp>/outside`, snapshots the exit code, stdout and stderr (the
//! temporary directory shown as `[TMP]`), and asserts that nothing under
//! `<tmp>` changed unless the case says it may.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{git, hydrate};

const APP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n";
const SECRET: &str =
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2\n";
const SEALED: &str = "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\nspec:\n  encryptedData:\n    password: AgBy\n";

/// A scratch repository: `repo/apps/web` (one ConfigMap) and
/// `outside/app` (a kustomization outside the repository).
struct Case {
    tmp: tempfile::TempDir,
}

impl Case {
    fn new(envs: &[(&str, &str)]) -> Case {
        let c = Case {
            tmp: tempfile::tempdir().unwrap(),
        };
        c.write("repo/apps/web/kustomization.yaml", "resources: [cm.yaml]\n");
        c.write("repo/apps/web/cm.yaml", APP);
        c.write("outside/app/kustomization.yaml", "resources: [cm.yaml]\n");
        c.write("outside/app/cm.yaml", APP);
        c.write("outside/secret.yaml", "password: from-outside\n");
        fs::create_dir_all(c.root().join("environments")).unwrap();
        for (name, text) in envs {
            c.write(&format!("repo/environments/{name}"), text);
        }
        c
    }

    fn root(&self) -> PathBuf {
        self.tmp.path().join("repo")
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.tmp.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// A git repository with one commit on `main`.
    fn git_init(&self) {
        let r = self.root();
        git(&r, &["init", "-q", "-b", "main"]);
        git(&r, &["add", "-A"]);
        git(&r, &["commit", "-q", "-m", "source"]);
    }

    /// Every path under the temporary directory with its content (or
    /// symlink target), `.git` left out.
    fn state(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for e in walkdir::WalkDir::new(self.tmp.path())
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .filter_map(Result::ok)
        {
            let rel = e.path().strip_prefix(self.tmp.path()).unwrap();
            // The render cache keeps what rendered even when the run then
            // fails (as cargo keeps target/): it is not output.
            if rel == Path::new("repo/.hydrate") || rel.starts_with("repo/.hydrate/cache") {
                continue;
            }
            let content = if e.path_is_symlink() {
                fs::read_link(e.path())
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if e.file_type().is_file() {
                fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            out.insert(rel.display().to_string(), content);
        }
        out
    }

    /// Runs `hydrate render --root repo ARGS` with `env` set; returns the
    /// report to snapshot.
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let mut cmd = hydrate();
        cmd.arg("render").arg("--root").arg(self.root()).args(args);
        cmd.env("HYDRATE_AUTHOR", "CI <ci@example.com>")
            .env("HYDRATE_TIMESTAMP", "1700000000");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let tmp = self.tmp.path().display().to_string();
        let real = fs::canonicalize(self.tmp.path())
            .unwrap()
            .display()
            .to_string();
        let clean = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .replace(&real, "[TMP]")
                .replace(&tmp, "[TMP]")
        };
        let code = out.status.code().unwrap_or(-1);
        let text = format!(
            "exit: {code}\n--- stdout\n{}--- stderr\n{}",
            clean(&out.stdout),
            clean(&out.stderr)
        );
        (code, text)
    }

    /// Runs, snapshots, and asserts the exit code and that nothing changed.
    fn refused(&self, name: &str, args: &[&str], env: &[(&str, &str)], code: i32) {
        let before = self.state();
        let (got, text) = self.run(args, env);
        insta::assert_snapshot!(name, text);
        assert_eq!(got, code, "{text}");
        assert_eq!(self.state(), before, "{name} changed files: {text}");
    }
}

fn env_with(extra: &str) -> String {
    format!("name: dev\n{extra}apps:\n- name: web\n  kustomize: apps/web\n")
}

// Item 1/4: every path is confined to the repository root.

#[test]
fn output_dir_parent() {
    let c = Case::new(&[(
        "dev.yaml",
        &env_with("output:\n  dir: ../outside/rendered\n"),
    )]);
    c.refused("output_dir_parent", &[], &[], 2);
}

#[test]
fn output_dir_absolute() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  dir: /var/tmp/rendered\n"))]);
    c.refused("output_dir_absolute", &[], &[], 2);
}

#[cfg(unix)]
#[test]
fn output_dir_symlink_out() {
    let c = Case::new(&[("dev.yaml", &env_with("output: {dir: rendered/dev}\n"))]);
    std::os::unix::fs::symlink(c.tmp.path().join("outside"), c.root().join("rendered")).unwrap();
    c.refused("output_dir_symlink_out", &[], &[], 2);
}

#[test]
fn value_files_absolute() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: chart\n  helm:\n    chart: charts/x\n    valueFiles:\n    - /etc/hostname\n",
    )]);
    c.refused("value_files_absolute", &[], &[], 2);
}

#[test]
fn kustomize_parent() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: web\n  kustomize: ../outside/app\n",
    )]);
    c.refused("kustomize_parent", &[], &[], 2);
}

#[test]
fn chart_parent() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: x\n  helm: {chart: apps/../../outside/chart}\n",
    )]);
    c.refused("chart_parent", &[], &[], 2);
}

#[test]
fn discover_parent() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\ndiscover:\n- kustomize: \"../outside/*\"\n",
    )]);
    c.refused("discover_parent", &[], &[], 2);
}

#[cfg(unix)]
#[test]
fn discover_symlink_out() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\ndiscover:\n- kustomize: \"apps/*\"\n",
    )]);
    std::os::unix::fs::symlink(c.tmp.path().join("outside/app"), c.root().join("apps/evil"))
        .unwrap();
    c.refused("discover_symlink_out", &[], &[], 2);
}

/// The documented opt-out renders a tree outside the root, and writes only
/// its configured output inside the repository.
#[test]
fn allow_outside_opt_out() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\nallowOutside: true\napps:\n- name: web\n  kustomize: ../outside/app\n",
    )]);
    let outside = c
        .state()
        .into_iter()
        .filter(|(k, _)| k.starts_with("outside"));
    let outside: Vec<_> = outside.collect();
    let (code, text) = c.run(&[], &[]);
    insta::assert_snapshot!("allow_outside_opt_out", text);
    assert_eq!(code, 0, "{text}");
    let after: Vec<_> = c
        .state()
        .into_iter()
        .filter(|(k, _)| k.starts_with("outside"))
        .collect();
    assert_eq!(after, outside);
    assert!(c.root().join("rendered/dev/web/manifest.yaml").is_file());
}

// Item 6 (branch names, shared outputs).

macro_rules! bad_branch {
    ($($test:ident: $branch:expr,)*) => {$(
        #[test]
        fn $test() {
            let c = Case::new(&[(
                "dev.yaml",
                &env_with(&format!("output:\n  branch: {}\n", $branch)),
            )]);
            c.refused(stringify!($test), &[], &[], 2);
        }
    )*};
}

// Each branch as YAML text.
bad_branch! {
    branch_lock: "env/x.lock",
    branch_tilde: "x~1",
    branch_colon: "'x:y'",
    branch_trailing_slash: "x/",
    branch_dot_component: "a/.b",
    branch_double_dot: "a..b",
    branch_at_brace: "'a@{1}'",
    branch_control_char: r#""a\x01b""#,
    branch_head: "HEAD",
    branch_refs_prefix: "refs/heads/x",
}

#[test]
fn branch_checked_out() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: main\n"))]);
    c.git_init();
    let head = git(&c.root(), &["rev-parse", "main"]);
    c.refused("branch_checked_out", &[], &[], 2);
    assert_eq!(git(&c.root(), &["rev-parse", "main"]), head);
    assert_eq!(git(&c.root(), &["status", "--porcelain"]), "");
}

/// A branch checked out in a linked worktree (`git worktree add`) is as
/// off-limits as the main checkout's: git itself refuses to move it.
#[test]
fn branch_checked_out_in_another_worktree() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: env/dev\n"))]);
    c.git_init();
    git(
        &c.root(),
        &["worktree", "add", "-q", "-b", "env/dev", "../wt"],
    );
    let head = git(&c.root(), &["rev-parse", "env/dev"]);
    c.refused("branch_checked_out_in_another_worktree", &[], &[], 2);
    assert_eq!(git(&c.root(), &["rev-parse", "env/dev"]), head);
}

/// Run from inside a linked worktree, the main checkout's branch is still
/// refused, named by where it is checked out.
#[test]
fn branch_checked_out_in_the_main_worktree_seen_from_a_linked_one() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: main\n"))]);
    c.git_init();
    git(&c.root(), &["worktree", "add", "-q", "-b", "work", "../wt"]);
    let head = git(&c.root(), &["rev-parse", "main"]);
    let out = hydrate()
        .arg("render")
        .arg("--root")
        .arg(c.tmp.path().join("wt"))
        .env("HYDRATE_AUTHOR", "CI <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("which is checked out in the worktree at"),
        "{stderr}"
    );
    assert_eq!(git(&c.root(), &["rev-parse", "main"]), head);
}

#[test]
fn shared_output_dir() {
    let c = Case::new(&[
        ("a.yaml", "name: a\noutput:\n  dir: rendered/x\napps: []\n"),
        (
            "b.yaml",
            "name: b\noutput:\n  dir: ./rendered/x\napps: []\n",
        ),
    ]);
    c.refused("shared_output_dir", &[], &[], 2);
}

#[test]
fn shared_output_branch() {
    let c = Case::new(&[
        ("a.yaml", "name: a\noutput:\n  branch: env/x\napps: []\n"),
        ("b.yaml", "name: b\noutput:\n  branch: env/x\napps: []\n"),
    ]);
    c.refused("shared_output_branch", &[], &[], 2);
}

// Item 9.

/// Removing every app prunes the environment's output; `--check` sees the
/// stale files first.
#[test]
fn zero_apps_prune() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(c.root().join("rendered/dev/web/manifest.yaml").is_file());
    c.write("repo/environments/dev.yaml", "name: dev\napps: []\n");
    let (code, text) = c.run(&["--check"], &[]);
    insta::assert_snapshot!("zero_apps_check", text);
    assert_eq!(code, 1, "{text}");
    let (code, text) = c.run(&[], &[]);
    insta::assert_snapshot!("zero_apps_prune", text);
    assert_eq!(code, 0, "{text}");
    assert!(!c.root().join("rendered/dev/web/manifest.yaml").exists());
    let (code, text) = c.run(&["--check"], &[]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn second_document() {
    let c = Case::new(&[("dev.yaml", &format!("{}---\nname: other\n", env_with("")))]);
    c.refused("second_document", &[], &[], 2);
}

#[test]
fn empty_environment_file() {
    let c = Case::new(&[("dev.yaml", "# nothing yet\n")]);
    c.refused("empty_environment_file", &[], &[], 2);
}

#[test]
fn empty_environments_dir() {
    let c = Case::new(&[("README.md", "environments go here\n")]);
    c.refused("empty_environments_dir", &[], &[], 2);
}

/// `.YAML` and `.yml` are environment files too (any case).
#[test]
fn upper_case_extension_is_read() {
    let c = Case::new(&[
        ("dev.YAML", &env_with("")),
        ("prod.yml", "name: prod\napps: []\n"),
    ]);
    let (code, text) = c.run(&[], &[]);
    insta::assert_snapshot!("upper_case_extension_is_read", text);
    assert_eq!(code, 0, "{text}");
}

// Item 10.

#[test]
fn timestamp_not_a_number() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    c.refused(
        "timestamp_not_a_number",
        &[],
        &[("HYDRATE_TIMESTAMP", "abc")],
        2,
    );
}

#[test]
fn timestamp_negative() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    c.refused("timestamp_negative", &[], &[("HYDRATE_TIMESTAMP", "-5")], 2);
}

#[test]
fn author_garbage() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    c.refused("author_garbage", &[], &[("HYDRATE_AUTHOR", "garbage")], 2);
}

#[test]
fn empty_commit_message() {
    let c = Case::new(&[("dev.yaml", &env_with("commitMessage: \"\"\n"))]);
    c.refused("empty_commit_message", &[], &[], 2);
}

#[test]
fn commit_message_template_error() {
    let c = Case::new(&[(
        "dev.yaml",
        &env_with("output:\n  branch: env/dev\ncommitMessage: \"{{ nope.x }}\"\n"),
    )]);
    c.git_init();
    let before = git(&c.root(), &["for-each-ref"]);
    let (code, text) = c.run(&[], &[]);
    insta::assert_snapshot!("commit_message_template_error", text);
    assert_eq!(code, 2, "{text}");
    assert_eq!(git(&c.root(), &["for-each-ref"]), before);
}

// Item 12.

#[test]
fn app_listed_twice() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: web\n  kustomize: apps/web\n- name: web\n  kustomize: apps/web\n",
    )]);
    c.refused("app_listed_twice", &[], &[], 2);
}

#[test]
fn json_output_on_failure() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: web\n  kustomize: apps/missing\n",
    )]);
    c.refused("json_output_on_failure", &["--output", "json"], &[], 2);
}

#[test]
fn unknown_env_is_usage() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    c.refused("unknown_env_is_usage", &["--env", "nope"], &[], 2);
}

#[test]
fn unknown_app_is_usage() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    c.refused("unknown_app_is_usage", &["--app", "nope"], &[], 2);
}

// Part 4: the secret and determinism guards.

fn with_resource(c: &Case, doc: &str) {
    c.write(
        "repo/apps/web/kustomization.yaml",
        "resources: [cm.yaml, extra.yaml]\n",
    );
    c.write("repo/apps/web/extra.yaml", doc);
}

#[test]
fn secret_refused_on_branch() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: env/dev\n"))]);
    with_resource(&c, SECRET);
    c.git_init();
    let before = git(&c.root(), &["for-each-ref"]);
    c.refused("secret_refused_on_branch", &[], &[], 2);
    assert_eq!(git(&c.root(), &["for-each-ref"]), before);
}

#[test]
fn sealed_secret_passes_on_branch() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: env/dev\n"))]);
    with_resource(&c, SEALED);
    c.git_init();
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
    let m = git(&c.root(), &["show", "env/dev:web/manifest.yaml"]);
    assert!(m.contains("kind: SealedSecret"), "{m}");
}

#[test]
fn secret_masked() {
    let c = Case::new(&[("dev.yaml", &env_with("secrets: mask\n"))]);
    with_resource(&c, SECRET);
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
    let m = fs::read_to_string(c.root().join("rendered/dev/web/manifest.yaml")).unwrap();
    insta::assert_snapshot!("secret_masked", m);
    assert!(!m.contains("hunter2"));
}

fn random_chart(c: &Case) {
    c.write(
        "repo/charts/r/Chart.yaml",
        "apiVersion: v2\nname: r\nversion: 0.1.0\n",
    );
    c.write(
        "repo/charts/r/templates/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\ndata:\n  token: {{ randAlphaNum 8 | quote }}\n",
    );
}

#[test]
fn strict_flag_refuses_rand() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: r\n  helm: {chart: charts/r}\n",
    )]);
    random_chart(&c);
    c.refused("strict_flag_refuses_rand", &["--strict"], &[], 2);
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "without --strict it is a warning: {text}");
}

#[test]
fn strict_environment_refuses_rand() {
    let c = Case::new(&[(
        "dev.yaml",
        "name: dev\nstrict: true\napps:\n- name: r\n  helm: {chart: charts/r}\n",
    )]);
    random_chart(&c);
    c.refused("strict_environment_refuses_rand", &[], &[], 2);
}

// Item 5: helm refuses an alias that is not `^[a-zA-Z0-9_-]+$` when it
// loads the chart, before `--output-dir` could write through it.
#[test]
fn helm_alias_with_path() {
    let c = Case::new(&[]);
    c.write(
        "repo/chart/Chart.yaml",
        "apiVersion: v2\nname: top\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  alias: ../../../ESCAPED\n",
    );
    c.write(
        "repo/chart/charts/sub/Chart.yaml",
        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    );
    c.write("repo/chart/charts/sub/templates/cm.yaml", APP);
    let before = c.state();
    let out = hydrate()
        .current_dir(c.root())
        .args(["helm", "template", "x", "chart", "--output-dir", "out"])
        .output()
        .unwrap();
    let text = format!(
        "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("helm_alias_with_path", text);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(c.state(), before, "{text}");
}

/// The same on a branch: the next commit removes the app's files, and
/// `--check` reports them first.
#[test]
fn zero_apps_prune_branch() {
    let c = Case::new(&[("dev.yaml", &env_with("output:\n  branch: env/dev\n"))]);
    c.git_init();
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
    let files = |c: &Case| git(&c.root(), &["ls-tree", "-r", "--name-only", "env/dev"]);
    assert!(files(&c).contains("web/manifest.yaml"));
    c.write(
        "repo/environments/dev.yaml",
        "name: dev\noutput:\n  branch: env/dev\napps: []\n",
    );
    git(&c.root(), &["commit", "-qam", "remove web"]);
    let (code, text) = c.run(&["--check"], &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("extra: web/manifest.yaml"), "{text}");
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(!files(&c).contains("web/"), "{}", files(&c));
    let (code, text) = c.run(&["--check"], &[]);
    assert_eq!(code, 0, "{text}");
}

/// Runs hydrate in the repository with `args`; the report to snapshot.
fn run_in_repo(c: &Case, args: &[&str]) -> (i32, String) {
    let out = hydrate().current_dir(c.root()).args(args).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let text = format!(
        "exit: {code}\n--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (code, text)
}

// Item 11: kustomize's `-o FILE` creates no directories (`os.Create`).
#[test]
fn kustomize_output_missing_parent() {
    let c = Case::new(&[]);
    let before = c.state();
    let (code, text) = run_in_repo(
        &c,
        &[
            "kustomize",
            "build",
            "apps/web",
            "-o",
            "missing/nested/out.yaml",
        ],
    );
    insta::assert_snapshot!("kustomize_output_missing_parent", text);
    assert_eq!(code, 1, "{text}");
    assert_eq!(c.state(), before, "{text}");
}

#[test]
fn kustomize_output_under_a_file() {
    let c = Case::new(&[]);
    c.write("repo/out.yaml", "keep\n");
    let before = c.state();
    let (code, text) = run_in_repo(
        &c,
        &["kustomize", "build", "apps/web", "-o", "out.yaml/x.yaml"],
    );
    insta::assert_snapshot!("kustomize_output_under_a_file", text);
    assert_eq!(code, 1, "{text}");
    assert_eq!(c.state(), before, "{text}");
}

// helm's `--output-dir` creates what is missing (`os.MkdirAll` in
// `writeToFile`), nested directories too.
#[test]
fn helm_output_dir_missing_is_created() {
    let c = Case::new(&[]);
    c.write(
        "repo/chart/Chart.yaml",
        "apiVersion: v2\nname: ch\nversion: 0.1.0\n",
    );
    c.write("repo/chart/templates/cm.yaml", APP);
    let (code, text) = run_in_repo(
        &c,
        &[
            "helm",
            "template",
            "x",
            "chart",
            "--output-dir",
            "missing/nested",
        ],
    );
    insta::assert_snapshot!("helm_output_dir_missing_is_created", text);
    assert_eq!(code, 0, "{text}");
    let written = c.root().join("missing/nested/ch/templates/cm.yaml");
    assert_eq!(
        fs::read_to_string(written).unwrap(),
        format!("---\n# Source: ch/templates/cm.yaml\n{APP}")
    );
}

/// A kustomization with a deprecated field that then fails to build.
fn deprecated_then_broken(c: &Case) {
    c.write(
        "repo/apps/web/kustomization.yaml",
        "resources: [cm.yaml, missing.yaml]\npatchesStrategicMerge: [p.yaml]\n",
    );
    c.write("repo/apps/web/p.yaml", APP);
}

// Item 12: the deprecation warning is printed before the build's error.
#[test]
fn warning_kept_when_build_fails() {
    let c = Case::new(&[]);
    deprecated_then_broken(&c);
    let before = c.state();
    let (code, text) = run_in_repo(&c, &["kustomize", "build", "apps/web"]);
    let text = text.replace(&c.root().display().to_string(), "[REPO]");
    insta::assert_snapshot!("warning_kept_when_build_fails", text);
    assert_eq!(code, 1, "{text}");
    assert_eq!(c.state(), before, "{text}");
}

#[test]
fn warning_kept_when_render_fails() {
    let c = Case::new(&[("dev.yaml", &env_with(""))]);
    deprecated_then_broken(&c);
    c.refused("warning_kept_when_render_fails", &[], &[], 2);
}

/// A chart whose one template calls `call`.
fn chart_calling(c: &Case, call: &str) {
    c.write(
        "repo/charts/r/Chart.yaml",
        "apiVersion: v2\nname: r\nversion: 0.1.0\n",
    );
    c.write(
        "repo/charts/r/templates/cm.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r\ndata:\n  v: {{{{ {call} | toString | quote }}}}\n"
        ),
    );
}

fn chart_env() -> Case {
    Case::new(&[(
        "dev.yaml",
        "name: dev\napps:\n- name: r\n  helm: {chart: charts/r}\n",
    )])
}

// `lookup` has no cluster offline: it warns, and `--strict` refuses it.
#[test]
fn strict_flag_refuses_lookup() {
    let c = chart_env();
    chart_calling(&c, r#"lookup "v1" "Secret" "ns" "db""#);
    c.refused("strict_flag_refuses_lookup", &["--strict"], &[], 2);
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "without --strict it is a warning: {text}");
    assert!(
        text.contains("warning[non-determinism]") && text.contains("lookup"),
        "{text}"
    );
}

#[test]
fn strict_flag_refuses_htpasswd() {
    let c = chart_env();
    chart_calling(&c, r#"htpasswd "user" "pass""#);
    c.refused("strict_flag_refuses_htpasswd", &["--strict"], &[], 2);
}

/// An environment whose app `web` declares the file pin `file`.
fn env_with_pin(file: &str) -> String {
    format!(
        "name: dev\napps:\n- name: web\n  kustomize: apps/web\n  pins:\n  - image.tag\n  - {{file: \"{file}\", path: data.a}}\n"
    )
}

// Item 4: pin files (`promote` reads and edits them) stay in the repository.
#[test]
fn pin_file_parent() {
    let c = Case::new(&[("dev.yaml", &env_with_pin("../outside/secret.yaml"))]);
    c.refused("pin_file_parent", &[], &[], 2);
}

#[test]
fn pin_file_absolute() {
    let c = Case::new(&[("dev.yaml", &env_with_pin("/etc/hostname"))]);
    c.refused("pin_file_absolute", &[], &[], 2);
}

#[test]
fn pin_file_dir_escape() {
    let c = Case::new(&[(
        "dev.yaml",
        &env_with_pin("{dir}/../../../outside/secret.yaml"),
    )]);
    c.refused("pin_file_dir_escape", &[], &[], 2);
}

#[test]
fn pin_file_inside_is_accepted() {
    let c = Case::new(&[("dev.yaml", &env_with_pin("{dir}/cm.yaml"))]);
    let (code, text) = c.run(&[], &[]);
    assert_eq!(code, 0, "{text}");
}
