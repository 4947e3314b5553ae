//! `--shard i/n` as CI runners use it: for n = 1, 2 and 4 the shards'
//! outputs together are exactly the unsharded output, and each shard
//! renders its share of the work (within 10% of 1/n).

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{copy_tree, render_at, repo};

const ENVS: [&str; 3] = ["dev", "staging", "production"];

/// 40 kustomize apps and 8 charts (the demo's) in three environments.
fn generated() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..40 {
        let base = root.join(format!("apps/a{i}/base"));
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("kustomization.yaml"), "resources:\n  - cm.yaml\n").unwrap();
        std::fs::write(
            base.join("cm.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a{i}\ndata:\n  n: \"{i}\"\n"
            ),
        )
        .unwrap();
        for e in ENVS {
            let o = root.join(format!("apps/a{i}/{e}"));
            std::fs::create_dir_all(&o).unwrap();
            std::fs::write(
                o.join("kustomization.yaml"),
                format!("namespace: {e}\nnamePrefix: {e}-\nresources:\n  - ../base\n"),
            )
            .unwrap();
        }
    }
    copy_tree(
        &repo().join("testdata/apps/status"),
        &root.join("charts/status"),
    );
    std::fs::create_dir_all(root.join("environments")).unwrap();
    for e in ENVS {
        let mut text = format!("name: {e}\noutput:\n  dir: rendered/{e}\napps:\n");
        for i in 0..40 {
            text.push_str(&format!("  - name: a{i}\n    kustomize: apps/a{i}/{e}\n"));
        }
        for c in 0..8 {
            text.push_str(&format!(
                "  - name: chart{c}\n    helm:\n      chart: charts/status/chart\n      \
                 releaseName: s{c}\n      valueFiles: [charts/status/values/{e}.yaml]\n"
            ));
        }
        std::fs::write(root.join(format!("environments/{e}.yaml")), text).unwrap();
    }
    dir
}

/// Renders shard `shard` (or everything) in a fresh copy of `src`; returns
/// the rendered files (path → bytes) and how many apps were rendered.
fn render_shard(src: &Path, shard: Option<(u32, u32)>) -> (BTreeMap<String, Vec<u8>>, u64) {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(src, copy.path());
    let mut cmd = render_at(copy.path());
    cmd.args(["--output", "json", "--no-cache"]);
    if let Some((i, n)) = shard {
        cmd.arg("--shard").arg(format!("{i}/{n}"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let apps = report["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["apps"].as_u64().unwrap())
        .sum();
    let rendered = copy.path().join("rendered");
    let files = crate::support::list_files(&rendered)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(rendered.join(&f)).unwrap();
            (f, bytes)
        })
        .collect();
    (files, apps)
}

#[test]
fn shards_together_are_the_whole_render_and_share_the_work() {
    let repo = generated();
    let (whole, total) = render_shard(repo.path(), None);
    assert_eq!(total, 3 * 48);
    assert_eq!(whole.len(), 3 * 48, "one manifest per app");
    for n in [1u32, 2, 4] {
        let mut union = BTreeMap::new();
        for i in 1..=n {
            let (files, apps) = render_shard(repo.path(), Some((i, n)));
            let share = total as f64 / f64::from(n);
            assert!(
                (apps as f64 - share).abs() <= 0.1 * share,
                "shard {i}/{n} rendered {apps} of {total}"
            );
            assert_eq!(
                files.len() as u64,
                apps,
                "shard {i}/{n} writes only its apps"
            );
            for (f, bytes) in files {
                assert!(
                    union.insert(f.clone(), bytes).is_none(),
                    "{f} in two shards of {n}"
                );
            }
        }
        assert_eq!(
            union, whole,
            "the union of {n} shards is the unsharded output"
        );
    }
}
