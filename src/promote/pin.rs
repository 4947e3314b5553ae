//! Pins: the values that say what is released of an app in an environment.
//! Found in the environment's sources: each `images:` entry's `newTag` and
//! `digest` in the app's kustomization; a chart app's `chart:` path and its
//! declared value paths (inline `values`, else the last value file that
//! sets the path); and declared file pins. Each pin knows where it is
//! written, so a promotion can edit it there.

use std::path::{Path, PathBuf};

use super::traced::{self, Tracer};
use super::Error;
use crate::env::{App, Environment, PinDecl, Source};
use crate::yaml::edit::{parse_path, Seg};
use crate::yaml::selector;
use crate::yaml::{self, Node, Resolver};

/// The fields of a kustomize `images:` entry that are pins. `newName` is
/// not one: registries and mirrors differ between environments.
pub const IMAGE_FIELDS: [&str; 2] = ["newTag", "digest"];

/// Where a pin is written in an environment's sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A field of the `images:` entry named `image` in a kustomization
    /// (the entry or the field is added when missing).
    Image {
        /// The kustomization file, relative to the repository root.
        file: PathBuf,
        /// The entry's `name`.
        image: String,
        /// `newTag`, `digest` or `newName`.
        field: String,
    },
    /// A scalar at `path` of document `doc` in a YAML file (added when missing).
    Value {
        /// The file, relative to the repository root.
        file: PathBuf,
        /// Document index.
        doc: usize,
        /// Where.
        path: Vec<Seg>,
        /// How the file's scalars resolve.
        resolver: Resolver,
    },
    /// A scalar inside an inline patch: the literal block string at
    /// `path` of document `doc` of a kustomization holds YAML, and the
    /// value is at `inner_path` of its document `inner_doc`.
    Inline {
        /// The kustomization, relative to the repository root.
        file: PathBuf,
        /// Document index of the string.
        doc: usize,
        /// The string.
        path: Vec<Seg>,
        /// Document index inside the string.
        inner_doc: usize,
        /// The value inside the string.
        inner_path: Vec<Seg>,
    },
    /// Not this environment's to change: the value it renders is set in a
    /// file other environments render too (a base). Read, never written.
    Shared {
        /// The file, relative to the repository root.
        file: PathBuf,
        /// The line that sets it.
        line: u32,
    },
    /// A declared pin whose list selector matches nothing in this
    /// environment's file (or the file is missing): nothing to read, and no
    /// place to write (a selector cannot say where a new item would go).
    Unmatched {
        /// The file, relative to the repository root.
        file: PathBuf,
        /// The selector path, as declared.
        path: String,
    },
}

impl Place {
    /// The file it lives in.
    pub fn file(&self) -> &Path {
        match self {
            Place::Image { file, .. }
            | Place::Value { file, .. }
            | Place::Inline { file, .. }
            | Place::Shared { file, .. }
            | Place::Unmatched { file, .. } => file,
        }
    }

    /// Whether promotion may write there.
    pub fn is_editable(&self) -> bool {
        !matches!(self, Place::Shared { .. } | Place::Unmatched { .. })
    }

    /// The 1-based line of its file (under `root`, as the file is now) that
    /// holds the value: the line a render of it explains the value by
    /// (`hydrate explain`'s last step). None when the value is not written
    /// yet (an entry or a field a promotion would add) or the file is
    /// unreadable.
    pub fn line(&self, root: &Path) -> Option<u32> {
        let read = |resolver| -> Option<Vec<Node>> {
            let text = std::fs::read_to_string(root.join(self.file())).ok()?;
            yaml::parse_all(&text, resolver).ok()
        };
        match self {
            Place::Image { image, field, .. } => {
                let docs = read(Resolver::V3)?;
                let entry = docs
                    .first()?
                    .get("images")?
                    .as_seq()?
                    .iter()
                    .find(|e| e.get_str("name") == Some(image.as_str()))?;
                Some(entry.get(field)?.pos.line)
            }
            Place::Value {
                doc,
                path,
                resolver,
                ..
            } => {
                let docs = read(*resolver)?;
                Some(yaml::edit::get(docs.get(*doc)?, path)?.pos.line)
            }
            Place::Inline {
                doc,
                path,
                inner_doc,
                inner_path,
                ..
            } => {
                let docs = read(Resolver::V3)?;
                let string = yaml::edit::get(docs.get(*doc)?, path)?;
                let inner = yaml::parse_all(string.as_str()?, Resolver::V3).ok()?;
                let value = yaml::edit::get(inner.get(*inner_doc)?, inner_path)?;
                // A block string's text starts on the line after its header.
                Some(string.pos.line + value.pos.line)
            }
            Place::Shared { line, .. } => Some(*line),
            Place::Unmatched { .. } => None,
        }
    }
}

/// One pin of one app in one environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The app.
    pub app: String,
    /// `ghcr.io/acme/web:newTag`, `image.tag`, `chart`, `file#path`.
    pub name: String,
    /// Its value there (None: not set).
    pub value: Option<String>,
    /// Where it is (or would be) written.
    pub place: Place,
}

/// Every pin of `app` in `env` under `root`; `decls` are the declared pins
/// (the union of what the environments compared declare).
pub fn app_pins(
    root: &Path,
    env: &Environment,
    app: &App,
    decls: &[PinDecl],
) -> Result<Vec<Pin>, Error> {
    let mut out = Vec::new();
    let dir = match &app.source {
        Source::Kustomize(dir) => {
            image_pins(root, &app.name, dir, &mut out)?;
            dir.clone()
        }
        Source::Helm(c) => {
            out.push(Pin {
                app: app.name.clone(),
                name: "chart".into(),
                value: Some(c.chart.to_string_lossy().into_owned()),
                place: Place::Value {
                    file: rel_env_file(root, env),
                    doc: 0,
                    path: helm_path(env, app, &[Seg::Key("chart".into())])?,
                    resolver: Resolver::V3,
                },
            });
            for d in decls {
                if let PinDecl::Value(path) = d {
                    out.push(value_pin(root, env, app, c, path)?);
                }
            }
            c.chart.clone()
        }
    };
    for d in decls {
        if let PinDecl::File {
            file: template,
            path,
        } = d
        {
            let file = PathBuf::from(template.replace("{dir}", &dir.to_string_lossy()));
            out.push(file_pin(root, &app.name, template, &file, path)?);
        }
    }
    Ok(out)
}

/// A declared file pin, named by its template (`{dir}/version.yml#path`)
/// so it is the same pin in every environment. Its path may select list
/// items as the diff prints them (`containers[name=app].image`).
fn file_pin(root: &Path, app: &str, template: &str, file: &Path, path: &str) -> Result<Pin, Error> {
    let steps =
        selector::parse(path).map_err(|e| Error::Pin(format!("{app}: pin path `{path}`: {e}")))?;
    // A file this environment does not have sets nothing (promotion does
    // not create it: writing there fails, naming the file).
    let docs = match root.join(file).is_file() {
        true => read_yaml(root, file, Resolver::V3)?,
        false => Vec::new(),
    };
    let found = docs.iter().enumerate().find_map(|(i, d)| {
        let segs = selector::resolve(d, &steps)?;
        let n = crate::yaml::edit::get(d, &segs)?;
        Some((i, segs, scalar(n)))
    });
    let (doc, segs, value) = match found {
        Some(f) => f,
        // Not set yet: written where a plain path says (a selector
        // cannot say where a new list item would go).
        None => match selector::plain(&steps) {
            Some(segs) => (0, segs, None),
            None => {
                return Ok(Pin {
                    app: app.to_string(),
                    name: format!("{template}#{path}"),
                    value: None,
                    place: Place::Unmatched {
                        file: file.to_path_buf(),
                        path: path.to_string(),
                    },
                })
            }
        },
    };
    Ok(Pin {
        app: app.to_string(),
        name: format!("{template}#{path}"),
        value,
        place: Place::Value {
            file: file.to_path_buf(),
            doc,
            path: segs,
            resolver: Resolver::V3,
        },
    })
}

fn scalar(n: &Node) -> Option<String> {
    n.as_scalar()
        .filter(|_| !n.is_null())
        .map(|s| s.text.clone())
}

/// The path of an app's `helm` key in its environment file.
fn helm_path(env: &Environment, app: &App, rest: &[Seg]) -> Result<Vec<Seg>, Error> {
    let i = env
        .apps
        .iter()
        .position(|a| a.name == app.name)
        .ok_or_else(|| Error::Pin(format!("{}: no app `{}`", env.file.display(), app.name)))?;
    let mut p = vec![
        Seg::Key("apps".into()),
        Seg::Index(i),
        Seg::Key("helm".into()),
    ];
    p.extend_from_slice(rest);
    Ok(p)
}

fn rel_env_file(root: &Path, env: &Environment) -> PathBuf {
    env.file
        .strip_prefix(root)
        .map_or_else(|_| env.file.clone(), Path::to_path_buf)
}

fn read_yaml(root: &Path, file: &Path, resolver: Resolver) -> Result<Vec<Node>, Error> {
    let full = root.join(file);
    let src = std::fs::read_to_string(&full)
        .map_err(|e| Error::Pin(format!("{}: {e}", file.display())))?;
    yaml::parse_all(&src, resolver).map_err(|e| Error::Pin(format!("{}: {e}", file.display())))
}

/// The kustomization file of a directory, as kustomize looks for it.
pub fn kustomization_file(root: &Path, dir: &Path) -> Option<PathBuf> {
    ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| root.join(p).is_file())
}

fn image_pins(root: &Path, app: &str, dir: &Path, out: &mut Vec<Pin>) -> Result<(), Error> {
    let Some(file) = kustomization_file(root, dir) else {
        return Ok(());
    };
    let docs = read_yaml(root, &file, Resolver::V3)?;
    let Some(images) = docs
        .first()
        .and_then(|d| d.get("images"))
        .and_then(Node::as_seq)
    else {
        return Ok(());
    };
    for entry in images {
        let Some(image) = entry.get("name").and_then(scalar) else {
            continue;
        };
        for field in IMAGE_FIELDS {
            let value = entry.get(field).and_then(scalar);
            if value.is_none() {
                continue;
            }
            out.push(Pin {
                app: app.to_string(),
                name: format!("{image}:{field}"),
                value,
                place: Place::Image {
                    file: file.clone(),
                    image: image.clone(),
                    field: field.to_string(),
                },
            });
        }
    }
    Ok(())
}

/// What `env` runs now for an `images:` pin it does not set: the tag (or
/// digest) its render has for that image, from a base or a component,
/// as `0.9.3 (base)`. Found by kustomize's trace: the container the app's
/// own `images:` entry for the image rewrote (keeping a tag it does not
/// set), else a container whose image is that repository.
pub fn runs_now(tracer: &Tracer, env: &Environment, pin: &Pin) -> Option<String> {
    let Place::Image { file, image, field } = &pin.place else {
        return None;
    };
    let t = tracer.app(&env.name, &pin.app).ok()??;
    let entry = read_yaml(tracer.root(), file, Resolver::V3)
        .ok()?
        .first()
        .and_then(|d| d.get("images"))
        .and_then(Node::as_seq)
        .and_then(|s| {
            s.iter()
                .find(|e| e.get("name").and_then(Node::as_str) == Some(image.as_str()))
                .map(|e| e.pos.start)
        });
    let by_entry = |f: &&traced::ImageField| {
        f.set_at
            .as_ref()
            .is_some_and(|a| a.by_images_entry() && a.file == *file && Some(a.start) == entry)
    };
    let field_ref = t.images.iter().find(by_entry).or_else(|| {
        t.images
            .iter()
            .find(|f| traced::repository_of_reference(&f.value) == image)
    })?;
    let value = match field.as_str() {
        // A reference pinned by digest runs no tag: nothing to show.
        "newTag" => match traced::tag_of_reference(&field_ref.value) {
            Some(tag) => tag,
            None if traced::digest_of_reference(&field_ref.value).is_some() => return None,
            None => "latest",
        },
        "digest" => traced::digest_of_reference(&field_ref.value)?,
        _ => return None,
    };
    Some(format!("{value} (base)"))
}

/// Where a pin missing from an environment's kustomization would go.
pub fn missing_image_pin(root: &Path, app: &App, name: &str) -> Option<Pin> {
    let Source::Kustomize(dir) = &app.source else {
        return None;
    };
    let (image, field) = name.rsplit_once(':')?;
    Some(Pin {
        app: app.name.clone(),
        name: name.to_string(),
        value: None,
        place: Place::Image {
            file: kustomization_file(root, dir)?,
            image: image.to_string(),
            field: field.to_string(),
        },
    })
}

/// A chart app's value pin: read from inline values, else the last value
/// file that sets it; written there (or, when nothing sets it, into the
/// last value file, else the inline values).
fn value_pin(
    root: &Path,
    env: &Environment,
    app: &App,
    c: &crate::env::ChartApp,
    path: &str,
) -> Result<Pin, Error> {
    let segs = parse_path(path);
    let inline = || {
        let mut p = vec![Seg::Key("values".into())];
        p.extend(segs.iter().cloned());
        helm_path(env, app, &p)
    };
    let pin = |value, place| Pin {
        app: app.name.clone(),
        name: path.to_string(),
        value,
        place,
    };
    if let Some(v) = c
        .values
        .as_ref()
        .and_then(|v| crate::yaml::edit::get(v, &segs))
    {
        let place = Place::Value {
            file: rel_env_file(root, env),
            doc: 0,
            path: inline()?,
            resolver: Resolver::V3,
        };
        return Ok(pin(scalar(v), place));
    }
    for f in c.value_files.iter().rev() {
        let docs = read_yaml(root, f, Resolver::V2)?;
        if let Some(v) = docs.first().and_then(|d| crate::yaml::edit::get(d, &segs)) {
            let place = Place::Value {
                file: f.clone(),
                doc: 0,
                path: segs.clone(),
                resolver: Resolver::V2,
            };
            return Ok(pin(scalar(v), place));
        }
    }
    let place = match c.value_files.last() {
        Some(f) => Place::Value {
            file: f.clone(),
            doc: 0,
            path: segs.clone(),
            resolver: Resolver::V2,
        },
        None => Place::Value {
            file: rel_env_file(root, env),
            doc: 0,
            path: inline()?,
            resolver: Resolver::V3,
        },
    };
    Ok(pin(None, place))
}

/// Every pin of every app of `env`, with `extra` declared pins per app
/// (from the environment compared with): those [`app_pins`] reads, and
/// the container images kustomize's trace finds set in `env`'s own files
/// ([`field_pins`]).
pub fn env_pins(
    root: &Path,
    env: &Environment,
    extra: &dyn Fn(&str) -> Vec<PinDecl>,
) -> Result<Vec<Pin>, Error> {
    let tracer = Tracer::new(root)?;
    let mut all = env_pins_traced(&tracer, env, extra, &[])?;
    all.retain(|p| p.place.is_editable());
    Ok(all)
}

/// [`env_pins`] with a shared tracer, and with the values `env` renders
/// from files it shares with other environments ([`Place::Shared`]): what
/// it runs, for a promotion out of it.
///
/// Only the apps named in `apps` (every app when it is empty): tracing an
/// app renders it with provenance, so a promotion of one app of hundreds
/// traces that one.
pub fn env_pins_traced(
    tracer: &Tracer,
    env: &Environment,
    extra: &dyn Fn(&str) -> Vec<PinDecl>,
    apps: &[String],
) -> Result<Vec<Pin>, Error> {
    let root = tracer.root();
    let selected: Vec<String> = env
        .apps
        .iter()
        .filter(|a| apps.is_empty() || apps.contains(&a.name))
        .map(|a| a.name.clone())
        .collect();
    // (An empty list would mean every app.)
    if !selected.is_empty() {
        tracer.prefetch(&selected);
    }
    let mut out = Vec::new();
    for app in env
        .apps
        .iter()
        .filter(|a| apps.is_empty() || apps.contains(&a.name))
    {
        let mut decls = app.pins.clone();
        let by_convention = super::convention::paths(root, tracer.envs(), &app.name)
            .into_iter()
            .map(PinDecl::Value);
        for d in extra(&app.name).into_iter().chain(by_convention) {
            if !decls.contains(&d) {
                decls.push(d);
            }
        }
        let declared = app_pins(root, env, app, &decls)?;
        // A declared pin at the place the trace finds is that pin.
        let traced: Vec<Pin> = field_pins(tracer, env, app)?
            .into_iter()
            .filter(|t| !declared.iter().any(|d| d.place == t.place))
            .collect();
        out.extend(declared);
        out.extend(traced);
    }
    Ok(out)
}

/// The container images of `app`'s render in `env` that kustomize's trace
/// finds set outside `images:` entries (those are read as entries): each
/// set in a file only `env` renders (a patch file, an inline patch, a
/// replacement's source) is a pin there; each set in a file other
/// environments render too comes back as [`Place::Shared`], the value
/// `env` runs but may not change.
pub fn field_pins(tracer: &Tracer, env: &Environment, app: &App) -> Result<Vec<Pin>, Error> {
    let Some(me) = tracer.app(&env.name, &app.name)? else {
        return Ok(Vec::new());
    };
    let others = tracer.others(&env.name, &app.name)?;
    let mut out = Vec::new();
    for f in &me.images {
        let Some(at) = &f.set_at else { continue };
        if at.by_images_entry() {
            continue;
        }
        let shared = others.iter().any(|(_, t)| t.files_read.contains(&at.file));
        let (value, place) = if shared {
            let place = Place::Shared {
                file: at.file.clone(),
                line: at.line,
            };
            (f.value.clone(), place)
        } else {
            let spot = traced::locate(tracer.root(), at)?;
            let place = match spot.inner {
                None => Place::Value {
                    file: at.file.clone(),
                    doc: spot.doc,
                    path: spot.path,
                    resolver: Resolver::V3,
                },
                Some((inner_doc, inner_path)) => Place::Inline {
                    file: at.file.clone(),
                    doc: spot.doc,
                    path: spot.path,
                    inner_doc,
                    inner_path,
                },
            };
            (spot.text, place)
        };
        let name = f.pin_name();
        // One pin per field: two containers of one resource never share
        // a path, but a List can repeat a resource.
        if out.iter().any(|p: &Pin| p.name == name) {
            continue;
        }
        out.push(Pin {
            app: app.name.clone(),
            name,
            value: Some(value),
            place,
        });
    }
    Ok(out)
}
