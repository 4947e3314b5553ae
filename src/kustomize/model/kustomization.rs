//! The kustomization file: finding it, decoding it as kustomize does (YAML
//! through `sigs.k8s.io/yaml`, so YAML 1.1 scalars, then a strict JSON decode
//! with case-insensitive field names), and the deprecation warnings.

use std::path::{Path, PathBuf};

use super::helm_chart::{Chart as HelmChart, Globals as HelmGlobals};
use crate::kustomize::Error;
use crate::warning::{Warning, WarningKind};
use crate::yaml::fields::{field, Field, Strict};
use crate::yaml::{self, Node, Resolver, Tag, Value};

/// kustomize's accepted file names, in the order it looks for them.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// `kind:` of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `Kustomization` (the default).
    Kustomization,
    /// `Component`.
    Component,
}

use super::decode::{
    Decoder, GeneratorArgs, GeneratorOptions, Image, LabelSet, Patch, Replica, SortOptions,
};

/// A decoded kustomization.
#[derive(Clone, Debug)]
pub struct Kustomization {
    /// The file it came from.
    pub path: PathBuf,
    /// Kustomization or Component.
    pub kind: Kind,
    /// `resources` followed by the deprecated `bases`.
    pub resources: Vec<String>,
    /// `namespace`.
    pub namespace: String,
    /// `namePrefix`.
    pub name_prefix: String,
    /// The line of each top-level field, by its name (`namePrefix` → 7),
    /// for a traced build to name the field that configured a step.
    pub lines: std::collections::BTreeMap<String, u32>,
    /// `nameSuffix`.
    pub name_suffix: String,
    /// `commonLabels`.
    pub common_labels: Vec<(String, String)>,
    /// `labels`.
    pub labels: Vec<LabelSet>,
    /// `commonAnnotations`.
    pub common_annotations: Vec<(String, String)>,
    /// `images` followed by the deprecated `imageTags`.
    pub images: Vec<Image>,
    /// `replicas`.
    pub replicas: Vec<Replica>,
    /// `crds`: OpenAPI definition files of custom types.
    pub crds: Vec<String>,
    /// `openapi`: `path` to a custom schema file or a builtin `version`.
    pub openapi: Vec<(String, String)>,
    /// `patchesStrategicMerge`: file names or inline patches.
    pub patches_strategic_merge: Vec<String>,
    /// `patches`.
    pub patches: Vec<Patch>,
    /// `patchesJson6902`.
    pub patches_json6902: Vec<Patch>,
    /// `components`: directories holding `kind: Component` kustomizations.
    pub components: Vec<String>,
    /// `configMapGenerator` then `secretGenerator`.
    pub generators: Vec<GeneratorArgs>,
    /// `generatorOptions`.
    pub generator_options: Option<GeneratorOptions>,
    /// `buildMetadata`: originAnnotations, transformerAnnotations, managedByLabel.
    pub build_metadata: Vec<String>,
    /// `sortOptions`: order (legacy or fifo) and, for legacy, orderFirst/orderLast.
    pub sort_options: Option<SortOptions>,
    /// `vars`.
    pub vars: Vec<super::var::Var>,
    /// `configurations`: transformer config files.
    pub configurations: Vec<String>,
    /// `replacements`, decoded when the target loads its files.
    pub replacements: Vec<Node>,
    /// `transformers`: plugin config files, directories or inline YAML.
    pub transformers: Vec<String>,
    /// `generators`: plugin config files, directories or inline YAML.
    pub generators_plugins: Vec<String>,
    /// `helmGlobals`.
    pub helm_globals: Option<super::helm_chart::Globals>,
    /// `helmCharts`, then the deprecated `helmChartInflationGenerator`.
    pub helm_charts: Vec<super::helm_chart::Chart>,
    /// Deprecation warnings kustomize prints on stderr (the message is
    /// kustomize's text after `# Warning: `).
    pub warnings: Vec<Warning>,
}

/// A kustomization while it is decoded: the deprecated fields and the
/// generators are kept apart until `FixKustomization` appends them.
struct Draft {
    k: Kustomization,
    bases: Vec<String>,
    image_tags: Vec<Image>,
    config_maps: Vec<GeneratorArgs>,
    secrets: Vec<GeneratorArgs>,
    api_version: Option<(String, u32)>,
    legacy_charts: Vec<(HelmChart, HelmGlobals)>,
}

/// Every field kustomize v5.7.1 knows, each with its decoder.
fn fields<'a>() -> [Field<Decoder<'a>, Draft>; 34] {
    [
        field!("apiVersion", |d, v, t| t.api_version =
            Some((d.string(v)?, v.pos.line))),
        field!("kind", |d, v, t| t.k.kind = kind(d, v)?),
        ("metadata", |_, _, _| Ok(())),
        field!("resources", |d, v, t| t.k.resources = d.strings(v)?),
        field!("bases", |d, v, t| t.bases = d.strings(v)?),
        field!("namespace", |d, v, t| t.k.namespace = d.string(v)?),
        field!("namePrefix", |d, v, t| t.k.name_prefix = d.string(v)?),
        field!("nameSuffix", |d, v, t| t.k.name_suffix = d.string(v)?),
        field!("commonLabels", |d, v, t| t.k.common_labels =
            d.string_map(v)?),
        field!("labels", |d, v, t| t.k.labels =
            d.list(v, Decoder::label_set)?),
        field!("commonAnnotations", |d, v, t| t.k.common_annotations =
            d.string_map(v)?),
        field!("images", |d, v, t| t.k.images =
            d.list(v, Decoder::image)?),
        field!("imageTags", |d, v, t| t.image_tags =
            d.list(v, Decoder::image)?),
        field!("replicas", |d, v, t| t.k.replicas =
            d.list(v, Decoder::replica)?),
        field!("openapi", |d, v, t| t.k.openapi = d.string_map(v)?),
        field!("patchesStrategicMerge", |d, v, t| {
            t.k.patches_strategic_merge = d.strings(v)?
        }),
        field!("patchesJson6902", |d, v, t| t.k.patches_json6902 =
            d.list(v, Decoder::patch)?),
        field!("patches", |d, v, t| t.k.patches =
            d.list(v, Decoder::patch)?),
        field!("replacements", |d, v, t| t.k.replacements =
            d.list(v, |_, n| Ok(n.clone()))?),
        field!("vars", |d, v, t| t.k.vars =
            d.list(v, super::var::decode)?),
        field!("sortOptions", |d, v, t| {
            if !v.is_null() {
                t.k.sort_options = Some(d.sort_options(v)?);
            }
        }),
        field!("components", |d, v, t| t.k.components = d.strings(v)?),
        field!("crds", |d, v, t| t.k.crds = d.strings(v)?),
        field!("configMapGenerator", |d, v, t| t.config_maps =
            d.list(v, Decoder::config_map)?),
        field!("secretGenerator", |d, v, t| t.secrets =
            d.list(v, Decoder::secret)?),
        field!("helmGlobals", |d, v, t| {
            if !v.is_null() {
                t.k.helm_globals = Some(super::helm_chart::decode_globals(d, v)?);
            }
        }),
        field!("helmCharts", |d, v, t| {
            t.k.helm_charts = d.list(v, super::helm_chart::decode_chart)?
        }),
        field!("helmChartInflationGenerator", |d, v, t| {
            t.legacy_charts = d.list(v, super::helm_chart::decode_legacy)?
        }),
        field!("generatorOptions", |d, v, t| {
            if !v.is_null() {
                t.k.generator_options = Some(d.generator_options(v)?);
            }
        }),
        field!("configurations", |d, v, t| t.k.configurations =
            d.strings(v)?),
        field!("generators", |d, v, t| t.k.generators_plugins =
            d.strings(v)?),
        field!("transformers", |d, v, t| t.k.transformers = d.strings(v)?),
        // Not implemented by hydrate: an error unless empty.
        ("validators", |d, v, _| {
            if is_empty(v) {
                return Ok(());
            }
            Err(Error::NotSupported {
                path: d.path.to_path_buf(),
                field: "validators".to_string(),
            })
        }),
        field!("buildMetadata", |d, v, t| t.k.build_metadata =
            d.strings(v)?),
    ]
}

/// `kind:` Kustomization (the default) or Component.
fn kind(d: &Decoder, v: &Node) -> Result<Kind, Error> {
    match d.string(v)?.as_str() {
        "" | "Kustomization" => Ok(Kind::Kustomization),
        "Component" => Ok(Kind::Component),
        other => Err(d.err(v, format!("kind {other} is not supported"))),
    }
}

const EDIT_FIX: &str = "Run 'kustomize edit fix' to update your Kustomization automatically.";

/// Finds the kustomization file in `dir`; `Ok(None)` when there is none.
pub fn find(dir: &Path) -> Result<Option<PathBuf>, Error> {
    let mut found = Vec::new();
    for name in FILE_NAMES {
        let p = dir.join(name);
        if p.is_file() {
            found.push(p);
        }
    }
    if found.len() > 1 {
        return Err(Error::invalid(
            dir,
            format!(
                "Found multiple kustomization files under: {}",
                dir.display()
            ),
        ));
    }
    Ok(found.pop())
}

impl Kustomization {
    /// Reads and decodes the kustomization file at `path`.
    pub fn load(path: &Path) -> Result<Kustomization, Error> {
        let src = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Kustomization::parse(path, &src)
    }

    /// Decodes kustomization text (`path` is only for messages).
    pub fn parse(path: &Path, src: &str) -> Result<Kustomization, Error> {
        let root = yaml::parse_one(src, Resolver::V2).map_err(|e| Error::yaml(path, e))?;
        let k = Kustomization {
            path: path.to_path_buf(),
            kind: Kind::Kustomization,
            resources: Vec::new(),
            namespace: String::new(),
            name_prefix: String::new(),
            lines: Default::default(),
            name_suffix: String::new(),
            common_labels: Vec::new(),
            labels: Vec::new(),
            common_annotations: Vec::new(),
            images: Vec::new(),
            replicas: Vec::new(),
            patches_strategic_merge: Vec::new(),
            patches: Vec::new(),
            patches_json6902: Vec::new(),
            components: Vec::new(),
            generators: Vec::new(),
            generator_options: None,
            build_metadata: Vec::new(),
            sort_options: None,
            vars: Vec::new(),
            configurations: Vec::new(),
            replacements: Vec::new(),
            transformers: Vec::new(),
            generators_plugins: Vec::new(),
            helm_globals: None,
            helm_charts: Vec::new(),
            warnings: Vec::new(),
            openapi: Vec::new(),
            crds: Vec::new(),
        };
        let d = Decoder {
            path,
            strict: true,
            what: "Kustomization",
        };
        let entries = match &root.value {
            Value::Map(m) => m.as_slice(),
            _ if root.is_null() => &[],
            _ => {
                return Err(d.err(&root, "invalid Kustomization: expected a mapping"));
            }
        };
        // kustomize's CheckEmpty: nothing but apiVersion/kind set (or null).
        let empty = entries.iter().all(|(key, value)| {
            value.is_null()
                || matches!(
                    key.key_text().map(str::to_ascii_lowercase).as_deref(),
                    Some("apiversion" | "kind")
                )
        });
        if empty {
            return Err(Error::invalid(path, "kustomization.yaml is empty"));
        }
        let mut t = Draft {
            k,
            bases: Vec::new(),
            image_tags: Vec::new(),
            config_maps: Vec::new(),
            secrets: Vec::new(),
            api_version: None,
            legacy_charts: Vec::new(),
        };
        let table = fields();
        for (key, value) in entries {
            let name = key.key_text().unwrap_or_default();
            let Some((field, set)) = yaml::fields::find(&table, d.keys(), name) else {
                d.unknown(key, name, &[])?;
                continue;
            };
            set(&d, value, &mut t)?;
            t.k.lines.insert(field.to_string(), key.pos.line);
            t.k.warn_deprecated(field, key.pos.line, value);
        }
        let Draft {
            mut k,
            bases,
            image_tags,
            config_maps,
            secrets,
            api_version,
            legacy_charts,
        } = t;
        // EnforceFields: each kind has its own apiVersion.
        if let Some((v, line)) = api_version.filter(|(v, _)| !v.is_empty()) {
            let (kind, required) = match k.kind {
                Kind::Kustomization => ("Kustomization", "kustomize.config.k8s.io/v1beta1"),
                Kind::Component => ("Component", "kustomize.config.k8s.io/v1alpha1"),
            };
            if v != required {
                return Err(Error::Invalid {
                    path: path.to_path_buf(),
                    line,
                    message: format!("apiVersion for {kind} should be {required}"),
                });
            }
        }
        // CheckDeprecatedFields warns in a fixed order, not the file's.
        let rank = |w: &Warning| {
            [
                "'bases'",
                "'commonLabels'",
                "'imageTags'",
                "'patchesJson6902'",
                "'patchesStrategicMerge'",
                "'vars'",
            ]
            .iter()
            .position(|f| w.message.starts_with(f))
        };
        k.warnings.sort_by_key(rank);
        // FixKustomization: deprecated fields are appended to their successors.
        k.resources.extend(bases);
        k.images.extend(image_tags);
        k.generators.extend(config_maps);
        k.generators.extend(secrets);
        // SplitHelmParameters: the last legacy chartHome wins, and only
        // when helmGlobals is absent.
        let legacy_home = legacy_charts
            .iter()
            .rev()
            .map(|(_, g)| g)
            .find(|g| !g.chart_home.is_empty());
        if let (None, Some(g)) = (&k.helm_globals, legacy_home) {
            k.helm_globals = Some(g.clone());
        }
        k.helm_charts
            .extend(legacy_charts.into_iter().map(|(c, _)| c));
        Ok(k)
    }

    fn warn_deprecated(&mut self, field: &str, line: u32, value: &Node) {
        let (old, new) = match field {
            "bases" => ("bases", "resources"),
            "commonLabels" => ("commonLabels", "labels"),
            "imageTags" => ("imageTags", "images"),
            "patchesJson6902" => ("patchesJson6902", "patches"),
            "patchesStrategicMerge" => ("patchesStrategicMerge", "patches"),
            "vars" => ("vars", "replacements"),
            _ => return,
        };
        // Go: a field set to null decodes to a nil slice or map: no warning.
        if value.is_null() {
            return;
        }
        let run = if field == "vars" {
            format!("[EXPERIMENTAL] {EDIT_FIX}")
        } else {
            EDIT_FIX.to_string()
        };
        self.warnings.push(Warning {
            kind: WarningKind::Deprecation,
            message: format!("'{old}' is deprecated. Please use '{new}' instead. {run}"),
            file: Some(self.path.clone()),
            line: Some(line).filter(|&l| l > 0),
        });
    }
}

fn is_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(s) => s.tag == Tag::Null || s.text.is_empty(),
        Value::Seq(v) => v.is_empty(),
        Value::Map(m) => m.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_version_follows_kind() {
        assert!(parse(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: a\n"
        )
        .is_ok());
        let e =
            parse("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Component\nnamePrefix: a\n")
                .unwrap_err();
        assert!(
            e.to_string()
                .contains("apiVersion for Component should be kustomize.config.k8s.io/v1alpha1"),
            "{e}"
        );
        assert!(parse("apiVersion: v1\nnamePrefix: a\n").is_err());
    }

    #[test]
    fn patch_entries() {
        let k = parse(
            "patches:\n- path: p.yaml\n  target:\n    kind: Deploy.*\n    labelSelector: app=x\n  options:\n    allowNameChange: true\npatchesStrategicMerge:\n- p2.yaml\n",
        )
        .unwrap();
        let p = &k.patches[0];
        assert_eq!(p.path, "p.yaml");
        assert!(p.allow_name_change && !p.allow_kind_change);
        let t = p.target.as_ref().unwrap();
        assert_eq!(
            (t.gvk.kind.as_str(), t.label_selector.as_str()),
            ("Deploy.*", "app=x")
        );
        assert_eq!(k.patches_strategic_merge, ["p2.yaml"]);
        assert!(parse("patches:\n- path: p.yaml\n  target: {foo: x}\n").is_err());
    }

    fn parse(src: &str) -> Result<Kustomization, Error> {
        Kustomization::parse(Path::new("kustomization.yaml"), src)
    }

    #[test]
    fn core_fields_and_deprecations() {
        let k = parse(
            "resources: [a.yaml]\nbases: [../base]\nnamePrefix: p-\ncommonLabels: {app: x}\n\
             images:\n- name: nginx\n  newTag: \"1.2\"\nreplicas:\n- name: web\n  count: 3\n",
        )
        .unwrap();
        assert_eq!(k.resources, ["a.yaml", "../base"]);
        assert_eq!(k.name_prefix, "p-");
        assert_eq!(k.images[0].new_tag, "1.2");
        assert_eq!(k.replicas[0].count, 3);
        assert_eq!(k.warnings.len(), 2);
        assert!(k.warnings[0].message.starts_with("'bases' is deprecated."));
        assert_eq!(k.warnings[0].kind, WarningKind::Deprecation);
        assert_eq!(k.warnings[0].line, Some(2));
        assert_eq!(k.warnings[1].line, Some(4));
    }

    #[test]
    fn strict_decoding() {
        assert!(matches!(parse("nameprefix: x\n"), Ok(k) if k.name_prefix == "x"));
        let e = parse("foo: bar\n").unwrap_err().to_string();
        assert!(e.contains("unknown field \"foo\""), "{e}");
        // YAML 1.1: `yes` is a boolean, which a string field rejects.
        assert!(parse("namespace: yes\n").is_err());
        assert!(parse("images:\n- name: a\n  newTag: 1.10\n").is_err());
        let e = parse("validators:\n- x.yaml\n").unwrap_err().to_string();
        assert!(e.ends_with("not supported yet: validators"), "{e}");
        assert!(parse("validators: []\n").is_ok());
        assert_eq!(parse("crds:\n- x.json\n").unwrap().crds, ["x.json"]);
        let k = parse("vars:\n- name: X\n  objref: {kind: Service, name: s, apiVersion: v1}\n")
            .unwrap();
        assert_eq!(k.vars[0].field_path, "metadata.name");
        assert_eq!(k.vars[0].gvk.version, "v1");
    }
}
