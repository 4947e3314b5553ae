//! Traced renders of kustomize apps: each container image the app renders,
//! with the file, line and span that set it (kustomize's provenance,
//! [`kustomize::Options::provenance`]), and the files the render read.
//! Pins are built on this: a version is pinned where it is set, whatever
//! the layout (an `images:` entry, a strategic-merge patch file, a JSON
//! 6902 operation, an inline patch, a replacement's source), so promotion
//! does not need a second understanding of kustomize.
//!
//! It renders and locates; it does not decide what is a pin (`pin.rs`).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::Error;
use crate::env::{Environment, Source};
use crate::kustomize;
use crate::yaml::edit::Seg;
use crate::yaml::{self, Node, Resolver, Value};

/// One kustomize app rendered with provenance.
#[derive(Clone, Debug, Default)]
pub struct TracedApp {
    /// Every file and directory the render read, relative to the root.
    pub files_read: BTreeSet<PathBuf>,
    /// Every container image of the output, in output order.
    pub images: Vec<ImageField>,
}

/// A container's `image` in the rendered output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageField {
    /// `Kind/name`, with the name the resource had before the build
    /// renamed it (so it is the same in every environment).
    pub resource: String,
    /// The field, in the diff's syntax:
    /// `spec.template.spec.containers[name=web].image`.
    pub path: String,
    /// The reference rendered.
    pub value: String,
    /// Where it was set, when kustomize's trace knows.
    pub set_at: Option<SetAt>,
}

impl ImageField {
    /// The pin name of this field: `Deployment/web#spec.…image`.
    pub fn pin_name(&self) -> String {
        format!("{}#{}", self.resource, self.path)
    }
}

/// Where a value was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAt {
    /// The file, relative to the root.
    pub file: PathBuf,
    /// Its 1-based line there.
    pub line: u32,
    /// Byte offsets in the text that was parsed: the file (CRLF read as
    /// LF when `crlf`), or the inline patch string holding it.
    pub start: u32,
    /// Just past the value's text.
    pub end: u32,
    /// The value is in a YAML string of the file (an inline patch) whose
    /// scalar is at this line.
    pub embedded_at: Option<u32>,
    /// The file's CRLF line ends were read as LF.
    pub crlf: bool,
}

impl SetAt {
    /// Whether the value was set by an `images:` entry of a kustomization
    /// (the image transformer stamps what it writes with its entry).
    pub fn by_images_entry(&self) -> bool {
        self.embedded_at.is_none()
            && self
                .file
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| kustomize::FILE_NAMES.contains(&n))
    }

    /// `file:line`.
    pub fn display(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// Traced renders of the kustomize apps of every environment under one
/// root, each made once and kept: whether a file is an environment's own
/// (no other environment's render of the app reads it) needs them all.
pub struct Tracer<'a> {
    root: &'a Path,
    envs: Vec<Environment>,
    done: RefCell<BTreeMap<(String, String), Rc<TracedApp>>>,
}

impl<'a> Tracer<'a> {
    /// A tracer over the environments of `root`.
    pub fn new(root: &'a Path) -> Result<Tracer<'a>, Error> {
        Ok(Tracer {
            root,
            envs: crate::env::load_environments(root)?,
            done: RefCell::default(),
        })
    }

    /// The root.
    pub fn root(&self) -> &Path {
        self.root
    }

    /// The environments of the root.
    pub fn envs(&self) -> &[Environment] {
        &self.envs
    }

    /// `app` of environment `env` rendered with provenance (None: no such
    /// kustomize app).
    pub fn app(&self, env: &str, app: &str) -> Result<Option<Rc<TracedApp>>, Error> {
        let key = (env.to_string(), app.to_string());
        if let Some(t) = self.done.borrow().get(&key) {
            return Ok(Some(t.clone()));
        }
        let dir = self
            .envs
            .iter()
            .filter(|e| e.name == env)
            .flat_map(|e| &e.apps)
            .find(|a| a.name == app)
            .and_then(|a| match &a.source {
                Source::Kustomize(dir) => Some(dir.clone()),
                Source::Helm(_) => None,
            });
        let Some(dir) = dir else { return Ok(None) };
        let t =
            Rc::new(trace(self.root, &dir).map_err(|e| {
                Error::Pin(format!("{env}/{app}: rendering to find its pins: {e}"))
            })?);
        self.done.borrow_mut().insert(key, t.clone());
        Ok(Some(t))
    }

    /// Traces every kustomize app of `apps` (every app when empty) in
    /// every environment that renders it, on every core, ahead of
    /// [`Tracer::app`]'s one-by-one calls: a promotion of every app traces
    /// each in both environments (a thousand builds at 500 apps). A trace
    /// that fails is left for [`Tracer::app`] to report, in order.
    pub fn prefetch(&self, apps: &[String]) {
        use rayon::prelude::*;
        let todo: Vec<((String, String), PathBuf)> = {
            let done = self.done.borrow();
            self.envs
                .iter()
                .flat_map(|e| e.apps.iter().map(move |a| (e, a)))
                .filter(|(_, a)| apps.is_empty() || apps.contains(&a.name))
                .filter_map(|(e, a)| match &a.source {
                    Source::Kustomize(dir) => Some(((e.name.clone(), a.name.clone()), dir.clone())),
                    Source::Helm(_) => None,
                })
                .filter(|(key, _)| !done.contains_key(key))
                .collect()
        };
        let traced: Vec<((String, String), TracedApp)> = todo
            .into_par_iter()
            .filter_map(|(key, dir)| trace(self.root, &dir).ok().map(|t| (key, t)))
            .collect();
        let mut done = self.done.borrow_mut();
        for (key, t) in traced {
            done.entry(key).or_insert_with(|| Rc::new(t));
        }
    }

    /// The environments other than `env` that render `app`, with what
    /// their renders read.
    pub fn others(&self, env: &str, app: &str) -> Result<Vec<(String, Rc<TracedApp>)>, Error> {
        let names: Vec<String> = self
            .envs
            .iter()
            .filter(|e| e.name != env && e.apps.iter().any(|a| a.name == app))
            .map(|e| e.name.clone())
            .collect();
        let mut out = Vec::new();
        for n in names {
            if let Some(t) = self.app(&n, app)? {
                out.push((n, t));
            }
        }
        Ok(out)
    }
}

/// Renders the kustomization in `dir` (relative to `root`) with provenance.
pub fn trace(root: &Path, dir: &Path) -> Result<TracedApp, Error> {
    let opts = kustomize::Options {
        helm: kustomize::HelmSettings {
            enabled: true,
            ..Default::default()
        },
        provenance: true,
        ..Default::default()
    };
    let b = kustomize::build(&root.join(dir), &opts)
        .map_err(|e| Error::Pin(format!("{}: {e}", dir.display())))?;
    // The build reads canonical paths: make them relative to the root.
    let base = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let rel = |p: &Path| -> PathBuf {
        p.strip_prefix(&base)
            .or_else(|_| p.strip_prefix(root))
            .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
    };
    let files_read = b.files_read.iter().map(|p| rel(p)).collect();
    let mut images = Vec::new();
    for (i, o) in b.objects.iter().enumerate() {
        let id = b.original_ids.get(i).unwrap_or(&o.id);
        let resource = format!("{}/{}", id.gvk.kind, id.name);
        let mut found = Vec::new();
        containers(&o.node, &mut String::new(), &mut found);
        for (path, node) in found {
            let Some(value) = node.as_str() else { continue };
            let set_at = b.provenance.as_ref().and_then(|m| m.locate(&node.pos));
            images.push(ImageField {
                resource: resource.clone(),
                path,
                value: value.to_string(),
                set_at: set_at.map(|l| SetAt {
                    file: rel(&l.text.file),
                    line: l.line,
                    start: l.start,
                    end: l.end,
                    embedded_at: l.text.embedded_at,
                    crlf: l.text.crlf,
                }),
            });
        }
    }
    Ok(TracedApp { files_read, images })
}

/// Every `containers[].image` and `initContainers[].image` below `n`, at
/// any depth, as kustomize's image transformer finds them (its legacy
/// filter walks every such list), with the path in the diff's syntax.
fn containers<'n>(n: &'n Node, path: &mut String, out: &mut Vec<(String, &'n Node)>) {
    let Value::Map(entries) = &n.value else {
        return;
    };
    for (k, v) in entries {
        let Some(key) = k.key_text() else { continue };
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        match &v.value {
            Value::Seq(items) if key == "containers" || key == "initContainers" => {
                for (i, c) in items.iter().enumerate() {
                    let Some(image) = c.get("image") else {
                        continue;
                    };
                    let at = match c.get_str("name") {
                        Some(name) => format!("[name={name}]"),
                        None => format!("[{i}]"),
                    };
                    out.push((format!("{path}{at}.image"), image));
                }
            }
            Value::Map(_) => containers(v, path, out),
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    containers(item, path, out);
                    path.truncate(len);
                }
            }
            Value::Scalar(_) => {}
        }
        path.truncate(len);
    }
}

/// Where a traced value is in its file, for the editor: the document and
/// the path of the scalar written at `at`, and, for an inline patch, the
/// path of the string in the file and the document and path inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spot {
    /// Document index in the file.
    pub doc: usize,
    /// The scalar (or, inline, the string holding the patch).
    pub path: Vec<Seg>,
    /// Inline: the document and path inside the string.
    pub inner: Option<(usize, Vec<Seg>)>,
    /// The scalar's text as written.
    pub text: String,
}

/// Finds the scalar `at` names in its file under `root`.
pub fn locate(root: &Path, at: &SetAt) -> Result<Spot, Error> {
    let file = root.join(&at.file);
    let lost = || {
        Error::Pin(format!(
            "{}: the value traced there is not a scalar the editor can reach",
            at.display()
        ))
    };
    let src = std::fs::read_to_string(&file)
        .map_err(|e| Error::Pin(format!("{}: {e}", at.file.display())))?;
    let src = match at.crlf {
        true => src.replace("\r\n", "\n"),
        false => src,
    };
    let docs = yaml::parse_all(&src, Resolver::V3)
        .map_err(|e| Error::Pin(format!("{}: {e}", at.file.display())))?;
    let Some(line) = at.embedded_at else {
        let (doc, path, text) = scalar_at(&docs, at.start).ok_or_else(lost)?;
        return Ok(Spot {
            doc,
            path,
            inner: None,
            text,
        });
    };
    // Inline: the string scalar whose value starts at that line.
    let (doc, path, inline) = string_at_line(&docs, line).ok_or_else(lost)?;
    let inner = yaml::parse_all(&inline, Resolver::V3).map_err(|_| lost())?;
    let (inner_doc, inner_path, text) = scalar_at(&inner, at.start).ok_or_else(lost)?;
    Ok(Spot {
        doc,
        path,
        inner: Some((inner_doc, inner_path)),
        text,
    })
}

/// The scalar starting at byte `start`: its document, path and text.
fn scalar_at(docs: &[Node], start: u32) -> Option<(usize, Vec<Seg>, String)> {
    fn walk(n: &Node, start: u32, path: &mut Vec<Seg>) -> Option<String> {
        match &n.value {
            Value::Scalar(s) => (n.pos.start == start).then(|| s.text.clone()),
            Value::Seq(items) => items.iter().enumerate().find_map(|(i, item)| {
                path.push(Seg::Index(i));
                let r = walk(item, start, path);
                if r.is_none() {
                    path.pop();
                }
                r
            }),
            Value::Map(entries) => entries.iter().find_map(|(k, v)| {
                path.push(Seg::Key(k.key_text()?.to_string()));
                let r = walk(v, start, path);
                if r.is_none() {
                    path.pop();
                }
                r
            }),
        }
    }
    docs.iter().enumerate().find_map(|(i, d)| {
        let mut path = Vec::new();
        walk(d, start, &mut path).map(|text| (i, path, text))
    })
}

/// The multi-line string scalar at `line` (an inline patch).
fn string_at_line(docs: &[Node], line: u32) -> Option<(usize, Vec<Seg>, String)> {
    fn walk(n: &Node, line: u32, path: &mut Vec<Seg>) -> Option<String> {
        match &n.value {
            Value::Scalar(s) => {
                (n.pos.line == line && s.text.contains('\n')).then(|| s.text.clone())
            }
            Value::Seq(items) => items.iter().enumerate().find_map(|(i, item)| {
                path.push(Seg::Index(i));
                let r = walk(item, line, path);
                if r.is_none() {
                    path.pop();
                }
                r
            }),
            Value::Map(entries) => entries.iter().find_map(|(k, v)| {
                path.push(Seg::Key(k.key_text()?.to_string()));
                let r = walk(v, line, path);
                if r.is_none() {
                    path.pop();
                }
                r
            }),
        }
    }
    docs.iter().enumerate().find_map(|(i, d)| {
        let mut path = Vec::new();
        walk(d, line, &mut path).map(|text| (i, path, text))
    })
}

/// The tag of an image reference (None when none is written).
pub fn tag_of_reference(reference: &str) -> Option<&str> {
    let no_digest = reference.split_once('@').map_or(reference, |(r, _)| r);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.rsplit_once(':').map(|(_, tag)| tag)
}

/// The digest of an image reference (None when none is written).
pub fn digest_of_reference(reference: &str) -> Option<&str> {
    reference.split_once('@').map(|(_, d)| d)
}

/// The repository of an image reference (no tag, no digest).
pub fn repository_of_reference(reference: &str) -> &str {
    let no_digest = reference.split_once('@').map_or(reference, |(r, _)| r);
    let slash = no_digest.rfind('/').map_or(0, |i| i + 1);
    match no_digest.get(slash..).and_then(|l| l.rfind(':')) {
        Some(i) => no_digest.get(..slash + i).unwrap_or(no_digest),
        None => no_digest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_repository_and_version() {
        assert_eq!(tag_of_reference("ghcr.io/a/web:1.4.3"), Some("1.4.3"));
        assert_eq!(tag_of_reference("localhost:5000/web@sha256:ab"), None);
        assert_eq!(
            digest_of_reference("localhost:5000/web:1@sha256:ab"),
            Some("sha256:ab")
        );
        assert_eq!(tag_of_reference("localhost:5000/web"), None);
        assert_eq!(
            repository_of_reference("localhost:5000/web:1@sha256:ab"),
            "localhost:5000/web"
        );
        assert_eq!(repository_of_reference("nginx"), "nginx");
    }

    #[test]
    fn inline_and_file_values_are_found_by_their_span() {
        let src = "a: 1\n---\nb:\n  - c: x\n    d: |-\n      - op: add\n        value: v\n";
        let docs = yaml::parse_all(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"));
        let start = src.find("x").unwrap_or_default() as u32;
        let (doc, path, text) = scalar_at(&docs, start).unwrap_or_else(|| panic!("lost"));
        assert_eq!((doc, text.as_str()), (1, "x"));
        assert_eq!(yaml::edit::path_text(&path), "b[0].c");
        let (doc, path, inline) = string_at_line(&docs, 5).unwrap_or_else(|| panic!("lost"));
        assert_eq!((doc, yaml::edit::path_text(&path)), (1, "b[0].d".into()));
        assert_eq!(inline, "- op: add\n  value: v");
    }
}
