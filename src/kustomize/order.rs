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
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return i as i32 - ORDER_FIRST.len() as i32;
    }
    if let Some(i) = ORDER_LAST.iter().position(|k| *k == kind) {
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
            let (ia, ib) = (type_order(&a.0.kind), type_order(&b.0.kind));
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
