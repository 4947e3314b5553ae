//! `hydrate diff`: the demo's environments against each other, small
//! repositories built here for each behaviour, `--since` in a real git
//! repository, and the exit codes.

use std::fs;
use std::path::Path;

use crate::support::{demo_copy, git, hydrate, repo, workspace_state};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn diff(root: &Path, args: &[&str]) -> Run {
    let out = hydrate()
        .arg("diff")
        .args(args)
        .arg("--root")
        .arg(root)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A repository with the given files (paths relative to its root).
fn mini(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    dir
}

/// Two environments `a` and `b`, one app `app` whose overlays list
/// `resources.yaml` of their own directory.
fn two_envs(a: &str, b: &str, env_extra: (&str, &str)) -> tempfile::TempDir {
    let env = |name: &str, extra: &str| {
        format!("name: {name}\napps:\n  - name: app\n    kustomize: apps/app/{name}\n{extra}")
    };
    let k = "resources:\n  - resources.yaml\n";
    mini(&[
        ("environments/a.yaml", &env("a", env_extra.0)),
        ("environments/b.yaml", &env("b", env_extra.1)),
        ("apps/app/a/kustomization.yaml", k),
        ("apps/app/b/kustomization.yaml", k),
        ("apps/app/a/resources.yaml", a),
        ("apps/app/b/resources.yaml", b),
    ])
}

fn deployment(containers: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n{containers}"
    )
}

#[test]
fn demo_staging_production() {
    let r = diff(&repo(), &["staging", "production", "--color", "never"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = &r.stdout;
    for line in [
        "    spec.replicas (apps/v1/Deployment web ↔ web-blue): 2 → 4",
        "    spec.replicas (apps/v1/Deployment worker): 2 → 5",
        "    spec.template.spec.containers[name=web].image (apps/v1/Deployment web ↔ web-blue): ghcr.io/acme-shop/web:1.4.3 → registry.acme.internal/shop/web:1.4.2",
        // Only in production, named as it is there.
        "    + policy/v1/PodDisruptionBudget web-blue",
        // The same change to many resources, once with the count.
        "    metadata.labels.env: staging → production — 6 resources",
        "    + policy/v1/PodDisruptionBudget api",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
    }
    // The -blue suffix, the namespaces and the Secret's generator hash
    // (api-db-…) are no reason to remove and add anything.
    assert!(!out.lines().any(|l| l.starts_with("    - ")), "{out}");
    assert!(!out.contains("+ v1/Secret"), "{out}");
    // The secret changed, masked; the hash-suffixed reference to it did not.
    assert!(
        out.contains(
            "    data.DB_PASSWORD (v1/Secret api-db-9852dkbhck ↔ api-db-9f76t5t7km): <sha256:"
        ),
        "{out}"
    );
    assert!(!out.contains("secretRef"), "{out}");
    assert!(!out.contains("czNjcjN0"), "{out}");
    insta::assert_snapshot!("demo_staging_production", out);
}

#[test]
fn demo_dev_production_prefix_against_suffix() {
    let r = diff(&repo(), &["dev", "production", "--brief", "--app", "web"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    insta::assert_snapshot!("demo_dev_production_web_brief", r.stdout);
    assert!(!r.stdout.contains("- "), "{}", r.stdout);
}

#[test]
fn secrets_are_masked_unless_asked() {
    let masked = diff(&repo(), &["staging", "production", "--app", "api"]);
    let shown = diff(
        &repo(),
        &["staging", "production", "--app", "api", "--show-secrets"],
    );
    let line = |out: &str| {
        out.lines()
            .find(|l| l.contains("data.DB_PASSWORD"))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    assert_eq!(
        line(&masked.stdout),
        "data.DB_PASSWORD (v1/Secret api-db-9852dkbhck ↔ api-db-9f76t5t7km): <sha256:c6d9f1a5, 17 bytes> → <sha256:28e2b78a, 26 bytes>"
    );
    // base64 of dev-only-password and s3cr3t-production-password.
    assert_eq!(
        line(&shown.stdout),
        "data.DB_PASSWORD (v1/Secret api-db-9852dkbhck ↔ api-db-9f76t5t7km): ZGV2LW9ubHktcGFzc3dvcmQ= → czNjcjN0LXByb2R1Y3Rpb24tcGFzc3dvcmQ="
    );
}

#[test]
fn json_output_validates_against_the_documented_shape() {
    let text = fs::read_to_string(repo().join("schemas/diff-output.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("diff.json", schema.clone()).unwrap();
    let index = compiler.compile("diff.json", &mut schemas).unwrap();
    for args in [
        &["staging", "production", "--output", "json"][..],
        &["dev", "staging", "--output", "json"][..],
        &["staging", "staging", "--output", "json"][..],
    ] {
        let r = diff(&repo(), args);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        if let Err(e) = schemas.validate(&v, index) {
            panic!("{args:?}: {e}");
        }
        assert_eq!(v["differences"], r.code == 1);
    }
    // A finding is described as `hydrate validate --output json` has it.
    let text = fs::read_to_string(repo().join("schemas/validate-output.schema.json")).unwrap();
    let validate: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        schema["$defs"]["finding"],
        validate["properties"]["findings"]["items"]
    );
    // A value that is not a change fails the schema, so the test can fail.
    let bad =
        serde_json::json!({"version": 1, "differences": true, "summary": {}, "comparisons": []});
    assert!(schemas.validate(&bad, index).is_err());
}

#[test]
fn reordered_containers_and_env_are_no_change() {
    let a = deployment(
        "        - name: app\n          image: app:1\n          env: [{name: A, value: '1'}, {name: B, value: '2'}]\n        - name: sidecar\n          image: proxy:1\n",
    );
    let b = deployment(
        "        - name: sidecar\n          image: proxy:1\n        - name: app\n          image: app:1\n          env: [{name: B, value: '2'}, {name: A, value: '1'}]\n",
    );
    let repo = two_envs(&a, &b, ("", ""));
    let r = diff(repo.path(), &["a", "b"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "a → b\n  no differences\n0 resources changed (0 fields), 0 added, 0 removed, 0 expected differences\n"));
    // Changing one env value is one line, found by name.
    let c = b.replace("value: '2'", "value: '3'");
    let repo = two_envs(&a, &c, ("", ""));
    let r = diff(repo.path(), &["a", "b"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains(
        "    spec.template.spec.containers[name=app].env[name=B].value (apps/v1/Deployment web): \"2\" → \"3\"\n"
    ), "{}", r.stdout);
}

#[test]
fn multi_line_config_values_show_a_unified_diff() {
    let cm = |conf: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  app.conf: |\n{conf}")
    };
    let a = cm("    listen 80;\n    root /srv;\n    gzip on;\n    workers 4;\n");
    let b =
        cm("    listen 8080;\n    root /srv;\n    gzip on;\n    workers 4;\n    keepalive 30;\n");
    let repo = two_envs(&a, &b, ("", ""));
    let r = diff(repo.path(), &["a", "b", "--color", "never"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("multi_line_text_diff", r.stdout);
    let colored = diff(repo.path(), &["a", "b", "--color", "always"]);
    assert!(colored.stdout.contains("\x1b[32m+listen 8080;\x1b[0m"));
    let no_color = hydrate()
        .args(["diff", "a", "b", "--root"])
        .arg(repo.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&no_color.stdout).contains('\x1b'));
}

const TWO_CHANGES: (&str, &str) = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: app\n          image: app:1\n        - name: injected\n          image: mesh:1\n",
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n  template:\n    spec:\n      containers:\n        - name: app\n          image: app:2\n        - name: injected\n          image: mesh:2\n",
);

#[test]
fn ignore_rules_hide_exactly_their_path() {
    let rules = "diff:\n  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      jsonPointers: [/spec/replicas]\n      jqPathExpressions:\n        - '.spec.template.spec.containers[] | select(.name == \"injected\")'\n";
    let repo = two_envs(TWO_CHANGES.0, TWO_CHANGES.1, (rules, ""));
    let r = diff(repo.path(), &["a", "b", "--brief"]);
    let full = diff(repo.path(), &["a", "b"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        full.stdout.lines().filter(|l| l.starts_with("    ") && l.contains(": ")).collect::<Vec<_>>(),
        ["    spec.template.spec.containers[name=app].image (apps/v1/Deployment web): app:1 → app:2"]
    );
    assert!(
        r.stdout.contains("~ Deployment web (1 field)"),
        "{}",
        r.stdout
    );
    // The same from the command line.
    let cli = two_envs(TWO_CHANGES.0, TWO_CHANGES.1, ("", ""));
    let r = diff(
        cli.path(),
        &[
            "a",
            "b",
            "--ignore",
            "Deployment=/spec/replicas",
            "--ignore",
            ".spec.template.spec.containers[].image",
        ],
    );
    assert_eq!(
        (r.code, r.stdout.matches("): ").count()),
        (0, 0),
        "{}",
        r.stdout
    );
}

#[test]
fn expected_paths_have_their_own_section() {
    let rules =
        "diff:\n  expected:\n    - kind: Deployment\n      jsonPointers: [/spec/replicas]\n";
    let repo = two_envs(TWO_CHANGES.0, TWO_CHANGES.1, ("", rules));
    let r = diff(repo.path(), &["a", "b", "--color", "never"]);
    assert_eq!(r.code, 1);
    insta::assert_snapshot!("expected_section", r.stdout);
    // Only expected differences: not drift, exit 0.
    let b = TWO_CHANGES.0.replace("replicas: 2", "replicas: 7");
    let repo = two_envs(TWO_CHANGES.0, &b, ("", rules));
    let r = diff(repo.path(), &["a", "b", "--brief"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("= Deployment web (1 expected field)"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_rule_can_mark_other_kinds_secret() {
    let cm = |v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: creds\ndata:\n  token: {v}\n")
    };
    let rules = "diff:\n  ignoreDifferences:\n    - kind: ConfigMap\n      name: creds\n      secret: true\n";
    let repo = two_envs(&cm("abc"), &cm("abcd"), (rules, ""));
    let r = diff(repo.path(), &["a", "b"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("data.token (v1/ConfigMap creds): <sha256:ba7816bf, 3 bytes> → <sha256:88d4266f, 4 bytes>"), "{}", r.stdout);
    let r = diff(repo.path(), &["a", "b", "--show-secrets"]);
    assert!(
        r.stdout
            .contains("data.token (v1/ConfigMap creds): abc → abcd"),
        "{}",
        r.stdout
    );
}

#[test]
fn unsupported_jq_is_an_error_naming_file_and_line() {
    let rules = "diff:\n  ignoreDifferences:\n    - kind: Deployment\n      jqPathExpressions:\n        - .spec.replicas\n        - '.spec.template | del(.metadata)'\n";
    let repo = two_envs(TWO_CHANGES.0, TWO_CHANGES.1, (rules, ""));
    let r = diff(repo.path(), &["a", "b"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr.contains(
            "a.yaml:10: unsupported jq path expression `.spec.template | del(.metadata)`"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn markdown_of_a_large_diff_stays_within_the_limit() {
    let many = |v: &str| {
        (0..400)
            .map(|i| {
                let body: String = (0..40).map(|l| format!("    line {l} of {i} = {v}\n")).collect();
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:03}\ndata:\n  file.txt: |\n{body}")
            })
            .collect::<Vec<_>>()
            .join("---\n")
    };
    let repo = two_envs(&many("old"), &many("new"), ("", ""));
    let r = diff(repo.path(), &["a", "b", "--output", "markdown"]);
    assert_eq!(r.code, 1);
    let n = r.stdout.chars().count();
    assert!(n <= 65_000 && n > 60_000, "{n}");
    assert!(r.stdout.contains("| a → b | app | 400 | 0 | 0 | 0 |"));
    // Cut between resources, and said so.
    let shown = r.stdout.matches("<details>").count();
    assert_eq!(r.stdout.matches("</details>").count(), shown);
    let note = format!(
        "**{} more resources left out** to stay within 65000 characters: a → b: app ({}). Run",
        400 - shown,
        400 - shown
    );
    assert!(r.stdout.contains(&note), "{note}");
    let small = diff(
        &crate::support::repo(),
        &[
            "staging",
            "production",
            "--output",
            "markdown",
            "--app",
            "web",
        ],
    );
    insta::assert_snapshot!("markdown_web", small.stdout);
}

#[test]
fn exit_codes_zero_one_two() {
    assert_eq!(diff(&repo(), &["staging", "staging"]).code, 0);
    assert_eq!(diff(&repo(), &["staging", "production"]).code, 1);
    let r = diff(&repo(), &["staging", "nowhere"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no environment named `nowhere`"));
    assert_eq!(diff(&repo(), &["staging"]).code, 2);
    assert_eq!(diff(&repo(), &["--bogus"]).code, 2);
}

#[test]
fn since_names_exactly_the_environments_and_apps_using_a_changed_base() {
    let repo = demo_copy();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "demo"]);
    let base = dir.join("testdata/apps/worker/base/configmap.yaml");
    let text = fs::read_to_string(&base)
        .unwrap()
        .replace("MAX_RETRIES: \"5\"", "MAX_RETRIES: \"8\"");
    fs::write(&base, text).unwrap();
    git(dir, &["commit", "-q", "-am", "worker: more retries"]);
    let before = workspace_state(dir);
    let r = diff(dir, &["--since", "HEAD~1", "--brief"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    insta::assert_snapshot!("since_head_1", r.stdout);
    let apps: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .collect();
    assert_eq!(apps, ["  worker", "  worker", "  worker"]);
    assert_eq!(
        workspace_state(dir),
        before,
        "diff --since touched the repository"
    );
    // An uncommitted change shows too, and --env narrows.
    let web = dir.join("testdata/apps/web/overlays/staging/kustomization.yaml");
    let text = fs::read_to_string(&web)
        .unwrap()
        .replace("count: 2", "count: 3");
    fs::write(&web, text).unwrap();
    let r = diff(
        dir,
        &["--since", "HEAD", "--env", "staging", "--color", "never"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.starts_with(
            "staging@HEAD → staging\n  web: 1 changed (1 field), 0 added, 0 removed\n    spec.replicas (apps/v1/Deployment web): 2 → 3\n"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn rendered_output_compares_like_a_render() {
    let repo = demo_copy();
    let out = crate::support::render_at(repo.path()).output().unwrap();
    assert!(out.status.success());
    let rendered = diff(
        repo.path(),
        &["staging", "production", "--rendered", "--output", "json"],
    );
    let live = diff(repo.path(), &["staging", "production", "--output", "json"]);
    assert_eq!(rendered.code, 1, "{}", rendered.stderr);
    assert_eq!(rendered.stdout, live.stdout);
    // --since with --rendered: the working tree against the output
    // committed at REF.
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "demo and its output"]);
    let web = dir.join("testdata/apps/web/overlays/staging/kustomization.yaml");
    let text = fs::read_to_string(&web)
        .unwrap()
        .replace("count: 2", "count: 3");
    fs::write(&web, text).unwrap();
    let r = diff(
        dir,
        &[
            "--since",
            "HEAD",
            "--rendered",
            "--env",
            "staging",
            "--brief",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "staging@HEAD → staging\n  web\n    ~ Deployment web (1 field)\n1 resource changed (1 field), 0 added, 0 removed, 0 expected differences\n"
    );
}

#[test]
fn environment_schema_knows_diff_rules() {
    use hydrate::yaml::{parse_one, to_json, Resolver};
    let text = fs::read_to_string(repo().join("schemas/environment.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("env.json", schema).unwrap();
    let index = compiler.compile("env.json", &mut schemas).unwrap();
    let check = |src: &str| {
        let doc = parse_one(src, Resolver::V3).unwrap();
        schemas.validate(&to_json(&doc), index).is_ok()
    };
    let good = "name: a\ndiff:\n  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      jsonPointers: [/spec/replicas]\n      jqPathExpressions: ['.spec.x[] | select(.name == \"y\")']\n  expected:\n    - kind: Secret\n      secret: true\n";
    assert!(check(good));
    // What hydrate rejects, the schema rejects.
    for bad in [
        "name: a\ndiff:\n  ignore: []\n",
        "name: a\ndiff:\n  expected:\n    - jqPaths: [.a]\n",
        "name: a\ndiff:\n  expected:\n    - jsonPointers: [spec/replicas]\n",
    ] {
        assert!(!check(bad), "{bad}");
        let repo = mini(&[("environments/a.yaml", bad)]);
        assert_eq!(diff(repo.path(), &["a", "a"]).code, 2, "{bad}");
    }
}

#[test]
fn markdown_says_what_a_change_makes_invalid_and_what_it_fixes() {
    // Committed: a misspelled imagePullPolicy. The change fixes it and
    // misspells replicas instead.
    let before = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n        - name: web\n          image: example/web:1.0\n          imagePullPolcy: Always\n";
    let repo = mini(&[
        (
            "environments/staging.yaml",
            "name: staging\napps:\n  - name: web\n    kustomize: apps/web\n",
        ),
        (
            "apps/web/kustomization.yaml",
            "resources:\n  - deployment.yaml\n",
        ),
        ("apps/web/deployment.yaml", before),
    ]);
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "web"]);
    let after = before
        .replace("imagePullPolcy", "imagePullPolicy")
        .replace("spec:\n  selector", "spec:\n  replcias: 2\n  selector");
    fs::write(dir.join("apps/web/deployment.yaml"), after).unwrap();
    let r = diff(dir, &["--since", "HEAD", "--output", "markdown"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    insta::assert_snapshot!("markdown_validity", r.stdout);
    // JSON carries the same findings; --no-validate leaves them out.
    let r = diff(dir, &["--since", "HEAD", "--output", "json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let validity = &v["comparisons"][0]["validity"];
    assert_eq!(validity["introduced"][0]["path"], "spec.replcias");
    assert_eq!(validity["introduced"][0]["line"], 6);
    assert_eq!(validity["fixed"].as_array().map(Vec::len), Some(1));
    let r = diff(
        dir,
        &["--since", "HEAD", "--output", "markdown", "--no-validate"],
    );
    assert!(!r.stdout.contains("invalid"), "{}", r.stdout);
}

/// `--explain` with `--output json` is refused before any work (its
/// origins are text, and appended they made the JSON unreadable).
#[test]
fn explain_with_json_output_is_refused() {
    let run = diff(
        &repo(),
        &["staging", "production", "--explain", "--output", "json"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("--explain prints origins as text or markdown"),
        "{}",
        run.stderr
    );
}

/// `diff FROM TO` answers renders from the render cache `render` fills
/// (and fills it): the same output as `--no-cache`, before and after an
/// input changes, and a change made after the cache was filled shows.
#[test]
fn diff_through_the_render_cache_matches_no_cache_and_sees_changes() {
    let repo = demo_copy();
    let root = repo.path();
    crate::support::render_at(root).assert().success();
    assert!(root.join(".hydrate/cache").is_dir());
    let cached = diff(root, &["staging", "production"]);
    let fresh = diff(root, &["staging", "production", "--no-cache"]);
    assert_eq!((cached.code, &cached.stdout), (1, &fresh.stdout));
    assert!(!cached.stdout.contains("replicas: 7"), "{}", cached.stdout);
    let overlay = root.join("testdata/apps/web/overlays/production/kustomization.yaml");
    let text = fs::read_to_string(&overlay).unwrap();
    assert!(text.contains("count: 4"), "{text}");
    fs::write(&overlay, text.replacen("count: 4", "count: 7", 1)).unwrap();
    let changed = diff(root, &["staging", "production"]);
    let fresh = diff(root, &["staging", "production", "--no-cache"]);
    assert_eq!(changed.stdout, fresh.stdout);
    assert_ne!(changed.stdout, cached.stdout);
    assert!(changed.stdout.contains("→ 7"), "{}", changed.stdout);
}
