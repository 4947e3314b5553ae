//! What a change makes invalid, and what it fixes: the validation findings
//! of the `to` side that the `from` side does not have, and the reverse.
//!
//! A finding is identified as its resource is (see `identity`): by app,
//! API group, kind and identity name (between environments without the
//! namespace and the environments' name affixes), then by field path,
//! rule and message. So the same invalid field in `staging-web` and
//! `prod-web` is neither introduced nor fixed, while a field that is
//! invalid under production's Kubernetes version only is introduced. It
//! validates nothing itself: the caller hands each [`Side`] its findings.

use std::collections::{HashMap, HashSet};

use super::{Mode, Side};
use crate::validate::{Finding, Severity};

/// The findings a comparison introduces and fixes.
#[derive(Clone, Debug, Default)]
pub struct Validity {
    /// Whether both sides were validated (otherwise nothing is known).
    pub checked: bool,
    /// On the `to` side only, sorted as `validate` sorts them.
    pub introduced: Vec<Finding>,
    /// On the `from` side only.
    pub fixed: Vec<Finding>,
}

impl Validity {
    /// Whether the change neither introduces nor fixes a finding.
    pub fn is_empty(&self) -> bool {
        self.introduced.is_empty() && self.fixed.is_empty()
    }

    /// `makes 2 objects invalid (and adds 3 warnings)`, `adds 1 warning`:
    /// what `introduced` findings do.
    pub fn headline(introduced: &[Finding]) -> String {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let warnings = introduced
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        match (Self::invalid_objects(introduced), warnings) {
            (0, w) => format!("adds {}", plural(w, "warning")),
            (n, 0) => format!("makes {} invalid", plural(n, "object")),
            (n, w) => format!(
                "makes {} invalid (and adds {})",
                plural(n, "object"),
                plural(w, "warning")
            ),
        }
    }

    /// Objects with at least one error among `findings`.
    pub fn invalid_objects(findings: &[Finding]) -> usize {
        findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| {
                (
                    &f.env,
                    &f.app,
                    &f.api_version,
                    &f.kind,
                    &f.namespace,
                    &f.name,
                )
            })
            .collect::<HashSet<_>>()
            .len()
    }
}

/// A finding's identity across the two sides.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key<'a> {
    group: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: &'a str,
    path: &'a str,
    rule: crate::validate::Rule,
    message: &'a str,
}

fn key<'a>(f: &'a Finding, names: &'a HashMap<String, String>, mode: Mode) -> Key<'a> {
    let group = f.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let name = names.get(&f.name).map_or_else(
        || super::identity::strip_hash(&f.kind, &f.name),
        String::as_str,
    );
    Key {
        group,
        kind: &f.kind,
        name,
        namespace: match mode {
            Mode::Revisions => &f.namespace,
            Mode::Environments => "",
        },
        path: &f.path,
        rule: f.rule,
        message: &f.message,
    }
}

/// The findings of one app on each side, and each side's names mapped to
/// identity names (`identity::Matching`).
pub(crate) struct AppFindings<'a> {
    pub from: Vec<&'a Finding>,
    pub to: Vec<&'a Finding>,
    pub names_from: &'a HashMap<String, String>,
    pub names_to: &'a HashMap<String, String>,
}

/// (introduced, fixed) for one app.
pub(crate) fn of_app(a: &AppFindings, mode: Mode) -> (Vec<Finding>, Vec<Finding>) {
    let before: HashSet<Key> = a.from.iter().map(|f| key(f, a.names_from, mode)).collect();
    let after: HashSet<Key> = a.to.iter().map(|f| key(f, a.names_to, mode)).collect();
    let introduced =
        a.to.iter()
            .filter(|f| !before.contains(&key(f, a.names_to, mode)))
            .map(|f| (*f).clone())
            .collect();
    let fixed = a
        .from
        .iter()
        .filter(|f| !after.contains(&key(f, a.names_from, mode)))
        .map(|f| (*f).clone())
        .collect();
    (introduced, fixed)
}

/// A side's findings by app (empty when it was not validated).
pub(crate) fn by_app(side: &Side) -> HashMap<&str, Vec<&Finding>> {
    let mut m: HashMap<&str, Vec<&Finding>> = HashMap::new();
    for f in side.findings.iter().flatten() {
        m.entry(f.app.as_str()).or_default().push(f);
    }
    m
}
