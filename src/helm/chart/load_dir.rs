//! helm's `LoadDir`: a chart directory walked in name order, its
//! `.helmignore` honoured, its symlinks followed only within the
//! repository, irregular and oversized files refused; the files found are
//! read (big `.Files` deferred) and handed to `load_files.rs`. Must not:
//! read a file outside the chart's repository.

use std::path::{Path, PathBuf};

use super::super::file_data::{FileData, DEFER_FROM};
use super::super::ignore::Rules;
use super::load_files::from_files;
use super::{Chart, Error, FollowedLink, Origin, MAX_FILE_SIZE};

/// The chart's `.helmignore` (helm's `LoadDir`: parsed when present, a bad
/// rule an error) and helm's default rule after it.
fn load_ignore(dir: &Path) -> Result<Rules, Error> {
    let rules = match std::fs::read(dir.join(".helmignore")) {
        Ok(bytes) => Rules::parse(&String::from_utf8_lossy(&bytes)).map_err(Error::Chart)?,
        Err(_) => Rules::default(),
    };
    Ok(rules.with_defaults())
}

/// A walked file: its path relative to the chart, its path and its size.
type Walked = (String, PathBuf, u64);

/// The directory a chart's symlinks may lead into: the repository the
/// chart is in (the nearest directory at or above it holding `.git`), else
/// the chart directory itself. helm follows any link; hydrate follows
/// those that stay in the repository (a library chart or `crds/` linked
/// from elsewhere in it) and refuses the rest, so a chart cannot pull
/// `/etc/passwd` or a home directory into `.Files`.
fn confinement_root(chart_canon: &Path) -> PathBuf {
    chart_canon
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(chart_canon)
        .to_path_buf()
}

/// helm's `LoadDir` walk (`sympath.Walk`, sorted by name): symlinks are
/// followed, each reported to `links`, but unlike helm only when they
/// resolve inside `confine` ([`confinement_root`]); a symlinked directory
/// leading back to one being walked is walked once (walkdir's loop
/// detection, so a loop cannot recurse). Irregular files and files over
/// 5 MiB are refused, as helm does.
/// Each file found goes to `found`, in walk order.
fn walk(
    root: &Path,
    confine: &Path,
    ignore: &Rules,
    found: &mut dyn FnMut(Walked),
    links: &mut Vec<FollowedLink>,
) -> Result<(), Error> {
    let rel = |p: &Path| -> String {
        let r = p.strip_prefix(root).unwrap_or(p);
        let parts: Vec<_> = r.iter().map(|c| c.to_string_lossy()).collect();
        parts.join("/")
    };
    let entries = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !ignore.ignore(&rel(e.path()), e.file_type().is_dir()));
    for entry in entries {
        let e = match entry {
            Ok(e) => e,
            Err(err) if err.loop_ancestor().is_some() => continue,
            // A dangling symlink the .helmignore excludes is never read.
            Err(err) if err.path().is_some_and(|p| ignore.ignore(&rel(p), false)) => continue,
            Err(err) => return Err(walk_error(root, &err)),
        };
        if e.depth() == 0 {
            continue;
        }
        let (r, path) = (rel(e.path()), e.path());
        if e.path_is_symlink() {
            let target = std::fs::canonicalize(path)
                .map_err(|err| Error::io(path, format!("error evaluating symlink: {err}")))?;
            if !target.starts_with(confine) {
                return Err(Error::Chart(format!(
                    "chart file {r} is a symlink to {}, which is outside the repository {}; \
                     hydrate follows a chart's symlinks only within its repository",
                    target.display(),
                    confine.display()
                )));
            }
            links.push(FollowedLink {
                path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
                resolved: target,
            });
        }
        let meta = e
            .metadata()
            .map_err(|err| Error::io(path, err.to_string()))?;
        if meta.is_dir() {
            continue;
        } else if !meta.is_file() {
            return Err(Error::Chart(format!(
                "cannot load irregular file {} as it has file mode type bits set",
                path.display()
            )));
        } else if meta.len() > MAX_FILE_SIZE {
            return Err(Error::Chart(format!(
                "chart file {r:?} is larger than the maximum file size {MAX_FILE_SIZE}"
            )));
        }
        found((r, e.into_path(), meta.len()));
    }
    Ok(())
}

/// A walk error, naming the path; a dangling symlink is helm's
/// "error evaluating symlink".
fn walk_error(root: &Path, err: &walkdir::Error) -> Error {
    let path = err.path().unwrap_or(root);
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    let text = err
        .io_error()
        .map_or_else(|| err.to_string(), ToString::to_string);
    let text = if is_link {
        format!("error evaluating symlink: {text}")
    } else {
        text
    };
    Error::io(path, text)
}

/// Loads the chart directory `at.dir` (which exists).
pub(super) fn load_dir(at: &Origin<'_>) -> Result<Chart, Error> {
    let dir = at.dir;
    let ignore = load_ignore(dir)?;
    let root_canon = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e.to_string()))?;
    let confine = confinement_root(&root_canon);
    let mut links = Vec::new();
    // Reading on more threads pays only for a render that has the cores
    // to itself, the one a prefetching caller does.
    let files = if at.prefetch.is_some() {
        walk_and_read(dir, &confine, &ignore, &mut links)?
    } else {
        let mut paths = Vec::new();
        walk(dir, &confine, &ignore, &mut |w| paths.push(w), &mut links)?;
        paths
            .into_iter()
            .map(|w| {
                let data = read_one(&w, &confine)?;
                Ok((w.0, data))
            })
            .collect::<Result<_, Error>>()?
    };
    let mut chart = from_files(files, at)?;
    chart.links = links;
    Ok(chart)
}

/// A walked file's content: read now, or deferred when it is big and the
/// load does not need it.
fn read_one((rel, p, size): &Walked, root_canon: &Path) -> Result<FileData, Error> {
    let data = if *size >= DEFER_FROM && deferrable(rel) {
        FileData::deferred(p, root_canon)
    } else {
        std::fs::read(p).map(FileData::loaded)
    };
    data.map_err(|e| Error::io(p, e.to_string()))
}

/// Walks and reads at once: files are read on other threads as the walk
/// finds them (reading a big chart is mostly the kernel copying pages, the
/// walk mostly `stat`), and on this one too once the walk is done. Errors
/// are what the walk then a serial read would report: the walk's first,
/// else the first file in walk order that does not read.
fn walk_and_read(
    root: &Path,
    root_canon: &Path,
    ignore: &Rules,
    links: &mut Vec<FollowedLink>,
) -> Result<Vec<(String, FileData)>, Error> {
    use std::sync::mpsc;
    let (tx, rx) = mpsc::channel::<(usize, Walked)>();
    let rx = std::sync::Mutex::new(rx);
    let work = || {
        let mut got = Vec::new();
        loop {
            let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
            let Ok((i, w)) = next else {
                return got;
            };
            let data = read_one(&w, root_canon);
            got.push((i, w.0, data));
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let (walked, mut got) = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads.max(2)).map(|_| s.spawn(work)).collect();
        let mut n = 0;
        let walked = walk(
            root,
            root_canon,
            ignore,
            &mut |w| {
                // The receiver lives until every worker has returned.
                let _ = tx.send((n, w));
                n += 1;
            },
            links,
        );
        drop(tx);
        let mut got = work();
        for h in helpers {
            got.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        (walked, got)
    });
    walked?;
    got.sort_unstable_by_key(|(i, _, _)| *i);
    got.into_iter()
        .map(|(_, rel, data)| Ok((rel, data?)))
        .collect()
}

/// Whether a file may be read after the load: not one the load parses
/// (`Chart.yaml`, values, schema, requirements, locks), not a template and
/// not a subchart archive.
fn deferrable(rel: &str) -> bool {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    !rel.split('/').any(|c| c == "templates")
        && !base.ends_with(".tgz")
        && !base.ends_with(".tar.gz")
        && !matches!(
            base,
            "Chart.yaml"
                | "values.yaml"
                | "values.schema.json"
                | "requirements.yaml"
                | "requirements.lock"
                | "Chart.lock"
        )
}

#[cfg(test)]
mod tests {
    use super::super::load;
    use super::*;

    #[test]
    fn loads_a_chart_dir() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        let w = |p: &str, s: &str| {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap_or(d)).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(f, s).unwrap_or_else(|e| panic!("{e}"));
        };
        w("Chart.yaml", "apiVersion: v2\nname: top\nversion: 1.0.0\n");
        w("values.yaml", "a: 1\n");
        w("templates/x.yaml", "k: v\n");
        w("templates/.hidden", "x");
        w("files/f.txt", "data");
        w(
            "charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        );
        w(".helmignore", "*.bak\n");
        w("old.bak", "x");
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.join("files"), d.join("files/loop"))
            .unwrap_or_else(|e| panic!("{e}"));
        let c = load(d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.name, "top");
        assert_eq!(c.templates.len(), 1);
        assert!(c.files.contains_key("files/f.txt") && !c.files.contains_key("old.bak"));
        assert_eq!(c.dependencies.len(), 1);
        assert!(load(&d.join("missing")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn directories_refuse_outside_symlinks_and_big_files() {
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "s").unwrap_or_else(|e| panic!("{e}"));
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = tmp.path();
        std::fs::write(
            d.join("Chart.yaml"),
            "apiVersion: v2\nname: x\nversion: 1.0.0\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("inside.txt"), "i").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(d.join("inside.txt"), d.join("ok-link"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(load(d).is_ok_and(|c| c.files.contains_key("ok-link")));
        std::os::unix::fs::symlink(&secret, d.join("evil")).unwrap_or_else(|e| panic!("{e}"));
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("evil") && e.contains("outside the repository"),
            "{e}"
        );
        std::fs::remove_file(d.join("evil")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/dev/null", d.join("null")).unwrap_or_else(|e| panic!("{e}"));
        assert!(load(d).is_err());
        std::fs::remove_file(d.join("null")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("big.txt"), vec![b'a'; MAX_FILE_SIZE as usize + 1])
            .unwrap_or_else(|e| panic!("{e}"));
        let e = load(d).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("big.txt") && e.contains("maximum file size"),
            "{e}"
        );
    }
}
