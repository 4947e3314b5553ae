//! What version each app runs in each environment: its image pins
//! (`newTag` and `digest` of one `images:` entry, as kustomize writes
//! them: `name:tag@digest`) and its declared pins; the chart path is not a
//! version. Where an image's entry sets neither (an overlay that only
//! renames the image), or a chart's `image.tag` is not set, the version is
//! read from the rendered manifests: what really runs.

use std::collections::BTreeMap;
use std::path::Path;

use super::super::pin::{Pin, Place};
use crate::env::{self, Environment, Selection};

/// One version an app runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Version {
    /// What it is of, when the app has several: the image's last path
    /// component, or the pin.
    pub label: Option<String>,
    /// The tag, or a declared pin's value.
    pub tag: Option<String>,
    /// The image digest (`sha256:…`).
    pub digest: Option<String>,
    /// Read from the rendered manifests (no pin sets it).
    pub rendered: bool,
}

impl Version {
    /// `2.8.1@sha256:9a1b2c3d4e5f`: a digest cut to 12 hex digits; `-`
    /// when nothing is known.
    pub fn short(&self) -> String {
        self.join(super::super::message::short)
    }

    /// The whole reference, digest in full.
    #[cfg(test)]
    pub fn full(&self) -> String {
        self.join(str::to_string)
    }

    fn join(&self, digest: impl Fn(&str) -> String) -> String {
        match (&self.tag, &self.digest) {
            (Some(t), Some(d)) => format!("{t}@{}", digest(d)),
            (Some(t), None) => t.clone(),
            (None, Some(d)) => digest(d),
            (None, None) => "-".into(),
        }
    }
}

/// What a version is read from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    /// An `images:` entry, by its `name`.
    Image(String),
    /// Any other pin, by its name.
    Pin(String),
    /// Nothing: an app without pins (a chart with no `pins:`) shows its
    /// rendered image, when it has one.
    Rendered,
}

impl Source {
    fn of(p: &Pin) -> Option<Source> {
        match &p.place {
            Place::Image { image, .. } => Some(Source::Image(image.clone())),
            Place::Value { .. } if p.name == "chart" => None,
            Place::Value { .. } | Place::Inline { .. } | Place::Unmatched { .. } => {
                Some(Source::Pin(p.name.clone()))
            }
            // What the environment runs from a shared file is not its pin.
            Place::Shared { .. } => None,
        }
    }

    fn label(&self) -> String {
        match self {
            Source::Image(i) => i.rsplit('/').next().unwrap_or(i).to_string(),
            // A container image pin: the container's name.
            Source::Pin(p) if p.ends_with(".image") => p
                .rsplit_once("[name=")
                .and_then(|(_, rest)| rest.split_once(']'))
                .map_or_else(|| p.clone(), |(name, _)| name.to_string()),
            Source::Pin(p) => p.rsplit('#').next().unwrap_or(p).to_string(),
            Source::Rendered => "image".into(),
        }
    }

    /// Whether the rendered images tell its version: an image, or a value
    /// pin that is an image tag (`image.tag`, `…Tag`).
    fn is_image(&self) -> bool {
        match self {
            Source::Image(_) | Source::Rendered => true,
            Source::Pin(p) => p.ends_with("tag") || p.ends_with("Tag"),
        }
    }
}

/// Every app's versions in every environment.
pub struct Grid {
    /// (environment index, app) → versions; absent: no such app there.
    cells: BTreeMap<(usize, String), Vec<Version>>,
}

impl Grid {
    /// Reads the versions from the pins, rendering the apps that need it.
    pub fn new(root: &Path, all: &[Environment], per_env: &[Vec<Pin>]) -> Grid {
        // Each app's sources, over all environments, so that one lacking
        // a pin still shows what runs.
        let mut sources: BTreeMap<&str, Vec<Source>> = BTreeMap::new();
        for p in per_env.iter().flatten() {
            if let Some(s) = Source::of(p) {
                let v = sources.entry(&p.app).or_default();
                if !v.contains(&s) {
                    v.push(s);
                }
            }
        }
        for a in all.iter().flat_map(|e| &e.apps) {
            sources
                .entry(&a.name)
                .or_insert_with(|| vec![Source::Rendered]);
        }
        for v in sources.values_mut() {
            v.sort();
        }
        let mut cells = BTreeMap::new();
        for (i, e) in all.iter().enumerate() {
            for a in &e.apps {
                let list = sources.get(a.name.as_str()).map_or(&[][..], Vec::as_slice);
                let versions = list
                    .iter()
                    .map(|s| pinned(&per_env[i], &a.name, s, list.len() > 1))
                    .collect();
                cells.insert((i, a.name.clone()), versions);
            }
        }
        let mut grid = Grid { cells };
        grid.fill_from_renders(root, all, &sources);
        grid
    }

    /// The versions of `app` in environment `i` (None: no such app there).
    pub fn versions(&self, i: usize, app: &str) -> Option<Vec<Version>> {
        self.cells.get(&(i, app.to_string())).cloned()
    }

    /// Renders the apps with an image version no pin gives, and reads it
    /// from their manifests. A render that fails leaves the version
    /// unknown: the board shows what it can.
    fn fill_from_renders(
        &mut self,
        root: &Path,
        all: &[Environment],
        sources: &BTreeMap<&str, Vec<Source>>,
    ) {
        let wanted: Vec<(usize, String)> = self
            .cells
            .iter()
            .filter(|((_, app), versions)| {
                let list = sources.get(app.as_str()).map_or(&[][..], Vec::as_slice);
                versions
                    .iter()
                    .zip(list)
                    .any(|(v, s)| v.tag.is_none() && v.digest.is_none() && s.is_image())
            })
            .map(|(k, _)| k.clone())
            .collect();
        if wanted.is_empty() {
            return;
        }
        let jobs: Vec<env::Job> = env::plan(root, all, &Selection::default())
            .into_iter()
            .filter(|j| {
                wanted
                    .iter()
                    .any(|(i, app)| all[*i].name == j.env && *app == j.app)
            })
            .collect();
        // All at once; when one fails, each alone, keeping the others.
        let rendered = env::render_all(&jobs, &|| {}).unwrap_or_else(|_| {
            jobs.iter()
                .filter_map(|j| env::render_all(std::slice::from_ref(j), &|| {}).ok())
                .flatten()
                .collect()
        });
        for r in rendered {
            let Some(i) = all.iter().position(|e| e.name == r.env) else {
                continue;
            };
            let images: Vec<ImageRef> = r
                .objects
                .iter()
                // `render_all` renders afresh (no cache): every object
                // carries its document.
                .flat_map(|o| {
                    o.node
                        .document()
                        .map_or_else(Vec::new, |n| container_images(n))
                })
                .map(|i| ImageRef::parse(&i))
                .collect();
            let list = sources.get(r.app.as_str()).map_or(&[][..], Vec::as_slice);
            if let Some(versions) = self.cells.get_mut(&(i, r.app.clone())) {
                for (v, s) in versions.iter_mut().zip(list) {
                    if v.tag.is_none() && v.digest.is_none() {
                        fill(v, s, &images);
                    }
                }
            }
        }
    }
}

/// The version `source` of `app` pins in an environment's `pins`.
fn pinned(pins: &[Pin], app: &str, source: &Source, labelled: bool) -> Version {
    let value = |name: &str| {
        pins.iter()
            .find(|p| p.app == app && p.name == name)
            .and_then(|p| p.value.clone())
    };
    let (tag, digest) = match source {
        Source::Image(image) => (
            value(&format!("{image}:newTag")),
            value(&format!("{image}:digest")),
        ),
        // A container image pin (kustomize's trace found it in a patch)
        // holds a whole reference: its tag and digest are the version.
        Source::Pin(name) if name.ends_with(".image") => match value(name) {
            Some(r) => (
                super::super::traced::tag_of_reference(&r).map(str::to_string),
                super::super::traced::digest_of_reference(&r).map(str::to_string),
            ),
            None => (None, None),
        },
        Source::Pin(name) => (value(name), None),
        Source::Rendered => (None, None),
    };
    Version {
        label: labelled.then(|| source.label()),
        tag,
        digest,
        rendered: false,
    }
}

/// Fills `v` from the rendered `images`: for an `images:` entry, the
/// image of that name, else the only one whose last path component is the
/// same (an overlay's `newName` moves it to another registry); for a tag
/// pin, the app's only image.
fn fill(v: &mut Version, source: &Source, refs: &[ImageRef]) {
    let found = match source {
        Source::Image(name) => {
            let last = |n: &str| n.rsplit('/').next().unwrap_or(n).to_string();
            refs.iter()
                .find(|r| &r.name == name)
                .or_else(|| only(refs.iter().filter(|r| last(&r.name) == last(name))))
        }
        Source::Pin(_) | Source::Rendered => only(refs.iter()),
    };
    if let Some(r) = found {
        v.tag = r.tag.clone();
        v.digest = r.digest.clone();
        v.rendered = v.tag.is_some() || v.digest.is_some();
    }
}

/// The one distinct item of `it`, if there is exactly one.
fn only<'a>(it: impl Iterator<Item = &'a ImageRef>) -> Option<&'a ImageRef> {
    let mut distinct: Vec<&ImageRef> = Vec::new();
    for r in it {
        if !distinct.contains(&r) {
            distinct.push(r);
        }
    }
    match distinct[..] {
        [one] => Some(one),
        _ => None,
    }
}

/// An image reference split as kustomize's image transformer splits it
/// (`name[:tag][@digest]`, a `:port` in the registry part not a tag).
#[derive(Clone, Debug, PartialEq, Eq)]
struct ImageRef {
    name: String,
    tag: Option<String>,
    digest: Option<String>,
}

impl ImageRef {
    fn parse(image: &str) -> ImageRef {
        let (rest, digest) = match image.split_once('@') {
            Some((r, d)) => (r, Some(d.to_string())),
            None => (image, None),
        };
        // A `:` after the last `/` starts the tag; one before is a port.
        let (name, tag) = match rest.rsplit_once(':') {
            Some((n, t)) if !t.contains('/') => (n, Some(t.to_string())),
            _ => (rest, None),
        };
        ImageRef {
            name: name.to_string(),
            tag: tag.filter(|t| !t.is_empty()),
            digest: digest.filter(|d| !d.is_empty()),
        }
    }
}

/// The `image` of every container, init container and ephemeral container
/// in a rendered object, wherever its pod template is.
fn container_images(node: &crate::yaml::Node) -> Vec<String> {
    let mut out = Vec::new();
    walk(node, &mut out);
    out
}

fn walk(node: &crate::yaml::Node, out: &mut Vec<String>) {
    if let Some(items) = node.as_seq() {
        for i in items {
            walk(i, out);
        }
        return;
    }
    let Some(entries) = node.as_map() else { return };
    for (k, v) in entries {
        let key = k.as_str().unwrap_or_default();
        if matches!(key, "containers" | "initContainers" | "ephemeralContainers") {
            for c in v.as_seq().into_iter().flatten() {
                if let Some(image) = c.get_str("image") {
                    out.push(image.to_string());
                }
            }
        } else {
            walk(v, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_split_like_kustomize() {
        let r = |s: &str| {
            let r = ImageRef::parse(s);
            (r.name, r.tag, r.digest)
        };
        let some = |s: &str| Some(s.to_string());
        assert_eq!(r("redis"), ("redis".into(), None, None));
        assert_eq!(r("redis:7.2"), ("redis".into(), some("7.2"), None));
        assert_eq!(
            r("registry:5000/shop/web:1.4.2@sha256:ab"),
            (
                "registry:5000/shop/web".into(),
                some("1.4.2"),
                some("sha256:ab")
            )
        );
        assert_eq!(
            r("registry:5000/shop/web"),
            ("registry:5000/shop/web".into(), None, None)
        );
        assert_eq!(
            r("ghcr.io/acme/api@sha256:cd"),
            ("ghcr.io/acme/api".into(), None, some("sha256:cd"))
        );
    }

    #[test]
    fn versions_print_as_kustomize_writes_them() {
        let d = "sha256:9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d";
        let v = |tag: Option<&str>, digest: Option<&str>| Version {
            tag: tag.map(str::to_string),
            digest: digest.map(str::to_string),
            ..Version::default()
        };
        assert_eq!(
            v(Some("2.8.1"), Some(d)).short(),
            "2.8.1@sha256:9a1b2c3d4e5f"
        );
        assert_eq!(v(Some("2.8.1"), Some(d)).full(), format!("2.8.1@{d}"));
        assert_eq!(v(None, Some(d)).short(), "sha256:9a1b2c3d4e5f");
        assert_eq!(v(None, None).short(), "-");
    }

    #[test]
    fn containers_are_found_in_any_pod_template() {
        let doc = "kind: CronJob\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          initContainers:\n          - image: busybox:1.36\n          containers:\n          - name: a\n            image: ghcr.io/acme/job:2.0\n";
        let node = crate::yaml::parse_one(doc, crate::yaml::Resolver::V3)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            container_images(&node),
            ["busybox:1.36", "ghcr.io/acme/job:2.0"]
        );
    }
}
