//! Why each pin is one and where it is set: `hydrate pins --explain`. For
//! every pin of every app of each environment: what kind of pin it is (an
//! `images:` entry field, a container image kustomize's trace found in a
//! file only that environment renders, a declared value or file pin, a
//! chart path), the file and line that set it, and the container images an
//! environment runs from files it shares with others, which are not its to
//! change.
//!
//! It reads pins (`pin.rs`) and files; it decides nothing about them.

use std::path::{Path, PathBuf};

use super::pin::{self, Pin, Place};
use super::traced::Tracer;
use super::Error;
use crate::env::{self, Environment, PinDecl};
use crate::yaml::edit::Seg;
use crate::yaml::{self, Node, Resolver};

/// What makes a pin one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinKind {
    /// A field of an `images:` entry of the environment's kustomization.
    ImagesEntry,
    /// A container image set in a file only this environment renders (a
    /// patch, an inline patch, a replacement's source), found by
    /// kustomize's trace.
    Traced,
    /// A chart app's `chart:` path.
    ChartPath,
    /// A value path declared in `pins:`.
    DeclaredValue,
    /// An image-like value a chart app's own values file sets (the app
    /// declares no value pins).
    Convention,
    /// A file pin declared in `pins:`.
    DeclaredFile,
    /// Not a pin: the environment runs this value from a file other
    /// environments render too.
    Shared,
    /// Not a pin: an app with no pin in this environment runs this image;
    /// the line is where its render sets it.
    Unpinned,
}

impl PinKind {
    /// In a sentence.
    pub fn describe(&self) -> &'static str {
        match self {
            PinKind::ImagesEntry => "an `images:` entry of the app's kustomization",
            PinKind::Traced => "a container image set in a file only this environment renders",
            PinKind::ChartPath => "the chart app's `chart:` path",
            PinKind::DeclaredValue => "a value path declared in `pins:`",
            PinKind::Convention => {
                "an image value this environment's own values set (found by convention; the app declares no pins)"
            }
            PinKind::DeclaredFile => "a file pin declared in `pins:`",
            PinKind::Shared => {
                "not a pin: set in a file other environments render too (not this one's to change)"
            }
            PinKind::Unpinned => {
                "not a pin: the app has none here; this is the image it runs and where its render sets it"
            }
        }
    }

    /// A short machine name.
    pub fn name(&self) -> &'static str {
        match self {
            PinKind::ImagesEntry => "images-entry",
            PinKind::Traced => "traced",
            PinKind::ChartPath => "chart-path",
            PinKind::DeclaredValue => "declared-value",
            PinKind::Convention => "convention",
            PinKind::DeclaredFile => "declared-file",
            PinKind::Shared => "shared",
            PinKind::Unpinned => "unpinned",
        }
    }
}

/// One pin, explained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// The environment.
    pub env: String,
    /// The app.
    pub app: String,
    /// The pin's name.
    pub pin: String,
    /// Its value there (None: not set, promotion would add it).
    pub value: Option<String>,
    /// Why it is a pin (or why not).
    pub kind: PinKind,
    /// The file that sets it (or would), relative to the root.
    pub file: PathBuf,
    /// The line there (None: not set yet).
    pub line: Option<u32>,
}

/// Every pin of the environments named in `only` (all when empty), in
/// promotion order of the files, explained.
pub fn explain(root: &Path, only: &[String]) -> Result<Vec<Reason>, Error> {
    let all = env::load_environments(root)?;
    for o in only {
        if !all.iter().any(|e| &e.name == o) {
            return Err(Error::Usage(format!("no environment named `{o}`")));
        }
    }
    let tracer = Tracer::new(root)?;
    let mut out = Vec::new();
    for e in all
        .iter()
        .filter(|e| only.is_empty() || only.contains(&e.name))
    {
        let decls = |app: &str| declared(&all, app);
        let pins = pin::env_pins_traced(&tracer, e, &decls, &[])?;
        for p in &pins {
            out.push(Reason {
                env: e.name.clone(),
                app: p.app.clone(),
                value: p.value.clone(),
                line: line_of(root, &p.place),
                file: p.place.file().to_path_buf(),
                pin: p.name.clone(),
                kind: kind_of(e, p),
            });
        }
        for app in &e.apps {
            let pinned = pins
                .iter()
                .any(|p| p.app == app.name && p.place.is_editable() && p.name != "chart");
            let Some(t) = tracer.app(&e.name, &app.name)? else {
                continue;
            };
            if pinned {
                continue;
            }
            for f in &t.images {
                let Some(at) = &f.set_at else { continue };
                out.push(Reason {
                    env: e.name.clone(),
                    app: app.name.clone(),
                    pin: f.pin_name(),
                    value: Some(f.value.clone()),
                    kind: PinKind::Unpinned,
                    file: at.file.clone(),
                    line: Some(at.line),
                });
            }
        }
    }
    Ok(out)
}

/// The declared pins of `app` in any environment, so every environment
/// explains the same pins.
fn declared(all: &[Environment], app: &str) -> Vec<PinDecl> {
    let mut out: Vec<PinDecl> = Vec::new();
    for a in all.iter().flat_map(|e| &e.apps).filter(|a| a.name == app) {
        for d in &a.pins {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    out
}

fn kind_of(e: &Environment, p: &Pin) -> PinKind {
    let decls = e
        .apps
        .iter()
        .filter(|a| a.name == p.app)
        .flat_map(|a| &a.pins);
    let is_chart = e
        .apps
        .iter()
        .any(|a| a.name == p.app && matches!(a.source, crate::env::Source::Helm(_)));
    let declared_file = |d: &PinDecl| match d {
        PinDecl::File { file, path } => p.name == format!("{file}#{path}"),
        PinDecl::Value(_) => false,
    };
    match &p.place {
        Place::Shared { .. } => PinKind::Shared,
        Place::Unmatched { .. } => PinKind::DeclaredFile,
        Place::Image { .. } => PinKind::ImagesEntry,
        Place::Inline { .. } => PinKind::Traced,
        Place::Value { .. } if p.name == "chart" => PinKind::ChartPath,
        Place::Value { .. } => {
            let mut decls = decls.peekable();
            if decls.clone().any(|d| d == &PinDecl::Value(p.name.clone())) {
                PinKind::DeclaredValue
            } else if decls.any(declared_file) {
                PinKind::DeclaredFile
            } else if is_chart {
                PinKind::Convention
            } else {
                PinKind::Traced
            }
        }
    }
}

/// The line that sets the pin (None: not set yet).
fn line_of(root: &Path, place: &Place) -> Option<u32> {
    let docs = |resolver| {
        let src = std::fs::read_to_string(root.join(place.file())).ok()?;
        yaml::parse_all(&src, resolver).ok()
    };
    match place {
        Place::Shared { line, .. } => Some(*line),
        Place::Unmatched { .. } => None,
        Place::Value {
            doc,
            path,
            resolver,
            ..
        } => Some(at(docs(*resolver)?.get(*doc)?, path)?.pos.line),
        Place::Image { image, field, .. } => {
            let d = docs(Resolver::V3)?;
            let entry = d
                .first()?
                .get("images")?
                .as_seq()?
                .iter()
                .find(|e| e.get("name").and_then(Node::as_str) == Some(image.as_str()))?;
            Some(entry.get(field)?.pos.line)
        }
        Place::Inline {
            doc,
            path,
            inner_doc,
            inner_path,
            ..
        } => {
            // A literal block's lines follow its header line one for one.
            let d = docs(Resolver::V3)?;
            let holder = at(d.get(*doc)?, path)?;
            let inner = yaml::parse_all(holder.as_str()?, Resolver::V3).ok()?;
            let n = at(inner.get(*inner_doc)?, inner_path)?;
            Some(holder.pos.line + n.pos.line)
        }
    }
}

fn at<'a>(doc: &'a Node, path: &[Seg]) -> Option<&'a Node> {
    yaml::edit::get(doc, path)
}

/// The text form: per environment, per app, each pin with its value, what
/// kind it is and `file:line`.
pub fn text(reasons: &[Reason]) -> String {
    let mut out = String::new();
    let mut env = "";
    for r in reasons {
        if r.env != env {
            env = &r.env;
            out.push_str(&format!("{env}\n"));
        }
        let value = r.value.as_deref().unwrap_or("(not set)");
        let at = match r.line {
            Some(l) => format!("{}:{l}", r.file.display()),
            None => format!(
                "{} (not set yet; promotion adds it there)",
                r.file.display()
            ),
        };
        out.push_str(&format!(
            "  {} {} = {value}\n    {}\n    at {at}\n",
            r.app,
            r.pin,
            r.kind.describe()
        ));
    }
    out
}

/// The JSON form.
pub fn json(reasons: &[Reason]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = reasons
        .iter()
        .map(|r| {
            serde_json::json!({
                "env": r.env,
                "app": r.app,
                "pin": r.pin,
                "value": r.value,
                "kind": r.kind.name(),
                "pinned": !matches!(r.kind, PinKind::Shared | PinKind::Unpinned),
                "file": r.file.display().to_string(),
                "line": r.line,
            })
        })
        .collect();
    serde_json::json!({ "pins": list })
}
