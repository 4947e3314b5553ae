//! What an environment's output holds: each app's files (one manifest, or
//! one file per resource), and the ownership manifest that records which
//! files hydrate wrote so it prunes only its own.

use std::collections::{BTreeMap, BTreeSet};

use super::{Error, LayoutError};
use crate::env::{Layout, Rendered};
use crate::k8s::ObjectId;

/// Where the ownership manifest lives in an output. No `.json` (or
/// `.yaml`/`.yml`/`.jsonnet`) extension: Argo CD's directory source reads
/// every file matching `^.*\.(yaml|yml|json|jsonnet)$`, hidden directories
/// included, and fails on one that is not a Kubernetes object.
pub const OWNED_PATH: &str = ".hydrate/owned";

/// Where hydrate kept the ownership manifest before; read when
/// [`OWNED_PATH`] is missing, and deleted when the new one is written.
pub const LEGACY_OWNED_PATH: &str = ".hydrate/owned.json";

/// Whether `path` is hydrate's bookkeeping rather than output.
pub fn is_bookkeeping(path: &str) -> bool {
    path == OWNED_PATH || path == LEGACY_OWNED_PATH
}

/// Files hydrate wrote, by app (paths relative to the output root), and
/// for directory output the SHA-256 of each file's content as written, so
/// that a file changed since is never pruned.
///
/// Manifests written before hashes existed (and `.hydrate/owned.json`)
/// have no `hashes`: their files cannot be verified, and are then
/// rewritten when rendered again but never deleted (see `dir`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owned {
    /// app → its files.
    pub apps: BTreeMap<String, BTreeSet<String>>,
    /// path → `sha256:<hex>` of what hydrate wrote (directory output only).
    pub hashes: BTreeMap<String, String>,
}

impl Owned {
    /// Reads an ownership manifest; an unreadable one counts as empty
    /// (hydrate then prunes nothing, which is the safe side). Entries that
    /// are not a relative path inside the output are dropped.
    pub fn parse(bytes: &[u8]) -> Owned {
        Owned::parse_checked(bytes).0
    }

    /// [`Owned::parse`], also returning the entries it dropped (absolute,
    /// empty or with a `..` component), for a warning.
    pub fn parse_checked(bytes: &[u8]) -> (Owned, Vec<String>) {
        let mut rejected = Vec::new();
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return (Owned::default(), rejected);
        };
        let mut apps = BTreeMap::new();
        if let Some(map) = v.get("apps").and_then(|a| a.as_object()) {
            for (app, files) in map {
                let mut kept = BTreeSet::new();
                for f in files.as_array().into_iter().flatten() {
                    match f.as_str() {
                        Some(f) if is_safe_path(f) => {
                            kept.insert(f.to_string());
                        }
                        Some(f) => rejected.push(f.to_string()),
                        None => rejected.push(f.to_string()),
                    }
                }
                apps.insert(app.clone(), kept);
            }
        }
        let hashes = v
            .get("hashes")
            .and_then(|h| h.as_object())
            .into_iter()
            .flatten()
            .filter(|(p, _)| is_safe_path(p))
            .filter_map(|(p, h)| Some((p.clone(), h.as_str()?.to_string())))
            .collect();
        (Owned { apps, hashes }, rejected)
    }

    /// The manifest's bytes (stable: sorted, pretty, ends with a newline).
    /// `hashes` is present only when there are any (branch output has none:
    /// git already addresses every file by its content).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::json!({
            "generator": "hydrate",
            "note": "files hydrate wrote here; it deletes only these",
            "apps": self.apps,
        });
        if !self.hashes.is_empty() {
            v["hashes"] = serde_json::json!(self.hashes);
        }
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s.into_bytes()
    }

    /// Every path some app owns.
    pub fn paths(&self) -> BTreeSet<&str> {
        self.apps.values().flatten().map(String::as_str).collect()
    }
}

/// `sha256:<hex>` of `bytes`, as [`Owned::hashes`] records it.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A relative path that stays inside the output root.
pub(super) fn is_safe_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.contains(['\\', '\0'])
        && !p.split('/').any(|c| c == ".." || c == "." || c.is_empty())
}

/// The files of one rendered app, relative to the output root.
///
/// With `layout: resources`, each object is written alone to
/// `<app>/<kind>[.<group>]-<name>[_<namespace>].yaml`: the kind lowercased,
/// the API group after a dot unless it is the core group
/// (`deployment.apps-web.yaml`, `service-web.yaml`), and the namespace only
/// when the app has the same group, kind and name in more than one
/// namespace. Characters other than ASCII letters, digits, `-`, `_` and `.`
/// in the name and namespace become `_`; a kind or group with any other
/// character is an error. Two resources with the same identity (group,
/// kind, namespace, name), or two that map to one file, are an error
/// naming both: a file is never overwritten by another resource.
pub fn app_files(r: &Rendered, layout: Layout) -> Result<BTreeMap<String, Vec<u8>>, Error> {
    let mut out = BTreeMap::new();
    match layout {
        Layout::Manifest => {
            out.insert(
                format!("{}/manifest.yaml", r.app),
                r.manifest.clone().into_bytes(),
            );
        }
        Layout::Resources => {
            let mut written: BTreeMap<String, usize> = BTreeMap::new();
            for (i, o) in r.objects.iter().enumerate() {
                let file = format!("{}/{}", r.app, resource_file_name(r, i)?);
                if let Some(&j) = written.get(&file) {
                    return Err(clash(r, j, i, file));
                }
                written.insert(file.clone(), i);
                out.insert(file, o.printed.clone().into_bytes());
            }
        }
    }
    Ok(out)
}

/// Where object `i` of `r` came from, for messages.
fn source_of(r: &Rendered, i: usize) -> String {
    match r.objects.get(i).and_then(|o| o.source.as_deref()) {
        Some(s) => s.to_string(),
        None => format!("resource {}", i + 1),
    }
}

/// The error for objects `first` and `second` of `r` landing on `file`.
fn clash(r: &Rendered, first: usize, second: usize, file: String) -> Error {
    let (a, b) = (&r.objects[first].id, &r.objects[second].id);
    let sources = [source_of(r, first), source_of(r, second)];
    let e = if same_object(a, b) {
        LayoutError::DuplicateObject {
            env: r.env.clone(),
            app: r.app.clone(),
            id: a.clone(),
            sources,
            file,
        }
    } else {
        LayoutError::FileNameClash {
            env: r.env.clone(),
            app: r.app.clone(),
            ids: [a.clone(), b.clone()],
            sources,
            file,
        }
    };
    Error::Layout(Box::new(e))
}

/// One Kubernetes object: the version is only a view of it.
fn same_object(a: &ObjectId, b: &ObjectId) -> bool {
    a.gvk.group == b.gvk.group
        && a.gvk.kind == b.gvk.kind
        && a.namespace == b.namespace
        && a.name == b.name
}

/// The file name of object `i` of `r` (see [`app_files`]).
fn resource_file_name(r: &Rendered, i: usize) -> Result<String, Error> {
    let o = &r.objects[i];
    let id = &o.id;
    let unsafe_name = |reason: String| {
        Error::Layout(Box::new(LayoutError::UnsafeName {
            env: r.env.clone(),
            app: r.app.clone(),
            id: id.clone(),
            source_name: source_of(r, i),
            reason,
        }))
    };
    let word = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphanumeric())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !word(&id.gvk.kind) {
        return Err(unsafe_name(format!(
            "kind {:?} is not a word of ASCII letters, digits, `-`, `_` and `.`",
            id.gvk.kind
        )));
    }
    if !id.gvk.group.is_empty() && !word(&id.gvk.group) {
        return Err(unsafe_name(format!(
            "API group {:?} is not a word of ASCII letters, digits, `-`, `_` and `.`",
            id.gvk.group
        )));
    }
    let mut name = id.gvk.kind.to_ascii_lowercase();
    if !id.gvk.group.is_empty() {
        name = format!("{name}.{}", id.gvk.group);
    }
    name = format!("{name}-{}", sanitize(&id.name));
    // The same group, kind and name in two namespaces: keep both apart.
    let namespaces = r
        .objects
        .iter()
        .filter(|o| {
            o.id.gvk.group == id.gvk.group && o.id.gvk.kind == id.gvk.kind && o.id.name == id.name
        })
        .filter(|o| o.id.namespace != id.namespace)
        .count();
    if namespaces > 0 {
        name = format!("{name}_{}", sanitize(&id.namespace));
    }
    Ok(format!("{name}.yaml"))
}

/// A name or namespace as a file name part: only ASCII letters, digits,
/// `-`, `_` and `.` are kept (so no `/`), anything else becomes `_`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The output of one environment: the files of the apps rendered this run.
#[derive(Clone, Debug)]
pub struct EnvOutput {
    /// Environment name.
    pub env: String,
    /// app → path → bytes, for the apps rendered this run.
    pub apps: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Every app the environment has now; with `complete`, owned apps not
    /// listed here are pruned.
    pub known_apps: BTreeSet<String>,
    /// Whether every app of the environment was rendered this run.
    pub complete: bool,
    /// Branch output: the root-level `hydrator.metadata` (Argo CD's
    /// top-level file, where gitops-promoter's default `activePath` looks).
    pub root_metadata: Option<Vec<u8>>,
    /// Branch output with READMEs: the root `.gitattributes`.
    pub attributes: Option<Vec<u8>>,
    /// Branch output: the note for `refs/notes/hydrator.metadata` on the
    /// hydrated commit.
    pub note: Option<Vec<u8>>,
}

/// The edits that take an output from its `old` ownership to `out`:
/// path → new content (None: delete), the new ownership, and which apps changed
/// in ownership (a hint; content comparison happens at write time).
pub fn changes(old: &Owned, out: &EnvOutput) -> (BTreeMap<String, Option<Vec<u8>>>, Owned) {
    let mut edits = BTreeMap::new();
    let mut owned = old.clone();
    for (app, files) in &out.apps {
        if let Some(prev) = old.apps.get(app) {
            for stale in prev.iter().filter(|p| !files.contains_key(*p)) {
                edits.insert(stale.clone(), None);
            }
        }
        for (path, bytes) in files {
            edits.insert(path.clone(), Some(bytes.clone()));
        }
        owned
            .apps
            .insert(app.clone(), files.keys().cloned().collect());
    }
    if out.complete {
        let gone: Vec<String> = old
            .apps
            .keys()
            .filter(|a| !out.known_apps.contains(*a))
            .cloned()
            .collect();
        for app in gone {
            for path in old.apps.get(&app).into_iter().flatten() {
                edits.insert(path.clone(), None);
            }
            owned.apps.remove(&app);
        }
    }
    edits.insert(OWNED_PATH.to_string(), Some(owned.to_bytes()));
    edits.insert(LEGACY_OWNED_PATH.to_string(), None);
    (edits, owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(apps: &[(&str, &[&str])], complete: bool) -> EnvOutput {
        EnvOutput {
            env: "dev".into(),
            apps: apps
                .iter()
                .map(|(a, files)| {
                    (
                        a.to_string(),
                        files
                            .iter()
                            .map(|f| (f.to_string(), b"x".to_vec()))
                            .collect(),
                    )
                })
                .collect(),
            known_apps: apps.iter().map(|(a, _)| a.to_string()).collect(),
            complete,
            root_metadata: None,
            attributes: None,
            note: None,
        }
    }

    #[test]
    fn prunes_only_owned_files() {
        let (_, first) = changes(
            &Owned::default(),
            &out(
                &[
                    ("web", &["web/a.yaml", "web/b.yaml"]),
                    ("old", &["old/x.yaml"]),
                ],
                true,
            ),
        );
        let (edits, owned) = changes(&first, &out(&[("web", &["web/a.yaml"])], true));
        assert_eq!(edits.get("web/b.yaml"), Some(&None));
        assert_eq!(edits.get("old/x.yaml"), Some(&None));
        assert!(!owned.apps.contains_key("old"));
        // A partial run (filters, shards) keeps other apps' files.
        let (edits, owned) = changes(
            &first,
            &out(&[("web", &["web/a.yaml", "web/b.yaml"])], false),
        );
        assert!(!edits.contains_key("old/x.yaml"));
        assert!(owned.apps.contains_key("old"));
    }

    #[test]
    fn ownership_round_trips_and_rejects_escapes() {
        let mut o = Owned::default();
        o.apps
            .insert("web".into(), ["web/manifest.yaml".to_string()].into());
        assert_eq!(Owned::parse(&o.to_bytes()), o);
        let evil = br#"{"apps": {"x": ["../../etc/passwd", "/abs", "x/ok.yaml"]}}"#;
        let parsed = Owned::parse(evil);
        assert_eq!(parsed.apps["x"].len(), 1);
    }

    /// An app whose objects are parsed from `(source, yaml)` pairs.
    fn app(objects: &[(Option<&str>, &str)]) -> Rendered {
        let objects = objects
            .iter()
            .map(|(source, text)| {
                let node = crate::yaml::parse_one(text, crate::yaml::Resolver::V3)
                    .unwrap_or_else(|e| panic!("{e}"));
                crate::k8s::Object::new(
                    std::sync::Arc::new(node),
                    text.to_string(),
                    source.map(str::to_string),
                )
                .into()
            })
            .collect();
        Rendered {
            env: "dev".into(),
            app: "web".into(),
            objects,
            manifest: String::new(),
            files_read: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn names(r: &Rendered) -> Result<Vec<String>, String> {
        app_files(r, Layout::Resources)
            .map(|f| f.into_keys().collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn resource_files_are_named_from_group_kind_and_name() {
        let r = app(&[
            (None, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"),
            (None, "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"),
            (None, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \"system:web\"}\n"),
        ]);
        assert_eq!(
            names(&r).unwrap(),
            [
                "web/clusterrole.rbac.authorization.k8s.io-system_web.yaml",
                "web/deployment.apps-web.yaml",
                "web/service-web.yaml",
            ]
        );
        let files = app_files(&r, Layout::Resources).unwrap();
        assert_eq!(
            files["web/service-web.yaml"],
            b"apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
        );
    }

    #[test]
    fn same_kind_and_name_in_two_groups_both_land() {
        let r = app(&[
            (
                None,
                "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
            ),
            (
                None,
                "apiVersion: other.io/v1\nkind: Widget\nmetadata: {name: w}\n",
            ),
            (None, "apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n"),
        ]);
        assert_eq!(
            names(&r).unwrap(),
            [
                "web/widget-w.yaml",
                "web/widget.example.com-w.yaml",
                "web/widget.other.io-w.yaml",
            ]
        );
    }

    #[test]
    fn same_name_in_two_namespaces_gets_the_namespace() {
        let r = app(&[
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n",
            ),
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: b}\n",
            ),
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: a}\n",
            ),
        ]);
        assert_eq!(
            names(&r).unwrap(),
            [
                "web/configmap-c_a.yaml",
                "web/configmap-c_b.yaml",
                "web/configmap-d.yaml"
            ]
        );
    }

    #[test]
    fn a_duplicate_identity_is_an_error_naming_both_sources() {
        let r = app(&[
            (
                Some("c/templates/a.yaml"),
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            ),
            (
                Some("c/templates/b.yaml"),
                "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: web}\n",
            ),
        ]);
        let e = names(&r).unwrap_err();
        assert!(
            e.contains("dev/web: apps/v1 Deployment web is rendered twice"),
            "{e}"
        );
        assert!(
            e.contains("c/templates/a.yaml") && e.contains("c/templates/b.yaml"),
            "{e}"
        );
        assert!(e.contains("web/deployment.apps-web.yaml"), "{e}");
        // Without sources, the resources are named by their place.
        let r = app(&[
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            ),
            (None, "apiVersion: v1\nkind: Secret\nmetadata: {name: c}\n"),
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            ),
        ]);
        let e = names(&r).unwrap_err();
        assert!(e.contains("(resource 1 and resource 3)"), "{e}");
        // The manifest layout has one file whatever the objects.
        assert!(app_files(&r, Layout::Manifest).is_ok());
    }

    #[test]
    fn names_that_clash_after_sanitizing_are_an_error() {
        let r = app(&[
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a:b\"}\n",
            ),
            (
                None,
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a/b}\n",
            ),
        ]);
        let e = names(&r).unwrap_err();
        assert!(
            e.contains("v1 ConfigMap a:b (resource 1) and v1 ConfigMap a/b (resource 2) would both be written to web/configmap-a_b.yaml"),
            "{e}"
        );
    }

    #[test]
    fn kinds_and_groups_that_are_not_words_are_refused() {
        for text in [
            "apiVersion: v1\nkind: ../../x\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: .hidden\nmetadata: {name: a}\n",
            "apiVersion: v1\nmetadata: {name: a}\n",
            "apiVersion: ../../v1/v1\nkind: A\nmetadata: {name: a}\n",
        ] {
            let e = names(&app(&[(Some("c/templates/x.yaml"), text)])).unwrap_err();
            assert!(
                e.contains("cannot name a file after it") && e.contains("c/templates/x.yaml"),
                "{e}"
            );
        }
        // Names are sanitized into one path component.
        let r = app(&[(
            None,
            "apiVersion: v1\nkind: A\nmetadata: {name: ../../etc}\n",
        )]);
        assert_eq!(names(&r).unwrap(), ["web/a-.._.._etc.yaml"]);
    }

    #[test]
    fn any_identity_gives_one_safe_file_or_an_error() {
        let nasty = [
            "",
            ".",
            "..",
            "../..",
            "/",
            "/etc/passwd",
            "a/../../b",
            "a\\b",
            "~",
            "\u{0}",
            "é",
            "a b",
            ":",
            "-",
            "_",
            "x.yaml",
            ".hydrate",
            "owned.json",
        ];
        for kind in nasty.iter().chain(&["Deployment"]) {
            for group in nasty.iter().chain(&["apps"]) {
                for name in &nasty {
                    let node = crate::yaml::Node::map();
                    let mut o =
                        crate::k8s::Object::new(std::sync::Arc::new(node), String::new(), None);
                    o.id.gvk.kind = kind.to_string();
                    o.id.gvk.group = group.to_string();
                    o.id.name = name.to_string();
                    o.id.namespace = name.to_string();
                    let mut r = app(&[]);
                    r.objects = vec![o.into()];
                    let Ok(files) = app_files(&r, Layout::Resources) else {
                        continue;
                    };
                    for f in files.keys() {
                        let (dir, file) = f.split_once('/').unwrap_or_default();
                        assert_eq!(dir, "web", "{f}");
                        assert!(
                            is_safe_path(f)
                                && !file.contains(['/', '\\', '\u{0}'])
                                && !file.starts_with('.')
                                && file.ends_with(".yaml"),
                            "{kind:?} {group:?} {name:?}: {f}"
                        );
                    }
                }
            }
        }
    }
}
