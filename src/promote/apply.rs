//! Applying a plan: edit TO's source files through the format-preserving
//! editor, render every affected (TO, app) pair, and either keep the edits
//! and commit exactly the edited files, or restore every file byte for
//! byte. With a branch, the edits are made in a copy of HEAD's tree and
//! committed in memory; HEAD, the index and the working tree stay as they
//! were.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::pins::Place;
use super::plan::Item;
use super::Error;
use crate::env::{self, Rendered, Selection};
use crate::git::{Identity, Repo};
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
    /// Repository root (holds `environments/`).
    pub root: &'a Path,
    /// The environment edited.
    pub env: &'a str,
    /// The pins to write.
    pub items: &'a [Item],
    /// The commit message.
    pub message: String,
    /// Commit, branch or edit only.
    pub mode: Mode,
    /// Commit author.
    pub identity: Identity,
    /// Render the environment before and after, for a description.
    pub describe: bool,
}

/// What applying did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The commit made, if any.
    pub commit: Option<String>,
    /// The files edited (relative to the repository root).
    pub files: Vec<PathBuf>,
    /// Per app: resources whose rendered text changed (`Kind/name`).
    pub changed_resources: BTreeMap<String, Vec<String>>,
}

/// The editor change that writes `value` at `place`, given the file's text.
fn change_for(src: &str, place: &Place, value: &str) -> Result<Change, String> {
    match place {
        Place::Value { doc, path, .. } => Ok(Change::Set {
            doc: *doc,
            path: path.clone(),
            value: value.to_string(),
        }),
        Place::Image { image, field, .. } => {
            let docs = yaml::parse_all(src, Resolver::V3).map_err(|e| e.to_string())?;
            let images = docs.first().and_then(|d| d.get("images"));
            let index = images.and_then(|i| i.as_seq()).and_then(|s| {
                s.iter()
                    .position(|e| e.get("name").and_then(|n| n.as_str()) == Some(image))
            });
            Ok(match index {
                Some(i) => Change::Set {
                    doc: 0,
                    path: vec![
                        Seg::Key("images".into()),
                        Seg::Index(i),
                        Seg::Key(field.clone()),
                    ],
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
            })
        }
    }
}

fn resolver_of(place: &Place) -> Resolver {
    match place {
        Place::Value { resolver, .. } => *resolver,
        Place::Image { .. } => Resolver::V3,
    }
}

/// The new content of every file the items touch: (path, original, edited).
pub fn edit_files(root: &Path, items: &[Item]) -> Result<Vec<(PathBuf, String, String)>, Error> {
    let mut files: Vec<(PathBuf, String, String)> = Vec::new();
    for it in items {
        let file = it.target.place.file().to_path_buf();
        let pos = match files.iter().position(|(f, ..)| *f == file) {
            Some(p) => p,
            None => {
                inside_repo(root, &file)?;
                let text = std::fs::read_to_string(root.join(&file)).map_err(|e| Error::Edit {
                    file: file.clone(),
                    message: e.to_string(),
                })?;
                files.push((file.clone(), text.clone(), text));
                files.len() - 1
            }
        };
        let current = &files[pos].2;
        let fail = |message: String| Error::Edit {
            file: file.clone(),
            message,
        };
        let change = change_for(current, &it.target.place, &it.new).map_err(fail)?;
        let next = edit::apply(current, resolver_of(&it.target.place), &change)
            .map_err(|e| fail(e.to_string()))?;
        files[pos].2 = next;
    }
    Ok(files)
}

/// A pin's file comes from configuration: it must be a relative path with
/// no `..` that stays inside the repository after symlinks are resolved,
/// so a promotion never edits a file outside the repository.
fn inside_repo(root: &Path, file: &Path) -> Result<(), Error> {
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
    let (Ok(real_root), Ok(real)) = (
        std::fs::canonicalize(root),
        std::fs::canonicalize(root.join(file)),
    ) else {
        return Ok(()); // a missing file fails when it is read, naming it
    };
    if !real.starts_with(&real_root) {
        return Err(outside("a symbolic link leads outside the repository"));
    }
    Ok(())
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
    env::render_all(&jobs, &|| {}).map_err(Error::Render)
}

/// Paths relative to the repository's working directory.
pub(super) fn git_paths(
    repo: &Repo,
    root: &Path,
    files: &[PathBuf],
) -> Result<(PathBuf, Vec<String>), Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("promotion needs a repository with a working tree".into()))?;
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    let root_abs = std::fs::canonicalize(root)
        .map_err(|e| Error::Usage(format!("{}: {e}", root.display())))?;
    let root_rel = root_abs
        .strip_prefix(&workdir)
        .map_err(|_| Error::Usage(format!("{} is outside the repository", root.display())))?
        .to_path_buf();
    let paths = files
        .iter()
        .map(|f| root_rel.join(f).to_string_lossy().replace('\\', "/"))
        .collect();
    Ok((root_rel, paths))
}

fn changed_resources(before: &[Rendered], after: &[Rendered]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for a in after {
        let old = before.iter().find(|b| b.app == a.app);
        let mut changed = Vec::new();
        for d in &a.objects {
            let prev = old.and_then(|o| o.objects.iter().find(|p| p.id == d.id));
            if prev.is_none_or(|p| p.printed != d.printed) {
                changed.push(format!("{}/{}", d.id.gvk.kind, d.id.name));
            }
        }
        out.insert(a.app.clone(), changed);
    }
    out
}

/// Applies the request: all or nothing.
pub fn execute(req: &Request) -> Result<Outcome, Error> {
    let edited = edit_files(req.root, req.items)?;
    let apps: BTreeSet<String> = req.items.iter().map(|i| i.app.clone()).collect();
    let files: Vec<PathBuf> = edited.iter().map(|(f, ..)| f.clone()).collect();
    let repo = match req.mode {
        Mode::NoCommit => None,
        _ => Some(Repo::discover(req.root)?),
    };
    let (root_rel, paths) = match &repo {
        Some(r) => git_paths(r, req.root, &files)?,
        None => (PathBuf::new(), Vec::new()),
    };
    if let (Some(r), Mode::Commit) = (&repo, &req.mode) {
        let dirty = r.uncommitted(&paths)?;
        if !dirty.is_empty() {
            return Err(Error::Uncommitted(dirty));
        }
    }
    let before = if req.describe {
        render(req.root, req.env, &apps)?
    } else {
        Vec::new()
    };
    let mut out = Outcome {
        files: files.clone(),
        ..Outcome::default()
    };
    let contents: BTreeMap<String, Vec<u8>> = paths
        .iter()
        .zip(&edited)
        .map(|(p, (_, _, new))| (p.clone(), new.clone().into_bytes()))
        .collect();
    if let (Some(r), Mode::Branch(branch)) = (&repo, &req.mode) {
        let tmp = tempfile::tempdir().map_err(|e| Error::Usage(e.to_string()))?;
        let head = r
            .head_id()?
            .ok_or_else(|| Error::Usage("--branch needs a commit at HEAD".into()))?;
        r.export(head, tmp.path())?;
        let copy = tmp.path().join(&root_rel);
        for (f, _, new) in &edited {
            std::fs::write(copy.join(f), new).map_err(|e| Error::Edit {
                file: f.clone(),
                message: e.to_string(),
            })?;
        }
        let after = render(&copy, req.env, &apps)?;
        out.changed_resources = changed_resources(&before, &after);
        out.commit = Some(
            r.commit_to_new_branch(&contents, &req.message, &req.identity, branch)?
                .to_string(),
        );
        return Ok(out);
    }
    write_all(req.root, &edited, |(_, _, new)| new)?;
    let after = match render(req.root, req.env, &apps) {
        Ok(a) => a,
        Err(e) => {
            write_all(req.root, &edited, |(_, old, _)| old)?;
            return Err(e);
        }
    };
    out.changed_resources = changed_resources(&before, &after);
    if let (Some(r), Mode::Commit) = (&repo, &req.mode) {
        match r.commit_on_head(&contents, &req.message, &req.identity) {
            Ok(c) => out.commit = Some(c.to_string()),
            Err(e) => {
                write_all(req.root, &edited, |(_, old, _)| old)?;
                return Err(e.into());
            }
        }
    }
    Ok(out)
}

fn write_all(
    root: &Path,
    files: &[(PathBuf, String, String)],
    pick: impl Fn(&(PathBuf, String, String)) -> &String,
) -> Result<(), Error> {
    for f in files {
        crate::output::write_file_atomic(&root.join(&f.0), pick(f).as_bytes()).map_err(|e| {
            Error::Edit {
                file: f.0.clone(),
                message: e.to_string(),
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_files_must_stay_inside_the_repository() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join("apps")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("apps/k.yaml"), "a: 1\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(tmp.path().join("secret.yaml"), "a: 1\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(inside_repo(&root, Path::new("apps/k.yaml")).is_ok());
        for bad in ["../secret.yaml", "apps/../../secret.yaml", "/etc/passwd"] {
            let e = inside_repo(&root, Path::new(bad)).err();
            assert!(
                e.is_some_and(|e| e.to_string().contains("inside the repository")),
                "{bad}"
            );
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path(), root.join("out"))
                .unwrap_or_else(|e| panic!("{e}"));
            let e = inside_repo(&root, Path::new("out/secret.yaml")).err();
            assert!(e.is_some_and(|e| e.to_string().contains("symbolic link")));
        }
    }
}
