//! Applying a plan: edit TO's source files, as HEAD has them, through the
//! format-preserving editor; render every affected (TO, app) pair from
//! HEAD's tree with the edits; and only if that renders, commit exactly the
//! edited files (the git transaction then switches the index entries and
//! working-tree files of those paths), or create a branch in memory
//! (HEAD, the index and the working tree stay as they were), or, with
//! `--no-commit`, replace only the working-tree files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::copy::Copy;
use super::pin::Place;
use super::plan::Item;
use super::snapshot::Snapshot;
use super::Error;
use crate::env::{self, Rendered, Selection};
use crate::git::{Identity, Repo, Transaction};
use crate::yaml::edit::{self, Change, Insert, Seg};
use crate::yaml::{self, Resolver};

/// What to do once the edits render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Commit the edited files on the current branch.
    Commit,
    /// Commit in memory on top of HEAD and create this branch.
    Branch(String),
    /// Edit the files, commit nothing.
    NoCommit,
}

/// A plan ready to apply.
pub struct Request<'a> {
    /// The repository.
    pub repo: &'a Repo,
    /// The sources the edits start from (HEAD's tree).
    pub snapshot: &'a Snapshot,
    /// The transaction holding the index lock (None: `--branch`, which
    /// touches neither the index nor the working tree).
    pub tx: Option<Transaction<'a>>,
    /// The environments edited, each with its pins and copied files: one
    /// for every command but `promote --together`.
    pub targets: Vec<Target<'a>>,
    /// Further files (relative to the root) that must not have uncommitted
    /// changes: where FROM's promoted values are read.
    pub clean: &'a [PathBuf],
    /// The commit message.
    pub message: String,
    /// Commit, branch or edit only.
    pub mode: Mode,
    /// Commit author.
    pub identity: Identity,
    /// Render the environment before and after, for a description.
    pub describe: bool,
}

/// One environment's edits.
pub struct Target<'a> {
    /// The environment edited.
    pub env: &'a str,
    /// The pins to write.
    pub items: &'a [Item],
    /// The files to copy whole (written before the pins).
    pub copies: &'a [Copy],
}

/// What applying did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The commit made, if any.
    pub commit: Option<String>,
    /// The files written (relative to the working directory, symbolic
    /// links resolved).
    pub files: Vec<PathBuf>,
    /// Per (environment, app): resources whose rendered text changed
    /// (`Kind/name`).
    pub changed_resources: BTreeMap<(String, String), Vec<String>>,
    /// What could not be finished after the commit, each saying what to do.
    pub remaining: Vec<String>,
}

/// The editor change that writes `value` at `place`, given the file's text.
fn change_for(src: &str, place: &Place, value: &str) -> Result<Change, String> {
    match place {
        Place::Inline { .. } | Place::Shared { .. } | Place::Unmatched { .. } => {
            Err("not a plain value (an inline patch, a shared file, or no match)".into())
        }
        Place::Value { doc, path, .. } => Ok(Change::Set {
            doc: *doc,
            path: path.clone(),
            value: value.to_string(),
        }),
        Place::Image { image, field, .. } => Ok(match image_index(src, image)? {
            Some(i) => Change::Set {
                doc: 0,
                path: image_path(i, field),
                value: value.to_string(),
            },
            None => Change::Append {
                doc: 0,
                path: vec![Seg::Key("images".into())],
                item: Insert::Map(vec![
                    ("name".into(), Insert::Scalar(image.clone())),
                    (field.clone(), Insert::Scalar(value.to_string())),
                ]),
            },
        }),
    }
}

/// The index of the `images:` entry named `image` in a kustomization.
fn image_index(src: &str, image: &str) -> Result<Option<usize>, String> {
    let docs = yaml::parse_all(src, Resolver::V3).map_err(|e| e.to_string())?;
    let images = docs.first().and_then(|d| d.get("images"));
    Ok(images.and_then(|i| i.as_seq()).and_then(|s| {
        s.iter()
            .position(|e| e.get("name").and_then(|n| n.as_str()) == Some(image))
    }))
}

fn image_path(i: usize, field: &str) -> Vec<Seg> {
    vec![
        Seg::Key("images".into()),
        Seg::Index(i),
        Seg::Key(field.to_string()),
    ]
}

/// Writes `value` at `place`, or removes the pin when `value` is None (a
/// rollback to before the pin existed). A removal takes along what it
/// leaves empty: mappings the pin was the last key of (an inserted pin
/// brought them), and an `images:` entry left with only its `name`, and
/// `images:` itself when that was its last entry.
fn edit_pin(src: &str, place: &Place, value: Option<&str>) -> Result<String, String> {
    let resolver = resolver_of(place);
    let fail = |e: edit::EditError| e.to_string();
    match (place, value) {
        (Place::Shared { file, line }, _) => {
            return Err(format!(
                "set at {}:{line}, a file other environments render too: not this environment's to change",
                file.display()
            ))
        }
        (Place::Unmatched { file, path }, _) => {
            return Err(format!(
                "{}: nothing at `{path}` (a list selector must match an item; add the item, then promote)",
                file.display()
            ))
        }
        (
            Place::Inline {
                doc,
                path,
                inner_doc,
                inner_path,
                ..
            },
            Some(v),
        ) => {
            return edit::set_in_string(src, resolver, (*doc, path), (*inner_doc, inner_path), v)
                .map_err(fail)
        }
        (Place::Inline { .. }, None) => {
            return Err("removing a value from an inline patch: edit the patch by hand".into())
        }
        (_, Some(v)) => {
            let change = change_for(src, place, v)?;
            return edit::apply(src, resolver, &change).map_err(fail);
        }
        _ => {}
    }
    let (doc, mut path) = match place {
        Place::Value { doc, path, .. } => (*doc, path.clone()),
        Place::Image { image, field, .. } => match image_index(src, image)? {
            Some(i) => (0, image_path(i, field)),
            None => return Ok(src.to_string()),
        },
        Place::Inline { .. } | Place::Shared { .. } | Place::Unmatched { .. } => {
            return Ok(src.to_string())
        }
    };
    let docs = yaml::parse_all(src, resolver).map_err(|e| e.to_string())?;
    if docs.get(doc).and_then(|d| edit::get(d, &path)).is_none() {
        return Ok(src.to_string());
    }
    let mut text = edit::remove(src, resolver, doc, &path).map_err(fail)?;
    while path.len() > 1 {
        path.pop();
        let docs = yaml::parse_all(&text, resolver).map_err(|e| e.to_string())?;
        let Some(parent) = docs.get(doc).and_then(|d| edit::get(d, &path)) else {
            break;
        };
        let empty = parent.is_null()
            || parent.as_map().is_some_and(|m| m.is_empty())
            || parent.as_seq().is_some_and(|s| s.is_empty());
        let bare_image = matches!(place, Place::Image { .. })
            && path.len() == 2
            && parent
                .as_map()
                .is_some_and(|m| m.len() == 1 && m[0].0.key_text() == Some("name"));
        if !(empty || bare_image) {
            break;
        }
        text = edit::remove(&text, resolver, doc, &path).map_err(fail)?;
    }
    Ok(text)
}

fn resolver_of(place: &Place) -> Resolver {
    match place {
        Place::Value { resolver, .. } => *resolver,
        Place::Image { .. }
        | Place::Inline { .. }
        | Place::Shared { .. }
        | Place::Unmatched { .. } => Resolver::V3,
    }
}

/// One file to write: its path as git names it (symbolic links
/// resolved), the paths that lead to it, and its new content.
struct Edited {
    real: String,
    named: Vec<String>,
    new: String,
}

/// The new content of every file the copies and items touch: a copy's
/// text, then each pin edited into the file as the snapshot has it.
fn edit_files(
    repo: &Repo,
    snap: &Snapshot,
    copies: &[Copy],
    items: &[Item],
) -> Result<Vec<Edited>, Error> {
    let mut files: Vec<Edited> = Vec::new();
    for c in copies {
        let real = real_path(repo, snap, &c.to)?;
        files.push(Edited {
            real,
            named: vec![snap.git_path(&c.to)],
            new: c.new.clone(),
        });
    }
    for it in items {
        let file = it.target.place.file().to_path_buf();
        let real = real_path(repo, snap, &file)?;
        let named = snap.git_path(&file);
        let pos = match files.iter().position(|f| f.real == real) {
            Some(p) => p,
            None => {
                let text =
                    std::fs::read_to_string(snap.fill(repo, &real)?).map_err(|e| Error::Edit {
                        file: file.clone(),
                        message: e.to_string(),
                    })?;
                files.push(Edited {
                    real: real.clone(),
                    named: Vec::new(),
                    new: text,
                });
                files.len() - 1
            }
        };
        let f = &mut files[pos];
        if !f.named.contains(&named) {
            f.named.push(named);
        }
        let fail = |message: String| Error::Edit {
            file: file.clone(),
            message,
        };
        f.new = edit_pin(&f.new, &it.target.place, it.new.as_deref()).map_err(fail)?;
    }
    Ok(files)
}

/// The file a pin's path (from configuration, relative to the root) leads
/// to in the snapshot's commit. It must be relative with no `..`, and a
/// symbolic link on the way must stay inside the repository: a promotion
/// edits the link's target (the link stays a link), never a file outside.
fn real_path(repo: &Repo, snap: &Snapshot, file: &Path) -> Result<String, Error> {
    let outside = |why: &str| Error::Edit {
        file: file.to_path_buf(),
        message: format!("{why}; promotions edit only files inside the repository"),
    };
    if file.is_absolute()
        || file
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return Err(outside("the path is absolute or leaves its directory"));
    }
    match repo.real_path(snap.commit(), &snap.git_path(file)) {
        Ok(p) => Ok(p),
        Err(crate::git::Error::Outside { .. }) => {
            Err(outside("a symbolic link leads outside the repository"))
        }
        Err(crate::git::Error::NotFound { path }) => Err(Error::Edit {
            file: file.to_path_buf(),
            message: format!("{path} is not a committed file"),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Renders `apps` of `env` under `root`.
fn render(root: &Path, env: &str, apps: &BTreeSet<String>) -> Result<Vec<Rendered>, Error> {
    let envs = env::load_environments(root)?;
    let sel = Selection {
        envs: vec![env.to_string()],
        apps: apps.iter().cloned().collect(),
        shard: None,
    };
    let jobs = env::plan(root, &envs, &sel);
    env::render_all(&jobs, &|| {}).map_err(|errors| Error::Render {
        errors,
        root: root.to_path_buf(),
    })
}

fn changed_resources(
    env: &str,
    before: &[Rendered],
    after: &[Rendered],
    out: &mut BTreeMap<(String, String), Vec<String>>,
) {
    for a in after {
        let old = before.iter().find(|b| b.app == a.app);
        let mut changed = Vec::new();
        for d in &a.objects {
            let prev = old.and_then(|o| o.objects.iter().find(|p| p.id == d.id));
            if prev.is_none_or(|p| p.printed != d.printed) {
                changed.push(format!("{}/{}", d.id.gvk.kind, d.id.name));
            }
        }
        out.insert((env.to_string(), a.app.clone()), changed);
    }
}

/// Applies the request: all or nothing. The edits start from the
/// snapshot (HEAD's committed bytes); a file to edit, or one in `clean`,
/// with uncommitted changes is refused; the render check runs on the
/// snapshot with the edits; only then is anything committed or written.
pub fn execute(req: Request) -> Result<Outcome, Error> {
    let snap = req.snapshot;
    let copies: Vec<Copy> = req
        .targets
        .iter()
        .flat_map(|t| t.copies.iter().cloned())
        .collect();
    let items: Vec<Item> = req
        .targets
        .iter()
        .flat_map(|t| t.items.iter().cloned())
        .collect();
    let edited = edit_files(req.repo, snap, &copies, &items)?;
    let apps = |t: &Target| -> BTreeSet<String> {
        t.items
            .iter()
            .map(|i| i.app.clone())
            .chain(t.copies.iter().map(|c| c.app.clone()))
            .collect()
    };
    let mut check: Vec<String> = Vec::new();
    for f in &edited {
        for p in std::iter::once(&f.real).chain(&f.named) {
            if !check.contains(p) {
                check.push(p.clone());
            }
        }
    }
    for c in req.clean {
        let p = snap.git_path(c);
        if !check.contains(&p) {
            check.push(p);
        }
    }
    let dirty = req.repo.uncommitted(&check)?;
    if !dirty.is_empty() {
        return Err(Error::Uncommitted(dirty));
    }
    let mut before = Vec::new();
    for t in &req.targets {
        before.push(if req.describe {
            render(snap.root(), t.env, &apps(t))?
        } else {
            Vec::new()
        });
    }
    for f in &edited {
        std::fs::write(snap.file(&f.real), &f.new).map_err(|e| Error::Edit {
            file: PathBuf::from(&f.real),
            message: e.to_string(),
        })?;
    }
    let mut changed = BTreeMap::new();
    for (t, before) in req.targets.iter().zip(&before) {
        let after = render(snap.root(), t.env, &apps(t))?;
        changed_resources(t.env, before, &after, &mut changed);
    }
    let files: BTreeMap<String, Vec<u8>> = edited
        .iter()
        .map(|f| (f.real.clone(), f.new.clone().into_bytes()))
        .collect();
    let mut out = Outcome {
        files: edited.iter().map(|f| PathBuf::from(&f.real)).collect(),
        changed_resources: changed,
        ..Outcome::default()
    };
    match (&req.mode, req.tx) {
        (Mode::Branch(branch), _) => {
            let c = req
                .repo
                .commit_to_new_branch(&files, &req.message, &req.identity, branch)?;
            out.commit = Some(c.to_string());
        }
        (mode, Some(tx)) => {
            let message = (*mode == Mode::Commit).then_some(req.message.as_str());
            let done = tx.commit(&files, message, &req.identity)?;
            out.commit = done.commit.map(|c| c.to_string());
            out.remaining = done.remaining;
        }
        (_, None) => {
            return Err(Error::Usage(
                "internal: a commit on the current branch needs the index lock".into(),
            ))
        }
    }
    Ok(out)
}
