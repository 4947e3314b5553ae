//! One kustomization target: load its file, accumulate its resources
//! (files and nested kustomizations, depth first), run its transformers.

use std::path::{Path, PathBuf};

use super::fieldspec::TransformerConfig;
use super::kustomization::{self, Kind, Kustomization};
use super::patch::Patches;
use super::resource::{read_file, Resource};
use super::{plugin, replacement};
use super::{Error, LoadRestrictor, Options};

/// Accumulated state while building.
pub struct Accumulator<'o> {
    /// Build options.
    pub opts: &'o Options,
    /// Deprecation warnings, in the order kustomize prints them.
    pub warnings: Vec<String>,
    /// Every file read, for affected-app detection.
    pub files_read: Vec<PathBuf>,
    /// Directories being built, to detect cycles.
    stack: Vec<PathBuf>,
}

impl<'o> Accumulator<'o> {
    /// A fresh accumulator.
    pub fn new(opts: &'o Options) -> Accumulator<'o> {
        Accumulator {
            opts,
            warnings: Vec::new(),
            files_read: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Builds the kustomization in `dir` without the final name-reference
    /// pass (kustomize's AccumulateTarget). Returns its resources and the
    /// kustomization itself.
    pub fn target(&mut self, dir: &Path) -> Result<(Vec<Resource>, Kustomization), Error> {
        self.target_onto(dir, Vec::new())
    }

    /// Builds the kustomization in `dir` on top of `base` (empty for a
    /// kustomization; the resources so far for a component, which kustomize
    /// accumulates into its parent's resources and transforms them all).
    fn target_onto(
        &mut self,
        dir: &Path,
        base: Vec<Resource>,
    ) -> Result<(Vec<Resource>, Kustomization), Error> {
        let dir = canonical(dir)?;
        if self.stack.contains(&dir) {
            return Err(Error::invalid(
                &dir,
                format!("cycle detected: {} includes itself", dir.display()),
            ));
        }
        let Some(file) = kustomization::find(&dir)? else {
            return Err(Error::invalid(
                &dir,
                format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    dir.display()
                ),
            ));
        };
        self.files_read.push(file.clone());
        let k = Kustomization::load(&file)?;
        self.warnings.extend(k.warnings.iter().cloned());
        self.stack.push(dir.clone());
        let result = self.accumulate_target(&dir, &k, base);
        self.stack.pop();
        Ok((result?, k))
    }

    /// kustomize's accumulateTarget: resources, generators, components,
    /// then the transformers.
    fn accumulate_target(
        &mut self,
        dir: &Path,
        k: &Kustomization,
        base: Vec<Resource>,
    ) -> Result<Vec<Resource>, Error> {
        let mut resources = self.accumulate(dir, k, base)?;
        super::generator::run(k, &mut resources, &mut |name: &str| {
            self.load_bytes(dir, name, &k.path)
        })?;
        self.external_generators(dir, k, &mut resources)?;
        for entry in &k.components {
            let path = dir.join(entry);
            if !path.is_dir() {
                return Err(Error::invalid(
                    &k.path,
                    format!(
                        "accumulating components: '{}': must be a directory",
                        path.display()
                    ),
                ));
            }
            let (out, sub) = self.target_onto(&path, resources)?;
            if sub.kind != Kind::Component {
                return Err(Error::invalid(
                    &sub.path,
                    format!(
                        "expected kind 'Component' for path '{}' but got '{}'",
                        path.display(),
                        "Kustomization"
                    ),
                ));
            }
            resources = out;
        }
        let patches = Patches::load(k, &mut |name: &str| self.load_file(dir, name, &k.path))?;
        super::transform::run(k, TransformerConfig::defaults(), &patches, &mut resources)?;
        // ReplacementTransformer is the last of the builtin transformers.
        if !k.replacements.is_empty() {
            let list =
                replacement::from_kustomization(&k.path, &k.replacements, &mut |name: &str| {
                    self.load_file(dir, name, &k.path)
                })?;
            replacement::apply(&list, &mut resources).map_err(|e| Error::invalid(&k.path, e))?;
        }
        // configureExternalTransformers: after every builtin one, in order.
        for config in self.plugin_configs(dir, &k.path, &k.transformers)? {
            let t = plugin::Transformer::load(&config, &k.path, &mut |name: &str| {
                self.load_file(dir, name, &k.path)
            })?;
            t.apply(&k.path, &mut resources)?;
        }
        Ok(resources)
    }

    /// kustomize's runGenerators for `generators:`: each config generates
    /// and is absorbed in turn, after the builtin generators.
    fn external_generators(
        &mut self,
        dir: &Path,
        k: &Kustomization,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        let mut args = Vec::new();
        for config in self.plugin_configs(dir, &k.path, &k.generators_plugins)? {
            args.push(plugin::load_generator(&config, &k.path)?);
        }
        super::generator::run_args(&k.path, &args, None, resources, &mut |name: &str| {
            self.load_bytes(dir, name, &k.path)
        })
    }

    /// The config resources named by `transformers:` or `generators:`:
    /// inline YAML first, then files and kustomization directories
    /// accumulated like resources (configureExternalTransformers).
    fn plugin_configs(
        &mut self,
        dir: &Path,
        kfile: &Path,
        entries: &[String],
    ) -> Result<Vec<crate::yaml::Node>, Error> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let mut inline = Vec::new();
        let mut paths = Vec::new();
        for entry in entries {
            match read_file(kfile, entry) {
                Ok(nodes) => inline.extend(nodes.into_iter().map(Resource::new)),
                Err(_) => paths.push(entry.clone()),
            }
        }
        let mut configs = Vec::new();
        append(&mut configs, inline, kfile)?;
        let configs = self.accumulate_entries(dir, kfile, &paths, configs)?;
        Ok(configs.into_iter().map(|r| r.node).collect())
    }

    fn accumulate(
        &mut self,
        dir: &Path,
        k: &Kustomization,
        base: Vec<Resource>,
    ) -> Result<Vec<Resource>, Error> {
        self.accumulate_entries(dir, &k.path, &k.resources, base)
    }

    /// kustomize's accumulateResources: files, then directories built as
    /// kustomizations, appended to `base`.
    fn accumulate_entries(
        &mut self,
        dir: &Path,
        kfile: &Path,
        entries: &[String],
        base: Vec<Resource>,
    ) -> Result<Vec<Resource>, Error> {
        let mut out: Vec<Resource> = base;
        for entry in entries {
            if is_remote(entry) {
                return Err(Error::NotSupported {
                    path: kfile.to_path_buf(),
                    field: format!("remote resource {entry:?} (hydrate works offline; vendor it)"),
                });
            }
            let path = dir.join(entry);
            let added = if path.is_file() {
                self.check_restriction(dir, &path, kfile)?;
                self.file(&path)?
            } else if path.is_dir() {
                let (resources, sub) = self.target(&path)?;
                if sub.kind == Kind::Component {
                    return Err(Error::invalid(
                        &sub.path,
                        format!("expected kind 'Kustomization' for resource '{entry}' but got 'Component'"),
                    ));
                }
                resources
            } else {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "accumulating resources: '{}': no such file or directory",
                        path.display()
                    ),
                ));
            };
            append(&mut out, added, kfile)?;
        }
        Ok(out)
    }

    fn file(&mut self, path: &Path) -> Result<Vec<Resource>, Error> {
        let src = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.files_read.push(path.to_path_buf());
        Ok(read_file(path, &src)?
            .into_iter()
            .map(Resource::new)
            .collect())
    }

    /// A file named in a kustomization (kustomize's loader: relative to the
    /// kustomization, under the load restrictor).
    fn load_file(
        &mut self,
        dir: &Path,
        name: &str,
        kfile: &Path,
    ) -> Result<(PathBuf, String), Error> {
        let (path, bytes) = self.load_bytes(dir, name, kfile)?;
        match String::from_utf8(bytes) {
            Ok(text) => Ok((path, text)),
            Err(_) => Err(Error::invalid(&path, "not valid UTF-8")),
        }
    }

    fn load_bytes(
        &mut self,
        dir: &Path,
        name: &str,
        kfile: &Path,
    ) -> Result<(PathBuf, Vec<u8>), Error> {
        let path = dir.join(name);
        if !path.is_file() {
            return Err(Error::invalid(
                kfile,
                format!("'{}' doesn't exist", path.display()),
            ));
        }
        self.check_restriction(dir, &path, kfile)?;
        let text = std::fs::read(&path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        self.files_read.push(path.clone());
        Ok((path, text))
    }

    fn check_restriction(&self, root: &Path, file: &Path, kfile: &Path) -> Result<(), Error> {
        if self.opts.load_restrictor == LoadRestrictor::None {
            return Ok(());
        }
        let real = canonical(file)?;
        if !real.starts_with(root) {
            return Err(Error::invalid(
                kfile,
                format!(
                    "security; file '{}' is not in or below '{}'",
                    real.display(),
                    root.display()
                ),
            ));
        }
        Ok(())
    }
}

/// Appends resources, refusing a second resource with the same id
/// (kustomize's resWrangler.AppendAll).
fn append(into: &mut Vec<Resource>, more: Vec<Resource>, kfile: &Path) -> Result<(), Error> {
    for r in more {
        let id = r.cur_id();
        if into.iter().any(|x| x.cur_id() == id) {
            return Err(Error::invalid(
                kfile,
                format!(
                    "may not add resource with an already registered id: {}",
                    id.id_string()
                ),
            ));
        }
        into.push(r);
    }
    Ok(())
}

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("github.com/")
        || entry.starts_with("git@")
        || entry.starts_with("gitlab.com/")
}

fn canonical(p: &Path) -> Result<PathBuf, Error> {
    std::fs::canonicalize(p).map_err(|source| Error::Read {
        path: p.to_path_buf(),
        source,
    })
}
