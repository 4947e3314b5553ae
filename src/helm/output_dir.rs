//! `helm template --output-dir DIR`: each document goes to
//! `DIR/<chart>/<template path>` instead of stdout, as helm's
//! `renderResources` and `cmd/helm/template.go` `writeToFile` do. This
//! module only plans the writes from an already rendered chart; the
//! caller performs them ([`OutputFile::write`]) and prints `wrote PATH`
//! for each, so nothing touches the disk unless rendering succeeded.

use std::collections::HashSet;
use std::path::Path;

use super::output::{Document, Sorted};
use super::Error;
// Go's `filepath.Clean` on `/`-separated paths is `path.Clean`.
use crate::gotmpl::golib::path_clean as clean;

/// One write of `--output-dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// The file as helm names it (`DIR/chart/templates/x.yaml`), printed
    /// after `wrote `.
    pub path: String,
    /// `---\n# Source: NAME\nDOC\n`.
    pub text: String,
    /// Append to the file instead of truncating it.
    pub append: bool,
}

impl OutputFile {
    /// `writeToFile`: creates the parent directories, then creates or
    /// appends to the file.
    pub fn write(&self) -> Result<(), Error> {
        use std::io::Write;
        let io = |e: std::io::Error| Error::Io {
            path: self.path.clone().into(),
            message: e.to_string(),
        };
        let path = Path::new(&self.path);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o755);
            b.create(parent).map_err(io)?;
        }
        let mut f = if self.append {
            std::fs::OpenOptions::new().append(true).open(path)
        } else {
            std::fs::File::create(path)
        }
        .map_err(io)?;
        f.write_all(self.text.as_bytes()).map_err(io)
    }
}

/// The writes helm makes, in its order. CRDs go under `dir` itself;
/// manifests and hooks under `dir/RELEASE` with `--release-name`.
/// Manifests truncate a file the first time this run writes it; hooks
/// append whenever the file exists, even from an earlier run (helm
/// stats the file), which `exists` answers for files not written yet.
pub fn plan(
    sorted: &Sorted,
    dir: &str,
    release_dir: Option<&str>,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<OutputFile> {
    let new_dir = match release_dir {
        Some(r) => clean(&format!("{dir}/{r}")),
        None => dir.to_string(),
    };
    // writeToFile joins with the separator, without cleaning.
    let file = |base: &str, d: &Document, append: bool| OutputFile {
        path: format!("{base}/{}", d.path),
        text: format!("---\n# Source: {}\n{}\n", d.path, d.content),
        append,
    };
    let mut out: Vec<OutputFile> = Vec::new();
    let mut seen = HashSet::new();
    for d in &sorted.crds {
        out.push(file(dir, d, !seen.insert(&*d.path)));
    }
    let mut seen = HashSet::new();
    for d in &sorted.manifests {
        out.push(file(&new_dir, d, !seen.insert(&*d.path)));
    }
    for d in &sorted.hooks {
        let f = file(&new_dir, d, false);
        let append = out.iter().any(|o| o.path == f.path) || exists(&f.path);
        out.push(OutputFile { append, ..f });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(path: &'static str, content: &'static str) -> Document<'static> {
        Document {
            path: path.into(),
            content: content.into(),
            node: None,
        }
    }

    #[test]
    fn plans_like_helm() {
        let sorted = Sorted {
            crds: vec![doc("c/crds/a.yaml", "kind: CRD\n")],
            manifests: vec![
                doc("c/templates/m.yaml", "a: 1"),
                doc("c/templates/m.yaml", "b: 2"),
            ],
            hooks: vec![
                doc("c/templates/m.yaml", "h: 1"),
                doc("c/templates/t.yaml", "t: 1"),
                doc("c/templates/old.yaml", "o: 1"),
            ],
        };
        let exists = |p: &str| p == "out/rel/c/templates/old.yaml";
        let p = plan(&sorted, "out/", Some("rel"), &exists);
        let got: Vec<(&str, bool)> = p.iter().map(|f| (f.path.as_str(), f.append)).collect();
        assert_eq!(
            got,
            vec![
                ("out//c/crds/a.yaml", false),
                ("out/rel/c/templates/m.yaml", false),
                ("out/rel/c/templates/m.yaml", true),
                ("out/rel/c/templates/m.yaml", true),
                ("out/rel/c/templates/t.yaml", false),
                ("out/rel/c/templates/old.yaml", true),
            ]
        );
        assert_eq!(p[0].text, "---\n# Source: c/crds/a.yaml\nkind: CRD\n\n");
        assert_eq!(p[1].text, "---\n# Source: c/templates/m.yaml\na: 1\n");
    }

    #[test]
    fn cleans_like_go() {
        assert_eq!(clean("out/"), "out");
        assert_eq!(clean("./a//b/../c"), "a/c");
        assert_eq!(clean("/../x"), "/x");
        assert_eq!(clean("../x"), "../x");
    }

    #[test]
    fn writes_and_appends() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = tmp.path().join("a/b/x.yaml").display().to_string();
        let f = |text: &str, append| OutputFile {
            path: path.clone(),
            text: text.into(),
            append,
        };
        f("one\n", false).write().unwrap_or_else(|e| panic!("{e}"));
        f("two\n", true).write().unwrap_or_else(|e| panic!("{e}"));
        let got = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, "one\ntwo\n");
        f("three\n", false)
            .write()
            .unwrap_or_else(|e| panic!("{e}"));
        let got = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, "three\n");
    }
}
