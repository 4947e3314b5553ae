//! Pins of a chart app found by convention, for apps that declare none:
//! the image-like values an environment's own values files (or its inline
//! `values`) set — a map with `repository` and a `tag` or `digest`
//! (`image: {repository: ghcr.io/x, tag: 1.2}`), or an `image` key holding
//! a reference with a tag or digest (`image: ghcr.io/x:1.2`). A values file
//! other environments also list is theirs too, not a place to pin.
//!
//! It finds value paths; reading and writing them is `pin.rs`'s.

use std::path::{Path, PathBuf};

use crate::env::{Environment, Source};
use crate::yaml::{self, Node, Resolver, Value};

/// The value paths found by convention for chart app `app`, over every
/// environment that renders it (so each environment reads the same paths,
/// and one that does not set a path yet gets it added where promotion
/// writes). Empty when any environment declares value pins for it.
pub fn paths(root: &Path, envs: &[Environment], app: &str) -> Vec<String> {
    let charts: Vec<(&Environment, &crate::env::ChartApp)> = envs
        .iter()
        .flat_map(|e| e.apps.iter().map(move |a| (e, a)))
        .filter(|(_, a)| a.name == app)
        .filter_map(|(e, a)| match &a.source {
            Source::Helm(c) => Some((e, &**c)),
            Source::Kustomize(_) => None,
        })
        .collect();
    let declares = envs
        .iter()
        .flat_map(|e| &e.apps)
        .filter(|a| a.name == app)
        .flat_map(|a| &a.pins)
        .any(|d| matches!(d, crate::env::PinDecl::Value(_)));
    if declares || charts.is_empty() {
        return Vec::new();
    }
    let listed_by = |f: &PathBuf| {
        charts
            .iter()
            .filter(|(_, c)| c.value_files.contains(f))
            .count()
    };
    let first_doc = |f: &Path| {
        let src = std::fs::read_to_string(root.join(f)).ok()?;
        yaml::parse_all(&src, Resolver::V2).ok()?.into_iter().next()
    };
    let mut out: Vec<String> = Vec::new();
    for (_, c) in &charts {
        // The chart's defaults tell which maps are images (an environment
        // usually sets only `image.tag`).
        let mut maps = Vec::new();
        if let Some(defaults) = first_doc(&c.chart.join("values.yaml")) {
            image_maps(&defaults, &mut Vec::new(), &mut maps);
        }
        let own: Vec<Node> = c
            .value_files
            .iter()
            .filter(|f| listed_by(f) == 1)
            .filter_map(|f| first_doc(f))
            .chain(c.values.clone())
            .collect();
        for doc in &own {
            image_maps(doc, &mut Vec::new(), &mut maps);
        }
        for doc in &own {
            for p in image_paths(doc, &maps) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// The paths of the maps below `n` that are images: a `repository` and a
/// `tag` or `digest` key.
fn image_maps(n: &Node, path: &mut Vec<String>, out: &mut Vec<String>) {
    let Value::Map(entries) = &n.value else {
        return;
    };
    let has = |k: &str| entries.iter().any(|(key, _)| key.key_text() == Some(k));
    if has("repository") && (has("tag") || has("digest")) {
        let p = path.join(".");
        if !out.contains(&p) {
            out.push(p);
        }
    }
    for (k, v) in entries {
        let Some(key) = k.key_text() else { continue };
        path.push(key.to_string());
        image_maps(v, path, out);
        path.pop();
    }
}

/// The image-like value paths `doc` sets: a `tag` or `digest` of one of
/// `maps`, or an `image` key holding a reference with a version.
pub fn image_paths(doc: &Node, maps: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    walk(doc, maps, &mut Vec::new(), &mut out);
    out
}

fn walk(n: &Node, maps: &[String], path: &mut Vec<String>, out: &mut Vec<String>) {
    let Value::Map(entries) = &n.value else {
        return;
    };
    let is_image_map = maps.contains(&path.join("."));
    for (k, v) in entries {
        let Some(key) = k.key_text() else { continue };
        // A key with a dot cannot be named in a dotted path.
        if key.contains('.') || key.is_empty() {
            continue;
        }
        path.push(key.to_string());
        let scalar = v.as_str().filter(|s| !s.is_empty());
        // `image.tag` beside `image.repository`, or `image: repo:tag`.
        let version_of_map = is_image_map && (key == "tag" || key == "digest") && scalar.is_some();
        let whole_reference = key == "image" && scalar.is_some_and(is_reference_with_version);
        if version_of_map || whole_reference {
            out.push(path.join("."));
        } else {
            walk(v, maps, path, out);
        }
        path.pop();
    }
}

/// `repo:tag` or `repo@digest`: a tag after the last `/`, or a digest.
fn is_reference_with_version(s: &str) -> bool {
    if s.contains(char::is_whitespace) {
        return false;
    }
    s.contains('@') || s.rsplit('/').next().is_some_and(|last| last.contains(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_maps_and_image_references_are_found() {
        let doc = yaml::parse_one(
            "image:\n  repository: ghcr.io/a/web\n  tag: \"1.2\"\n  pullPolicy: Always\nsidecar:\n  image: ghcr.io/a/side:3.4\nproxy:\n  image: nginx\nworker:\n  image: {repository: r, digest: \"sha256:ab\"}\nlabels: {tag: x}\n",
            Resolver::V2,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut maps = Vec::new();
        image_maps(&doc, &mut Vec::new(), &mut maps);
        assert_eq!(
            image_paths(&doc, &maps),
            ["image.tag", "sidecar.image", "worker.image.digest"]
        );
        // An environment's file sets only the tag: the chart's defaults
        // say the map is an image.
        let env = yaml::parse_one("image:\n  tag: 2.0\nreplicas: 2\n", Resolver::V2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(image_paths(&env, &maps), ["image.tag"]);
        assert!(image_paths(&env, &[]).is_empty());
    }
}
