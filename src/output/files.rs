//! What an environment's output holds: each app's files (one manifest, or
//! one file per resource), and the ownership manifest that records which
//! files hydrate wrote so it prunes only its own.

use std::collections::{BTreeMap, BTreeSet};

use crate::env::{Layout, Rendered};

/// Where the ownership manifest lives in an output.
pub const OWNED_PATH: &str = ".hydrate/owned.json";

/// Files hydrate wrote, by app (paths relative to the output root).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owned {
    /// app → its files.
    pub apps: BTreeMap<String, BTreeSet<String>>,
}

impl Owned {
    /// Reads an ownership manifest; an unreadable one counts as empty
    /// (hydrate then prunes nothing, which is the safe side).
    pub fn parse(bytes: &[u8]) -> Owned {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return Owned::default();
        };
        let mut apps = BTreeMap::new();
        if let Some(map) = v.get("apps").and_then(|a| a.as_object()) {
            for (app, files) in map {
                let files = files
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str())
                    .filter(|f| is_safe_path(f))
                    .map(str::to_string)
                    .collect();
                apps.insert(app.clone(), files);
            }
        }
        Owned { apps }
    }

    /// The manifest's bytes (stable: sorted, pretty, ends with a newline).
    pub fn to_bytes(&self) -> Vec<u8> {
        let v = serde_json::json!({
            "generator": "hydrate",
            "note": "files hydrate wrote here; it deletes only these",
            "apps": self.apps,
        });
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s.into_bytes()
    }
}

/// A relative path that stays inside the output root.
fn is_safe_path(p: &str) -> bool {
    !p.is_empty() && !p.starts_with('/') && !p.split('/').any(|c| c == ".." || c.is_empty())
}

/// The files of one rendered app, relative to the output root.
pub fn app_files(r: &Rendered, layout: Layout) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    match layout {
        Layout::Manifest => {
            out.insert(
                format!("{}/manifest.yaml", r.app),
                r.manifest().into_bytes(),
            );
        }
        Layout::Resources => {
            // helm can print documents that hold only comments: no resource.
            for d in r.documents.iter().filter(|d| !d.kind.is_empty()) {
                let mut name = format!("{}-{}", d.kind.to_ascii_lowercase(), sanitize(&d.name));
                // Same kind and name in two namespaces: keep both apart.
                if r.documents
                    .iter()
                    .filter(|o| o.kind == d.kind && o.name == d.name)
                    .count()
                    > 1
                {
                    name = format!("{}-{}", name, sanitize(&d.namespace));
                }
                out.insert(
                    format!("{}/{name}.yaml", r.app),
                    d.yaml.clone().into_bytes(),
                );
            }
        }
    }
    out
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The output of one environment: the files of the apps rendered this run.
#[derive(Clone, Debug)]
pub struct EnvOutput {
    /// Environment name.
    pub env: String,
    /// app → path → bytes, for the apps rendered this run.
    pub apps: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Every app the environment has now; with `complete`, owned apps not
    /// listed here are pruned.
    pub known_apps: BTreeSet<String>,
    /// Whether every app of the environment was rendered this run.
    pub complete: bool,
}

/// The edits that take an output from its `old` ownership to `out`:
/// path → new content (None: delete), the new ownership, and which apps changed
/// in ownership (a hint; content comparison happens at write time).
pub fn changes(old: &Owned, out: &EnvOutput) -> (BTreeMap<String, Option<Vec<u8>>>, Owned) {
    let mut edits = BTreeMap::new();
    let mut owned = old.clone();
    for (app, files) in &out.apps {
        if let Some(prev) = old.apps.get(app) {
            for stale in prev.iter().filter(|p| !files.contains_key(*p)) {
                edits.insert(stale.clone(), None);
            }
        }
        for (path, bytes) in files {
            edits.insert(path.clone(), Some(bytes.clone()));
        }
        owned
            .apps
            .insert(app.clone(), files.keys().cloned().collect());
    }
    if out.complete {
        let gone: Vec<String> = old
            .apps
            .keys()
            .filter(|a| !out.known_apps.contains(*a))
            .cloned()
            .collect();
        for app in gone {
            for path in old.apps.get(&app).into_iter().flatten() {
                edits.insert(path.clone(), None);
            }
            owned.apps.remove(&app);
        }
    }
    edits.insert(OWNED_PATH.to_string(), Some(owned.to_bytes()));
    (edits, owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(apps: &[(&str, &[&str])], complete: bool) -> EnvOutput {
        EnvOutput {
            env: "dev".into(),
            apps: apps
                .iter()
                .map(|(a, files)| {
                    (
                        a.to_string(),
                        files
                            .iter()
                            .map(|f| (f.to_string(), b"x".to_vec()))
                            .collect(),
                    )
                })
                .collect(),
            known_apps: apps.iter().map(|(a, _)| a.to_string()).collect(),
            complete,
        }
    }

    #[test]
    fn prunes_only_owned_files() {
        let (_, first) = changes(
            &Owned::default(),
            &out(
                &[
                    ("web", &["web/a.yaml", "web/b.yaml"]),
                    ("old", &["old/x.yaml"]),
                ],
                true,
            ),
        );
        let (edits, owned) = changes(&first, &out(&[("web", &["web/a.yaml"])], true));
        assert_eq!(edits.get("web/b.yaml"), Some(&None));
        assert_eq!(edits.get("old/x.yaml"), Some(&None));
        assert!(!owned.apps.contains_key("old"));
        // A partial run (filters, shards) keeps other apps' files.
        let (edits, owned) = changes(
            &first,
            &out(&[("web", &["web/a.yaml", "web/b.yaml"])], false),
        );
        assert!(!edits.contains_key("old/x.yaml"));
        assert!(owned.apps.contains_key("old"));
    }

    #[test]
    fn ownership_round_trips_and_rejects_escapes() {
        let mut o = Owned::default();
        o.apps
            .insert("web".into(), ["web/manifest.yaml".to_string()].into());
        assert_eq!(Owned::parse(&o.to_bytes()), o);
        let evil = br#"{"apps": {"x": ["../../etc/passwd", "/abs", "x/ok.yaml"]}}"#;
        let parsed = Owned::parse(evil);
        assert_eq!(parsed.apps["x"].len(), 1);
    }
}
