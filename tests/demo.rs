//! The demo repository's rendered output, one test module per environment
//! and app: its snapshot, and its oracle (`kubectl kustomize` for the
//! overlays, kustomize v5.7.1; `helm template` v3.17.3 for the chart app)
//! where installed; and a test that the demo renders exactly those
//! environments and apps (a snapshot that is no longer produced would
//! otherwise go unnoticed). Each snapshot was checked byte for byte against
//! its oracle when accepted.

use crate::support::{demo_copy, list_files, need, render_at, Need};

/// One module per environment and app, and `DEMO` listing the same pairs.
macro_rules! demo {
    ($($env:ident: [$($app:ident),*];)*) => {
        const DEMO: &[(&str, &[&str])] = &[$((stringify!($env), &[$(stringify!($app)),*])),*];
        $(
            mod $env {
                $(
                    mod $app {
                        #[test]
                        fn renders_as_its_snapshot() {
                            super::super::renders_as_its_snapshot(
                                stringify!($env),
                                stringify!($app),
                            );
                        }

                        #[test]
                        #[cfg_attr(
                            not(all(has_kubectl, has_helm3)),
                            ignore = "needs kubectl and helm3 under ~/.cache/oracles (../shared/tools/install-oracles)"
                        )]
                        fn renders_as_the_oracle() {
                            super::super::renders_as_the_oracle(
                                stringify!($env),
                                stringify!($app),
                            );
                        }
                    }
                )*
            }
        )*
    };
}

demo! {
    dev: [api, redis, status, web, worker];
    production: [api, redis, status, web, worker];
    staging: [api, redis, status, web, worker];
}

/// `hydrate render --env ENV --app APP` in a copy of the demo: the copy and
/// the one manifest it writes (anything else written fails).
fn render_one(env: &str, app: &str) -> (tempfile::TempDir, String) {
    let repo = demo_copy();
    let out = render_at(repo.path())
        .args(["--env", env, "--app", app])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = repo.path().join("rendered");
    let file = format!("{env}/{app}/manifest.yaml");
    assert_eq!(list_files(&rendered), std::slice::from_ref(&file));
    let body = std::fs::read_to_string(rendered.join(&file)).unwrap();
    (repo, body)
}

/// The manifest equals its snapshot (`tests__demo__<env>__<app>.snap`).
fn renders_as_its_snapshot(env: &str, app: &str) {
    let (_repo, body) = render_one(env, app);
    insta::assert_snapshot!(format!("{env}__{app}"), body);
}

/// The manifest equals what the real tool prints for the same input: the
/// overlay through `kubectl kustomize`, the chart through `helm template`
/// with the release, namespace and values of `environments/<env>.yaml`.
fn renders_as_the_oracle(env: &str, app: &str) {
    let (repo, body) = render_one(env, app);
    let want = if app == "status" {
        let helm = need(Need::Helm3);
        let (ns, extra) = match env {
            "dev" => (
                "status-dev",
                &[
                    "--set-string",
                    "serviceAccount.annotations.acme-shop\\.example/sandbox=true",
                ][..],
            ),
            "staging" => ("status-staging", &[][..]),
            _ => ("status", &[][..]),
        };
        let app = repo.path().join("testdata/apps/status");
        std::process::Command::new(helm)
            .args(["template", "status"])
            .arg(app.join("chart"))
            .arg("-f")
            .arg(app.join(format!("values/{env}.yaml")))
            .args(["--namespace", ns, "--include-crds"])
            .args(extra)
            .output()
            .unwrap()
    } else {
        let kubectl = need(Need::Kubectl);
        let overlay = repo
            .path()
            .join(format!("testdata/apps/{app}/overlays/{env}"));
        std::process::Command::new(kubectl)
            .arg("kustomize")
            .arg(overlay)
            .output()
            .unwrap()
    };
    assert!(
        want.status.success(),
        "{}",
        String::from_utf8_lossy(&want.stderr)
    );
    assert_eq!(body, String::from_utf8_lossy(&want.stdout), "{env}/{app}");
}

/// A full render writes exactly the demo's environments and apps (one that
/// disappears or appears fails here), each as its snapshot.
#[test]
fn demo_renders_every_environment_and_app() {
    let repo = demo_copy();
    let out = render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut want: Vec<String> = DEMO
        .iter()
        .flat_map(|(env, apps)| {
            apps.iter()
                .map(move |app| format!("{env}/{app}/manifest.yaml"))
        })
        .collect();
    want.sort();
    let rendered = repo.path().join("rendered");
    assert_eq!(list_files(&rendered), want);
    for file in want {
        let body = std::fs::read_to_string(rendered.join(&file)).unwrap();
        let name = file.trim_end_matches("/manifest.yaml").replace('/', "__");
        insta::assert_snapshot!(name, body);
    }
}
