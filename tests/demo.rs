//! Snapshots of the demo repository's rendered output, one test case per
//! environment and app, and a test that the demo renders exactly those
//! environments and apps (a snapshot that is no longer produced would
//! otherwise go unnoticed). Each snapshot was checked byte for byte against
//! `kubectl kustomize` (kustomize v5.7.1), or `helm template` (v3.17.3) for
//! the chart app, when accepted; `conformance::demo_matches_kubectl` and
//! `conformance::demo_chart_matches_helm3` re-check that wherever the
//! oracles are installed.

use crate::support::{demo_copy, list_files, render_at};

/// One module per environment with one test per app, and `DEMO` listing
/// the same pairs.
macro_rules! demo {
    ($($env:ident: [$($app:ident),*];)*) => {
        const DEMO: &[(&str, &[&str])] = &[$((stringify!($env), &[$(stringify!($app)),*])),*];
        $(
            mod $env {
                $(
                    #[test]
                    fn $app() {
                        super::renders_as_its_snapshot(stringify!($env), stringify!($app));
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

/// `hydrate render --env ENV --app APP` writes only that app's manifest,
/// equal to its snapshot (`tests__demo__<env>__<app>.snap`).
fn renders_as_its_snapshot(env: &str, app: &str) {
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
    insta::assert_snapshot!(format!("{env}__{app}"), body);
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
