//! Output order: kustomize's default "legacy" sort (kinds in a fixed first
//! and last list, then by GVK and id strings), or input order.

use super::resource::{Gvk, Resource};

/// LegacySortOptions' default `orderFirst`.
const ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// LegacySortOptions' default `orderLast`.
const ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

pub fn type_order(kind: &str) -> i32 {
    type_order_in(kind, &ORDER_FIRST, &ORDER_LAST)
}

/// newLegacyIDSorter's typeOrders: `orderFirst` negative, `orderLast` positive.
fn type_order_in<S: AsRef<str>>(kind: &str, first: &[S], last: &[S]) -> i32 {
    if let Some(i) = first.iter().position(|k| k.as_ref() == kind) {
        return i as i32 - first.len() as i32;
    }
    if let Some(i) = last.iter().position(|k| k.as_ref() == kind) {
        return 1 + i as i32;
    }
    0
}

/// legacyGVKSortString: `group_version_kind`, blanks marked.
pub fn gvk_sort_string(g: &Gvk) -> String {
    g.marked_parts().join("_")
}

/// Sorts resources in kustomize's legacy order.
pub fn legacy(resources: &mut Vec<Resource>) {
    legacy_with(resources, &ORDER_FIRST, &ORDER_LAST);
}

/// Sorts resources in the legacy order with `sortOptions.legacySortOptions`.
pub fn legacy_with<S: AsRef<str>>(resources: &mut Vec<Resource>, first: &[S], last: &[S]) {
    // Everything the comparison reads is computed once per resource (ids
    // borrowed, the kind's rank looked up once), not once per comparison.
    let mut keyed: Vec<SortKey<'_>> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| SortKey::new(r, i, first, last))
        .collect();
    keyed.sort_by(|a, b| {
        if a.gvk != b.gvk {
            if a.rank != b.rank {
                return a.rank.cmp(&b.rank);
            }
            // kustomize quirk: two Namespace GVKs, one in the core group, compare reversed.
            if a.gvk[2] == "Namespace"
                && b.gvk[2] == "Namespace"
                && (a.gvk[0].is_empty() || b.gvk[0].is_empty())
            {
                return b.gvk_sort.cmp(&a.gvk_sort);
            }
            return a.gvk_sort.cmp(&b.gvk_sort);
        }
        a.id_sort.cmp(&b.id_sort)
    });
    let order: Vec<usize> = keyed.into_iter().map(|k| k.index).collect();
    let mut slots: Vec<Option<Resource>> =
        std::mem::take(resources).into_iter().map(Some).collect();
    *resources = order.into_iter().filter_map(|i| slots[i].take()).collect();
}

/// One resource's place in the legacy order.
struct SortKey<'a> {
    /// Group, version, kind.
    gvk: [&'a str; 3],
    /// The kind's rank in the first/last lists.
    rank: i32,
    /// legacyGVKSortString.
    gvk_sort: String,
    /// legacyResIDSortString (`ObjectId::sort_key`).
    id_sort: String,
    index: usize,
}

impl<'a> SortKey<'a> {
    fn new<S: AsRef<str>>(r: &'a Resource, index: usize, first: &[S], last: &[S]) -> Self {
        let [group, version, kind, namespace, name] = r.id_key();
        let or = |s: &'a str, blank: &'static str| if s.is_empty() { blank } else { s };
        let (g, v, k) = (or(group, "~G"), or(version, "~V"), or(kind, "~K"));
        SortKey {
            gvk: [group, version, kind],
            rank: type_order_in(kind, first, last),
            gvk_sort: [g, v, k].join("_"),
            id_sort: [
                k,
                ".",
                v,
                ".",
                g,
                "|",
                or(namespace, "~X"),
                "|",
                or(name, "~N"),
            ]
            .concat(),
            index,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    fn res(kind: &str, name: &str) -> Resource {
        let src = format!("apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n");
        Resource::new(parse_one(&src, Resolver::V3).unwrap())
    }

    fn kinds(rs: &[Resource]) -> Vec<String> {
        rs.iter().map(|r| r.gvk().kind).collect()
    }

    #[test]
    fn legacy_order_and_custom_lists() {
        let mut rs = vec![
            res("Deployment", "d"),
            res("Service", "s"),
            res("Namespace", "n"),
        ];
        legacy(&mut rs);
        assert_eq!(kinds(&rs), ["Namespace", "Service", "Deployment"]);
        legacy_with(&mut rs, &["Deployment"], &["Namespace"]);
        assert_eq!(kinds(&rs), ["Deployment", "Service", "Namespace"]);
    }
}
