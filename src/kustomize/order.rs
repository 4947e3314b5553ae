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
    let mut keyed: Vec<(Gvk, String, usize)> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let id = r.cur_id();
            let key = id.sort_key();
            (id.gvk, key, i)
        })
        .collect();
    keyed.sort_by(|a, b| {
        if a.0 != b.0 {
            let (ia, ib) = (
                type_order_in(&a.0.kind, first, last),
                type_order_in(&b.0.kind, first, last),
            );
            if ia != ib {
                return ia.cmp(&ib);
            }
            let (sa, sb) = (gvk_sort_string(&a.0), gvk_sort_string(&b.0));
            // kustomize quirk: two Namespace GVKs, one in the core group, compare reversed.
            if a.0.kind == "Namespace"
                && b.0.kind == "Namespace"
                && (a.0.group.is_empty() || b.0.group.is_empty())
            {
                return sb.cmp(&sa);
            }
            return sa.cmp(&sb);
        }
        a.1.cmp(&b.1)
    });
    let mut slots: Vec<Option<Resource>> =
        std::mem::take(resources).into_iter().map(Some).collect();
    *resources = keyed
        .into_iter()
        .filter_map(|(_, _, i)| slots[i].take())
        .collect();
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
