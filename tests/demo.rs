//! Snapshots of the demo repository's rendered output, one per environment
//! and app. Each was checked byte for byte against `kubectl kustomize`
//! (kustomize v5.7.1), or `helm template` (v3.17.3) for the chart app, when
//! accepted; `conformance::demo_matches_kubectl` and
//! `conformance::demo_chart_matches_helm3` re-check that wherever the
//! oracles are installed.

use crate::support::{demo_copy, list_files, render_at};

#[test]
fn demo_render_snapshots() {
    let repo = demo_copy();
    let out = render_at(repo.path()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = repo.path().join("rendered");
    for file in list_files(&rendered) {
        let body = std::fs::read_to_string(rendered.join(&file)).unwrap();
        let name = file.trim_end_matches("/manifest.yaml").replace('/', "__");
        insta::assert_snapshot!(name, body);
    }
}
