//! `--output json`: a stable shape, documented by
//! `schemas/diff-output.schema.json` (bump `version` when it changes).

use serde_json::{json, Value as J};

use super::text::unified;
use super::{Change, ChangeKind, Comparison, ResourceDiff, Status, Summary};

fn status(s: Status) -> &'static str {
    match s {
        Status::Added => "added",
        Status::Removed => "removed",
        Status::Changed => "changed",
    }
}

fn change(c: &Change) -> J {
    let mut v = json!({ "path": c.path_text(), "pointer": c.pointer() });
    let (op, from, to) = match &c.kind {
        ChangeKind::Changed { from, to } => (
            "changed",
            crate::yaml::to_json(from),
            crate::yaml::to_json(to),
        ),
        ChangeKind::Added(n) => ("added", J::Null, crate::yaml::to_json(n)),
        ChangeKind::Removed(n) => ("removed", crate::yaml::to_json(n), J::Null),
        ChangeKind::Text { from, to } => {
            v["textDiff"] = J::String(unified(from, to).join("\n") + "\n");
            ("changed", J::String(from.clone()), J::String(to.clone()))
        }
    };
    v["op"] = J::String(op.into());
    v["from"] = from;
    v["to"] = to;
    v
}

fn side(s: &Option<(String, String)>) -> J {
    match s {
        Some((name, namespace)) => json!({ "name": name, "namespace": namespace }),
        None => J::Null,
    }
}

fn resource(r: &ResourceDiff) -> J {
    json!({
        "status": status(r.status),
        "group": r.group,
        "version": r.version,
        "kind": r.kind,
        "name": r.name,
        "from": side(&r.from),
        "to": side(&r.to),
        "changes": r.changes.iter().map(change).collect::<Vec<_>>(),
        "expected": r.expected.iter().map(change).collect::<Vec<_>>(),
    })
}

/// The JSON document for a run.
pub fn to_json(comparisons: &[Comparison]) -> J {
    let s = Summary::of(comparisons);
    let comps: Vec<J> = comparisons
        .iter()
        .map(|c| {
            let apps: Vec<J> = c
                .apps
                .iter()
                .map(|a| {
                    json!({
                        "app": a.app,
                        "status": status(a.status),
                        "resources": a.resources.iter().map(resource).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let mut v = json!({ "from": c.from, "to": c.to, "apps": apps });
            if c.validity.checked {
                let list = |fs: &[crate::validate::Finding]| -> Vec<J> {
                    fs.iter()
                        .map(crate::validate::report::finding_json)
                        .collect()
                };
                v["validity"] = json!({
                    "introduced": list(&c.validity.introduced),
                    "fixed": list(&c.validity.fixed),
                });
            }
            v
        })
        .collect();
    json!({
        "version": 1,
        "differences": s.has_differences(),
        "summary": {
            "added": s.added,
            "removed": s.removed,
            "changed": s.changed,
            "fields": s.fields,
            "expected": s.expected,
        },
        "comparisons": comps,
    })
}
