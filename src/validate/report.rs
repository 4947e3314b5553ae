//! A validation report as text (one line per finding, compiler style:
//! `file:line: error: env/app: Kind ns/name: path: message`), as JSON
//! (`schemas/validate-output.schema.json`) and as SARIF 2.1.0 (what GitHub
//! code scanning and GitLab read). Formatting only: the CLI prints.

use serde_json::{json, Value};

use super::run::Report;
use super::{Finding, Rule, Severity};

/// One finding as a line.
pub fn text_line(f: &Finding) -> String {
    let at = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("{file}:{line}: "),
        (Some(file), None) => format!("{file}: "),
        _ => String::new(),
    };
    let path = if f.path.is_empty() {
        String::new()
    } else {
        format!("{}: ", f.path)
    };
    format!(
        "{at}{}: {}/{}: {}: {path}{}",
        f.severity.name(),
        f.env,
        f.app,
        f.object(),
        f.message
    )
}

/// The closing line: `2 errors, 1 warning in 14 objects of 3 apps
/// (Kubernetes 1.31)`.
pub fn summary(r: &Report) -> String {
    let errors = r.errors();
    let warnings = r.findings.len() - errors;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let mut versions: Vec<String> = r.versions.iter().map(|(e, v)| format!("{e} {v}")).collect();
    versions.dedup();
    format!(
        "{}, {} in {} of {} (Kubernetes: {})",
        plural(errors, "error"),
        plural(warnings, "warning"),
        plural(r.objects, "object"),
        plural(r.apps, "app"),
        versions.join(", ")
    )
}

/// One finding as JSON (`schemas/validate-output.schema.json`'s
/// `finding`; `diff --output json` uses it too).
pub fn finding_json(f: &Finding) -> Value {
    json!({
        "env": f.env,
        "app": f.app,
        "apiVersion": f.api_version,
        "kind": f.kind,
        "namespace": f.namespace,
        "name": f.name,
        "path": f.path,
        "rule": f.rule.id(),
        "severity": f.severity.name(),
        "message": f.message,
        "file": f.file,
        "line": f.line,
    })
}

/// The report as JSON (`schemas/validate-output.schema.json`).
pub fn json(r: &Report) -> Value {
    let findings: Vec<Value> = r.findings.iter().map(finding_json).collect();
    let envs: serde_json::Map<String, Value> = r
        .versions
        .iter()
        .map(|(e, v)| (e.clone(), json!({ "kubeVersion": v })))
        .collect();
    json!({
        "version": 1,
        "environments": envs,
        "apps": r.apps,
        "objects": r.objects,
        "errors": r.errors(),
        "warnings": r.findings.len() - r.errors(),
        "findings": findings,
    })
}

/// The report as a SARIF 2.1.0 log: one run, one rule per check, one
/// result per finding, located at its file and line when known and always
/// at its logical location `env/app/Kind/namespace/name`.
pub fn sarif(r: &Report) -> Value {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|rule| {
            json!({
                "id": rule.id(),
                "shortDescription": { "text": rule.description() },
                "defaultConfiguration": { "level": default_level(*rule) },
            })
        })
        .collect();
    let results: Vec<Value> = r.findings.iter().map(result).collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "hydrate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn default_level(rule: Rule) -> &'static str {
    match rule {
        Rule::DeprecatedApi | Rule::NoSchema => "warning",
        _ => "error",
    }
}

fn result(f: &Finding) -> Value {
    let index = Rule::ALL.iter().position(|r| *r == f.rule).unwrap_or(0);
    let mut name = format!("{}/{}/{}", f.env, f.app, f.kind);
    if !f.namespace.is_empty() {
        name.push_str(&format!("/{}", f.namespace));
    }
    name.push_str(&format!("/{}", f.name));
    let mut location = json!({
        "logicalLocations": [{ "fullyQualifiedName": name, "kind": "object" }],
    });
    if let Some(file) = &f.file {
        let mut physical = json!({ "artifactLocation": { "uri": file } });
        if let Some(line) = f.line {
            physical["region"] = json!({ "startLine": line });
        }
        location["physicalLocation"] = physical;
    }
    let path = if f.path.is_empty() {
        String::new()
    } else {
        format!("{}: ", f.path)
    };
    json!({
        "ruleId": f.rule.id(),
        "ruleIndex": index,
        "level": match f.severity { Severity::Error => "error", Severity::Warning => "warning" },
        "message": { "text": format!("{}/{}: {}: {path}{}", f.env, f.app, f.object(), f.message) },
        "locations": [location],
        "properties": {
            "env": f.env,
            "app": f.app,
            "apiVersion": f.api_version,
            "path": f.path,
        },
    })
}
