//! Where the renders of an environment can read, found without rendering,
//! so that a past commit exported from git (`hydrate diff --since`,
//! `verify`, promotion's snapshot) holds its large files only where a
//! render can read them. It is generous rather than exact: every file
//! under an app's kustomization directory, and under each directory its
//! kustomization names (`resources`, `components`, generator and
//! transformer directories, `helmGlobals.chartHome`), recursively; every
//! file a kustomization names, even outside its directory (kustomize's
//! default load restrictor refuses those, but the refusal must read the
//! same tree); a chart's whole directory (helm loads all of it, `charts/`
//! included, and refuses files over its size limit) and its value files;
//! a readme template; and the files `pins:` name. It reads the
//! kustomization files it walks and nothing else, and writes nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Environment, PinDecl, Readme, Source};
use crate::kustomize::{Kustomization, FILE_NAMES};

/// Files larger than this wait in an export until a render can read them.
pub const DEFER_ABOVE: u64 = 1 << 20;

/// Whether an exported file (`path` in the tree, `size` bytes) can wait
/// until [`inputs`] says a render reads it: a large one, except a
/// kustomization file, which `discover:` globs look for before any app is
/// known.
pub fn may_defer(path: &str, size: u64) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    size > DEFER_ABOVE && !FILE_NAMES.contains(&name)
}

/// Calls `fill` with every path (a file, or a directory for all below it)
/// that the renders of `envs`, loaded from `root`, can read. A
/// kustomization's directory is filled before its file is read.
pub fn inputs<E>(
    root: &Path,
    envs: &[Environment],
    fill: &mut dyn FnMut(&Path) -> Result<(), E>,
) -> Result<(), E> {
    let mut walk = Walk {
        fill,
        seen: BTreeSet::new(),
    };
    for e in envs {
        if let Some(Readme::Template(p)) = &e.readme {
            (walk.fill)(&root.join(p))?;
        }
        for app in &e.apps {
            let dir = match &app.source {
                Source::Kustomize(dir) => {
                    walk.kustomization(&root.join(dir))?;
                    dir
                }
                Source::Helm(c) => {
                    (walk.fill)(&root.join(&c.chart))?;
                    for f in &c.value_files {
                        (walk.fill)(&root.join(f))?;
                    }
                    &c.chart
                }
            };
            for d in &app.pins {
                if let PinDecl::File { file, .. } = d {
                    let file = file.replace("{dir}", &dir.to_string_lossy());
                    (walk.fill)(&root.join(file))?;
                }
            }
        }
    }
    Ok(())
}

struct Walk<'a, E> {
    fill: &'a mut dyn FnMut(&Path) -> Result<(), E>,
    /// Kustomization directories walked (resolved).
    seen: BTreeSet<PathBuf>,
}

impl<E> Walk<'_, E> {
    /// Fills kustomization directory `dir`, then what its kustomization
    /// names.
    fn kustomization(&mut self, dir: &Path) -> Result<(), E> {
        (self.fill)(dir)?;
        self.filled_kustomization(dir)
    }

    /// What the kustomization in `dir`, already filled, names.
    fn filled_kustomization(&mut self, dir: &Path) -> Result<(), E> {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if !self.seen.insert(real) {
            return Ok(());
        }
        let files: Vec<PathBuf> = FILE_NAMES
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.is_file())
            .collect();
        // None, several, or one that does not parse: the render says so.
        let [file] = files.as_slice() else {
            return Ok(());
        };
        let Ok(k) = Kustomization::load(file) else {
            return Ok(());
        };
        for entry in named(&k) {
            if is_remote(&entry) {
                continue;
            }
            // Filled before it is looked at: a lazy export writes a
            // directory only when asked.
            let p = dir.join(&entry);
            (self.fill)(&p)?;
            if p.is_dir() && FILE_NAMES.iter().any(|n| p.join(n).is_file()) {
                self.filled_kustomization(&p)?;
            }
        }
        Ok(())
    }
}

/// Every path kustomization `k` names, relative to its directory.
fn named(k: &Kustomization) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    out.extend(k.resources.iter().cloned());
    out.extend(k.components.iter().cloned());
    out.extend(k.crds.iter().cloned());
    out.extend(k.configurations.iter().cloned());
    // Inline YAML (a patch, a plugin config) is not a path.
    let files = k
        .patches_strategic_merge
        .iter()
        .chain(&k.transformers)
        .chain(&k.generators_plugins)
        .filter(|s| !s.contains('\n'));
    out.extend(files.cloned());
    for p in k.patches.iter().chain(&k.patches_json6902) {
        if !p.path.is_empty() {
            out.push(p.path.clone());
        }
    }
    let replacement_files = k
        .replacements
        .iter()
        .filter_map(|r| r.get("path")?.as_str());
    out.extend(replacement_files.map(str::to_string));
    for (key, value) in &k.openapi {
        if key == "path" {
            out.push(value.clone());
        }
    }
    for g in &k.generators {
        for f in g.files.iter().chain(&g.envs) {
            // `key=path` names `path`.
            let path = f.split_once('=').map_or(f.as_str(), |(_, p)| p);
            out.push(path.to_string());
        }
    }
    if let Some(g) = &k.helm_globals {
        out.push(g.chart_home.clone());
    }
    for c in &k.helm_charts {
        out.extend(c.additional_values_files.iter().cloned());
        if !c.values_file.is_empty() {
            out.push(c.values_file.clone());
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// A remote resource (a URL or a git repository), not a path here.
fn is_remote(entry: &str) -> bool {
    entry.contains("://") || entry.starts_with("git@") || entry.starts_with("github.com/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_kustomization_reaches_its_directory_and_what_it_names() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        write(
            root,
            "environments/dev.yaml",
            "name: dev\napps:\n  - name: web\n    kustomize: apps/web/overlays/dev\n    pins:\n      - {file: \"{dir}/../../v.yaml\", path: a}\n",
        );
        write(
            root,
            "apps/web/overlays/dev/kustomization.yaml",
            "resources:\n  - ../../base\n  - https://example.com/x.yaml\nreplacements:\n  - path: ../../r.yaml\ncomponents:\n  - ../../../../components/c\nconfigMapGenerator:\n  - name: c\n    files:\n      - k=../../shared/f.txt\nhelmGlobals:\n  chartHome: ../../../charts\n",
        );
        write(
            root,
            "apps/web/base/kustomization.yaml",
            "resources: [d.yaml]\n",
        );
        write(root, "components/c/kustomization.yaml", "kind: Component\n");
        std::fs::create_dir_all(root.join("assets")).unwrap();
        let envs = crate::env::load_environments(root).unwrap();
        let mut filled = Vec::new();
        inputs(root, &envs, &mut |p: &Path| -> Result<(), ()> {
            let rel = p.strip_prefix(root).unwrap_or(p);
            filled.push(rel.to_string_lossy().into_owned());
            Ok(())
        })
        .unwrap();
        assert_eq!(
            filled,
            [
                "apps/web/overlays/dev",
                "apps/web/overlays/dev/../../base",
                "apps/web/overlays/dev/../../base/d.yaml",
                "apps/web/overlays/dev/../../../../components/c",
                "apps/web/overlays/dev/../../r.yaml",
                "apps/web/overlays/dev/../../shared/f.txt",
                "apps/web/overlays/dev/../../../charts",
                "apps/web/overlays/dev/../../v.yaml",
            ]
        );
    }

    #[test]
    fn only_large_files_other_than_kustomizations_wait() {
        assert!(may_defer("assets/big.bin", DEFER_ABOVE + 1));
        assert!(!may_defer("assets/small.bin", DEFER_ABOVE));
        assert!(!may_defer("apps/web/kustomization.yaml", DEFER_ABOVE + 1));
        assert!(!may_defer("Kustomization", DEFER_ABOVE + 1));
    }
}
