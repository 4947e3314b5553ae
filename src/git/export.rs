//! A commit's tree written to a [`Scratch`] directory for the renderers to
//! read (`hydrate diff --since`, `hydrate verify`, promotion's snapshot),
//! with memory bounded by one small file, whatever the tree holds: files
//! are written one at a time, a large one streamed from its loose object
//! (libgit2 inflates a packed one whole), and files the caller says can
//! wait (large ones, until it knows a render reads their directory) are
//! not read at all until [`Export::fill`] asks for them. Executable files
//! keep their mode; symbolic links become links when they stay inside the
//! tree (one leading out is left out, so a render through it fails naming
//! it); submodules are left out. It decides nothing about which files a
//! render reads (`env::reach` does).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use git2::{ObjectType, Oid, TreeWalkMode, TreeWalkResult};

use super::scratch::Scratch;
use super::{ctx, Error, Repo};

/// Blobs larger than this are streamed to disk in chunks when the object
/// database can stream them (a loose object).
const STREAM_ABOVE: u64 = 1 << 20;

/// How far [`Export::fill`] follows symbolic links to links.
const MAX_LINKS: usize = 40;

/// A file not written yet.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    id: Oid,
    mode: i32,
}

/// A commit's files on disk, removed when dropped (or on SIGINT/SIGTERM,
/// see [`Scratch`]).
#[derive(Debug)]
pub struct Export {
    dir: Scratch,
    /// The directory as the renderers resolve it (symlinks in `$TMPDIR`
    /// resolved), for matching the paths [`Export::fill`] is given.
    real: PathBuf,
    commit: Oid,
    /// Files not written yet, by path in the tree.
    deferred: Mutex<BTreeMap<String, Deferred>>,
    /// Symbolic links written: path in the tree → target as stored.
    links: BTreeMap<String, String>,
    /// Every directory of the tree, by path in the tree.
    dirs: BTreeSet<String>,
    /// The directories made on disk so far.
    made: Mutex<BTreeSet<String>>,
}

/// What [`Repo::export_with`] writes up front.
enum Upfront<'a> {
    /// Every directory, and every file but those `defer(path, size)`
    /// says can wait.
    AllBut(&'a dyn Fn(&str, u64) -> bool),
    /// Only the symbolic links (and the directories holding them): every
    /// file waits for [`Export::fill`], which makes its directories.
    Links,
}

impl Repo {
    /// Writes commit `id`'s files to a new temporary directory, except
    /// those for which `defer(path, size)` says they can wait.
    pub fn export(&self, id: Oid, defer: &dyn Fn(&str, u64) -> bool) -> Result<Export, Error> {
        self.export_with(id, Upfront::AllBut(defer))
    }

    /// Prepares commit `id`'s files in a new temporary directory without
    /// writing any (only its symbolic links): each file, and the
    /// directories leading to it, is written when [`Export::fill`] or
    /// [`Export::fill_matching`] asks for it. A command that reads a few
    /// apps of a large tree writes only what those apps read.
    pub fn export_lazy(&self, id: Oid) -> Result<Export, Error> {
        self.export_with(id, Upfront::Links)
    }

    fn export_with(&self, id: Oid, upfront: Upfront) -> Result<Export, Error> {
        let dir = Scratch::new()?;
        let real = std::fs::canonicalize(dir.path()).map_err(|source| Error::Io {
            what: format!("resolve {}", dir.path().display()),
            source,
        })?;
        let tree = self.commit_tree(id)?;
        let odb = self.repo.odb().map_err(ctx("open the object database"))?;
        let mut deferred = BTreeMap::new();
        let mut links = BTreeMap::new();
        let mut dirs = BTreeSet::new();
        let mut made = BTreeSet::new();
        let mut failure = None;
        tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
            let name = String::from_utf8_lossy(entry.name_bytes());
            let path = format!("{parent}{name}");
            let defer = |d: &mut BTreeMap<String, Deferred>| {
                let f = Deferred {
                    id: entry.id(),
                    mode: entry.filemode(),
                };
                d.insert(path.clone(), f);
                Ok(())
            };
            let step = match (entry.kind(), &upfront) {
                // A crafted tree could name `..`: never write outside.
                _ if !is_plain_name(&name) => Err(Error::Usage(format!(
                    "{path}: commit {id} holds an unsafe path"
                ))),
                (Some(ObjectType::Tree), Upfront::AllBut(_)) => {
                    dirs.insert(path.clone());
                    made.insert(path.clone());
                    make_dir(&real, &path)
                }
                (Some(ObjectType::Tree), Upfront::Links) => {
                    dirs.insert(path.clone());
                    Ok(())
                }
                (Some(ObjectType::Blob), _) if entry.filemode() == 0o120000 => {
                    make_dirs(&real, parent.trim_end_matches('/'), &mut made)
                        .and_then(|()| self.export_link(&real, &path, entry.id()))
                        .map(|target| {
                            if let Some(t) = target {
                                links.insert(path.clone(), t);
                            }
                        })
                }
                (Some(ObjectType::Blob), Upfront::Links) => defer(&mut deferred),
                (Some(ObjectType::Blob), Upfront::AllBut(can_wait)) => {
                    match odb.read_header(entry.id()) {
                        Ok((size, _)) if can_wait(&path, size as u64) => defer(&mut deferred),
                        Ok((size, _)) => {
                            self.write_blob(&odb, &real, &path, entry.id(), entry.filemode(), size)
                        }
                        Err(e) => Err(ctx(format!("read {path}"))(e)),
                    }
                }
                _ => Ok(()),
            };
            match step {
                Ok(()) => TreeWalkResult::Ok,
                Err(e) => {
                    failure = Some(e);
                    TreeWalkResult::Abort
                }
            }
        })
        .map_err(|e| failure.take().unwrap_or_else(|| ctx("walk tree")(e)))?;
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(Export {
            dir,
            real,
            commit: id,
            deferred: Mutex::new(deferred),
            links,
            dirs,
            made: Mutex::new(made),
        })
    }

    /// Writes the symbolic link at `path` when it stays inside the tree;
    /// returns its target then.
    fn export_link(&self, dir: &Path, path: &str, id: Oid) -> Result<Option<String>, Error> {
        let blob = self
            .repo
            .find_blob(id)
            .map_err(ctx(format!("read {path}")))?;
        let link = String::from_utf8_lossy(blob.content()).into_owned();
        if !link_stays_inside(path, &link) {
            return Ok(None);
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(&link, dir.join(path)).map_err(|e| io(path, e))?;
        Ok(Some(link))
    }

    /// Writes blob `id` (`size` bytes) at `path` under `dir`: streamed in
    /// chunks when the object database can (a loose object), else read
    /// whole (libgit2 inflates a packed object in memory).
    fn write_blob(
        &self,
        odb: &git2::Odb<'_>,
        dir: &Path,
        path: &str,
        id: Oid,
        mode: i32,
        size: usize,
    ) -> Result<(), Error> {
        let target = dir.join(path);
        let mut file = std::fs::File::create(&target).map_err(|e| io(path, e))?;
        let streamed = if size as u64 > STREAM_ABOVE {
            match odb.reader(id) {
                Ok((mut reader, ..)) => {
                    let mut out = std::io::BufWriter::with_capacity(1 << 16, &mut file);
                    std::io::copy(&mut reader, &mut out)
                        .and_then(|_| out.flush())
                        .map_err(|e| io(path, e))?;
                    true
                }
                Err(_) => false,
            }
        } else {
            false
        };
        if !streamed {
            let blob = self
                .repo
                .find_blob(id)
                .map_err(ctx(format!("read {path}")))?;
            file.write_all(blob.content()).map_err(|e| io(path, e))?;
        }
        #[cfg(unix)]
        if mode == 0o100755 {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o755))
                .map_err(|e| io(path, e))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        Ok(())
    }
}

impl Export {
    /// The directory holding the tree (its root is the repository's
    /// working directory).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The commit exported.
    pub fn commit(&self) -> Oid {
        self.commit
    }

    /// The files not written yet, by path in the tree.
    #[cfg(test)]
    pub fn deferred(&self) -> Vec<String> {
        let d = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
        d.keys().cloned().collect()
    }

    /// Writes the deferred files at `path` or below it (a path under
    /// [`Export::dir`], through symbolic links as the renderers follow
    /// them), and those that the links below it lead to.
    pub fn fill(&self, repo: &Repo, path: &Path) -> Result<(), Error> {
        let mut seen = Vec::new();
        self.fill_at(repo, path, &mut seen, 0)
    }

    fn fill_at(
        &self,
        repo: &Repo,
        path: &Path,
        seen: &mut Vec<String>,
        depth: usize,
    ) -> Result<(), Error> {
        if depth > MAX_LINKS {
            return Ok(());
        }
        let Some(rel) = self.in_tree(path) else {
            return Ok(());
        };
        if seen.contains(&rel) {
            return Ok(());
        }
        seen.push(rel.clone());
        let wanted: Vec<(String, Deferred)> = {
            let mut d = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
            let under = under(&d, &rel);
            under
                .into_iter()
                .filter_map(|k| d.remove(&k).map(|v| (k, v)))
                .collect()
        };
        if !wanted.is_empty() {
            let odb = repo.repo.odb().map_err(ctx("open the object database"))?;
            for (p, d) in wanted {
                let parent = p.rsplit_once('/').map_or("", |(dir, _)| dir);
                {
                    let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
                    make_dirs(&self.real, parent, &mut made)?;
                }
                let size = odb.read_header(d.id).map_or(0, |(s, _)| s);
                repo.write_blob(&odb, &self.real, &p, d.id, d.mode, size)?;
            }
        }
        // A link below leads elsewhere in the tree: what it leads to is
        // read through it.
        let targets: Vec<PathBuf> = self
            .links
            .iter()
            .filter(|(p, _)| within(p, &rel))
            .filter_map(|(p, t)| Path::new(p).parent().map(|d| self.real.join(d).join(t)))
            .collect();
        for t in targets {
            self.fill_at(repo, &t, seen, depth + 1)?;
        }
        Ok(())
    }

    /// Writes the files directly in `dir` (a path under [`Export::dir`]),
    /// not those in its subdirectories, and what the symbolic links in it
    /// lead to: as a directory listing reads them (`environments/*.yaml`,
    /// beside the value files below it that only some renders read).
    pub fn fill_listing(&self, repo: &Repo, dir: &Path) -> Result<(), Error> {
        let Some(rel) = self.in_tree(dir) else {
            return Ok(());
        };
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let direct = |p: &String| p.strip_prefix(&prefix).is_some_and(|r| !r.contains('/'));
        let files: Vec<String> = {
            let d = self.deferred.lock().unwrap_or_else(PoisonError::into_inner);
            let files = d.range(prefix.clone()..).map(|(p, _)| p);
            let files = files.take_while(|p| p.starts_with(&prefix));
            let links = self.links.range(prefix.clone()..).map(|(p, _)| p);
            let links = links.take_while(|p| p.starts_with(&prefix));
            files.chain(links).filter(|p| direct(p)).cloned().collect()
        };
        for f in files {
            self.fill(repo, &self.real.join(f))?;
        }
        Ok(())
    }

    /// Writes the files named one of `names` in the directories under
    /// `base` (a path under [`Export::dir`]) that a pattern of `depth`
    /// components matches, `matches(i, name)` judging the name of the
    /// `i`-th directory below `base`; symbolic links to directories are
    /// followed, as `env::discover` walks the written tree. A `discover:`
    /// glob so finds its kustomizations in a lazy export
    /// ([`Repo::export_lazy`]) without the rest of the tree.
    pub fn fill_matching(
        &self,
        repo: &Repo,
        base: &Path,
        depth: usize,
        matches: &dyn Fn(usize, &str) -> bool,
        names: &[&str],
    ) -> Result<(), Error> {
        let Some(base) = self.in_tree(base) else {
            return Ok(());
        };
        let mut level = vec![base];
        for i in 0..depth {
            let mut next = Vec::new();
            for dir in &level {
                for (name, child) in self.children(dir) {
                    if !matches(i, &name) {
                        continue;
                    }
                    let child = match self.links.contains_key(&child) {
                        true => self.resolve_links(Path::new(&child)),
                        false => Some(child),
                    };
                    if let Some(c) = child.filter(|c| self.dirs.contains(c)) {
                        next.push(c);
                    }
                }
            }
            level = next;
        }
        for dir in level {
            for n in names {
                self.fill(repo, &self.real.join(&dir).join(n))?;
            }
        }
        Ok(())
    }

    /// The directories and symbolic links directly in tree directory
    /// `dir` (`""`: the root): (name, path in the tree).
    fn children(&self, dir: &str) -> Vec<(String, String)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let direct = |p: &String| -> Option<(String, String)> {
            let rest = p.strip_prefix(&prefix)?;
            (!rest.contains('/')).then(|| (rest.to_string(), p.clone()))
        };
        let dirs = self.dirs.range(prefix.clone()..);
        let dirs = dirs.take_while(|p| p.starts_with(&prefix));
        let links = self.links.range(prefix.clone()..).map(|(p, _)| p);
        let links = links.take_while(|p| p.starts_with(&prefix));
        dirs.chain(links).filter_map(direct).collect()
    }

    /// `path` as a path in the tree (`""` for the root), resolving `..`
    /// and symbolic links; `None` outside the export. A path under
    /// [`Export::dir`] is resolved on the tree (the directories of a lazy
    /// export are not all written); any other through the filesystem.
    fn in_tree(&self, path: &Path) -> Option<String> {
        let lexical = path
            .strip_prefix(self.dir.path())
            .or_else(|_| path.strip_prefix(&self.real));
        match lexical {
            Ok(rel) => self.resolve_links(rel),
            Err(_) => {
                let resolved = resolve(path)?;
                self.resolve_links(resolved.strip_prefix(&self.real).ok()?)
            }
        }
    }

    /// Tree path `rel` with `.`, `..` and the tree's symbolic links
    /// resolved, as the kernel resolves them once the tree is written
    /// (`..` after a link goes up from the link's target); `None` when it
    /// leaves the tree or follows more than [`MAX_LINKS`] links.
    fn resolve_links(&self, rel: &Path) -> Option<String> {
        let mut todo: std::collections::VecDeque<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let mut parts: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(c) = todo.pop_front() {
            match c.as_str() {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                _ => {
                    parts.push(c);
                    let Some(target) = self.links.get(&parts.join("/")) else {
                        continue;
                    };
                    hops += 1;
                    if hops > MAX_LINKS {
                        return None;
                    }
                    // The target is relative to the link's directory.
                    parts.pop();
                    for t in target.split('/').rev() {
                        todo.push_front(t.to_string());
                    }
                }
            }
        }
        Some(parts.join("/"))
    }
}

/// The keys of `files` at tree path `dir` or below it.
fn under<V>(files: &BTreeMap<String, V>, dir: &str) -> Vec<String> {
    if dir.is_empty() {
        return files.keys().cloned().collect();
    }
    let prefix = format!("{dir}/");
    let exact = files.get_key_value(dir).map(|(k, _)| k.clone());
    let below = files.range(prefix.clone()..).map(|(k, _)| k);
    let below = below.take_while(|k| k.starts_with(&prefix)).cloned();
    exact.into_iter().chain(below).collect()
}

/// `path` with symbolic links and `..` resolved, when its parent exists
/// (the file itself may not be written yet).
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    if let Ok(target) = std::fs::read_link(path) {
        // A link to a file not written yet.
        return resolve(&path.parent()?.join(target));
    }
    let name = path.file_name()?;
    Some(resolve(path.parent()?)?.join(name))
}

/// Whether tree path `p` is `dir` or below it (`""` is the root).
fn within(p: &str, dir: &str) -> bool {
    dir.is_empty()
        || p == dir
        || p.strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A name that stays one path component: not empty, `.` or `..`, and
/// with no separator.
fn is_plain_name(name: &str) -> bool {
    let separator = name.contains(['/', '\0']) || (cfg!(windows) && name.contains('\\'));
    !separator && !matches!(name, "" | "." | "..")
}

fn make_dir(dir: &Path, path: &str) -> Result<(), Error> {
    // Not create_dir_all: the parent exists (the walk is pre-order), and
    // once the export is removed (a signal) nothing is made again.
    match std::fs::create_dir(dir.join(path)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(path, e)),
    }
}

/// Makes tree directory `dir` (`""`: the root, which exists) and those
/// leading to it under `real`, unless `made` says they are. One at a
/// time, not `create_dir_all`: once the export is removed (a signal),
/// nothing is made again.
fn make_dirs(real: &Path, dir: &str, made: &mut BTreeSet<String>) -> Result<(), Error> {
    if dir.is_empty() || made.contains(dir) {
        return Ok(());
    }
    if let Some((parent, _)) = dir.rsplit_once('/') {
        make_dirs(real, parent, made)?;
    }
    make_dir(real, dir)?;
    made.insert(dir.to_string());
    Ok(())
}

fn io(path: &str, source: std::io::Error) -> Error {
    Error::Io {
        what: format!("export {path}"),
        source,
    }
}

/// Whether the symbolic link at `path` (in a tree) with target `link`
/// points inside the tree.
fn link_stays_inside(path: &str, link: &str) -> bool {
    if link.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = path.split('/').collect();
    depth.pop();
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            p => depth.push(p),
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::Identity;

    fn repo_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Repo, Oid) {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let edits = files
            .iter()
            .map(|(p, b)| (p.to_string(), Some(b.to_vec())))
            .collect();
        let tree = repo.build_tree(None, &edits).unwrap();
        let who = Identity {
            name: "t".into(),
            email: "t@example.com".into(),
            time: 1,
        };
        let c = repo.commit(tree, None, "c", &who).unwrap();
        (dir, repo, c)
    }

    #[test]
    fn deferred_files_are_written_only_when_their_directory_is_filled() {
        let big = vec![b'x'; 3 << 20];
        let (_d, repo, c) = repo_with(&[
            ("app/k.yaml", b"a"),
            ("app/big.bin", &big),
            ("assets/big.bin", &big),
            ("apps/other", b"o"),
        ]);
        let x = repo.export(c, &|_, size| size > 1024).unwrap();
        let at = |p: &str| x.dir().join(p);
        assert_eq!(std::fs::read(at("app/k.yaml")).unwrap(), b"a");
        assert!(at("assets").is_dir(), "directories are all made");
        assert!(!at("app/big.bin").exists());
        assert_eq!(x.deferred(), ["app/big.bin", "assets/big.bin"]);
        // `app` is not a prefix of `apps/…`; `..` is resolved.
        x.fill(&repo, &at("apps/../app")).unwrap();
        assert_eq!(std::fs::read(at("app/big.bin")).unwrap(), big);
        assert_eq!(x.deferred(), ["assets/big.bin"]);
        // Outside the export: nothing.
        x.fill(&repo, Path::new("/")).unwrap();
        assert_eq!(x.deferred(), ["assets/big.bin"]);
        let dir = x.dir().to_path_buf();
        drop(x);
        assert!(!dir.exists());
    }

    #[test]
    fn links_inside_the_tree_are_kept_and_filled_through() {
        let dir = tempfile::tempdir().unwrap();
        let g = git2::Repository::init(dir.path()).unwrap();
        let big = vec![b'y'; 2048];
        let mut index = g.index().unwrap();
        let mut add = |path: &str, bytes: &[u8], mode: u32| {
            let id = g.blob(bytes).unwrap();
            let mut e = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode,
                uid: 0,
                gid: 0,
                file_size: 0,
                id,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            e.flags = u16::try_from(path.len()).unwrap();
            index.add(&e).unwrap();
        };
        add("app/link", b"../shared/big", 0o120000);
        add("app/out", b"../../etc/passwd", 0o120000);
        add("shared/big", &big, 0o100755);
        let tree = index.write_tree().unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let t = g.find_tree(tree).unwrap();
        let c = g.commit(None, &sig, &sig, "c", &t, &[]).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let eager = repo.export(c, &|_, size| size > 1024).unwrap();
        let lazy = repo.export_lazy(c).unwrap();
        for x in [eager, lazy] {
            assert!(!x.dir().join("app/out").exists(), "a link out is left out");
            assert_eq!(x.deferred(), ["shared/big"]);
            x.fill(&repo, &x.dir().join("app")).unwrap();
            assert_eq!(std::fs::read(x.dir().join("app/link")).unwrap(), big);
            check_mode(&x);
        }
    }

    /// The file a link led to kept its executable mode.
    fn check_mode(x: &Export) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(x.dir().join("shared/big"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
    }

    #[test]
    fn a_lazy_export_writes_only_what_is_filled() {
        let (_d, repo, c) = repo_with(&[
            ("apps/api/base/d.yaml", b"a"),
            ("apps/api/dev/kustomization.yaml", b"ka"),
            ("apps/web/base/d.yaml", b"w"),
            ("apps/web/dev/kustomization.yaml", b"kw"),
            ("apps/web/dev/patch.yaml", b"p"),
        ]);
        let x = repo.export_lazy(c).unwrap();
        let at = |p: &str| x.dir().join(p);
        assert!(!at("apps").exists(), "nothing is written up front");
        // `..` is resolved on the tree, before its directories exist.
        x.fill(&repo, &at("apps/web/dev/../base")).unwrap();
        assert_eq!(std::fs::read(at("apps/web/base/d.yaml")).unwrap(), b"w");
        assert!(!at("apps/web/dev").exists());
        assert!(!at("apps/api").exists());
        // A discover glob `apps/*/dev` writes the kustomizations it finds.
        let glob = |i: usize, name: &str| match i {
            0 => name == "apps",
            1 => true,
            _ => name == "dev",
        };
        let names = ["kustomization.yaml"];
        x.fill_matching(&repo, x.dir(), 3, &glob, &names).unwrap();
        assert_eq!(
            std::fs::read(at("apps/api/dev/kustomization.yaml")).unwrap(),
            b"ka"
        );
        assert!(at("apps/web/dev/kustomization.yaml").is_file());
        assert!(!at("apps/web/dev/patch.yaml").exists());
        assert!(!at("apps/api/base").exists());
        assert_eq!(
            x.deferred(),
            ["apps/api/base/d.yaml", "apps/web/dev/patch.yaml"]
        );
        // A listing of `apps/web/dev` writes its files, not those below.
        x.fill_listing(&repo, &at("apps/web")).unwrap();
        assert_eq!(x.deferred().len(), 2);
        x.fill_listing(&repo, &at("apps/web/dev")).unwrap();
        assert_eq!(x.deferred(), ["apps/api/base/d.yaml"]);
    }
}
