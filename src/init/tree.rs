//! One walk of the repository (walkdir, sorted, symlinks not followed):
//! kustomization directories and the local directories each references,
//! chart directories (not descended: templates are not YAML, subcharts are
//! not apps), the Argo CD and Flux objects of every other YAML file, and
//! the names under `clusters/`. Hidden directories, `node_modules`,
//! `environments/` and `rendered/` are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{join_clean, Error, Unclassified};
use crate::yaml::{self, Node, Resolver};

/// How deep the walk goes.
const MAX_DEPTH: usize = 12;
/// Files larger than this are not read for Argo CD or Flux objects.
const MAX_MANIFEST: u64 = 1 << 20;

/// A parsed Argo CD or Flux object and the file it is in.
#[derive(Debug)]
pub struct Manifest {
    /// Relative to the root.
    pub file: PathBuf,
    /// The object.
    pub doc: Node,
}

/// What the walk found (all paths relative to the root).
#[derive(Debug, Default)]
pub struct Tree {
    /// Kustomization directories → the local directories they use
    /// (`resources`, `bases`, `components`).
    pub kustomizations: BTreeMap<PathBuf, Vec<PathBuf>>,
    /// Chart directories (holding `Chart.yaml`), outermost only.
    pub charts: Vec<PathBuf>,
    /// Argo CD `Application`/`ApplicationSet` and Flux `Kustomization`s.
    pub objects: Vec<Manifest>,
    /// Names of the directories under a `clusters/` directory (Flux's
    /// one directory per cluster).
    pub cluster_dirs: BTreeSet<String>,
    /// Files that looked relevant but could not be read.
    pub unclassified: Vec<Unclassified>,
}

impl Tree {
    /// Directories some kustomization uses: bases and components, not apps.
    pub fn referenced(&self) -> BTreeSet<&Path> {
        self.kustomizations
            .values()
            .flatten()
            .map(PathBuf::as_path)
            .collect()
    }
}

/// Walks `root`.
pub fn walk(root: &Path) -> Result<Tree, Error> {
    let mut t = Tree::default();
    let walker = walkdir::WalkDir::new(root)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_str().unwrap_or(".");
            let skipped = e.depth() > 0
                && e.file_type().is_dir()
                && (name.starts_with('.')
                    || name == "node_modules"
                    || (e.depth() == 1 && matches!(name, "environments" | "rendered")));
            // A chart's files are the chart's: templates are not YAML.
            let in_chart = e.depth() > 0
                && e.path()
                    .parent()
                    .is_some_and(|p| p.join("Chart.yaml").is_file());
            !skipped && !in_chart
        });
    for entry in walker {
        let entry = entry.map_err(|e| Error::Io {
            path: e.path().unwrap_or(root).to_path_buf(),
            source: e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("walk")),
        })?;
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_path_buf();
        if entry.file_type().is_dir() {
            if entry.path().join("Chart.yaml").is_file() {
                t.charts.push(rel.clone());
            }
            if let Some(parent) = rel.parent() {
                if parent.file_name().is_some_and(|n| n == "clusters") {
                    t.cluster_dirs
                        .extend(rel.file_name().and_then(|n| n.to_str()).map(String::from));
                }
            }
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_str().unwrap_or_default();
        if crate::kustomize::FILE_NAMES.contains(&name) {
            let dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
            let uses = kustomization_uses(root, &dir, &rel, &mut t.unclassified);
            t.kustomizations.insert(dir, uses);
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            read_objects(root, &rel, entry.metadata().map_or(0, |m| m.len()), &mut t);
        }
    }
    Ok(t)
}

/// The local directories a kustomization lists (what it uses is not an
/// app of its own).
fn kustomization_uses(
    root: &Path,
    dir: &Path,
    file: &Path,
    unclassified: &mut Vec<Unclassified>,
) -> Vec<PathBuf> {
    let doc = std::fs::read_to_string(root.join(file))
        .map_err(|e| e.to_string())
        .and_then(|s| yaml::parse_one(&s, Resolver::V3).map_err(|e| e.to_string()));
    let doc = match doc {
        Ok(d) => d,
        Err(reason) => {
            unclassified.push(Unclassified {
                path: file.to_path_buf(),
                reason: format!("cannot read this kustomization: {reason}"),
            });
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for key in ["resources", "bases", "components"] {
        for item in doc.get(key).and_then(Node::as_seq).into_iter().flatten() {
            let Some(p) = item.as_str().and_then(|s| join_clean(dir, s)) else {
                continue;
            };
            if root.join(&p).is_dir() {
                out.push(p);
            }
        }
    }
    out
}

/// Keeps the Argo CD and Flux objects of a YAML file.
fn read_objects(root: &Path, rel: &Path, len: u64, t: &mut Tree) {
    if len > MAX_MANIFEST {
        return;
    }
    let Ok(text) = std::fs::read_to_string(root.join(rel)) else {
        return;
    };
    // Cheap test first: most YAML files of a repository are neither.
    if !text.contains("argoproj.io") && !text.contains("kustomize.toolkit.fluxcd.io") {
        return;
    }
    let docs = match yaml::parse_all(&text, Resolver::V3) {
        Ok(d) => d,
        Err(e) => {
            t.unclassified.push(Unclassified {
                path: rel.to_path_buf(),
                reason: format!("mentions Argo CD or Flux but is not YAML: {e}"),
            });
            return;
        }
    };
    for doc in docs {
        let api = doc.get_str("apiVersion").unwrap_or_default();
        let kind = doc.get_str("kind").unwrap_or_default();
        let wanted = (api.starts_with("argoproj.io/")
            && matches!(kind, "Application" | "ApplicationSet"))
            || (api.starts_with("kustomize.toolkit.fluxcd.io/") && kind == "Kustomization");
        if wanted {
            t.objects.push(Manifest {
                file: rel.to_path_buf(),
                doc,
            });
        }
    }
}
