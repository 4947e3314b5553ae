//! `hydrate init` on fixture repositories shaped like real ones
//! (`testdata/init/<shape>/repo`): the environment files it writes validate
//! against the schema, and `hydrate render` then writes, for every app,
//! exactly what `kubectl kustomize` / `helm template` printed for the same
//! directory or chart and values (`testdata/init/<shape>/expected`, recorded
//! with tests/scripts/record-init-goldens.sh). And what hydrate says when
//! there is nothing to render.

use std::fs;
use std::path::Path;

use hydrate::yaml::{parse_one, to_json, Resolver};

use hydrate::env::Source;

use crate::support::{copy_tree, hydrate, list_files, need, repo, Need};

/// One test module per shape: init then render, and the goldens against
/// the oracles where installed.
macro_rules! shapes {
    ($($name:ident => $dir:literal,)*) => {
        $(
            mod $name {
                #[test]
                fn init_then_render_prints_the_goldens() {
                    super::init_then_render($dir);
                }

                #[test]
                #[cfg_attr(
                    not(all(has_kubectl, has_helm3)),
                    ignore = "needs kubectl and helm3 under ~/.cache/oracles (../shared/tools/install-oracles)"
                )]
                fn goldens_are_what_the_oracles_print() {
                    super::goldens_are_what_the_oracles_print($dir);
                }
            }
        )*
    };
}

shapes! {
    per_app_overlays => "per-app-overlays",
    flux_apps_base_and_env_dirs => "flux",
    chart_with_values_per_env => "chart-values",
    argocd_application_sets => "argocd",
    argocd_matrix_and_multi_source => "argocd-matrix",
}

/// A copy of `testdata/init/<shape>/repo`.
fn fixture(shape: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &repo().join("testdata/init").join(shape).join("repo"),
        dir.path(),
    );
    dir
}

/// `hydrate ARGS` run in `dir`: (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hydrate().current_dir(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every environment file, each after a `# <path>` line.
fn environments(dir: &Path) -> String {
    let mut all = String::new();
    for f in list_files(&dir.join("environments")) {
        all.push_str(&format!("# environments/{f}\n"));
        all.push_str(&fs::read_to_string(dir.join("environments").join(&f)).unwrap());
    }
    all
}

fn init_then_render(shape: &str) {
    let repo_dir = fixture(shape);
    let dir = repo_dir.path();
    let (code, summary, err) = run_in(dir, &["init"]);
    assert_eq!(code, 0, "{shape}: {err}");
    insta::assert_snapshot!(format!("{shape}_summary"), summary);
    insta::assert_snapshot!(format!("{shape}_environments"), environments(dir));
    let (schemas, index) = crate::schema::validator();
    for f in list_files(&dir.join("environments")) {
        let text = fs::read_to_string(dir.join("environments").join(&f)).unwrap();
        let doc = parse_one(&text, Resolver::V3).unwrap();
        if let Err(e) = schemas.validate(&to_json(&doc), index) {
            panic!("{shape}: environments/{f}: {e}");
        }
    }
    let (code, _, err) = run_in(dir, &["render"]);
    assert_eq!(code, 0, "{shape}: {err}");
    assert_eq!(err, "", "{shape}: render warned");
    let expected = repo().join("testdata/init").join(shape).join("expected");
    let want: Vec<String> = list_files(&expected)
        .iter()
        .map(|f| format!("{}/manifest.yaml", f.trim_end_matches(".yaml")))
        .collect();
    let rendered = dir.join("rendered");
    assert_eq!(list_files(&rendered), want, "{shape}: rendered apps");
    for f in list_files(&expected) {
        let golden = fs::read_to_string(expected.join(&f)).unwrap();
        let app = format!("{}/manifest.yaml", f.trim_end_matches(".yaml"));
        let got = fs::read_to_string(rendered.join(&app)).unwrap();
        assert_eq!(
            got, golden,
            "{shape}: {app} differs from the recorded golden {f}"
        );
    }
}

/// Each recorded golden is still what `kubectl kustomize DIR` or
/// `helm template RELEASE CHART -f VALUES --namespace NS --include-crds`
/// prints for the directory or chart the environment files written by
/// `hydrate init` name.
fn goldens_are_what_the_oracles_print(shape: &str) {
    let (kubectl, helm) = (need(Need::Kubectl), need(Need::Helm3));
    let repo_dir = fixture(shape);
    let dir = repo_dir.path();
    assert_eq!(run_in(dir, &["init"]).0, 0);
    let expected = repo().join("testdata/init").join(shape).join("expected");
    let mut seen = Vec::new();
    for e in hydrate::env::load_environments(dir).unwrap() {
        for a in &e.apps {
            let mut cmd = match &a.source {
                Source::Kustomize(d) => {
                    let mut c = std::process::Command::new(&kubectl);
                    c.arg("kustomize").arg(d);
                    c
                }
                Source::Helm(c) => {
                    let mut cmd = std::process::Command::new(&helm);
                    cmd.args(["template", &c.release_name])
                        .arg(&c.chart)
                        .args(["--include-crds", "--namespace"])
                        .arg(if c.namespace.is_empty() {
                            "default"
                        } else {
                            &c.namespace
                        });
                    for v in &c.value_files {
                        cmd.arg("-f").arg(v);
                    }
                    cmd
                }
            };
            let out = cmd.current_dir(dir).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let file = format!("{}/{}.yaml", e.name, a.name);
            let golden = fs::read_to_string(expected.join(&file)).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                golden,
                "{shape}: {file}"
            );
            seen.push(file);
        }
    }
    seen.sort();
    assert_eq!(seen, list_files(&expected), "{shape}");
}

/// `hydrate list` shows what the written files resolve to (discover
/// globs expanded), as a table and as JSON.
#[test]
fn list_expands_discover_globs() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    assert_eq!(run_in(dir, &["init"]).0, 0);
    let (code, table, _) = run_in(dir, &["apps"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("list_table", table);
    let (code, json, _) = run_in(dir, &["list", "--env", "dev", "--output", "json"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("list_json", json);
}

/// An existing environments/ is never overwritten without --force; with it
/// the diff is printed first and files init does not write are left alone;
/// --dry-run writes nothing.
#[test]
fn existing_environments_are_kept_unless_forced() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    fs::create_dir(dir.join("environments")).unwrap();
    let mine = "name: dev\napps:\n  - name: web\n    kustomize: apps/web/overlays/dev\n";
    fs::write(dir.join("environments/dev.yaml"), mine).unwrap();
    fs::write(dir.join("environments/notes.txt"), "mine\n").unwrap();
    let (code, _, err) = run_in(dir, &["init"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("already holds hydrate environment files (environments/dev.yaml)")
            && err.contains("never overwrites them"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(dir.join("environments/dev.yaml")).unwrap(),
        mine
    );
    let (code, out, _) = run_in(dir, &["init", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(out.contains("+discover:"), "{out}");
    assert_eq!(
        list_files(&dir.join("environments")),
        ["dev.yaml", "notes.txt"]
    );
    let (code, out, err) = run_in(dir, &["init", "--force"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("force_diff", out);
    assert_eq!(
        list_files(&dir.join("environments")),
        ["dev.yaml", "notes.txt", "production.yaml", "staging.yaml"]
    );
    assert_eq!(
        fs::read_to_string(dir.join("environments/notes.txt")).unwrap(),
        "mine\n"
    );
}

/// No environments/: the error says what hydrate reads and suggests init.
#[test]
fn empty_repository_suggests_init() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run_in(dir.path(), &["render"]);
    assert_eq!((code, out.as_str()), (2, ""));
    insta::assert_snapshot!("empty_repository", err);
    assert_eq!(run_in(dir.path(), &["list"]).2, err);
    let (code, _, err) = run_in(dir.path(), &["init"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("init_finds_nothing", err);
    assert!(!dir.path().join("environments").exists());
}

/// An environment without apps warns, naming the file and line.
#[test]
fn environment_without_apps_warns() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("environments")).unwrap();
    fs::write(
        dir.path().join("environments/dev.yaml"),
        "# nothing yet\nname: dev\noutput:\n  dir: rendered/dev\napps: []\n",
    )
    .unwrap();
    let (code, out, err) = run_in(dir.path(), &["render"]);
    assert_eq!(code, 0, "{err}");
    // The environment is still written: its output emptied.
    assert_eq!(
        out,
        "dev: 0 apps, 0 resources, 0 bytes -> rendered/dev: unchanged\n"
    );
    insta::assert_snapshot!("environment_without_apps", err);
}

/// A discover glob that matches nothing warns, naming the file and line.
#[test]
fn glob_matching_nothing_warns() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    fs::create_dir(dir.join("environments")).unwrap();
    fs::write(
        dir.join("environments/dev.yaml"),
        "name: dev\ndiscover:\n  - kustomize: apps/*/overlays/{env}\n  - kustomize: services/*/overlays/{env}\n",
    )
    .unwrap();
    let (code, out, err) = run_in(dir, &["render"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("dev: 2 apps"), "{out}");
    insta::assert_snapshot!("glob_matching_nothing", err);
}

/// A common layout keeps per-environment values in environments/ (a
/// directory per environment, or `<env>.yaml` values): init writes beside
/// them, says what it left alone, never touches them, and loading skips
/// them (a YAML mapping with none of name/apps/discover/promotesTo).
#[test]
fn values_in_environments_are_written_beside_and_skipped_when_loading() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    let envs = dir.join("environments");
    fs::create_dir_all(envs.join("dev")).unwrap();
    let dev_values = "replicaCount: 1\nimage:\n  tag: 1.0.0\n";
    let staging_values = "# staging values\nreplicaCount: 2\nresources:\n  limits: {cpu: 500m}\n";
    fs::write(envs.join("dev/values.yaml"), dev_values).unwrap();
    fs::write(envs.join("staging.yaml"), staging_values).unwrap();
    fs::write(envs.join("hosts.yml"), "- a.example\n- b.example\n").unwrap();
    let (code, out, err) = run_in(dir, &["init"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "wrote environments/dev.yaml",
        "wrote environments/production.yaml",
        "wrote environments/staging.hydrate.yaml",
        "left alone environments/dev (a directory; hydrate reads only the files at the top of environments/)",
        "left alone environments/hosts.yml (not a hydrate environment file",
        "left alone environments/staging.yaml (not a hydrate environment file",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert_eq!(
        fs::read_to_string(envs.join("dev/values.yaml")).unwrap(),
        dev_values
    );
    assert_eq!(
        fs::read_to_string(envs.join("staging.yaml")).unwrap(),
        staging_values
    );
    let staging = fs::read_to_string(envs.join("staging.hydrate.yaml")).unwrap();
    assert!(staging.contains("name: staging\n"), "{staging}");
    // Loading reads the three hydrate files and skips the rest.
    let (code, out, err) = run_in(dir, &["render", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("dev: 2 apps") && out.contains("\nstaging: 2 apps"),
        "{out}"
    );
    // Run again: the directory now holds hydrate's files, which init does
    // not overwrite without --force.
    let (code, _, err) = run_in(dir, &["init"]);
    assert_eq!(code, 2);
    assert!(err.contains("environments/staging.hydrate.yaml"), "{err}");
}

/// A hydrate file with a typo is still read, and its error names the file
/// and line: only a file that is plainly something else is skipped.
#[test]
fn a_misspelt_environment_file_is_an_error_not_skipped() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    fs::create_dir(dir.join("environments")).unwrap();
    fs::write(
        dir.join("environments/dev.yaml"),
        "name: dev\naps:\n  - name: web\n    kustomize: apps/web/overlays/dev\n",
    )
    .unwrap();
    fs::write(dir.join("environments/prod.yaml"), "replicaCount: 3\n").unwrap();
    let (code, _, err) = run_in(dir, &["render"]);
    assert_eq!(code, 2);
    assert!(err.contains("environments/dev.yaml:2"), "{err}");
    assert!(!err.contains("prod.yaml"), "{err}");
    // Only values left: no environment file, and init is suggested.
    fs::remove_file(dir.join("environments/dev.yaml")).unwrap();
    let (code, _, err) = run_in(dir, &["render"]);
    assert_eq!(code, 2);
    assert!(err.contains("hydrate init"), "{err}");
}

/// An empty environments/ holds nothing to overwrite: init fills it.
#[test]
fn an_empty_environments_directory_is_filled() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    fs::create_dir(dir.join("environments")).unwrap();
    let (code, _, err) = run_in(dir, &["init"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        list_files(&dir.join("environments")),
        ["dev.yaml", "production.yaml", "staging.yaml"]
    );
}

/// Region-suffixed environments promote within their region, and an
/// overlay at the root of a clone named `xyz` is named after the
/// repository (origin's URL), which init says.
#[test]
fn regions_promote_in_order_and_the_root_app_is_named_after_origin() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("xyz");
    let base = "resources: []\n";
    let overlay = "resources:\n- ../../base\n";
    fs::create_dir_all(dir.join("base")).unwrap();
    fs::write(dir.join("base/kustomization.yaml"), base).unwrap();
    for env in ["qa-eu", "staging-us", "staging-eu", "prod-us", "prod-eu"] {
        let o = dir.join("overlays").join(env);
        fs::create_dir_all(&o).unwrap();
        fs::write(o.join("kustomization.yaml"), overlay).unwrap();
    }
    crate::support::git(&dir, &["init", "-q"]);
    let url = "git@github.com:acme/shop-config.git";
    crate::support::git(&dir, &["remote", "add", "origin", url]);
    let (code, out, err) = run_in(&dir, &["init", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let summary: Vec<&str> = out.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        summary,
        [
            "Found 5 environment(s), 5 app(s):",
            "  prod-eu: shop-config",
            "  prod-us: shop-config",
            "  qa-eu: shop-config -> promotes to staging-eu",
            "  staging-eu: shop-config -> promotes to prod-eu",
            "  staging-us: shop-config -> promotes to prod-us",
            "The app at the root is `shop-config`, named after the repository (origin git@github.com:acme/shop-config.git)",
            "Apps per source:",
            "  kustomize overlays: 5",
        ]
    );
    assert!(out.contains("promotesTo: prod-eu\n"), "{out}");
}

/// `discover: exclude:` skips the directories its globs match (`{env}`
/// replaced); a glob that cannot compile is refused at its line.
#[test]
fn discover_exclude_skips_matching_directories() {
    let repo_dir = fixture("per-app-overlays");
    let dir = repo_dir.path();
    fs::create_dir(dir.join("environments")).unwrap();
    let apps = |exclude: &str| {
        fs::write(
            dir.join("environments/dev.yaml"),
            format!("name: dev\ndiscover:\n  - kustomize: apps/*/overlays/{{env}}\n{exclude}"),
        )
        .unwrap();
        run_in(dir, &["list", "--env", "dev", "--output", "json"])
    };
    let (code, all, err) = apps("");
    assert_eq!(code, 0, "{err}");
    assert!(all.contains("\"web\""), "{all}");
    let (code, some, err) = apps("    exclude: [\"apps/web/overlays/{env}\"]\n");
    assert_eq!(code, 0, "{err}");
    assert!(!some.contains("\"web\""), "{some}");
    assert!(
        some.len() < all.len() && some.contains("\"name\""),
        "{some}"
    );
    let (code, _, err) = apps("    exclude: [\"apps/[web\"]\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("dev.yaml:4: discover exclude `apps/[web`"),
        "{err}"
    );
}
