//! Decoding the typed parts of a kustomization and of builtin plugin
//! configs: images, replicas, patches, selectors, generator arguments and
//! options. Kustomizations decode strictly (unknown fields fail, as
//! kustomize's `UnmarshalStrict`); plugin configs decode as `yaml.Unmarshal`
//! does, ignoring unknown fields.

use std::path::Path;

use crate::kustomize::fieldspec::FieldSpec;
use crate::kustomize::resource::Gvk;
use crate::kustomize::Error;
use crate::yaml::fields::{self, field, Field, Keys, Strict};
use crate::yaml::{self, Node, Tag, Value};
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
    /// Where the entry is written (its mapping's span and line), so a
    /// traced build can say which entry set an image.
    pub at: crate::yaml::Pos,
}

/// One entry of `replicas:`.
#[derive(Clone, Debug)]
pub struct Replica {
    /// The workload name.
    pub name: String,
    /// The count.
    pub count: i64,
    /// Where the count is written, so a traced build can say which entry
    /// set a workload's replicas.
    pub at: crate::yaml::Pos,
}

/// A patch target (kustomize's `types.Selector`).
#[derive(Clone, Debug, Default)]
pub struct Selector {
    /// Group, version and kind (regular expressions).
    pub gvk: Gvk,
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
    /// Line of the `patch:` value (where an inline patch's text starts).
    pub patch_line: u32,
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

/// `sortOptions` (kustomize's `types.SortOptions`).
#[derive(Clone, Debug, Default)]
pub struct SortOptions {
    /// `legacy` or `fifo`.
    pub order: String,
    /// `legacySortOptions`: (orderFirst, orderLast), when set.
    pub legacy: Option<(Vec<String>, Vec<String>)>,
}

/// Decodes nodes of one file into kustomize's Go types.
#[derive(Clone, Copy)]
pub struct Decoder<'a> {
    /// The file, for messages.
    pub path: &'a Path,
    /// Reject unknown fields.
    pub strict: bool,
    /// What is decoded, for messages ("Kustomization", a plugin kind).
    pub what: &'a str,
}

impl Strict for Decoder<'_> {
    type Error = Error;

    fn keys(&self) -> Keys {
        // encoding/json matches field names case-insensitively.
        Keys::GoJson
    }

    fn unknown(&self, key: &Node, name: &str, _known: &[&str]) -> Result<(), Error> {
        if !self.strict {
            return Ok(());
        }
        Err(self.err(
            key,
            format!("invalid {}: json: unknown field \"{name}\"", self.what),
        ))
    }
}

impl<'a> Decoder<'a> {
    pub fn err(&self, at: &Node, message: impl Into<String>) -> Error {
        Error::Invalid {
            path: self.path.to_path_buf(),
            line: at.pos.line,
            message: message.into(),
        }
    }

    /// A Go `string` field decoded from JSON: strings only, null leaves it empty.
    pub fn string(&self, n: &Node) -> Result<String, Error> {
        match &n.value {
            Value::Scalar(s) => match s.tag {
                Tag::Null => Ok(String::new()),
                Tag::Str | Tag::Timestamp | Tag::Other(_) => Ok(s.text.clone()),
                // sigs.k8s.io/yaml.Unmarshal (plugin configs) turns any
                // scalar into the string a string field asks for.
                _ if !self.strict => Ok(s.text.clone()),
                _ => Err(self.err(
                    n,
                    format!(
                        "invalid {}: json: cannot unmarshal {} into a string field",
                        self.what,
                        json_kind(n)
                    ),
                )),
            },
            _ => Err(self.err(
                n,
                format!(
                    "invalid {}: json: cannot unmarshal {} into a string field",
                    self.what,
                    json_kind(n)
                ),
            )),
        }
    }

    pub fn strings(&self, n: &Node) -> Result<Vec<String>, Error> {
        self.list(n, Decoder::string)
    }

    pub fn list<T>(
        &self,
        n: &Node,
        item: fn(&Decoder<'a>, &Node) -> Result<T, Error>,
    ) -> Result<Vec<T>, Error> {
        match &n.value {
            Value::Seq(items) => items.iter().map(|i| item(self, i)).collect(),
            _ if n.is_null() => Ok(Vec::new()),
            _ => Err(self.err(
                n,
                format!(
                    "invalid {}: json: cannot unmarshal {} into a list field",
                    self.what,
                    json_kind(n)
                ),
            )),
        }
    }

    pub fn string_map(&self, n: &Node) -> Result<Vec<(String, String)>, Error> {
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
                    "invalid {}: json: cannot unmarshal {} into a map field",
                    self.what,
                    json_kind(n)
                ),
            )),
        }
    }

    /// Decodes an object through `table`, rejecting unknown fields as Go's
    /// strict decoder does (or ignoring them when not strict); null is empty.
    pub fn object<T>(
        &self,
        n: &Node,
        target: &mut T,
        table: &[Field<Self, T>],
    ) -> Result<(), Error> {
        match &n.value {
            Value::Map(_) => fields::decode(self, n, target, table),
            _ if n.is_null() => Ok(()),
            _ => Err(self.err(
                n,
                format!(
                    "invalid {}: json: cannot unmarshal {} into an object",
                    self.what,
                    json_kind(n)
                ),
            )),
        }
    }

    pub fn bool(&self, n: &Node) -> Result<bool, Error> {
        match n.as_scalar() {
            Some(s) if s.tag == Tag::Bool => Ok(yaml::to_string(n).is_ok_and(|t| t == "true\n")),
            Some(s) if s.tag == Tag::Null => Ok(false),
            _ => Err(self.err(
                n,
                format!(
                    "invalid {}: json: cannot unmarshal {} into a bool field",
                    self.what,
                    json_kind(n)
                ),
            )),
        }
    }

    pub fn label_set(&self, n: &Node) -> Result<LabelSet, Error> {
        let mut l = LabelSet::default();
        self.object(
            n,
            &mut l,
            &[
                field!("pairs", |d, v, l| l.pairs = d.string_map(v)?),
                field!("includeSelectors", |d, v, l| l.include_selectors =
                    d.bool(v)?),
                field!("includeTemplates", |d, v, l| l.include_templates =
                    d.bool(v)?),
                field!("fields", |d, v, l| {
                    l.fields = FieldSpec::list_from(v)
                        .map_err(|m| d.err(v, format!("invalid {}: {m}", d.what)))?
                }),
            ],
        )?;
        Ok(l)
    }

    pub fn image(&self, n: &Node) -> Result<Image, Error> {
        let mut i = Image {
            at: n.pos,
            ..Image::default()
        };
        self.object(
            n,
            &mut i,
            &[
                field!("name", |d, v, i| i.name = d.string(v)?),
                field!("newName", |d, v, i| i.new_name = d.string(v)?),
                field!("tagSuffix", |d, v, i| i.tag_suffix = d.string(v)?),
                field!("newTag", |d, v, i| i.new_tag = d.string(v)?),
                field!("digest", |d, v, i| i.digest = d.string(v)?),
            ],
        )?;
        Ok(i)
    }

    pub fn patch(&self, n: &Node) -> Result<Patch, Error> {
        let mut p = Patch {
            line: n.pos.line,
            ..Default::default()
        };
        self.object(
            n,
            &mut p,
            &[
                field!("path", |d, v, p| p.path = d.string(v)?),
                field!("patch", |d, v, p| {
                    p.patch_line = v.pos.line;
                    p.patch = d.string(v)?
                }),
                field!("target", |d, v, p| {
                    if !v.is_null() {
                        p.target = Some(d.selector(v)?);
                    }
                }),
                field!("options", |d, v, p| d.object(
                    v,
                    p,
                    &[
                        field!("allowNameChange", |d, b, p| p.allow_name_change =
                            d.bool(b)?),
                        field!("allowKindChange", |d, b, p| p.allow_kind_change =
                            d.bool(b)?),
                    ],
                )?),
            ],
        )?;
        Ok(p)
    }

    /// A patch or replacement target (kustomize's `types.Selector`).
    pub fn selector(&self, n: &Node) -> Result<Selector, Error> {
        let mut s = Selector::default();
        self.object(
            n,
            &mut s,
            &[
                field!("group", |d, v, s| s.gvk.group = d.string(v)?),
                field!("version", |d, v, s| s.gvk.version = d.string(v)?),
                field!("kind", |d, v, s| s.gvk.kind = d.string(v)?),
                field!("name", |d, v, s| s.name = d.string(v)?),
                field!("namespace", |d, v, s| s.namespace = d.string(v)?),
                field!("labelSelector", |d, v, s| s.label_selector = d.string(v)?),
                field!("annotationSelector", |d, v, s| s.annotation_selector =
                    d.string(v)?),
            ],
        )?;
        Ok(s)
    }

    pub fn config_map(&self, n: &Node) -> Result<GeneratorArgs, Error> {
        self.generator(n, GeneratorKind::ConfigMap)
    }

    pub fn secret(&self, n: &Node) -> Result<GeneratorArgs, Error> {
        self.generator(n, GeneratorKind::Secret)
    }

    pub fn generator(&self, n: &Node, kind: GeneratorKind) -> Result<GeneratorArgs, Error> {
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
        let mut table: Vec<Field<Self, (GeneratorArgs, String)>> = vec![
            field!("name", |d, v, (g, _)| g.name = d.string(v)?),
            field!("namespace", |d, v, (g, _)| g.namespace = d.string(v)?),
            field!("behavior", |d, v, (g, _)| g.behavior = d.string(v)?),
            field!("literals", |d, v, (g, _)| g.literals = d.strings(v)?),
            field!("files", |d, v, (g, _)| g.files = d.strings(v)?),
            field!("envs", |d, v, (g, _)| g.envs = d.strings(v)?),
            field!("env", |d, v, (_, env)| *env = d.string(v)?),
            field!("options", |d, v, (g, _)| {
                if !v.is_null() {
                    g.options = Some(d.generator_options(v)?);
                }
            }),
        ];
        if kind == GeneratorKind::Secret {
            table.push(field!("type", |d, v, (g, _)| g.secret_type = d.string(v)?));
        }
        let mut target = (g, env);
        self.object(n, &mut target, &table)?;
        (g, env) = target;
        // FixKustomization: `env` is appended to `envs`.
        if !env.is_empty() {
            g.envs.push(env);
        }
        Ok(g)
    }

    pub fn generator_options(&self, n: &Node) -> Result<GeneratorOptions, Error> {
        let mut o = GeneratorOptions::default();
        self.object(
            n,
            &mut o,
            &[
                field!("labels", |d, v, o| {
                    o.labels = (!v.is_null()).then(|| d.string_map(v)).transpose()?
                }),
                field!("annotations", |d, v, o| {
                    o.annotations = (!v.is_null()).then(|| d.string_map(v)).transpose()?
                }),
                field!("disableNameSuffixHash", |d, v, o| {
                    o.disable_name_suffix_hash = d.bool(v)?
                }),
                field!("immutable", |d, v, o| o.immutable = d.bool(v)?),
            ],
        )?;
        Ok(o)
    }

    /// `sortOptions`.
    pub fn sort_options(&self, n: &Node) -> Result<SortOptions, Error> {
        let mut o = SortOptions::default();
        self.object(
            n,
            &mut o,
            &[
                field!("order", |d, v, o| o.order = d.string(v)?),
                field!("legacySortOptions", |d, v, o| {
                    if !v.is_null() {
                        let mut legacy = (Vec::new(), Vec::new());
                        d.object(
                            v,
                            &mut legacy,
                            &[
                                field!("orderFirst", |d, x, (first, _)| *first = d.strings(x)?),
                                field!("orderLast", |d, x, (_, last)| *last = d.strings(x)?),
                            ],
                        )?;
                        o.legacy = Some(legacy);
                    }
                }),
            ],
        )?;
        Ok(o)
    }

    /// `Replica.count`: an int64.
    fn replica_count(&self, v: &Node) -> Result<i64, Error> {
        let text = v
            .as_scalar()
            .filter(|s| s.tag == Tag::Int)
            .map(|s| s.text.as_str());
        match text.and_then(|t| yaml::parse_int(&t.replace('_', ""))) {
            Some(yaml::Int::Signed(c)) => Ok(c),
            _ if v.is_null() => Ok(0),
            _ => Err(self.err(
                v,
                format!(
                    "invalid {}: json: cannot unmarshal {} into Go struct field Replica.replicas.count of type int64",
                    self.what,
                    json_kind(v)
                ),
            )),
        }
    }

    pub fn replica(&self, n: &Node) -> Result<Replica, Error> {
        let mut r = Replica {
            name: String::new(),
            count: 0,
            at: crate::yaml::Pos::default(),
        };
        self.object(
            n,
            &mut r,
            &[
                field!("name", |d, v, r| r.name = d.string(v)?),
                field!("count", |d, v, r| {
                    r.at = v.pos;
                    r.count = d.replica_count(v)?
                }),
            ],
        )?;
        Ok(r)
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
    use crate::yaml::Resolver;

    fn node(src: &str) -> Node {
        yaml::parse_one(src, Resolver::V2).unwrap()
    }

    #[test]
    fn strict_rejects_and_lenient_ignores_unknown_fields() {
        let n = node("name: a\nnewTag: v2\nextra: 1\n");
        let strict = Decoder {
            path: Path::new("k.yaml"),
            strict: true,
            what: "Kustomization",
        };
        let e = strict.image(&n).unwrap_err().to_string();
        assert!(e.contains("unknown field \"extra\""), "{e}");
        let lenient = Decoder {
            strict: false,
            what: "ImageTagTransformer",
            ..strict
        };
        assert_eq!(lenient.image(&n).unwrap().new_tag, "v2");
        let e = lenient.image(&node("name: [x]\n")).unwrap_err().to_string();
        assert!(
            e.starts_with("k.yaml:1: invalid ImageTagTransformer"),
            "{e}"
        );
    }
}
