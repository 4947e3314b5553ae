//! `set-image --app` and `promote --app` read only the app they are
//! about (issue 36): their snapshot of HEAD writes `environments/` and
//! what that app's renders and pins can read, not the whole tree. The
//! effect shown: another app whose committed files cannot be read (a
//! blob missing from the object database, as in a partial clone) or
//! whose render fails is left alone, while the same command about that
//! app fails naming it.

use std::fs;
use std::path::Path;

use crate::promote_trust::{run, text};
use crate::support::git;

const IMAGE: &str = "registry.example.com/web";

/// A two-environment repository (dev promotes to staging) with three
/// kustomize apps: `web`, `api` whose base deployment's blob is then
/// removed from the object database, and `broken` whose kustomization
/// names a resource that does not exist.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    for (env, next) in [("dev", "promotesTo: staging\n"), ("staging", "")] {
        write(
            &format!("environments/{env}.yaml"),
            &format!(
                "name: {env}\noutput: {{dir: rendered/{env}}}\n{next}apps:\n  \
                 - {{name: web, kustomize: apps/web/{env}}}\n  \
                 - {{name: api, kustomize: apps/api/{env}}}\n  \
                 - {{name: broken, kustomize: apps/broken/{env}}}\n"
            ),
        );
        let minor = if env == "dev" { 1 } else { 0 };
        for (app, major) in [("web", 1), ("api", 3)] {
            let name = format!("registry.example.com/{app}");
            write(
                &format!("apps/{app}/{env}/kustomization.yaml"),
                &format!(
                    "resources: [../base]\nnamePrefix: {env}-\nimages:\n  - name: {name}\n    newTag: \"{major}.{minor}.0\"\n"
                ),
            );
        }
        write(
            &format!("apps/broken/{env}/kustomization.yaml"),
            "resources: [missing.yaml]\n",
        );
    }
    for app in ["web", "api"] {
        write(
            &format!("apps/{app}/base/kustomization.yaml"),
            "resources: [deployment.yaml]\n",
        );
        write(
            &format!("apps/{app}/base/deployment.yaml"),
            &format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n  \
                 template:\n    spec:\n      containers:\n        - name: {app}\n          \
                 image: registry.example.com/{app}:0.0.1\n"
            ),
        );
    }
    write(".gitignore", "/rendered\n.hydrate/\n");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.com"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "apps"]);
    // A fresh commit's objects are loose: remove api's deployment blob.
    let blob = git(root, &["rev-parse", "HEAD:apps/api/base/deployment.yaml"]);
    let (fan, rest) = blob.trim().split_at(2);
    fs::remove_file(root.join(".git/objects").join(fan).join(rest)).unwrap();
    dir
}

fn subject(dir: &Path) -> String {
    git(dir, &["log", "-1", "--format=%s"]).trim().to_string()
}

#[test]
fn set_image_of_one_app_reads_only_that_app() {
    let repo = repo();
    let dir = repo.path();
    let o = run(
        dir,
        &[
            "set-image",
            "dev",
            &format!("{IMAGE}:1.2.0"),
            "--app",
            "web",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(subject(dir), "set-image dev: web 1.2.0");
    let k = fs::read_to_string(dir.join("apps/web/dev/kustomization.yaml")).unwrap();
    assert!(k.contains("newTag: \"1.2.0\""), "{k}");
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
    // The same command about api reads api's missing blob and says so.
    let api = "registry.example.com/api:3.2.0";
    let o = run(dir, &["set-image", "dev", api, "--app", "api"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("apps/api/base/deployment.yaml"),
        "{}",
        text(&o)
    );
}

#[test]
fn promote_of_one_app_reads_only_that_app() {
    let repo = repo();
    let dir = repo.path();
    let o = run(dir, &["promote", "dev", "staging", "--app", "web"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        subject(dir).starts_with("promote dev → staging"),
        "{}",
        subject(dir)
    );
    let k = fs::read_to_string(dir.join("apps/web/staging/kustomization.yaml")).unwrap();
    assert!(k.contains("newTag: \"1.1.0\""), "{k}");
    let api = fs::read_to_string(dir.join("apps/api/staging/kustomization.yaml")).unwrap();
    assert!(api.contains("newTag: \"3.0.0\""), "{api}");
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
    let o = run(dir, &["promote", "dev", "staging", "--app", "api"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("apps/api/base/deployment.yaml"),
        "{}",
        text(&o)
    );
}
