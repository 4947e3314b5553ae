//! The OpenAPI facts strategic merge patch needs (kyaml/openapi's
//! `ResourceSchema`): the schema of a type, of a field, of list elements, and
//! a list's patch strategy and merge keys. The builtin catalog is loaded from
//! `schemas/smp.txt`; a kustomization's `openapi: {path: …}` file becomes a
//! custom catalog through [`Catalog::from_openapi`].

use std::collections::HashMap;
use std::sync::OnceLock;

static DATA: &str = include_str!("../../schemas/smp.txt");

/// The API group of kustomize's own types, whose schema kyaml always loads
/// last (kustomizationapi), so it wins over a custom schema.
const KUSTOMIZE_GROUP: &str = "kustomize.config.k8s.io/";

/// One schema as kyaml sees it after resolving `$ref`s.
#[derive(Debug)]
enum Ty {
    /// A definition (index into `Catalog::defs`).
    Def(usize),
    /// An array with its patch strategy and merge keys.
    Array {
        strategy: String,
        keys: Vec<String>,
        item: Box<Ty>,
    },
    /// A map whose values have this schema (additionalProperties).
    Map(Box<Ty>),
    /// Any other schema: present, but with nothing below it that matters.
    Opaque,
    /// A `$ref` to an unknown definition: kyaml's Resolve fails, so nil.
    Missing,
    /// A definition of the builtin catalog, from a custom schema loaded on
    /// top of it.
    Builtin(usize),
}

#[derive(Debug, Default)]
struct Def {
    props: HashMap<String, Ty>,
    additional: Option<Ty>,
}

/// The indexed definitions of one OpenAPI document (kyaml's globalSchema).
#[derive(Debug, Default)]
pub struct Catalog {
    gvk: HashMap<(String, String), usize>,
    defs: Vec<Def>,
    /// `Ty::Def(i)` for every definition, so a type's schema can borrow one.
    roots: Vec<Ty>,
    /// A custom schema: kustomize's own group is still looked up in the
    /// builtin catalog.
    custom: bool,
    /// A custom schema with the builtin one parsed after it, so builtin
    /// types and definitions win.
    over_builtin: bool,
    /// Definition names (builtin catalog only).
    names: HashMap<String, usize>,
}

/// A non-nil schema (kyaml's `*ResourceSchema`).
#[derive(Clone, Copy, Debug)]
pub struct Schema<'a> {
    cat: &'a Catalog,
    ty: &'a Ty,
}

impl Catalog {
    /// The Kubernetes v1.21.2 and kustomize schemas kustomize embeds.
    pub fn builtin() -> &'static Catalog {
        static TABLE: OnceLock<Catalog> = OnceLock::new();
        TABLE.get_or_init(|| parse(DATA))
    }

    /// A custom OpenAPI (swagger v2) document, already decoded from JSON or
    /// YAML: its `definitions` with their `x-kubernetes-group-version-kind`,
    /// patch strategies and merge keys (kyaml's `parse` + AddDefinitions).
    ///
    /// `with_builtin`: kyaml had flagged the builtin schema for parsing
    /// before the custom one was set, so it is parsed right after it and its
    /// definitions and types take precedence (initSchema's delayed parse).
    pub fn from_openapi(doc: &serde_json::Value, with_builtin: bool) -> Result<Catalog, String> {
        use serde_json::Value as J;
        let defs = match doc.get("definitions") {
            None | Some(J::Null) => {
                let cat = Catalog {
                    over_builtin: with_builtin,
                    ..Catalog::default()
                };
                return Ok(Catalog::finish(cat, true));
            }
            Some(J::Object(m)) => m,
            Some(_) => return Err("definitions: expected an object".into()),
        };
        let mut names: Vec<&String> = defs.keys().collect();
        names.sort();
        let index = Refs {
            own: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.as_str(), i))
                .collect(),
            builtin: with_builtin.then(|| &Catalog::builtin().names),
        };
        let mut cat = Catalog {
            defs: (0..names.len()).map(|_| Def::default()).collect(),
            over_builtin: with_builtin,
            ..Catalog::default()
        };
        for (i, name) in names.iter().enumerate() {
            let d = &defs[name.as_str()];
            for g in d
                .get("x-kubernetes-group-version-kind")
                .and_then(J::as_array)
                .into_iter()
                .flatten()
            {
                let field = |k: &str| g.get(k).and_then(J::as_str).unwrap_or_default();
                let (group, version, kind) = (field("group"), field("version"), field("kind"));
                let api = if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                };
                cat.gvk.insert((api, kind.to_string()), i);
            }
            let def = json_def(d, &index, &mut cat.defs);
            cat.defs[i] = def;
        }
        Ok(Catalog::finish(cat, true))
    }

    fn finish(mut cat: Catalog, custom: bool) -> Catalog {
        cat.roots = (0..cat.defs.len()).map(Ty::Def).collect();
        cat.custom = custom;
        cat
    }

    /// kyaml's SchemaForResourceType: exact `apiVersion` and `kind`.
    pub fn for_type(&self, api_version: &str, kind: &str) -> Option<Schema<'_>> {
        if self.custom && (self.over_builtin || api_version.starts_with(KUSTOMIZE_GROUP)) {
            if let Some(s) = Catalog::builtin().for_type(api_version, kind) {
                return Some(s);
            }
        }
        let &i = self.gvk.get(&(api_version.to_string(), kind.to_string()))?;
        self.roots.get(i).and_then(|ty| self.wrap(ty))
    }

    fn wrap<'a>(&'a self, ty: &'a Ty) -> Option<Schema<'a>> {
        match ty {
            Ty::Missing => None,
            Ty::Builtin(i) => Catalog::builtin().roots.get(*i).map(|ty| Schema {
                cat: Catalog::builtin(),
                ty,
            }),
            _ => Some(Schema { cat: self, ty }),
        }
    }
}

/// A definition or inline object schema: its properties and
/// additionalProperties; inline objects below become anonymous definitions.
/// How a custom schema's `$ref`s resolve: to the builtin catalog's
/// definitions when it is parsed on top, else to the file's own.
struct Refs<'a> {
    own: HashMap<&'a str, usize>,
    builtin: Option<&'static HashMap<String, usize>>,
}

fn json_def(s: &serde_json::Value, index: &Refs, defs: &mut Vec<Def>) -> Def {
    let mut def = Def::default();
    if let Some(props) = s.get("properties").and_then(|p| p.as_object()) {
        for (field, p) in props {
            def.props.insert(field.clone(), json_ty(p, index, defs));
        }
    }
    if let Some(a) = s.get("additionalProperties").filter(|a| a.is_object()) {
        def.additional = Some(json_ty(a, index, defs));
    }
    def
}

/// The TYPE of a schema, as schemas/generate.py writes it for smp.txt.
fn json_ty(s: &serde_json::Value, index: &Refs, defs: &mut Vec<Def>) -> Ty {
    use serde_json::Value as J;
    if !s.is_object() {
        return Ty::Opaque;
    }
    if let Some(r) = s.get("$ref").and_then(J::as_str).filter(|r| !r.is_empty()) {
        // kyaml's Resolve: only local `#/definitions/NAME` references resolve.
        let Some(name) = r.strip_prefix("#/definitions/") else {
            return Ty::Missing;
        };
        if let Some(&i) = index.builtin.and_then(|b| b.get(name)) {
            return Ty::Builtin(i);
        }
        return index.own.get(name).map_or(Ty::Missing, |&i| Ty::Def(i));
    }
    if s.get("type").and_then(J::as_str) == Some("array") {
        let text = |k: &str| s.get(k).and_then(J::as_str).map(String::from);
        let strategy = text("x-kubernetes-patch-strategy").unwrap_or_default();
        // PatchStrategyAndKeyList: list-map-keys over the patch-merge-key,
        // and no keys without a strategy.
        let keys = if strategy.is_empty() {
            Vec::new()
        } else if let Some(list) = s.get("x-kubernetes-list-map-keys").and_then(J::as_array) {
            list.iter()
                .filter_map(J::as_str)
                .map(String::from)
                .collect()
        } else {
            text("x-kubernetes-patch-merge-key").into_iter().collect()
        };
        let item = s
            .get("items")
            .map_or(Ty::Opaque, |i| json_ty(i, index, defs));
        return Ty::Array {
            strategy,
            keys,
            item: Box::new(item),
        };
    }
    if s.get("properties").is_some() || s.get("additionalProperties").is_some_and(J::is_object) {
        let def = json_def(s, index, defs);
        defs.push(def);
        return Ty::Def(defs.len() - 1);
    }
    Ty::Opaque
}

fn parse(src: &str) -> Catalog {
    let mut t = Catalog::default();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for l in src.lines() {
        if let Some(name) = l.strip_prefix("D ") {
            // A later definition with the same name overwrites (AddDefinitions).
            let next = index.len();
            index.entry(name).or_insert(next);
        }
    }
    t.defs = (0..index.len()).map(|_| Def::default()).collect();
    let mut cur: Option<usize> = None;
    for l in src.lines() {
        let mut parts = l.splitn(2, ' ');
        let (Some(tag), Some(rest)) = (parts.next(), parts.next()) else {
            continue;
        };
        match tag {
            "G" => {
                let f: Vec<&str> = rest.split(' ').collect();
                if let [api, kind, def] = f[..] {
                    if let Some(&i) = index.get(def) {
                        t.gvk.insert((api.to_string(), kind.to_string()), i);
                    }
                }
            }
            "D" => {
                cur = index.get(rest).copied();
                if let Some(i) = cur {
                    t.defs[i] = Def::default();
                }
            }
            "P" => {
                if let (Some(i), Some((field, ty))) = (cur, rest.split_once(' ')) {
                    t.defs[i]
                        .props
                        .insert(field.to_string(), parse_ty(ty, &index));
                }
            }
            "A" => {
                if let Some(i) = cur {
                    t.defs[i].additional = Some(parse_ty(rest, &index));
                }
            }
            _ => {}
        }
    }
    t.names = index.iter().map(|(k, &v)| (k.to_string(), v)).collect();
    Catalog::finish(t, false)
}

fn parse_ty(s: &str, index: &HashMap<&str, usize>) -> Ty {
    if let Some(name) = s.strip_prefix('@') {
        return index.get(name).map_or(Ty::Missing, |&i| Ty::Def(i));
    }
    if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        return Ty::Map(Box::new(parse_ty(inner, index)));
    }
    if let Some(rest) = s.strip_prefix('[') {
        if let Some((head, item)) = rest.split_once(']') {
            let (strategy, keys) = head.split_once('|').unwrap_or((head, ""));
            return Ty::Array {
                strategy: strategy.to_string(),
                keys: keys
                    .split(',')
                    .filter(|k| !k.is_empty())
                    .map(String::from)
                    .collect(),
                item: Box::new(parse_ty(item, index)),
            };
        }
    }
    Ty::Opaque
}

impl<'a> Schema<'a> {
    /// kyaml's `Field`: a property, else additionalProperties, `$ref` resolved.
    pub fn field(&self, name: &str) -> Option<Schema<'a>> {
        let cat = self.cat;
        match self.ty {
            Ty::Def(i) => {
                let d = cat.defs.get(*i)?;
                d.props
                    .get(name)
                    .or(d.additional.as_ref())
                    .and_then(|ty| cat.wrap(ty))
            }
            Ty::Map(v) => cat.wrap(v),
            _ => None,
        }
    }

    /// kyaml's `Elements`: the item schema of an array.
    pub fn elements(&self) -> Option<Schema<'a>> {
        match self.ty {
            Ty::Array { item, .. } => self.cat.wrap(item),
            _ => None,
        }
    }

    /// kyaml's `PatchStrategyAndKeyList`.
    pub fn patch_strategy_and_keys(&self) -> (&'a str, &'a [String]) {
        match self.ty {
            Ty::Array { strategy, keys, .. } => (strategy, keys),
            _ => ("", &[]),
        }
    }

    /// kyaml's schemaHasMergeStrategy: the strategy, split on `,`, has `merge`.
    pub fn merges(&self) -> bool {
        self.patch_strategy_and_keys()
            .0
            .split(',')
            .any(|s| s == "merge")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_paths() {
        let d = Catalog::builtin()
            .for_type("apps/v1", "Deployment")
            .unwrap();
        let pod = d
            .field("spec")
            .and_then(|s| s.field("template"))
            .and_then(|s| s.field("spec"))
            .unwrap();
        let containers = pod.field("containers").unwrap();
        assert!(containers.merges());
        assert_eq!(containers.patch_strategy_and_keys().1, ["name"]);
        let ports = containers.elements().unwrap().field("ports").unwrap();
        assert_eq!(
            ports.patch_strategy_and_keys().1,
            ["containerPort", "protocol"]
        );
        // retainKeys next to a $ref is lost, as kyaml's Field() replaces the schema.
        let strategy = d.field("spec").unwrap().field("strategy").unwrap();
        assert_eq!(strategy.patch_strategy_and_keys().0, "");
        assert!(pod.field("volumes").unwrap().merges());
        let labels = d.field("metadata").unwrap().field("labels").unwrap();
        assert!(labels.field("app").is_some());
        assert!(Catalog::builtin().for_type("", "Deployment").is_none());
        assert!(Catalog::builtin()
            .for_type("kustomize.config.k8s.io/v1beta1", "Kustomization")
            .is_some());
    }

    #[test]
    fn custom_schema_inline_objects_and_refs() {
        let doc: serde_json::Value = serde_json::from_str(
            r##"{"definitions": {
              "v1.My": {
                "x-kubernetes-group-version-kind": [{"group": "ex.com", "version": "v1", "kind": "My"}],
                "properties": {"spec": {"type": "object", "properties": {
                  "items": {"type": "array", "items": {"$ref": "#/definitions/v1.Item"},
                    "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "id"},
                  "gone": {"$ref": "#/definitions/nope"}}}}},
              "v1.Item": {"properties": {"ports": {"type": "array",
                "x-kubernetes-patch-strategy": "merge",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
                "x-kubernetes-patch-merge-key": "port"}}}
            }}"##,
        )
        .unwrap();
        let cat = Catalog::from_openapi(&doc, false).unwrap();
        let spec = cat
            .for_type("ex.com/v1", "My")
            .unwrap()
            .field("spec")
            .unwrap();
        let items = spec.field("items").unwrap();
        assert!(items.merges());
        assert_eq!(items.patch_strategy_and_keys().1, ["id"]);
        let ports = items.elements().unwrap().field("ports").unwrap();
        assert_eq!(ports.patch_strategy_and_keys().1, ["port", "protocol"]);
        assert!(spec.field("gone").is_none());
        // Builtin Kubernetes types are gone; kustomize's own stay.
        assert!(cat.for_type("apps/v1", "Deployment").is_none());
        assert!(cat
            .for_type("kustomize.config.k8s.io/v1beta1", "Kustomization")
            .is_some());
        assert!(Catalog::from_openapi(&serde_json::json!({"definitions": 1}), false).is_err());
    }
}
