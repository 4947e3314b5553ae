//! Field specs: "this path, in resources of this group/version/kind", the
//! unit every builtin transformer is configured with, and the walk that finds
//! (and, when allowed, creates) the fields they name. Mirrors kustomize's
//! `filters/fieldspec`.

use std::sync::OnceLock;

use super::resource::Gvk;
use crate::yaml::{self, Node, Resolver, Tag, Value};

/// kustomize v5.7.1's default field specs, in its `configurations:` format.
static DEFAULTS: &str = include_str!("../../schemas/kustomize-fieldspecs.yaml");

/// One field spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpec {
    /// Which resources (empty parts match anything).
    pub gvk: Gvk,
    /// Slash-separated path; `\/` escapes a slash; `x[]` marks a list.
    pub path: String,
    /// Create missing fields along the path.
    pub create: bool,
}

/// A name reference rule: fields (in referrers) that hold the name of a
/// resource of kind `target`.
#[derive(Clone, Debug, Default)]
pub struct NameBackRef {
    /// The referenced kind.
    pub target: Gvk,
    /// Where referrers hold its name.
    pub referrers: Vec<FieldSpec>,
}

/// The field specs of every builtin transformer (kustomize's `TransformerConfig`).
#[derive(Clone, Debug, Default)]
pub struct TransformerConfig {
    /// Name prefix.
    pub name_prefix: Vec<FieldSpec>,
    /// Name suffix.
    pub name_suffix: Vec<FieldSpec>,
    /// Namespace.
    pub namespace: Vec<FieldSpec>,
    /// commonLabels and labels with includeSelectors.
    pub common_labels: Vec<FieldSpec>,
    /// labels with includeTemplates.
    pub template_labels: Vec<FieldSpec>,
    /// Extra `labels:` specs from configurations.
    pub labels: Vec<FieldSpec>,
    /// commonAnnotations.
    pub common_annotations: Vec<FieldSpec>,
    /// images.
    pub images: Vec<FieldSpec>,
    /// replicas.
    pub replicas: Vec<FieldSpec>,
    /// Name references.
    pub name_reference: Vec<NameBackRef>,
    /// Where vars (`$(NAME)`) are expanded.
    pub var_reference: Vec<FieldSpec>,
}

impl TransformerConfig {
    /// kustomize's defaults, parsed once per process.
    pub fn defaults() -> &'static TransformerConfig {
        static CONFIG: OnceLock<TransformerConfig> = OnceLock::new();
        CONFIG.get_or_init(|| {
            // The data is ours and checked by a test; a failure here is a bug.
            TransformerConfig::parse(DEFAULTS).unwrap_or_default()
        })
    }

    /// Parses a `configurations:` file.
    pub fn parse(src: &str) -> Result<TransformerConfig, String> {
        let root = yaml::parse_one(src, Resolver::V2).map_err(|e| e.to_string())?;
        let mut c = TransformerConfig::default();
        let Some(entries) = root.as_map() else {
            return Ok(c);
        };
        for (k, v) in entries {
            let key = k.key_text().unwrap_or_default();
            let list = match key {
                "namePrefix" => &mut c.name_prefix,
                "nameSuffix" => &mut c.name_suffix,
                "namespace" => &mut c.namespace,
                "commonLabels" => &mut c.common_labels,
                "templateLabels" => &mut c.template_labels,
                "labels" => &mut c.labels,
                "commonAnnotations" => &mut c.common_annotations,
                "images" => &mut c.images,
                "replicas" => &mut c.replicas,
                "nameReference" => {
                    for item in v.as_seq().map(Vec::as_slice).unwrap_or_default() {
                        c.name_reference.push(NameBackRef {
                            target: Gvk::from_spec(item),
                            referrers: FieldSpec::list_from(
                                item.get("fieldSpecs").unwrap_or(&Node::null()),
                            )?,
                        });
                    }
                    continue;
                }
                "varReference" => &mut c.var_reference,
                other => return Err(format!("unknown transformer config field {other:?}")),
            };
            for spec in FieldSpec::list_from(v)? {
                if !list.contains(&spec) {
                    list.push(spec);
                }
            }
        }
        Ok(c)
    }
}

impl TransformerConfig {
    /// kustomize's TransformerConfig.Merge: every list gains the specs it
    /// lacks; name references merge per referenced kind.
    pub fn merge(&mut self, other: &TransformerConfig) -> Result<(), String> {
        let lists = [
            (&mut self.name_prefix, &other.name_prefix, "NamePrefix"),
            (&mut self.name_suffix, &other.name_suffix, "NameSuffix"),
            (&mut self.namespace, &other.namespace, "NameSpace"),
            (
                &mut self.common_annotations,
                &other.common_annotations,
                "CommonAnnotations",
            ),
            (
                &mut self.common_labels,
                &other.common_labels,
                "CommonLabels",
            ),
            (&mut self.labels, &other.labels, "Labels"),
            (
                &mut self.template_labels,
                &other.template_labels,
                "TemplateLabels",
            ),
            (
                &mut self.var_reference,
                &other.var_reference,
                "VarReference",
            ),
            (&mut self.images, &other.images, "Images"),
            (&mut self.replicas, &other.replicas, "Replicas"),
        ];
        for (mine, theirs, name) in lists {
            merge_specs(mine, theirs)
                .map_err(|e| format!("failed to merge {name} fieldSpec: {e}"))?;
        }
        for nbr in &other.name_reference {
            match self
                .name_reference
                .iter_mut()
                .find(|n| n.target == nbr.target)
            {
                Some(n) => merge_specs(&mut n.referrers, &nbr.referrers)
                    .map_err(|e| format!("failed to merge NameReference fieldSpec: {e}"))?,
                None => self.name_reference.push(nbr.clone()),
            }
        }
        Ok(())
    }
}

impl TransformerConfig {
    /// kustomize's Merge as a new config, sorted as its `sortFields` leaves
    /// it (by kind order, then `group_version_kind`). Merging sorted lists
    /// again drops a kind-less spec that follows a kinded one on the same
    /// path, which is how custom `configurations:` end up replacing defaults.
    pub fn merged(&self, other: &TransformerConfig) -> Result<TransformerConfig, String> {
        let mut out = self.clone();
        out.merge(other)?;
        out.sort();
        Ok(out)
    }

    /// kustomize's defaults as `makeTransformerConfigFromBytes` leaves them: sorted.
    pub fn sorted_defaults() -> &'static TransformerConfig {
        static SORTED: OnceLock<TransformerConfig> = OnceLock::new();
        SORTED.get_or_init(|| {
            let mut c = TransformerConfig::defaults().clone();
            c.sort();
            c
        })
    }

    /// sortFields (a stable sort; Go's is stable for the short lists that matter).
    pub fn sort(&mut self) {
        let key = |g: &Gvk| {
            (
                super::order::type_order(&g.kind),
                super::order::gvk_sort_string(g),
            )
        };
        for list in [
            &mut self.name_prefix,
            &mut self.name_suffix,
            &mut self.namespace,
            &mut self.common_labels,
            &mut self.labels,
            &mut self.template_labels,
            &mut self.common_annotations,
            &mut self.var_reference,
            &mut self.images,
            &mut self.replicas,
        ] {
            list.sort_by_cached_key(|s| key(&s.gvk));
        }
        self.name_reference.sort_by_cached_key(|n| key(&n.target));
    }
}

/// FsSlice.MergeAll: specs already present (same path, kind selected) are
/// skipped, unless their create flags disagree.
fn merge_specs(into: &mut Vec<FieldSpec>, from: &[FieldSpec]) -> Result<(), String> {
    for x in from {
        match into
            .iter()
            .find(|s| s.gvk.is_selected_by(&x.gvk) && s.path == x.path)
        {
            Some(s) if s.create != x.create => return Err("conflicting fieldspecs".into()),
            Some(_) => {}
            None => into.push(x.clone()),
        }
    }
    Ok(())
}

impl FieldSpec {
    /// Reads a list of field specs.
    pub fn list_from(n: &Node) -> Result<Vec<FieldSpec>, String> {
        let Some(items) = n.as_seq() else {
            return if n.is_null() {
                Ok(Vec::new())
            } else {
                Err("field specs must be a list".into())
            };
        };
        items
            .iter()
            .map(|i| {
                Ok(FieldSpec {
                    gvk: Gvk::from_spec(i),
                    path: i.get_str("path").unwrap_or_default().to_string(),
                    create: i
                        .get("create")
                        .and_then(Node::as_scalar)
                        .is_some_and(|s| s.tag == Tag::Bool && s.text.eq_ignore_ascii_case("true")),
                })
            })
            .collect()
    }

    /// Whether this spec applies to a resource of `gvk`.
    pub fn selects(&self, gvk: &Gvk) -> bool {
        gvk.is_selected_by(&self.gvk)
    }

    /// Splits the path on `/`, honouring `\/` (kustomize's PathSplitter).
    pub fn path_parts(&self) -> Vec<String> {
        path_splitter(&self.path, '/')
    }
}

/// kustomize's utils.PathSplitter: splits on `delim`, a backslash before
/// it escapes it, and one leading delimiter is dropped ("allow path to
/// start with forward slash"), so `/a/b` and `.a.b` are `a/b` and `a.b`.
pub fn path_splitter(path: &str, delim: char) -> Vec<String> {
    let mut parts: Vec<&str> = path.split(delim).collect();
    if parts.len() > 1 && parts[0].is_empty() {
        parts.remove(0);
    }
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        match out.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push(delim);
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// What to create for a missing last field.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// Never create.
    Nothing,
    /// A string scalar (namespace).
    Str,
    /// An int scalar (replicas).
    Int,
    /// A mapping (labels, annotations).
    Map,
}

/// Walks `spec`'s path in `node` and calls `set` on every field it reaches.
/// Missing fields are created when `spec.create` allows it and `create` says
/// what the last one is; lists along the way are walked element by element.
pub fn apply(
    node: &mut Node,
    spec: &FieldSpec,
    create: Create,
    set: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    // This runs for every resource and spec: a path without escapes is
    // split into borrowed parts (path_splitter's result, one allocation).
    let escaped;
    let parts: Vec<&str> = match plain_parts(&spec.path) {
        Some(parts) => parts,
        None => {
            escaped = spec.path_parts();
            escaped.iter().map(String::as_str).collect()
        }
    };
    walk(node, &parts, spec.create, create, set)
        .map_err(|e| format!("considering field '{}': {e}", spec.path))
}

/// [`path_splitter`] on `/` for a path without a backslash, borrowed;
/// `None` when a backslash may escape a slash.
fn plain_parts(path: &str) -> Option<Vec<&str>> {
    if path.contains('\\') {
        return None;
    }
    let mut parts: Vec<&str> = path.split('/').collect();
    if parts.len() > 1 && parts[0].is_empty() {
        parts.remove(0);
    }
    Some(parts)
}

fn walk(
    node: &mut Node,
    path: &[&str],
    allow_create: bool,
    create: Create,
    set: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        return set(node);
    };
    if node.is_null() {
        return Ok(());
    }
    match &mut node.value {
        Value::Seq(items) => {
            for item in items {
                walk(item, path, allow_create, create, set)?;
            }
            Ok(())
        }
        Value::Map(_) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (*first, false),
            };
            if name.is_empty() {
                return Err("cannot set or create an empty field name".into());
            }
            let kind = if !allow_create || create == Create::Nothing || is_seq {
                Create::Nothing
            } else if rest.is_empty() {
                create
            } else {
                Create::Map
            };
            if node.get(name).is_none() {
                match kind {
                    Create::Nothing => return Ok(()),
                    Create::Map => node.set(name, Node::map()),
                    Create::Str => node.set(name, Node::scalar("", Tag::Str)),
                    Create::Int => node.set(name, Node::scalar("", Tag::Int)),
                }
            }
            let Some(field) = node.get_mut(name) else {
                return Ok(());
            };
            // handleMap: a null field becomes what the path says it is
            // (a list for `x[]`, even without create).
            if field.is_null() && is_seq {
                *field = Node::seq();
            } else if field.is_null() && kind == Create::Map {
                *field = Node::map();
            }
            walk(field, rest, allow_create, create, set)
        }
        Value::Scalar(_) => Err("expected sequence or mapping node".into()),
    }
}

/// A setter for map fields: sets `key` to the string `value`.
pub fn set_entry<'a>(
    key: &'a str,
    value: &'a str,
) -> impl FnMut(&mut Node) -> Result<(), String> + 'a {
    move |n: &mut Node| {
        if n.as_map().is_none() {
            if n.is_null() {
                *n = Node::map();
            } else {
                return Err(format!(
                    "wrong node kind: expected MappingNode but got {}",
                    n.kind_name()
                ));
            }
        }
        // kyaml's FieldSetter with an empty name sets the node itself,
        // which must then be a scalar: a label or annotation keyed "" fails.
        if key.is_empty() {
            return Err("wrong node kind: expected ScalarNode but got MappingNode".into());
        }
        n.set(key, Node::string(value));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_parts_split_as_path_splitter_does() {
        for p in ["", "/", "a", "/a/b", "a//b", "a/b/", "spec/x[]/name", "//a"] {
            let parts = plain_parts(p).unwrap();
            assert_eq!(parts, path_splitter(p, '/'), "{p:?}");
        }
        assert_eq!(plain_parts("a\\/b/c"), None);
    }

    #[test]
    fn defaults_parse() {
        let c = TransformerConfig::parse(DEFAULTS).unwrap();
        assert_eq!(c.name_prefix.len(), 1);
        assert!(c
            .common_labels
            .iter()
            .any(|s| s.path == "spec/selector/matchLabels"));
        assert!(c
            .template_labels
            .iter()
            .any(|s| s.path == "metadata/labels"));
        assert!(c
            .name_reference
            .iter()
            .any(|r| r.target.kind == "ConfigMap"));
        assert_eq!(c.images.len(), 6);
    }

    #[test]
    fn walk_creates_and_visits_lists() {
        let mut n = yaml::parse_one(
            "spec:\n  containers:\n  - name: a\n  - name: b\n",
            Resolver::V3,
        )
        .unwrap();
        let spec = FieldSpec {
            path: "spec/containers[]/name".into(),
            ..Default::default()
        };
        let mut seen = Vec::new();
        apply(&mut n, &spec, Create::Nothing, &mut |f| {
            seen.push(f.as_str().unwrap_or_default().to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["a", "b"]);
        let labels = FieldSpec {
            path: "metadata/labels".into(),
            create: true,
            ..Default::default()
        };
        apply(&mut n, &labels, Create::Map, &mut set_entry("app", "x")).unwrap();
        assert_eq!(
            n.get_path(&["metadata", "labels", "app"]).unwrap().as_str(),
            Some("x")
        );
    }

    #[test]
    fn escaped_slashes() {
        let s = FieldSpec {
            path: r"metadata/annotations/a.io\/b".into(),
            ..Default::default()
        };
        assert_eq!(s.path_parts(), ["metadata", "annotations", "a.io/b"]);
    }

    #[test]
    fn one_leading_slash_is_dropped() {
        assert_eq!(path_splitter("/spec/a", '/'), ["spec", "a"]);
        assert_eq!(path_splitter("//a", '/'), ["", "a"]);
        assert_eq!(path_splitter("/", '/'), [""]);
        assert_eq!(path_splitter("", '/'), [""]);
    }
}
