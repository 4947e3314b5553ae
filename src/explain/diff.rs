//! `diff --explain`: each changed field of an environment comparison with
//! the chain that set it on each side.

use std::path::Path;

use super::{explain_in, text::field_text, Selection};
use crate::diff::Comparison;

/// The origins of every changed field of `comparisons` between two
/// environments, as text (nothing for a side that is not an environment
/// of `root`, such as a git revision).
pub fn diff_origins(root: &Path, comparisons: &[Comparison]) -> Result<String, super::Error> {
    let envs = crate::env::load_environments(root)?;
    let mut out = String::new();
    for c in comparisons {
        for app in &c.apps {
            for r in &app.resources {
                for change in &r.changes {
                    let path = change.path_text();
                    out.push_str(&format!("{} {}/{} {path}\n", app.app, r.kind, r.name));
                    for (side, name) in [(&c.from, &r.from), (&c.to, &r.to)] {
                        let Some((name, _)) = name else { continue };
                        let sel = Selection {
                            resource: Some(format!("{}/{name}", r.kind)),
                            field: Some(path.clone()),
                        };
                        match explain_in(root, &envs, side, &app.app, &sel) {
                            Ok(e) => {
                                for f in e.resources.iter().flat_map(|r| &r.fields) {
                                    out.push_str(&format!("  {side}:\n"));
                                    out.push_str(&field_text(f, "    "));
                                }
                            }
                            Err(super::Error::NotFound(_)) => {
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
