//! The sources a promotion reads: a commit's tree (HEAD's, or a past one
//! for rollback) exported to a temporary directory, so pins, edits and the
//! render check see committed bytes only, never the working tree's
//! uncommitted changes. The export is lazy: only `environments/`, the
//! kustomizations `discover:` globs find, and what the renders and pins
//! of the apps the command is about can read (`env::reach`) are written,
//! so a command about one app of a large repository writes that app's
//! files, not the whole tree.

use std::path::{Path, PathBuf};

use git2::Oid;

use super::Error;
use crate::env;
use crate::git::{Export, Repo};
use crate::kustomize::FILE_NAMES;

/// What a command reads of a snapshot: the apps of the environments
/// (every one, where a list is empty) whose renders and pins it reads.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The environments.
    pub envs: Vec<String>,
    /// The apps.
    pub apps: Vec<String>,
}

impl Scope {
    /// `apps` (every app when empty) of every environment.
    pub fn apps(apps: &[String]) -> Scope {
        Scope {
            envs: Vec::new(),
            apps: apps.to_vec(),
        }
    }

    /// `apps` (every app when empty) of environment `env`.
    pub fn env(env: &str, apps: &[String]) -> Scope {
        Scope {
            envs: vec![env.to_string()],
            apps: apps.to_vec(),
        }
    }
}

/// A commit's tree on disk, removed when dropped.
pub struct Snapshot {
    export: Export,
    files: PathBuf,
    root: PathBuf,
    root_rel: PathBuf,
}

impl Snapshot {
    /// Exports `commit` for reading what `scope` names; `root` is the
    /// repository root hydrate was given (holding `environments/`),
    /// possibly below the working directory.
    pub fn of(repo: &Repo, root: &Path, commit: Oid, scope: &Scope) -> Result<Snapshot, Error> {
        let root_rel = root_in_workdir(repo, root)?;
        let export = repo.export_lazy(commit)?;
        let files = export.dir().to_path_buf();
        let root = if root_rel.as_os_str().is_empty() {
            files.clone()
        } else {
            files.join(&root_rel)
        };
        // The environment files, not the value files beside them.
        export.fill_listing(repo, &root.join("environments"))?;
        // Environments that do not load: the promotion says why. A
        // `discover:` glob finds no app until the kustomizations it
        // matches are written: then they are loaded again.
        let Ok(mut envs) = env::load_environments(&root) else {
            return Ok(Snapshot {
                root,
                files,
                export,
                root_rel,
            });
        };
        let mut discovers = false;
        for e in &envs {
            for rule in &e.discover {
                let glob = env::GlobPattern::new(&rule.pattern.replace("{env}", &e.name));
                let matches = |i: usize, name: &str| glob.matches(i, name);
                export.fill_matching(repo, &root, glob.depth(), &matches, &FILE_NAMES)?;
                discovers = true;
            }
        }
        if discovers {
            envs = env::load_environments(&root).unwrap_or_default();
        }
        envs.retain(|e| scope.envs.is_empty() || scope.envs.contains(&e.name));
        for e in &mut envs {
            e.apps
                .retain(|a| scope.apps.is_empty() || scope.apps.contains(&a.name));
        }
        env::reach::inputs(&root, &envs, &mut |p| export.fill(repo, p))?;
        Ok(Snapshot {
            root,
            files,
            export,
            root_rel,
        })
    }

    /// Writes the file git calls `git_path` (when the export has not yet)
    /// and returns where it is: a promotion edits a file of an app it
    /// read, so this writes nothing new but guards against a pin file
    /// outside what `env::reach` names.
    pub fn fill(&self, repo: &Repo, git_path: &str) -> Result<PathBuf, Error> {
        let file = self.file(git_path);
        self.export.fill(repo, &file)?;
        Ok(file)
    }

    /// The repository root inside the export (where `environments/` is).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The commit exported.
    pub fn commit(&self) -> Oid {
        self.export.commit()
    }

    /// A path relative to the root as a path relative to the working
    /// directory (`/`-separated), as git names it.
    pub fn git_path(&self, file: &Path) -> String {
        self.root_rel
            .join(file)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Where the file git calls `git_path` is in the export.
    pub fn file(&self, git_path: &str) -> PathBuf {
        self.files.join(git_path)
    }
}

/// `root` relative to the repository's working directory.
fn root_in_workdir(repo: &Repo, root: &Path) -> Result<PathBuf, Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("promotion needs a repository with a working tree".into()))?;
    let workdir = std::fs::canonicalize(&workdir).unwrap_or(workdir);
    let root_abs = std::fs::canonicalize(root)
        .map_err(|e| Error::Usage(format!("{}: {e}", root.display())))?;
    root_abs
        .strip_prefix(&workdir)
        .map(Path::to_path_buf)
        .map_err(|_| Error::Usage(format!("{} is outside the repository", root.display())))
}
