//! Decoding the typed parts of a kustomization and of builtin plugin
//! configs: images, replicas, patches, selectors, generator arguments and
//! options. Kustomizations decode strictly (unknown fields fail, as
//! kustomize's `UnmarshalStrict`); plugin configs decode as `yaml.Unmarshal`
//! does, ignoring unknown fields.

use std::path::Path;

use crate::kustomize::fieldspec::FieldSpec;
use crate::kustomize::resource::Gvk;
use crate::kustomize::Error;
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

    /// Visits the fields of an object, rejecting unknown ones as Go's strict decoder does.
    pub fn object(
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
                        "invalid {}: json: cannot unmarshal {} into an object",
                        self.what,
                        json_kind(n)
                    ),
                ))
            }
        };
        for (k, v) in entries {
            let name = k.key_text().unwrap_or_default();
            match known.iter().find(|f| f.eq_ignore_ascii_case(name)) {
                Some(field) => f(field, v)?,
                None if !self.strict => {}
                None => {
                    return Err(self.err(
                        k,
                        format!("invalid {}: json: unknown field \"{name}\"", self.what),
                    ))
                }
            }
        }
        Ok(())
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
            &["pairs", "includeSelectors", "includeTemplates", "fields"],
            |f, v| {
                match f {
                    "pairs" => l.pairs = self.string_map(v)?,
                    "includeSelectors" => l.include_selectors = self.bool(v)?,
                    "includeTemplates" => l.include_templates = self.bool(v)?,
                    _ => {
                        l.fields = FieldSpec::list_from(v)
                            .map_err(|m| self.err(v, format!("invalid {}: {m}", self.what)))?
                    }
                }
                Ok(())
            },
        )?;
        Ok(l)
    }

    pub fn image(&self, n: &Node) -> Result<Image, Error> {
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

    pub fn patch(&self, n: &Node) -> Result<Patch, Error> {
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

    pub fn selector(&self, n: &Node) -> Result<Selector, Error> {
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

    pub fn generator_options(&self, n: &Node) -> Result<GeneratorOptions, Error> {
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

    /// `sortOptions`.
    pub fn sort_options(&self, n: &Node) -> Result<SortOptions, Error> {
        let mut o = SortOptions::default();
        self.object(n, &["order", "legacySortOptions"], |f, v| {
            if f == "order" {
                o.order = self.string(v)?;
            } else if !v.is_null() {
                let (mut first, mut last) = (Vec::new(), Vec::new());
                self.object(v, &["orderFirst", "orderLast"], |g, x| {
                    match g {
                        "orderFirst" => first = self.strings(x)?,
                        _ => last = self.strings(x)?,
                    }
                    Ok(())
                })?;
                o.legacy = Some((first, last));
            }
            Ok(())
        })?;
        Ok(o)
    }

    pub fn replica(&self, n: &Node) -> Result<Replica, Error> {
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
                            "invalid {}: json: cannot unmarshal {} into Go struct field Replica.replicas.count of type int64",
                            self.what,
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
