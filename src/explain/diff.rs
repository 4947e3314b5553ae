//! `diff --explain` and the markdown diff's sources: each changed field of
//! an environment comparison with the chain that set it on each side. Each
//! (environment, app) is rendered once with provenance, whatever the
//! number of its changed fields.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::{explain_app, select, source_of, text::field_text, Error, ResourceOrigins, Selection};
use crate::diff::{Comparison, FieldSources};
use crate::env::Environment;
use crate::yaml::Node;

/// The apps explained so far, by (environment, app).
type Explained = BTreeMap<(String, String), Result<Vec<(ResourceOrigins, Arc<Node>)>, Error>>;

/// The fields under `path` of `Kind/name` on `side` (an environment of
/// `envs`; a side that is not one, such as a git revision, has none).
fn fields_at(
    root: &Path,
    envs: &[Environment],
    cache: &mut Explained,
    (side, app): (&str, &str),
    resource: &str,
    path: &str,
) -> Result<Vec<super::FieldOrigin>, Error> {
    let rendered = cache
        .entry((side.to_string(), app.to_string()))
        .or_insert_with(|| explain_app(root, envs, side, app));
    let resources = rendered.as_ref().map_err(|e| match e {
        Error::NotFound(m) => Error::NotFound(m.clone()),
        // Said once per field: its message as it was.
        other => Error::Selection(other.to_string()),
    })?;
    let sel = Selection {
        resource: Some(resource.to_string()),
        field: Some(path.to_string()),
    };
    Ok(select(resources, &sel)?
        .into_iter()
        .flat_map(|r| r.fields)
        .collect())
}

/// The origins of every changed field of `comparisons` between two
/// environments, as text (nothing for a side that is not an environment
/// of `root`, such as a git revision).
pub fn diff_origins(root: &Path, comparisons: &[Comparison]) -> Result<String, Error> {
    let envs = crate::env::load_environments(root)?;
    let mut cache = Explained::new();
    let mut out = String::new();
    for c in comparisons {
        for app in &c.apps {
            for r in &app.resources {
                for change in &r.changes {
                    let path = change.path_text();
                    out.push_str(&format!("{} {}/{} {path}\n", app.app, r.kind, r.name));
                    for (side, name) in [(&c.from, &r.from), (&c.to, &r.to)] {
                        let Some((name, _)) = name else { continue };
                        let resource = format!("{}/{name}", r.kind);
                        let got =
                            fields_at(root, &envs, &mut cache, (side, &app.app), &resource, &path);
                        match got {
                            Ok(fields) => {
                                for f in &fields {
                                    out.push_str(&format!("  {side}:\n"));
                                    out.push_str(&field_text(f, "    "));
                                }
                            }
                            Err(Error::NotFound(_)) => {
                                out.push_str(&format!("  {side}: (no such field)\n"))
                            }
                            Err(e) => out.push_str(&format!("  {side}: ({e})\n")),
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Where each changed field of `comparisons` was set on each side that is
/// an environment of `root`: the `file:line` of [`source_of`] its first
/// field (a change of a whole mapping or list: the first scalar in it).
pub fn field_sources(root: &Path, comparisons: &[Comparison]) -> Result<FieldSources, Error> {
    let envs = crate::env::load_environments(root)?;
    let mut cache = Explained::new();
    let mut out = FieldSources::default();
    for c in comparisons {
        for app in &c.apps {
            for r in &app.resources {
                for change in r.changes.iter().chain(&r.expected) {
                    let path = change.path_text();
                    for (side, name) in [(&c.from, &r.from), (&c.to, &r.to)] {
                        let Some((name, _)) = name else { continue };
                        if !envs.iter().any(|e| &e.name == side) {
                            continue;
                        }
                        let resource = format!("{}/{name}", r.kind);
                        let Ok(fields) =
                            fields_at(root, &envs, &mut cache, (side, &app.app), &resource, &path)
                        else {
                            continue;
                        };
                        if let Some(at) = fields.iter().find_map(source_of) {
                            out.insert(side, &app.app, &resource, &path, at.display());
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}
