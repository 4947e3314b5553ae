//! The OpenAPI facts strategic merge patch needs (kyaml/openapi's
//! `ResourceSchema`): the schema of a type, of a field, of list elements, and
//! a list's patch strategy and merge keys. Loaded from `schemas/smp.txt`.

use std::collections::HashMap;
use std::sync::OnceLock;

static DATA: &str = include_str!("../../schemas/smp.txt");

/// One schema as kyaml sees it after resolving `$ref`s.
#[derive(Debug)]
enum Ty {
    /// A definition (index into `Table::defs`).
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
}

#[derive(Debug, Default)]
struct Def {
    props: HashMap<String, Ty>,
    additional: Option<Ty>,
}

#[derive(Debug, Default)]
struct Table {
    gvk: HashMap<(String, String), usize>,
    defs: Vec<Def>,
}

/// A non-nil schema (kyaml's `*ResourceSchema`).
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    ty: &'static Ty,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| parse(DATA))
}

fn parse(src: &str) -> Table {
    let mut t = Table::default();
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
    t
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

fn wrap(ty: &'static Ty) -> Option<Schema> {
    match ty {
        Ty::Missing => None,
        _ => Some(Schema { ty }),
    }
}

impl Schema {
    /// kyaml's SchemaForResourceType: exact `apiVersion` and `kind`.
    pub fn for_type(api_version: &str, kind: &str) -> Option<Schema> {
        static ROOTS: OnceLock<Vec<Ty>> = OnceLock::new();
        let t = table();
        let roots = ROOTS.get_or_init(|| (0..t.defs.len()).map(Ty::Def).collect());
        let &i = t.gvk.get(&(api_version.to_string(), kind.to_string()))?;
        roots.get(i).and_then(wrap)
    }

    /// kyaml's `Field`: a property, else additionalProperties, `$ref` resolved.
    pub fn field(&self, name: &str) -> Option<Schema> {
        match self.ty {
            Ty::Def(i) => {
                let d = table().defs.get(*i)?;
                d.props.get(name).or(d.additional.as_ref()).and_then(wrap)
            }
            Ty::Map(v) => wrap(v),
            _ => None,
        }
    }

    /// kyaml's `Elements`: the item schema of an array.
    pub fn elements(&self) -> Option<Schema> {
        match self.ty {
            Ty::Array { item, .. } => wrap(item),
            _ => None,
        }
    }

    /// kyaml's `PatchStrategyAndKeyList`.
    pub fn patch_strategy_and_keys(&self) -> (&'static str, &'static [String]) {
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
        let d = Schema::for_type("apps/v1", "Deployment").unwrap();
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
        assert!(Schema::for_type("", "Deployment").is_none());
        assert!(Schema::for_type("kustomize.config.k8s.io/v1beta1", "Kustomization").is_some());
    }
}
