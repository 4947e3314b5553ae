//! Whole-file promotion: an app's `promotion: {copy: [globs]}` names files
//! of its directory that move from one environment to the next byte for
//! byte (`settings.yml` from staging's overlay over production's), as
//! teams that promote by copying files between environment folders do.
//!
//! It finds the copies; writing them is the plan's (`apply.rs`), so a copy
//! is committed in the same transaction as the pins and obeys `block:`.

use std::path::{Path, PathBuf};

use super::Error;
use crate::env::{App, Source};

/// One file to copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    /// The app.
    pub app: String,
    /// The file, relative to the app's directory (what `block:` and the
    /// message name: `app/settings.yml`).
    pub name: String,
    /// FROM's file, relative to the root.
    pub from: PathBuf,
    /// TO's file, relative to the root.
    pub to: PathBuf,
    /// TO's text now.
    pub old: String,
    /// FROM's text, written over it.
    pub new: String,
}

/// A file a glob matched in FROM that TO does not have: promotion does not
/// create files (a new file is a change to review by hand).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotCopied {
    /// The app.
    pub app: String,
    /// FROM's file, relative to the root.
    pub from: PathBuf,
    /// Where it would go.
    pub to: PathBuf,
}

/// The copies `to_app`'s `promotion.copy` asks for, from `from_app`'s
/// directory, read under `root`: files whose text differs (identical files
/// are no change).
pub fn find(
    root: &Path,
    from_app: &App,
    to_app: &App,
) -> Result<(Vec<Copy>, Vec<NotCopied>), Error> {
    let globs = &to_app.promotion.copy;
    if globs.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let (Source::Kustomize(from_dir), Source::Kustomize(to_dir)) =
        (&from_app.source, &to_app.source)
    else {
        return Err(Error::Usage(format!(
            "{}: promotion.copy copies files of a kustomize app's directory; this app is a chart",
            to_app.name
        )));
    };
    let set = glob_set(to_app)?;
    let mut copies = Vec::new();
    let mut missing = Vec::new();
    for name in matching_files(&root.join(from_dir), &set)? {
        let from = from_dir.join(&name);
        let to = to_dir.join(&name);
        let new = read(root, &from)?;
        if !root.join(&to).is_file() {
            missing.push(NotCopied {
                app: to_app.name.clone(),
                from,
                to,
            });
            continue;
        }
        let old = read(root, &to)?;
        if old != new {
            copies.push(Copy {
                app: to_app.name.clone(),
                name,
                from,
                to,
                old,
                new,
            });
        }
    }
    Ok((copies, missing))
}

/// A rollback's copies: each file of `app`'s `promotion.copy` globs in its
/// directory now (under `now_root`) whose text differed at the commit
/// exported under `past_root`, written back as it was then. Files that
/// did not exist then are left (hydrate does not delete files).
pub fn restore(past_root: &Path, now_root: &Path, app: &App) -> Result<Vec<Copy>, Error> {
    let Source::Kustomize(dir) = &app.source else {
        return Ok(Vec::new());
    };
    if app.promotion.copy.is_empty() {
        return Ok(Vec::new());
    }
    let set = glob_set(app)?;
    let mut out = Vec::new();
    for name in matching_files(&now_root.join(dir), &set)? {
        let file = dir.join(&name);
        if !past_root.join(&file).is_file() {
            continue;
        }
        let (old, new) = (read(now_root, &file)?, read(past_root, &file)?);
        if old != new {
            out.push(Copy {
                app: app.name.clone(),
                name,
                from: file.clone(),
                to: file,
                old,
                new,
            });
        }
    }
    Ok(out)
}

fn glob_set(app: &App) -> Result<globset::GlobSet, Error> {
    let mut set = globset::GlobSetBuilder::new();
    for g in &app.promotion.copy {
        let glob = globset::GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::Usage(format!("{}: copy glob `{g}`: {e}", app.name)))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| Error::Usage(format!("{}: copy globs: {e}", app.name)))
}

/// The regular files under `dir` (links not followed) whose path relative
/// to it matches, `/`-separated, sorted.
fn matching_files(dir: &Path, set: &globset::GlobSet) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| Error::Pin(format!("{}: {e}", dir.display())))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        let name: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let name = name.join("/");
        if set.is_match(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

fn read(root: &Path, file: &Path) -> Result<String, Error> {
    std::fs::read_to_string(root.join(file))
        .map_err(|e| Error::Pin(format!("{}: {e}", file.display())))
}

/// A unified diff of a copy, for the plan and the commit body.
pub fn diff(c: &Copy) -> String {
    similar::TextDiff::from_lines(&c.old, &c.new)
        .unified_diff()
        .context_radius(2)
        .header(&c.to.display().to_string(), &c.from.display().to_string())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::AppPromotion;

    fn app(name: &str, dir: &str, copy: &[&str]) -> App {
        App {
            name: name.into(),
            source: Source::Kustomize(dir.into()),
            pins: Vec::new(),
            promotion: AppPromotion {
                copy: copy.iter().map(|s| s.to_string()).collect(),
            },
        }
    }

    #[test]
    fn copies_are_the_matching_files_that_differ_and_exist_in_both() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let w = |p: &str, text: &str| {
            let f = root.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(root.path()))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, text).unwrap_or_else(|e| panic!("{e}"));
        };
        w("a/settings.yml", "x: 2\n");
        w("b/settings.yml", "x: 1\n");
        w("a/same.yml", "y\n");
        w("b/same.yml", "y\n");
        w("a/new.yml", "n\n");
        w("a/sub/deep.yml", "d\n");
        w("b/sub/deep.yml", "e\n");
        let (copies, missing) = find(
            root.path(),
            &app("web", "a", &[]),
            &app("web", "b", &["*.yml"]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = copies.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["settings.yml"], "* does not cross /");
        assert_eq!(copies[0].new, "x: 2\n");
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].to, Path::new("b/new.yml"));
        let d = diff(&copies[0]);
        assert!(d.contains("-x: 1\n+x: 2\n"), "{d}");
        let (copies, _) = find(
            root.path(),
            &app("web", "a", &[]),
            &app("web", "b", &["**/*.yml"]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(copies.len(), 2);
    }
}
