//! `hydrate diff`'s engine: matches the resources of two sides (two
//! environments, or one environment at two revisions) by identity, compares
//! matched resources field by field (lists with a strategic-merge key by
//! key, multi-line strings as unified text diffs), applies ignore rules and
//! `expected:` paths, masks secrets, and prints the result (human, brief,
//! JSON, markdown).
//!
//! It must not render: callers render (or read the committed output) and
//! hand it [`Resource`]s, built from `env::Rendered` by [`from_rendered`].

mod identity;
mod input;
mod json;
mod markdown;
mod mask;
mod rules;
mod sources;
mod text;
mod tree;
mod validity;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

pub use input::{from_manifest, from_rendered};
pub use json::to_json;
pub use markdown::to_markdown;
pub(crate) use markdown::to_markdown_with;
pub use rules::Rules;
pub(crate) use sources::FieldSources;
pub(crate) use text::to_brief;
pub use text::{to_human, Style};
pub use tree::{Change, ChangeKind, Seg};
pub use validity::Validity;

use rayon::prelude::*;

use crate::validate::Finding;
use crate::yaml::Node;

/// A diff failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An ignore or expected rule cannot be used.
    #[error("{}:{line}: {message}", file.display())]
    Rule {
        /// The environment file (or `--ignore`).
        file: PathBuf,
        /// 1-based line (0 for the command line).
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A rendered document cannot be read back.
    #[error("{origin}: {message}")]
    Document {
        /// `env/app` or the file it came from.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

/// One resource of one side, as diff sees it.
#[derive(Clone, Debug)]
pub struct Resource {
    /// The app it belongs to.
    pub app: String,
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// `metadata.namespace` (may be empty).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// The object.
    pub node: Arc<Node>,
}

impl Resource {
    /// `group/version` or `version`, as `apiVersion` prints it.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// One side of a comparison: a label (an environment, `env@ref`) and the
/// resources of its apps.
#[derive(Clone, Debug, Default)]
pub struct Side {
    /// What to call it in reports.
    pub label: String,
    /// Every app of the side, even one with no resources.
    pub apps: Vec<String>,
    /// The resources, in output order.
    pub resources: Vec<Resource>,
    /// The resources' validation findings, when the side was validated.
    pub findings: Option<Vec<Finding>>,
}

/// What the two sides are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Two environments: identity ignores the namespace and the
    /// environment's name prefix and suffix.
    #[default]
    Environments,
    /// One environment at two revisions: a renamed or moved resource is
    /// removed and added, as it would be in the cluster.
    Revisions,
}

/// How to compare.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Environments or revisions.
    pub mode: Mode,
    /// Ignore rules, expected paths, secret marks.
    pub rules: Rules,
    /// `--ignore-profile helm`: drop chart/version labels and `checksum/*`
    /// annotations.
    pub helm_profile: bool,
    /// `--show-secrets`.
    pub show_secrets: bool,
}

/// How a resource or an app differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Only on the `to` side.
    Added,
    /// Only on the `from` side.
    Removed,
    /// On both, with differences (or only expected ones).
    Changed,
}

/// One resource's differences.
#[derive(Clone, Debug)]
pub struct ResourceDiff {
    /// Added, removed or changed.
    pub status: Status,
    /// API group.
    pub group: String,
    /// API version (the `to` side's when both exist).
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The name with prefix, suffix and generator hash taken off.
    pub name: String,
    /// Name and namespace on the `from` side.
    pub from: Option<(String, String)>,
    /// Name and namespace on the `to` side.
    pub to: Option<(String, String)>,
    /// Field changes that count.
    pub changes: Vec<Change>,
    /// Field changes under `expected:` paths.
    pub expected: Vec<Change>,
    /// The object (the side it exists on) for added and removed resources.
    pub node: Option<Arc<Node>>,
}

impl ResourceDiff {
    /// `apps/v1/Deployment`.
    pub fn type_name(&self) -> String {
        if self.group.is_empty() {
            format!("{}/{}", self.version, self.kind)
        } else {
            format!("{}/{}/{}", self.group, self.version, self.kind)
        }
    }

    /// Whether it counts as drift (not only expected differences).
    pub fn is_drift(&self) -> bool {
        self.status != Status::Changed || !self.changes.is_empty()
    }
}

/// One app's differences.
#[derive(Clone, Debug)]
pub struct AppDiff {
    /// The app.
    pub app: String,
    /// `Added`/`Removed` when the app exists on one side only.
    pub status: Status,
    /// Its resources that differ, in a stable order.
    pub resources: Vec<ResourceDiff>,
}

/// Two sides compared.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The `from` side's label.
    pub from: String,
    /// The `to` side's label.
    pub to: String,
    /// Apps that differ, by name.
    pub apps: Vec<AppDiff>,
    /// The validation findings the change introduces and fixes.
    pub validity: Validity,
}

/// Counts over comparisons.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Resources only on the `to` side.
    pub added: usize,
    /// Resources only on the `from` side.
    pub removed: usize,
    /// Resources with changes that count.
    pub changed: usize,
    /// Field changes that count.
    pub fields: usize,
    /// Field changes under `expected:` paths.
    pub expected: usize,
}

impl Summary {
    /// Counts `comparisons`.
    pub fn of(comparisons: &[Comparison]) -> Summary {
        let mut s = Summary::default();
        for r in comparisons
            .iter()
            .flat_map(|c| &c.apps)
            .flat_map(|a| &a.resources)
        {
            match r.status {
                Status::Added => s.added += 1,
                Status::Removed => s.removed += 1,
                Status::Changed if !r.changes.is_empty() => s.changed += 1,
                Status::Changed => {}
            }
            s.fields += r.changes.len();
            s.expected += r.expected.len();
        }
        s
    }

    /// Whether anything counts as drift (diff(1)'s exit status 1).
    pub fn has_differences(&self) -> bool {
        self.added + self.removed + self.changed > 0
    }
}

/// Compares two sides app by app.
pub fn compare(from: &Side, to: &Side, settings: &Settings) -> Comparison {
    let mut apps: Vec<&str> = from
        .apps
        .iter()
        .chain(&to.apps)
        .map(String::as_str)
        .collect();
    apps.sort_unstable();
    apps.dedup();
    let (from_apps, to_apps) = (by_app(from), by_app(to));
    let from_set: HashSet<&str> = from.apps.iter().map(String::as_str).collect();
    let to_set: HashSet<&str> = to.apps.iter().map(String::as_str).collect();
    let (from_findings, to_findings) = (validity::by_app(from), validity::by_app(to));
    // Apps are independent: compared in parallel, collected in name order.
    let per_app: Vec<(Option<AppDiff>, Vec<Finding>, Vec<Finding>)> = apps
        .par_iter()
        .map(|&app| {
            let none = Vec::new();
            let a = from_apps.get(app).unwrap_or(&none);
            let b = to_apps.get(app).unwrap_or(&none);
            let status = match (from_set.contains(app), to_set.contains(app)) {
                (true, false) => Status::Removed,
                (false, true) => Status::Added,
                _ => Status::Changed,
            };
            let findings = (
                from_findings.get(app).cloned().unwrap_or_default(),
                to_findings.get(app).cloned().unwrap_or_default(),
            );
            let (resources, introduced, fixed) = compare_app(a, b, findings, settings);
            let diff = (status != Status::Changed || !resources.is_empty()).then(|| AppDiff {
                app: app.to_string(),
                status,
                resources,
            });
            (diff, introduced, fixed)
        })
        .collect();
    let mut validity = Validity {
        checked: from.findings.is_some() && to.findings.is_some(),
        ..Validity::default()
    };
    let mut out = Vec::new();
    for (diff, introduced, fixed) in per_app {
        out.extend(diff);
        if validity.checked {
            validity.introduced.extend(introduced);
            validity.fixed.extend(fixed);
        }
    }
    // Errors first (a table stops at a limit); each severity in app order.
    validity.introduced.sort_by_key(|f| f.severity);
    validity.fixed.sort_by_key(|f| f.severity);
    Comparison {
        from: from.label.clone(),
        to: to.label.clone(),
        apps: out,
        validity,
    }
}

fn by_app(side: &Side) -> HashMap<&str, Vec<&Resource>> {
    let mut m: HashMap<&str, Vec<&Resource>> = HashMap::new();
    for r in &side.resources {
        m.entry(r.app.as_str()).or_default().push(r);
    }
    m
}

/// One app's resource differences, then the findings it introduces and
/// fixes.
fn compare_app(
    a: &[&Resource],
    b: &[&Resource],
    (from_findings, to_findings): (Vec<&Finding>, Vec<&Finding>),
    settings: &Settings,
) -> (Vec<ResourceDiff>, Vec<Finding>, Vec<Finding>) {
    let matching = identity::match_resources(a, b, settings.mode);
    let (introduced, fixed) = validity::of_app(
        &validity::AppFindings {
            from: from_findings,
            to: to_findings,
            names_from: &matching.names_from,
            names_to: &matching.names_to,
        },
        settings.mode,
    );
    let mut out = Vec::new();
    for pair in &matching.pairs {
        let prepare = |r: &Resource, other: Option<&Resource>| {
            let mut node = Arc::clone(&r.node);
            settings.rules.normalise(&mut node, r, other, &pair.name);
            if settings.helm_profile {
                rules::helm_profile(Arc::make_mut(&mut node));
            }
            let kind_secret = mask::is_secret(r);
            let marked = settings.rules.is_secret(r, &pair.name);
            if !settings.show_secrets && (kind_secret || marked) {
                mask::mask(Arc::make_mut(&mut node), kind_secret);
            }
            node
        };
        let d = match (pair.from, pair.to) {
            (Some(x), Some(y)) => {
                let (na, nb) = (prepare(x, Some(y)), prepare(y, Some(x)));
                let names = (&matching.names_from, &matching.names_to);
                let all = tree::diff(&na, &nb, y, settings.mode, names);
                if all.is_empty() {
                    continue;
                }
                let expected_paths = settings.rules.expected_paths(x, y, &pair.name, &na, &nb);
                let (expected, changes): (Vec<Change>, Vec<Change>) =
                    all.into_iter().partition(|c| expected_paths.covers(c));
                ResourceDiff {
                    status: Status::Changed,
                    group: y.group.clone(),
                    version: y.version.clone(),
                    kind: y.kind.clone(),
                    name: pair.name.clone(),
                    from: Some((x.name.clone(), x.namespace.clone())),
                    to: Some((y.name.clone(), y.namespace.clone())),
                    changes,
                    expected,
                    node: None,
                }
            }
            (Some(r), None) | (None, Some(r)) => {
                let added = pair.to.is_some();
                let side = Some((r.name.clone(), r.namespace.clone()));
                ResourceDiff {
                    status: if added {
                        Status::Added
                    } else {
                        Status::Removed
                    },
                    group: r.group.clone(),
                    version: r.version.clone(),
                    kind: r.kind.clone(),
                    name: pair.name.clone(),
                    from: if added { None } else { side.clone() },
                    to: if added { side } else { None },
                    changes: Vec::new(),
                    expected: Vec::new(),
                    node: Some(prepare(r, None)),
                }
            }
            (None, None) => continue,
        };
        out.push(d);
    }
    out.sort_by(|x, y| {
        (&x.kind, &x.name, &x.group, x.status as u8).cmp(&(
            &y.kind,
            &y.name,
            &y.group,
            y.status as u8,
        ))
    });
    (out, introduced, fixed)
}
