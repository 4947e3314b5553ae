//! `layout: resources`: one file per resource, named from its whole
//! identity, never one resource overwriting another.

use std::fs;
use std::path::Path;

use crate::support::{demo_copy, list_files, render_at};

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// Switches one demo environment to `layout: resources`.
fn per_resource(root: &Path, env: &str) {
    let file = root.join(format!("environments/{env}.yaml"));
    let text = fs::read_to_string(&file).unwrap();
    let dir = format!("output:\n  dir: rendered/{env}");
    assert!(text.contains(&dir), "demo env format changed");
    fs::write(
        &file,
        text.replace(&dir, &format!("{dir}\n  layout: resources")),
    )
    .unwrap();
}

#[test]
fn same_kind_and_name_in_two_api_groups_both_land() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    write(
        root,
        "environments/dev.yaml",
        "name: dev\noutput:\n  dir: out\n  layout: resources\napps:\n  - name: shop\n    kustomize: app\n",
    );
    write(
        root,
        "app/kustomization.yaml",
        "resources:\n- widgets.yaml\n",
    );
    write(
        root,
        "app/widgets.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: other.io/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: w\n",
    );
    let out = render_at(root).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        list_files(&root.join("out")),
        [
            "shop/configmap-w.yaml",
            "shop/widget.example.com-w.yaml",
            "shop/widget.other.io-w.yaml"
        ]
    );
    let one = fs::read_to_string(root.join("out/shop/widget.other.io-w.yaml")).unwrap();
    assert_eq!(
        one,
        "apiVersion: other.io/v1\nkind: Widget\nmetadata:\n  name: w\n"
    );
}

#[test]
fn a_resource_a_chart_renders_twice_is_an_error_naming_both_templates() {
    let repo = demo_copy();
    let root = repo.path();
    per_resource(root, "production");
    let templates = root.join("testdata/apps/status/chart/templates");
    fs::copy(
        templates.join("configmap.yaml"),
        templates.join("again.yaml"),
    )
    .unwrap();
    let out = render_at(root).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("production/status: v1 ConfigMap status-status-page is rendered twice"),
        "{err}"
    );
    assert!(
        err.contains("status-page/templates/again.yaml")
            && err.contains("status-page/templates/configmap.yaml"),
        "{err}"
    );
    // Nothing is written, not even the environments that have one manifest.
    assert!(!root.join("rendered").exists(), "{:?}", list_files(root));
}

#[test]
fn a_kind_that_is_not_a_file_name_is_refused() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    write(
        root,
        "environments/dev.yaml",
        "name: dev\noutput:\n  dir: out\n  layout: resources\napps:\n  - name: shop\n    kustomize: app\n",
    );
    write(root, "app/kustomization.yaml", "resources:\n- x.yaml\n");
    write(
        root,
        "app/x.yaml",
        "apiVersion: v1\nkind: ../../../escape\nmetadata:\n  name: x\n",
    );
    let out = render_at(root).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("dev/shop") && err.contains("cannot name a file after it"),
        "{err}"
    );
    assert!(!root.join("out").exists() && !root.join("escape").exists());
}
