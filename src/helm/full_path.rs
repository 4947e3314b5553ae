//! helm 3's `Chart.ChartFullPath` after `ProcessDependencies`: the path
//! that names a subchart's templates (`# Source:`, `.Template.Name`) and
//! CRD files. It walks parent pointers, and helm 3 sets them as a side
//! effect: `getAliasDependency` copies a listed subchart shallowly, so the
//! copies share the subcharts no `dependencies:` entry names, and each
//! `SetDependencies` of a copy points those at that copy. An unlisted
//! subchart therefore hangs off the last copy of its parent that helm
//! processed (pre-order), or, when its parent lists no dependencies (helm
//! leaves it alone), off the parent as loaded, named by its own name.
//! helm 4 copies subcharts with their parent, so its paths follow the tree
//! and this module does not apply.
//!
//! This module only computes paths; it does not decide which subcharts
//! exist (`values.rs`) or render anything (`render.rs`).

use std::collections::HashMap;

use super::chart::Chart;

/// One chart of the processed tree, flattened in pre-order.
struct Node {
    parent: Option<usize>,
    id: usize,
    declared: bool,
    /// Its name in the tree (the alias for a copy).
    name: String,
    /// `Chart.yaml`'s name: the loaded chart's own.
    own_name: String,
}

struct Tree {
    nodes: Vec<Node>,
    /// Loaded chart id → the last node of it that helm processed.
    last_processed: HashMap<usize, usize>,
}

/// Sets `full_path` on every chart of the processed tree as helm 3 has it.
pub(super) fn assign(root: &mut Chart) {
    let mut tree = Tree {
        nodes: Vec::new(),
        last_processed: HashMap::new(),
    };
    flatten(root, None, true, &mut tree);
    let mut next = 0;
    set(root, &tree, &mut next);
}

/// Pre-order, as `processDependencyEnabled` recurses: only the subcharts
/// of a chart helm processed (one that lists dependencies) are processed.
fn flatten(c: &Chart, parent: Option<usize>, reached: bool, tree: &mut Tree) {
    let me = tree.nodes.len();
    tree.nodes.push(Node {
        parent,
        id: c.id,
        declared: c.declared,
        name: c.name.clone(),
        own_name: c.meta_str("name"),
    });
    let processed = reached && c.kept.is_some();
    if processed {
        tree.last_processed.insert(c.id, me);
    }
    for sub in &c.dependencies {
        flatten(sub, Some(me), processed, tree);
    }
}

fn set(c: &mut Chart, tree: &Tree, next: &mut usize) {
    c.full_path = Some(node_path(tree, *next));
    *next += 1;
    for sub in &mut c.dependencies {
        set(sub, tree, next);
    }
}

/// The path of a node: a copy hangs off its parent in the tree, a loaded
/// chart off wherever its parent pointer was left.
fn node_path(tree: &Tree, i: usize) -> String {
    let n = &tree.nodes[i];
    match n.parent {
        None => n.name.clone(),
        Some(p) if n.declared => format!("{}/charts/{}", node_path(tree, p), n.name),
        Some(_) => loaded_path(tree, i),
    }
}

/// The path of the loaded chart node `i` is (a copy of), by its own name.
fn loaded_path(tree: &Tree, i: usize) -> String {
    let n = &tree.nodes[i];
    let Some(p) = n.parent else {
        return n.name.clone();
    };
    let parent_id = tree.nodes[p].id;
    let base = match tree.last_processed.get(&parent_id) {
        Some(&last) if !n.declared => node_path(tree, last),
        _ => loaded_path(tree, p),
    };
    format!("{base}/charts/{}", n.own_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::Value;
    use std::collections::BTreeMap;

    fn chart(name: &str, own: &str, declared: bool, lists: bool, deps: Vec<Chart>) -> Chart {
        let mut meta = BTreeMap::new();
        meta.insert("name".to_string(), Value::from(own));
        Chart {
            metadata: Value::map(meta),
            name: name.into(),
            values: Value::map(BTreeMap::new()),
            templates: Default::default(),
            files: Default::default(),
            dependencies: deps,
            schema: None,
            dir: Default::default(),
            id: super::super::chart::next_id(),
            declared,
            kept: lists.then(Vec::new),
            full_path: None,
            links: Vec::new(),
        }
    }

    fn paths(c: &Chart, out: &mut Vec<String>) {
        out.push(c.full_path.clone().unwrap_or_default());
        for d in &c.dependencies {
            paths(d, out);
        }
    }

    #[test]
    fn unlisted_subcharts_hang_off_the_last_copy_processed_or_the_loaded_chart() {
        // `lists` has an unlisted subchart and is aliased twice; `plain`
        // lists nothing, so its subchart keeps the loaded parent's name.
        let extra = chart("extra", "extra", false, false, vec![]);
        let a = chart("a", "lists", true, true, vec![extra]);
        let mut b = a.clone();
        b.name = "b".into();
        let grand = chart("grand", "grand", false, false, vec![]);
        let plain = chart("p2", "plain", true, false, vec![grand]);
        let mut top = chart("top", "top", false, true, vec![a, b, plain]);
        assign(&mut top);
        let mut got = Vec::new();
        paths(&top, &mut got);
        assert_eq!(
            got,
            [
                "top",
                "top/charts/a",
                "top/charts/b/charts/extra",
                "top/charts/b",
                "top/charts/b/charts/extra",
                "top/charts/p2",
                "top/charts/plain/charts/grand",
            ]
        );
    }
}
