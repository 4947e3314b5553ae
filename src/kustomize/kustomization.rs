//! The kustomization file: finding it, decoding it as kustomize does (YAML
//! through `sigs.k8s.io/yaml`, so YAML 1.1 scalars, then a strict JSON decode
//! with case-insensitive field names), and the deprecation warnings.

use std::path::{Path, PathBuf};

use super::fieldspec::FieldSpec;
use super::Error;
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

/// One entry of `labels:`.
#[derive(Clone, Debug, Default)]
pub struct LabelSet {
    /// The labels.
    pub pairs: Vec<(String, String)>,
    /// Also set them in selectors (and templates).
    pub include_selectors: bool,
    /// Also set them in pod templates.
    pub include_templates: bool,
    /// Extra field specs.
    pub fields: Vec<FieldSpec>,
}

/// One entry of `images:`.
#[derive(Clone, Debug, Default)]
pub struct Image {
    /// The image name to match (a regular expression, as kustomize uses it).
    pub name: String,
    /// Replacement name.
    pub new_name: String,
    /// Appended to the tag.
    pub tag_suffix: String,
    /// Replacement tag.
    pub new_tag: String,
    /// Replacement digest.
    pub digest: String,
}

/// One entry of `replicas:`.
#[derive(Clone, Debug)]
pub struct Replica {
    /// The workload name.
    pub name: String,
    /// The count.
    pub count: i64,
}

/// A patch target (kustomize's `types.Selector`).
#[derive(Clone, Debug, Default)]
pub struct Selector {
    /// Group, version and kind (regular expressions).
    pub gvk: super::Gvk,
    /// Name (a regular expression).
    pub name: String,
    /// Namespace (a regular expression).
    pub namespace: String,
    /// A label selector.
    pub label_selector: String,
    /// An annotation selector.
    pub annotation_selector: String,
}

/// One entry of `patches:` or `patchesJson6902:` (kustomize's `types.Patch`).
#[derive(Clone, Debug, Default)]
pub struct Patch {
    /// A file holding the patch.
    pub path: String,
    /// The patch itself.
    pub patch: String,
    /// Which resources it applies to.
    pub target: Option<Selector>,
    /// `options.allowNameChange`.
    pub allow_name_change: bool,
    /// `options.allowKindChange`.
    pub allow_kind_change: bool,
    /// Line of the entry, for messages.
    pub line: u32,
}

/// `generatorOptions`, or the `options` of one generator.
#[derive(Clone, Debug, Default)]
pub struct GeneratorOptions {
    /// Labels for generated resources.
    pub labels: Option<Vec<(String, String)>>,
    /// Annotations for generated resources.
    pub annotations: Option<Vec<(String, String)>>,
    /// No content-hash suffix on names.
    pub disable_name_suffix_hash: bool,
    /// `immutable: true` on generated resources.
    pub immutable: bool,
}

/// Which generator an entry belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratorKind {
    /// `configMapGenerator`.
    ConfigMap,
    /// `secretGenerator`.
    Secret,
}

/// One entry of `configMapGenerator` or `secretGenerator`.
#[derive(Clone, Debug)]
pub struct GeneratorArgs {
    /// ConfigMap or Secret.
    pub kind: GeneratorKind,
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
    /// `behavior`: create (default), merge or replace.
    pub behavior: String,
    /// `literals`: `key=value`.
    pub literals: Vec<String>,
    /// `files`: `path` or `key=path`.
    pub files: Vec<String>,
    /// `envs`, then the deprecated `env`.
    pub envs: Vec<String>,
    /// `options`.
    pub options: Option<GeneratorOptions>,
    /// `type` (Secrets only).
    pub secret_type: String,
    /// Line of the entry, for messages.
    pub line: u32,
}

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
    /// Deprecation warnings kustomize prints on stderr.
    pub warnings: Vec<String>,
}

/// Every field kustomize v5.7.1 knows, and whether hydrate implements it.
const FIELDS: &[(&str, bool)] = &[
    ("apiVersion", true),
    ("kind", true),
    ("metadata", true),
    ("resources", true),
    ("bases", true),
    ("namespace", true),
    ("namePrefix", true),
    ("nameSuffix", true),
    ("commonLabels", true),
    ("labels", true),
    ("commonAnnotations", true),
    ("images", true),
    ("imageTags", true),
    ("replicas", true),
    ("openapi", false),
    ("patchesStrategicMerge", true),
    ("patchesJson6902", true),
    ("patches", true),
    ("replacements", false),
    ("vars", false),
    ("sortOptions", false),
    ("components", true),
    ("crds", false),
    ("configMapGenerator", true),
    ("secretGenerator", true),
    ("helmGlobals", false),
    ("helmCharts", false),
    ("helmChartInflationGenerator", false),
    ("generatorOptions", true),
    ("configurations", false),
    ("generators", false),
    ("transformers", false),
    ("validators", false),
    ("buildMetadata", false),
];

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
        let mut k = Kustomization {
            path: path.to_path_buf(),
            kind: Kind::Kustomization,
            resources: Vec::new(),
            namespace: String::new(),
            name_prefix: String::new(),
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
            warnings: Vec::new(),
        };
        let entries = match &root.value {
            Value::Map(m) => m.as_slice(),
            _ if root.is_null() => &[],
            _ => {
                return Err(k.err(&root, "invalid Kustomization: expected a mapping"));
            }
        };
        let mut bases = Vec::new();
        let mut image_tags = Vec::new();
        let (mut config_maps, mut secrets) = (Vec::new(), Vec::new());
        let mut api_version: Option<(String, u32)> = None;
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
        for (key, value) in entries {
            let name = key.key_text().unwrap_or_default();
            let Some(&(field, supported)) =
                FIELDS.iter().find(|(f, _)| f.eq_ignore_ascii_case(name))
            else {
                return Err(k.err(
                    key,
                    format!("invalid Kustomization: json: unknown field \"{name}\""),
                ));
            };
            if !supported && !is_empty(value) {
                return Err(Error::NotSupported {
                    path: path.to_path_buf(),
                    field: field.to_string(),
                });
            }
            match field {
                "kind" => {
                    k.kind = match k.string(value)?.as_str() {
                        "" | "Kustomization" => Kind::Kustomization,
                        "Component" => Kind::Component,
                        other => return Err(k.err(value, format!("kind {other} is not supported"))),
                    }
                }
                "apiVersion" => api_version = Some((k.string(value)?, value.pos.line)),
                "resources" => k.resources = k.strings(value)?,
                "bases" => bases = k.strings(value)?,
                "components" => k.components = k.strings(value)?,
                "namespace" => k.namespace = k.string(value)?,
                "namePrefix" => k.name_prefix = k.string(value)?,
                "nameSuffix" => k.name_suffix = k.string(value)?,
                "commonLabels" => k.common_labels = k.string_map(value)?,
                "commonAnnotations" => k.common_annotations = k.string_map(value)?,
                "labels" => k.labels = k.list(value, Kustomization::label_set)?,
                "images" => k.images = k.list(value, Kustomization::image)?,
                "imageTags" => image_tags = k.list(value, Kustomization::image)?,
                "replicas" => k.replicas = k.list(value, Kustomization::replica)?,
                "patchesStrategicMerge" => k.patches_strategic_merge = k.strings(value)?,
                "patches" => k.patches = k.list(value, Kustomization::patch)?,
                "patchesJson6902" => k.patches_json6902 = k.list(value, Kustomization::patch)?,
                "configMapGenerator" => config_maps = k.list(value, Kustomization::config_map)?,
                "secretGenerator" => secrets = k.list(value, Kustomization::secret)?,
                "generatorOptions" if !value.is_null() => {
                    k.generator_options = Some(k.generator_options(value)?);
                }
                _ => {}
            }
            k.warn_deprecated(field, value);
        }
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
        let rank = |w: &String| {
            [
                "'bases'",
                "'commonLabels'",
                "'imageTags'",
                "'patchesJson6902'",
                "'patchesStrategicMerge'",
                "'vars'",
            ]
            .iter()
            .position(|f| w.contains(f))
        };
        k.warnings.sort_by_key(rank);
        // FixKustomization: deprecated fields are appended to their successors.
        k.resources.extend(bases);
        k.images.extend(image_tags);
        k.generators.extend(config_maps);
        k.generators.extend(secrets);
        Ok(k)
    }

    fn warn_deprecated(&mut self, field: &str, value: &Node) {
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
        self.warnings.push(format!(
            "# Warning: '{old}' is deprecated. Please use '{new}' instead. {run}"
        ));
    }

    fn err(&self, at: &Node, message: impl Into<String>) -> Error {
        Error::Invalid {
            path: self.path.clone(),
            line: at.pos.line,
            message: message.into(),
        }
    }

    /// A Go `string` field decoded from JSON: strings only, null leaves it empty.
    fn string(&self, n: &Node) -> Result<String, Error> {
        match &n.value {
            Value::Scalar(s) => match s.tag {
                Tag::Null => Ok(String::new()),
                Tag::Str | Tag::Timestamp | Tag::Other(_) => Ok(s.text.clone()),
                _ => Err(self.err(
                    n,
                    format!(
                        "invalid Kustomization: json: cannot unmarshal {} into a string field",
                        json_kind(n)
                    ),
                )),
            },
            _ => Err(self.err(
                n,
                format!(
                    "invalid Kustomization: json: cannot unmarshal {} into a string field",
                    json_kind(n)
                ),
            )),
        }
    }

    fn strings(&self, n: &Node) -> Result<Vec<String>, Error> {
        self.list(n, Kustomization::string)
    }

    fn list<T>(
        &self,
        n: &Node,
        item: fn(&Kustomization, &Node) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        match &n.value {
            Value::Seq(items) => items.iter().map(|i| item(self, i)).collect(),
            _ if n.is_null() => Ok(Vec::new()),
            _ => Err(self.err(
                n,
                format!(
                    "invalid Kustomization: json: cannot unmarshal {} into a list field",
                    json_kind(n)
                ),
            )),
        }
    }

    fn string_map(&self, n: &Node) -> Result<Vec<(String, String)>, Error> {
        match &n.value {
            Value::Map(entries) => entries
                .iter()
                .map(|(k, v)| {
                    Ok((
                        k.key_text().unwrap_or_default().to_string(),
                        self.string(v)?,
                    ))
                })
                .collect(),
            _ if n.is_null() => Ok(Vec::new()),
            _ => Err(self.err(
                n,
                format!(
                    "invalid Kustomization: json: cannot unmarshal {} into a map field",
                    json_kind(n)
                ),
            )),
        }
    }

    /// Visits the fields of an object, rejecting unknown ones as Go's strict decoder does.
    fn object(
        &self,
        n: &Node,
        known: &[&str],
        mut f: impl FnMut(&str, &Node) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let entries = match &n.value {
            Value::Map(m) => m,
            _ if n.is_null() => return Ok(()),
            _ => {
                return Err(self.err(
                    n,
                    format!(
                        "invalid Kustomization: json: cannot unmarshal {} into an object",
                        json_kind(n)
                    ),
                ))
            }
        };
        for (k, v) in entries {
            let name = k.key_text().unwrap_or_default();
            match known.iter().find(|f| f.eq_ignore_ascii_case(name)) {
                Some(field) => f(field, v)?,
                None => {
                    return Err(self.err(
                        k,
                        format!("invalid Kustomization: json: unknown field \"{name}\""),
                    ))
                }
            }
        }
        Ok(())
    }

    fn bool(&self, n: &Node) -> Result<bool, Error> {
        match n.as_scalar() {
            Some(s) if s.tag == Tag::Bool => Ok(yaml::to_string(n).is_ok_and(|t| t == "true\n")),
            Some(s) if s.tag == Tag::Null => Ok(false),
            _ => Err(self.err(
                n,
                format!(
                    "invalid Kustomization: json: cannot unmarshal {} into a bool field",
                    json_kind(n)
                ),
            )),
        }
    }

    fn label_set(&self, n: &Node) -> Result<LabelSet, Error> {
        let mut l = LabelSet::default();
        self.object(
            n,
            &["pairs", "includeSelectors", "includeTemplates", "fields"],
            |f, v| {
                match f {
                    "pairs" => l.pairs = self.string_map(v)?,
                    "includeSelectors" => l.include_selectors = self.bool(v)?,
                    "includeTemplates" => l.include_templates = self.bool(v)?,
                    _ => {
                        l.fields = FieldSpec::list_from(v)
                            .map_err(|m| self.err(v, format!("invalid Kustomization: {m}")))?
                    }
                }
                Ok(())
            },
        )?;
        Ok(l)
    }

    fn image(&self, n: &Node) -> Result<Image, Error> {
        let mut i = Image::default();
        self.object(
            n,
            &["name", "newName", "tagSuffix", "newTag", "digest"],
            |f, v| {
                let s = self.string(v)?;
                match f {
                    "name" => i.name = s,
                    "newName" => i.new_name = s,
                    "tagSuffix" => i.tag_suffix = s,
                    "newTag" => i.new_tag = s,
                    _ => i.digest = s,
                }
                Ok(())
            },
        )?;
        Ok(i)
    }

    fn patch(&self, n: &Node) -> Result<Patch, Error> {
        let mut p = Patch {
            line: n.pos.line,
            ..Default::default()
        };
        self.object(n, &["path", "patch", "target", "options"], |f, v| {
            match f {
                "path" => p.path = self.string(v)?,
                "patch" => p.patch = self.string(v)?,
                "target" => {
                    if !v.is_null() {
                        p.target = Some(self.selector(v)?);
                    }
                }
                _ => self.object(v, &["allowNameChange", "allowKindChange"], |o, b| {
                    match o {
                        "allowNameChange" => p.allow_name_change = self.bool(b)?,
                        _ => p.allow_kind_change = self.bool(b)?,
                    }
                    Ok(())
                })?,
            }
            Ok(())
        })?;
        Ok(p)
    }

    fn selector(&self, n: &Node) -> Result<Selector, Error> {
        let mut s = Selector::default();
        let fields = [
            "group",
            "version",
            "kind",
            "name",
            "namespace",
            "labelSelector",
            "annotationSelector",
        ];
        self.object(n, &fields, |f, v| {
            let text = self.string(v)?;
            match f {
                "group" => s.gvk.group = text,
                "version" => s.gvk.version = text,
                "kind" => s.gvk.kind = text,
                "name" => s.name = text,
                "namespace" => s.namespace = text,
                "labelSelector" => s.label_selector = text,
                _ => s.annotation_selector = text,
            }
            Ok(())
        })?;
        Ok(s)
    }

    fn config_map(&self, n: &Node) -> Result<GeneratorArgs, Error> {
        self.generator(n, GeneratorKind::ConfigMap)
    }

    fn secret(&self, n: &Node) -> Result<GeneratorArgs, Error> {
        self.generator(n, GeneratorKind::Secret)
    }

    fn generator(&self, n: &Node, kind: GeneratorKind) -> Result<GeneratorArgs, Error> {
        let mut g = GeneratorArgs {
            kind,
            name: String::new(),
            namespace: String::new(),
            behavior: String::new(),
            literals: Vec::new(),
            files: Vec::new(),
            envs: Vec::new(),
            options: None,
            secret_type: String::new(),
            line: n.pos.line,
        };
        let mut env = String::new();
        let common = [
            "name",
            "namespace",
            "behavior",
            "literals",
            "files",
            "envs",
            "env",
            "options",
            "type",
        ];
        let known = if kind == GeneratorKind::Secret {
            &common[..]
        } else {
            &common[..8]
        };
        self.object(n, known, |f, v| {
            match f {
                "name" => g.name = self.string(v)?,
                "namespace" => g.namespace = self.string(v)?,
                "behavior" => g.behavior = self.string(v)?,
                "literals" => g.literals = self.strings(v)?,
                "files" => g.files = self.strings(v)?,
                "envs" => g.envs = self.strings(v)?,
                "env" => env = self.string(v)?,
                "type" => g.secret_type = self.string(v)?,
                _ => {
                    if !v.is_null() {
                        g.options = Some(self.generator_options(v)?);
                    }
                }
            }
            Ok(())
        })?;
        // FixKustomization: `env` is appended to `envs`.
        if !env.is_empty() {
            g.envs.push(env);
        }
        Ok(g)
    }

    fn generator_options(&self, n: &Node) -> Result<GeneratorOptions, Error> {
        let mut o = GeneratorOptions::default();
        let known = [
            "labels",
            "annotations",
            "disableNameSuffixHash",
            "immutable",
        ];
        self.object(n, &known, |f, v| {
            match f {
                "labels" => o.labels = (!v.is_null()).then(|| self.string_map(v)).transpose()?,
                "annotations" => {
                    o.annotations = (!v.is_null()).then(|| self.string_map(v)).transpose()?
                }
                "disableNameSuffixHash" => o.disable_name_suffix_hash = self.bool(v)?,
                _ => o.immutable = self.bool(v)?,
            }
            Ok(())
        })?;
        Ok(o)
    }

    fn replica(&self, n: &Node) -> Result<Replica, Error> {
        let mut r = Replica {
            name: String::new(),
            count: 0,
        };
        self.object(n, &["name", "count"], |f, v| {
            if f == "name" {
                r.name = self.string(v)?;
                return Ok(());
            }
            let text = v.as_scalar().filter(|s| s.tag == Tag::Int).map(|s| s.text.as_str());
            r.count = match text.and_then(|t| yaml::parse_int(&t.replace('_', ""))) {
                Some(yaml::Int::Signed(c)) => c,
                _ if v.is_null() => 0,
                _ => {
                    return Err(self.err(
                        v,
                        format!(
                            "invalid Kustomization: json: cannot unmarshal {} into Go struct field Replica.replicas.count of type int64",
                            json_kind(v)
                        ),
                    ))
                }
            };
            Ok(())
        })?;
        Ok(r)
    }
}

fn is_empty(n: &Node) -> bool {
    match &n.value {
        Value::Scalar(s) => s.tag == Tag::Null || s.text.is_empty(),
        Value::Seq(v) => v.is_empty(),
        Value::Map(m) => m.is_empty(),
    }
}

/// How Go's JSON decoder names the JSON type it found.
fn json_kind(n: &Node) -> &'static str {
    match &n.value {
        Value::Scalar(s) => match s.tag {
            Tag::Bool => "bool",
            Tag::Int | Tag::Float => "number",
            Tag::Null => "null",
            _ => "string",
        },
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
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
        assert!(k.warnings[0].starts_with("# Warning: 'bases' is deprecated."));
    }

    #[test]
    fn strict_decoding() {
        assert!(matches!(parse("nameprefix: x\n"), Ok(k) if k.name_prefix == "x"));
        let e = parse("foo: bar\n").unwrap_err().to_string();
        assert!(e.contains("unknown field \"foo\""), "{e}");
        // YAML 1.1: `yes` is a boolean, which a string field rejects.
        assert!(parse("namespace: yes\n").is_err());
        assert!(parse("images:\n- name: a\n  newTag: 1.10\n").is_err());
        let e = parse("vars:\n- name: x\n").unwrap_err().to_string();
        assert!(e.ends_with("not supported yet: vars"), "{e}");
        assert!(parse("vars: []\n").is_ok());
    }
}
