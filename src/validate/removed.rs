//! Removed and deprecated Kubernetes APIs: the table in
//! `schemas/validation/removed-apis.txt` (the Kubernetes deprecation
//! guide), read at compile time, looked up by apiVersion, kind and the
//! environment's Kubernetes version.

use super::bundle::minor_number;
use super::Rule;

static TABLE: &str = include_str!("../../schemas/validation/removed-apis.txt");

/// One row of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedApi {
    /// `extensions/v1beta1`.
    pub api_version: &'static str,
    /// `Ingress`.
    pub kind: &'static str,
    /// Deprecated in this minor (`1.14`), when known.
    pub deprecated_in: Option<&'static str>,
    /// No longer served from this minor (`1.22`); None: still served.
    pub removed_in: Option<&'static str>,
    /// What to use instead (None: nothing replaces it).
    pub replacement: Option<String>,
}

/// Every row, read once.
pub fn table() -> &'static [RemovedApi] {
    static ROWS: std::sync::OnceLock<Vec<RemovedApi>> = std::sync::OnceLock::new();
    ROWS.get_or_init(read)
}

fn read() -> Vec<RemovedApi> {
    let opt = |s: &'static str| (s != "-").then_some(s);
    TABLE
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let api_version = f.next()?;
            let kind = f.next()?;
            let deprecated_in = opt(f.next()?);
            let removed_in = opt(f.next()?);
            let rest: Vec<&str> = f.collect();
            let replacement = (!rest.is_empty() && rest != ["-"]).then(|| rest.join(" "));
            Some(RemovedApi {
                api_version,
                kind,
                deprecated_in,
                removed_in,
                replacement,
            })
        })
        .collect()
}

/// At Kubernetes `version`: [`Rule::RemovedApi`] with
/// `extensions/v1beta1 Ingress: removed in 1.22, use networking.k8s.io/v1`,
/// or [`Rule::DeprecatedApi`] when it is deprecated and still served.
pub fn lookup(api_version: &str, kind: &str, version: &str) -> Option<(Rule, String)> {
    let now = minor_number(version)?;
    let row = table()
        .iter()
        .find(|r| r.api_version == api_version && r.kind == kind)?;
    let at = |v: Option<&str>| v.and_then(minor_number).is_some_and(|m| m <= now);
    let use_ = row
        .replacement
        .as_deref()
        .map_or(", with no replacement".to_string(), |r| {
            format!(", use {r}")
        });
    if at(row.removed_in) {
        let removed = row.removed_in.unwrap_or_default();
        return Some((
            Rule::RemovedApi,
            format!("{api_version} {kind}: removed in {removed}{use_}"),
        ));
    }
    if at(row.deprecated_in) {
        let deprecated = row.deprecated_in.unwrap_or_default();
        let removal = row
            .removed_in
            .map(|r| format!(", removed in {r}"))
            .unwrap_or_default();
        return Some((
            Rule::DeprecatedApi,
            format!("{api_version} {kind}: deprecated in {deprecated}{removal}{use_}"),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extensions_ingress_is_removed_in_1_22() {
        assert_eq!(
            lookup("extensions/v1beta1", "Ingress", "1.25"),
            Some((
                Rule::RemovedApi,
                "extensions/v1beta1 Ingress: removed in 1.22, use networking.k8s.io/v1".into()
            ))
        );
        assert_eq!(lookup("networking.k8s.io/v1", "Ingress", "1.25"), None);
    }

    #[test]
    fn deprecated_until_removed() {
        let (rule, message) =
            lookup("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.30").unwrap();
        assert_eq!(rule, Rule::DeprecatedApi);
        assert!(
            message.ends_with(
                "deprecated in 1.29, removed in 1.32, use flowcontrol.apiserver.k8s.io/v1"
            ),
            "{message}"
        );
        assert_eq!(
            lookup("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.28"),
            None
        );
        assert_eq!(
            lookup("v1", "Endpoints", "1.33").map(|r| r.0),
            Some(Rule::DeprecatedApi)
        );
    }

    #[test]
    fn every_row_is_read() {
        let t = table();
        assert!(t.len() > 40);
        assert!(t.iter().all(|r| r.removed_in.or(r.deprecated_in).is_some()));
        let psp = t
            .iter()
            .find(|r| r.api_version == "policy/v1beta1" && r.kind == "PodSecurityPolicy");
        assert_eq!(psp.and_then(|r| r.replacement.clone()), None);
    }
}
