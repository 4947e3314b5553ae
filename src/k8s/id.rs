//! Object identity: [`Gvk`] (group, version, kind) and [`ObjectId`] (a type
//! plus namespace and name), the one id every module uses for a Kubernetes
//! object — kustomize's `resid.Gvk`/`resid.ResId`, the documents of a
//! rendered chart, output file names, and diffs across environments.

use std::fmt;

use crate::yaml::Node;

/// Group, version and kind (kustomize's `resid.Gvk`).
///
/// Ordered and hashed by (group, version, kind).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gvk {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// From an object's `apiVersion` and `kind` (kustomize's ParseGroupVersion).
    pub fn new(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// From the `group`/`version`/`kind` fields of a field spec or selector.
    pub fn from_spec(n: &Node) -> Gvk {
        let get = |k| n.get_str(k).unwrap_or_default().to_string();
        Gvk {
            group: get("group"),
            version: get("version"),
            kind: get("kind"),
        }
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// kustomize's `IsSelected`: every non-empty part of `selector` must match.
    pub fn is_selected_by(&self, selector: &Gvk) -> bool {
        (selector.group.is_empty() || selector.group == self.group)
            && (selector.version.is_empty() || selector.version == self.version)
            && (selector.kind.is_empty() || selector.kind == self.kind)
    }

    /// Whether kustomize treats this type as cluster-scoped.
    pub fn is_cluster_scoped(&self) -> bool {
        super::is_cluster_scoped_gv(&self.group, &self.version, &self.kind)
    }

    /// Group, version and kind with kustomize's `~G`/`~V`/`~K` for blanks.
    pub fn marked_parts(&self) -> [&str; 3] {
        fn or<'a>(s: &'a str, blank: &'static str) -> &'a str {
            if s.is_empty() {
                blank
            } else {
                s
            }
        }
        [
            or(&self.group, "~G"),
            or(&self.version, "~V"),
            or(&self.kind, "~K"),
        ]
    }

    /// kustomize's `Gvk.String()`: `kind.version.group`, blanks marked.
    pub fn id_string(&self) -> String {
        let [g, v, k] = self.marked_parts();
        format!("{k}.{v}.{g}")
    }
}

/// One Kubernetes object's identity: its type, namespace and name
/// (kustomize's `resid.ResId`).
///
/// `namespace` is the object's `metadata.namespace` as written (empty when
/// unset); [`ObjectId::effective_namespace`] applies the defaults. Ordered
/// and hashed by (group, version, kind, namespace, name); displayed as
/// `apps/v1 Deployment shop/web` (`v1 Namespace shop` without a namespace).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId {
    /// Type.
    pub gvk: Gvk,
    /// `metadata.namespace` (empty when unset).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectId {
    /// The id of an object: its `apiVersion`, `kind`, `metadata.name` and
    /// `metadata.namespace` (a missing or non-string field counts as empty).
    pub fn of(node: &Node) -> ObjectId {
        let meta = |k: &str| {
            node.get_path(&["metadata", k])
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_string()
        };
        ObjectId {
            gvk: Gvk::new(
                node.get_str("apiVersion").unwrap_or_default(),
                node.get_str("kind").unwrap_or_default(),
            ),
            name: meta("name"),
            namespace: meta("namespace"),
        }
    }

    /// kustomize's `ResId.String()`, used in messages:
    /// `Kind.version.group/name.namespace`.
    pub fn id_string(&self) -> String {
        let ns = if self.namespace.is_empty() {
            "[noNs]"
        } else {
            &self.namespace
        };
        let name = if self.name.is_empty() {
            "[noName]"
        } else {
            &self.name
        };
        format!("{}/{name}.{ns}", self.gvk.id_string())
    }

    /// kustomize's legacyResIDSortString: `Kind.version.group|namespace|name`,
    /// blanks marked.
    pub fn sort_key(&self) -> String {
        let ns = if self.namespace.is_empty() {
            "~X"
        } else {
            &self.namespace
        };
        let name = if self.name.is_empty() {
            "~N"
        } else {
            &self.name
        };
        format!("{}|{ns}|{name}", self.gvk.id_string())
    }

    /// Namespace equality where empty means `default` for namespaced types.
    pub fn same_namespace(&self, other: &ObjectId) -> bool {
        self.effective_namespace() == other.effective_namespace()
    }

    /// kustomize's EffectiveNamespace: `default` when unset, a marker for
    /// cluster-scoped types.
    pub fn effective_namespace(&self) -> &str {
        if self.gvk.is_cluster_scoped() {
            "_non_namespaceable_"
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }
}

impl fmt::Display for Gvk {
    /// `apps/v1 Deployment` (`v1 Pod` for the core group).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.api_version(), self.kind)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.gvk)?;
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    #[test]
    fn gvk_parts() {
        let g = Gvk::new("apps/v1", "Deployment");
        assert_eq!((g.group.as_str(), g.version.as_str()), ("apps", "v1"));
        assert_eq!(Gvk::new("v1", "Pod").api_version(), "v1");
        assert!(g.is_selected_by(&Gvk {
            kind: "Deployment".into(),
            ..Default::default()
        }));
        assert!(!g.is_selected_by(&Gvk {
            group: "batch".into(),
            ..Default::default()
        }));
    }

    #[test]
    fn id_of_a_node_and_display() {
        let n = parse_one(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n",
            Resolver::V3,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let id = ObjectId::of(&n);
        assert_eq!(id.gvk, Gvk::new("apps/v1", "Deployment"));
        assert_eq!(id.to_string(), "apps/v1 Deployment shop/web");
        assert_eq!(id.id_string(), "Deployment.v1.apps/web.shop");
        let core = ObjectId {
            gvk: Gvk::new("v1", "Namespace"),
            name: "shop".into(),
            namespace: String::new(),
        };
        assert_eq!(core.to_string(), "v1 Namespace shop");
        assert_eq!(core.effective_namespace(), "_non_namespaceable_");
        assert_eq!(ObjectId::of(&crate::yaml::Node::map()), ObjectId::default());
    }

    #[test]
    fn ordered_by_type_then_name() {
        let id = |g: &str, k: &str, n: &str| ObjectId {
            gvk: Gvk::new(g, k),
            name: n.into(),
            namespace: String::new(),
        };
        let mut v = [
            id("v1", "Service", "b"),
            id("apps/v1", "Deployment", "a"),
            id("v1", "Service", "a"),
        ];
        v.sort();
        assert_eq!(v[0].gvk.group, "");
        assert_eq!(v[1].name, "b");
        assert_eq!(v[2].gvk.group, "apps");
    }
}
