//! One kustomization target: load its file, accumulate its resources
//! (files and nested kustomizations, depth first), run its transformers.

use std::path::{Path, PathBuf};

use super::fieldspec::TransformerConfig;
use super::history::{History, StepInfo};
use super::model::{self, GeneratorKind, Kind, Kustomization, Var};
use super::openapi::SchemaSetting;
use super::origin::{self, Origin};
use super::patch::Patches;
use super::resource::{read_file, read_file_traced, Resource};
use super::vars;
use super::{plugin, replacement};
use super::{Error, LoadRestrictor, Options};
use crate::k8s::Catalog;
use crate::yaml::source_map::{SourceMap, SourceText};

/// Accumulated state while building.
pub struct Accumulator<'o> {
    /// Build options.
    pub opts: &'o Options,
    /// Warnings (deprecations, then chart warnings), in the order
    /// kustomize prints them.
    pub warnings: Vec<crate::warning::Warning>,
    /// Every file read, and every kustomization directory as named, for
    /// affected-app detection and the render cache.
    pub files_read: Vec<PathBuf>,
    /// Directories being built, to detect cycles.
    stack: Vec<PathBuf>,
    /// The current directory relative to the top one, while origins are
    /// tracked (the top kustomization has `buildMetadata`).
    origin: Option<String>,
    /// The OpenAPI schema strategic merge patches use (`openapi:`).
    schema: SchemaSetting,
    /// Files read so far in this run.
    sources: std::sync::Arc<super::Sources>,
    /// Where every node read was written, when the build traces values
    /// (`Options::provenance`).
    pub trace: Option<SourceMap>,
    /// Each field's history, when the build traces values.
    pub history: Option<History>,
}

impl<'o> Accumulator<'o> {
    /// A fresh accumulator.
    pub fn new(opts: &'o Options) -> Accumulator<'o> {
        Accumulator {
            opts,
            warnings: Vec::new(),
            files_read: Vec::new(),
            stack: Vec::new(),
            origin: None,
            schema: SchemaSetting::default(),
            sources: opts.sources.clone().unwrap_or_default(),
            trace: opts.provenance.then(SourceMap::default),
            history: opts.provenance.then(History::default),
        }
    }

    /// Builds the kustomization in `dir` without the final name-reference
    /// pass (kustomize's AccumulateTarget). Returns its resources and the
    /// kustomization itself.
    pub fn target(&mut self, dir: &Path) -> Result<(Acc, Kustomization), Error> {
        self.target_onto(dir, Acc::default())
    }

    /// Builds the kustomization in `dir` on top of `base` (empty for a
    /// kustomization; the resources so far for a component, which kustomize
    /// accumulates into its parent's resources and transforms them all).
    fn target_onto(&mut self, dir: &Path, base: Acc) -> Result<(Acc, Kustomization), Error> {
        // The directory as named (`../../base`), not only as resolved: a
        // symlink on the way that is pointed elsewhere changes the build.
        self.files_read.push(dir.to_path_buf());
        let dir = self.canonical(dir)?;
        if self.stack.contains(&dir) {
            return Err(Error::invalid(
                &dir,
                format!("cycle detected: {} includes itself", dir.display()),
            ));
        }
        let Some(file) = model::find(&dir)? else {
            return Err(Error::invalid(
                &dir,
                format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    dir.display()
                ),
            ));
        };
        self.files_read.push(file.clone());
        let mut k = Kustomization::clone(&*self.sources.kustomization(&file)?);
        if let Some(map) = &mut self.trace {
            // The transformers that set values from the kustomization
            // itself (`images:`) stamp them with its entries' places.
            let id = map.add(SourceText::file(&k.path, 0, 0));
            for image in &mut k.images {
                image.at.source = id;
            }
            for replica in &mut k.replicas {
                replica.at.source = id;
            }
        }
        self.warnings.extend(k.warnings.iter().cloned());
        // kustomize: SetSchema right after loading, resetting at the top.
        let mut schema = std::mem::take(&mut self.schema);
        let set = schema.apply(&k, self.stack.is_empty(), &mut |name: &str| {
            self.load_file(&dir, name, &k.path)
        });
        self.schema = schema;
        set?;
        // makeCustomizedResMap: any buildMetadata at the top turns origins on.
        if self.stack.is_empty() && !k.build_metadata.is_empty() {
            self.origin = Some(String::new());
        }
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
        base: Acc,
    ) -> Result<Acc, Error> {
        let mut acc = self.accumulate_entries(dir, &k.path, &k.resources, base)?;
        let fail = |e: String| Error::invalid(&k.path, e);
        // MakeTransformerConfig: `configurations:` files merged (each sorted)
        // over the sorted defaults, then into the accumulated config.
        if !k.configurations.is_empty() {
            let mut custom = TransformerConfig::default();
            for name in &k.configurations {
                let (file, text) = self.load_file(dir, name, &k.path)?;
                let mut one =
                    TransformerConfig::parse(&text).map_err(|e| Error::invalid(&file, e))?;
                one.sort();
                custom = custom.merged(&one).map_err(|e| Error::invalid(&file, e))?;
            }
            let tc = TransformerConfig::sorted_defaults()
                .merged(&custom)
                .map_err(fail)?;
            acc.merge_config(&tc).map_err(fail)?;
        } else if acc.config.is_some() {
            acc.merge_config(TransformerConfig::sorted_defaults())
                .map_err(fail)?;
        }
        // LoadConfigFromCRDs, merged after the configurations.
        if !k.crds.is_empty() {
            let mut crds = TransformerConfig::default();
            for name in &k.crds {
                let (file, text) = self.load_file(dir, name, &k.path)?;
                crds = crds
                    .merged(&super::crds::config_from_file(&file, &text)?)
                    .map_err(fail)?;
            }
            if acc.config.is_none() {
                acc.merge_config(TransformerConfig::sorted_defaults())
                    .map_err(fail)?;
            }
            acc.merge_config(&crds).map_err(fail)?;
        }
        let mut resources = std::mem::take(&mut acc.resources);
        // configureBuiltinGenerators: generated resources come from the kustomization.
        let origins: Vec<Option<Origin>> = k
            .generators
            .iter()
            .map(|g| {
                let kind = match g.kind {
                    GeneratorKind::ConfigMap => "ConfigMapGenerator",
                    GeneratorKind::Secret => "SecretGenerator",
                };
                self.configured_in(&k.path)
                    .map(|c| Origin::generator(c, ["builtin", kind, "", ""]))
            })
            .collect();
        super::generator::run_args(
            &k.path,
            &k.generators,
            &origins,
            k.generator_options.as_ref(),
            &mut resources,
            &mut |name: &str| self.load_bytes(dir, name, &k.path),
        )?;
        self.helm_charts(dir, k, &mut resources)?;
        self.external_generators(dir, k, &mut resources)?;
        self.schema.note_types(&resources);
        acc.resources = resources;
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
            let saved = self.enter(entry);
            let result = self.target_onto(&path, acc);
            self.origin = saved;
            let (out, sub) = result?;
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
            acc = out;
        }
        let mut resources = std::mem::take(&mut acc.resources);
        let mut trace = self.trace.take();
        let patches = Patches::load(
            k,
            &mut |name: &str| self.load_file(dir, name, &k.path),
            trace.as_mut(),
        );
        self.trace = trace;
        let patches = patches?;
        let configured_in = self.configured_in(&k.path);
        let custom = self.schema.custom();
        let cat = custom.as_deref().unwrap_or(Catalog::builtin());
        let mut history = self.history.take();
        if let Some(h) = &mut history {
            h.read(&mut resources, &|r| generated_by(k, r));
        }
        let ran = {
            let mut after = |rs: &mut Vec<Resource>, kind: &'static str| {
                if let Some(c) = &configured_in {
                    origin::record(rs, &Origin::generator(c.clone(), ["builtin", kind, "", ""]));
                }
                if let Some(h) = &mut history {
                    h.observe(rs, step_info(k, kind));
                }
            };
            super::transform::run(k, acc.config(), &patches, cat, &mut resources, &mut after)
        };
        self.history = history;
        ran?;
        // ReplacementTransformer is the last of the builtin transformers.
        if !k.replacements.is_empty() {
            let list =
                replacement::from_kustomization(&k.path, &k.replacements, &mut |name: &str| {
                    self.load_file(dir, name, &k.path)
                })?;
            replacement::apply(&list, &mut resources).map_err(|e| Error::invalid(&k.path, e))?;
            if let Some(c) = &configured_in {
                let by = ["builtin", "ReplacementTransformer", "", ""];
                origin::record(&mut resources, &Origin::generator(c.clone(), by));
            }
            if let Some(h) = &mut self.history {
                h.observe(&mut resources, step_info(k, "ReplacementTransformer"));
            }
        }
        // configureExternalTransformers: after every builtin one, in order.
        for config in self.plugin_configs(dir, &k.path, &k.transformers)? {
            let t = plugin::Transformer::load(&config.node, &k.path, &mut |name: &str| {
                self.load_file(dir, name, &k.path)
            })?;
            t.apply(&k.path, cat, &mut resources)?;
            if let Some(h) = &mut self.history {
                h.observe(&mut resources, step_info(k, "transformers"));
            }
            if let Some(o) = &config.origin {
                let get = |key: &str| config.node.get_str(key).unwrap_or_default();
                let by = [
                    get("apiVersion"),
                    get("kind"),
                    config.name(),
                    config.namespace(),
                ];
                origin::record(&mut resources, &Origin::generator(o.path.clone(), by));
            }
        }
        vars::merge(&mut acc.vars, &k.vars, &mut resources).map_err(fail)?;
        acc.resources = resources;
        Ok(acc)
    }

    /// HelmChartInflationGenerator, the last builtin generator: each chart
    /// rendered and its resources absorbed in turn.
    fn helm_charts(
        &mut self,
        dir: &Path,
        k: &Kustomization,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        let globals = k.helm_globals.clone().unwrap_or_default();
        let origin = self
            .configured_in(&k.path)
            .map(|c| Origin::generator(c, ["builtin", "HelmChartInflationGenerator", "", ""]));
        for chart in &k.helm_charts {
            self.inflate(dir, &k.path, &globals, chart, origin.as_ref(), resources)?;
        }
        Ok(())
    }

    /// Renders one chart and absorbs its resources (with `origin` when
    /// origins are tracked).
    fn inflate(
        &mut self,
        dir: &Path,
        kpath: &Path,
        globals: &super::model::HelmGlobals,
        chart: &super::model::HelmChart,
        origin: Option<&Origin>,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        let settings = self.opts.helm.clone();
        let inflated = super::helm_inflation::inflate(
            dir,
            kpath,
            globals,
            chart,
            &settings,
            &mut |name: &str| self.load_bytes(dir, name, kpath),
        )?;
        self.warnings.extend(inflated.warnings);
        self.files_read
            .extend(crate::helm::chart_files(&inflated.chart_dir));
        for node in read_file(&inflated.chart_dir, &inflated.output)? {
            let mut res = Resource::new(node);
            res.origin = origin.cloned();
            super::generator::absorb(resources, res, super::generator::Behavior::Create).map_err(
                |e| Error::Invalid {
                    path: kpath.to_path_buf(),
                    line: chart.line,
                    message: format!("merging from generator HelmChartInflationGenerator: {e}"),
                },
            )?;
        }
        Ok(())
    }

    /// kustomize's runGenerators for `generators:`: each config generates
    /// and is absorbed in turn, after the builtin generators.
    fn external_generators(
        &mut self,
        dir: &Path,
        k: &Kustomization,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        for config in self.plugin_configs(dir, &k.path, &k.generators_plugins)? {
            // OriginFromCustomPlugin: configured in the config's own origin.
            let origin = config.origin.as_ref().map(|o| {
                let get = |key: &str| config.node.get_str(key).unwrap_or_default();
                Origin::generator(
                    o.path.clone(),
                    [
                        get("apiVersion"),
                        get("kind"),
                        config.name(),
                        config.namespace(),
                    ],
                )
            });
            match plugin::load_generator(&config.node, &k.path)? {
                plugin::Generator::Args(args) => super::generator::run_args(
                    &k.path,
                    &[args],
                    &[origin],
                    None,
                    resources,
                    &mut |name: &str| self.load_bytes(dir, name, &k.path),
                )?,
                plugin::Generator::Helm(globals, chart) => {
                    self.inflate(dir, &k.path, &globals, &chart, origin.as_ref(), resources)?;
                }
                plugin::Generator::Iam(node) => {
                    let mut res = Resource::new(*node);
                    res.origin = origin;
                    super::generator::absorb(resources, res, super::generator::Behavior::Create)
                        .map_err(|e| Error::invalid(&k.path, e))?;
                }
            }
        }
        Ok(())
    }

    /// The config resources named by `transformers:` or `generators:`:
    /// inline YAML first, then files and kustomization directories
    /// accumulated like resources (configureExternalTransformers).
    fn plugin_configs(
        &mut self,
        dir: &Path,
        kfile: &Path,
        entries: &[String],
    ) -> Result<Vec<Resource>, Error> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let mut inline = Vec::new();
        let mut paths = Vec::new();
        let inline_origin = self.configured_in(kfile).map(Origin::file);
        for entry in entries {
            match read_file(kfile, entry) {
                Ok(nodes) => inline.extend(nodes.into_iter().map(|n| {
                    let mut r = Resource::new(n);
                    r.origin = inline_origin.clone();
                    r
                })),
                Err(_) => paths.push(entry.clone()),
            }
        }
        let mut configs = Vec::new();
        append(&mut configs, inline, kfile)?;
        let base = Acc {
            resources: configs,
            ..Acc::default()
        };
        let configs = self.accumulate_entries(dir, kfile, &paths, base)?;
        Ok(configs.resources)
    }

    /// Origin.Append(entry) while recursing into `entry`; returns the
    /// origin to restore.
    fn enter(&mut self, entry: &str) -> Option<String> {
        let saved = self.origin.clone();
        if let Some(cur) = &mut self.origin {
            *cur = origin::join(cur, entry);
        }
        saved
    }

    /// The origin of what the kustomization `kfile` configures (its
    /// `configuredIn`), when origins are tracked.
    fn configured_in(&self, kfile: &Path) -> Option<String> {
        let name = kfile
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        self.origin.as_ref().map(|cur| origin::join(cur, name))
    }

    /// kustomize's accumulateResources: files, then directories built as
    /// kustomizations, appended to `base`.
    fn accumulate_entries(
        &mut self,
        dir: &Path,
        kfile: &Path,
        entries: &[String],
        base: Acc,
    ) -> Result<Acc, Error> {
        let mut out = base;
        let mut ids = Ids::default();
        for entry in entries {
            if is_remote(entry) {
                return Err(Error::Remote {
                    path: kfile.to_path_buf(),
                    dir: dir.to_path_buf(),
                    entry: entry.clone(),
                });
            }
            // kustomize: an empty entry (`resources: [null]`, `- ""`) names
            // no root, before any file is looked at.
            if entry.is_empty() {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "accumulating resources: accumulation err='accumulating resources from '': '{}' must resolve to a file': new root cannot be empty",
                        dir.display()
                    ),
                ));
            }
            let path = dir.join(entry);
            if path.is_file() {
                self.check_restriction(dir, &path, kfile)?;
                let mut added = self.file(&path)?;
                self.schema.note_types(&added);
                if let Some(cur) = &self.origin {
                    let o = Origin::file(origin::join(cur, entry));
                    for r in &mut added {
                        r.origin = Some(o.clone());
                    }
                }
                ids.append(&mut out.resources, added, kfile)?;
            } else if path.is_dir() {
                let saved = self.enter(entry);
                let result = self.target(&path);
                self.origin = saved;
                let (sub_acc, sub) = result?;
                if sub.kind == Kind::Component {
                    return Err(Error::invalid(
                        &sub.path,
                        format!("expected kind 'Kustomization' for resource '{entry}' but got 'Component'"),
                    ));
                }
                out.absorb(sub_acc, kfile, &mut ids)?;
            } else if let (Ok(_), Err(e)) = (path.symlink_metadata(), path.canonicalize()) {
                // A link that loops or dangles: kustomize's EvalSymlinks failure.
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "accumulating resources: evalsymlink failure on '{}' : {e}",
                        path.display()
                    ),
                ));
            } else {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "accumulating resources: '{}': no such file or directory",
                        path.display()
                    ),
                ));
            }
        }
        Ok(out)
    }

    fn file(&mut self, path: &Path) -> Result<Vec<Resource>, Error> {
        let resources = if self.opts.sources.is_some() && self.trace.is_none() {
            // Shared by the run's builds: each takes its own copy.
            let nodes = self.sources.resources(path)?;
            nodes.iter().cloned().map(Resource::new).collect()
        } else {
            // One build alone: parse and move the nodes in, so a large file
            // is held once (no cached tree beside the build's copy).
            let bytes = self.sources.read(path)?;
            let text = std::str::from_utf8(&bytes).map_err(|_| Error::Read {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ),
            })?;
            read_file_traced(path, text, self.trace.as_mut().map(|m| (m, None)))?
                .into_iter()
                .map(Resource::new)
                .collect()
        };
        self.files_read.push(path.to_path_buf());
        Ok(resources)
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
        let text = self.sources.read(&path)?.to_vec();
        self.files_read.push(path.clone());
        Ok((path, text))
    }

    /// kustomize's `filepath.EvalSymlinks` of `p` (through the run's
    /// [`Sources`], which resolves each directory once).
    fn canonical(&self, p: &Path) -> Result<PathBuf, Error> {
        self.sources.canonical(p).map_err(|source| Error::Read {
            path: p.to_path_buf(),
            source,
        })
    }

    fn check_restriction(&self, root: &Path, file: &Path, kfile: &Path) -> Result<(), Error> {
        if self.opts.load_restrictor == LoadRestrictor::None {
            return Ok(());
        }
        let real = self.canonical(file)?;
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

/// What a target accumulates (kustomize's ResAccumulator): resources, the
/// transformer config merged from every level below, and vars.
#[derive(Default)]
pub struct Acc {
    /// The resources.
    pub resources: Vec<Resource>,
    /// The merged config; `None` while it is kustomize's defaults.
    pub config: Option<Box<TransformerConfig>>,
    /// The vars, unique by name.
    pub vars: Vec<Var>,
}

impl Acc {
    /// The transformer config in force.
    pub fn config(&self) -> &TransformerConfig {
        self.config
            .as_deref()
            .unwrap_or_else(|| TransformerConfig::defaults())
    }

    /// ResAccumulator.MergeConfig.
    fn merge_config(&mut self, other: &TransformerConfig) -> Result<(), String> {
        let merged = match &self.config {
            Some(mine) => mine.merged(other)?,
            None => TransformerConfig::default().merged(other)?,
        };
        self.config = Some(Box::new(merged));
        Ok(())
    }

    /// ResAccumulator.MergeAccumulator: resources appended, config and vars merged.
    fn absorb(&mut self, other: Acc, kfile: &Path, ids: &mut Ids) -> Result<(), Error> {
        ids.append(&mut self.resources, other.resources, kfile)?;
        let fail = |e: String| Error::invalid(kfile, e);
        if let Some(c) = &other.config {
            self.merge_config(c).map_err(fail)?;
        }
        vars::merge_set(&mut self.vars, &other.vars).map_err(fail)
    }
}

/// Appends resources, refusing a second resource with the same id
/// (kustomize's resWrangler.AppendAll).
fn append(into: &mut Vec<Resource>, more: Vec<Resource>, kfile: &Path) -> Result<(), Error> {
    Ids::default().append(into, more, kfile)
}

/// The ids of a growing resource list, hashed once each: appending file
/// after file (or kustomization after kustomization) stays linear, where
/// re-hashing the list at every append would be quadratic in the files.
#[derive(Default)]
struct Ids {
    /// Hashes of the [`Resource::id_key`]s of `into[..hashed]`.
    hashes: std::collections::HashSet<u64>,
    hashed: usize,
    state: std::hash::RandomState,
}

impl Ids {
    /// [`append`], with the list's ids kept between calls. `into` may only
    /// have grown since the last call.
    fn append(
        &mut self,
        into: &mut Vec<Resource>,
        more: Vec<Resource>,
        kfile: &Path,
    ) -> Result<(), Error> {
        use std::hash::BuildHasher;
        if self.hashed > into.len() {
            *self = Ids::default();
        }
        self.hashes.reserve(into.len() - self.hashed + more.len());
        for r in &into[self.hashed..] {
            self.hashes.insert(self.state.hash_one(r.id_key()));
        }
        for r in more {
            let key = r.id_key();
            let hash = self.state.hash_one(key);
            // A hash seen before is confirmed on the ids themselves.
            if !self.hashes.insert(hash) && into.iter().any(|x| x.id_key() == key) {
                return Err(Error::invalid(
                    kfile,
                    format!(
                        "may not add resource with an already registered id: {}",
                        r.cur_id().id_string()
                    ),
                ));
            }
            into.push(r);
        }
        self.hashed = into.len();
        Ok(())
    }
}

/// A traced build's step for transformer `by` of `k`, with the line of the
/// kustomization field that configures it.
fn step_info<'k>(k: &'k Kustomization, by: &'static str) -> StepInfo<'k> {
    let field = match by {
        "PatchStrategicMergeTransformer" => "patchesStrategicMerge",
        "PatchTransformer" => "patches",
        "NamespaceTransformer" => "namespace",
        "PrefixTransformer" => "namePrefix",
        "SuffixTransformer" => "nameSuffix",
        "LabelTransformer" if k.lines.contains_key("labels") => "labels",
        "LabelTransformer" => "commonLabels",
        "AnnotationsTransformer" => "commonAnnotations",
        "PatchJson6902Transformer" => "patchesJson6902",
        "ReplicaCountTransformer" => "replicas",
        "ImageTagTransformer" => "images",
        "ReplacementTransformer" => "replacements",
        other => other,
    };
    StepInfo {
        by,
        kfile: &k.path,
        line: k.lines.get(field).copied().unwrap_or(0),
    }
}

/// The generator of `k` that made `r`, for a traced build's fields that
/// no file wrote.
fn generated_by<'k>(k: &'k Kustomization, r: &Resource) -> StepInfo<'k> {
    let by = match r.node.get_str("kind") {
        Some("ConfigMap") if k.lines.contains_key("configMapGenerator") => "configMapGenerator",
        Some("Secret") if k.lines.contains_key("secretGenerator") => "secretGenerator",
        _ if k.lines.contains_key("helmCharts") => "helmCharts",
        _ => "generators",
    };
    StepInfo {
        by,
        kfile: &k.path,
        line: k.lines.get(by).copied().unwrap_or(0),
    }
}

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("github.com/")
        || entry.starts_with("git@")
        || entry.starts_with("gitlab.com/")
}
