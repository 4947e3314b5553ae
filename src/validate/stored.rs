//! A render's first-pass findings as the render cache keeps them beside
//! the render (`env::Cache::store_findings`), so validation on a warm cache
//! checks nothing again that has not changed: the findings against the
//! built-in schemas and the removed-API table depend only on the rendered
//! objects (the render's key), the Kubernetes version (the [`tag`]) and
//! the schemas (compiled in, so covered by the build in the render's key).
//!
//! Custom resources are not stored: they are checked against the CRDs of
//! every render of the run, which any app can change, and strictness only
//! matters for them. They are re-checked each run, parsed from their
//! printed text; so are the CRDs collected. Located findings are stored
//! with their file and line, so a warm run does not trace again.

use serde_json::{json, Value};

use super::{Finding, Rule, Seg, Severity};

/// Bumped when the stored shape or the first pass's checks change in a way
/// the build does not show (it always does: the tag is belt and braces).
const FORMAT: &str = "hydrate validate findings 1";

/// What findings of an environment validated at `kube_version` are stored
/// under.
pub fn tag(kube_version: &str) -> String {
    format!("{FORMAT}\0{kube_version}")
}

fn seg(s: &Seg) -> Value {
    match s {
        Seg::Key(k) => json!(["k", k]),
        Seg::Index(i) => json!(["i", i]),
        Seg::Item { key, value, index } => json!(["m", key, value, index]),
    }
}

fn seg_of(v: &Value) -> Option<Seg> {
    let a = v.as_array()?;
    let index = |v: Option<&Value>| v?.as_u64().and_then(|i| usize::try_from(i).ok());
    let text = |v: Option<&Value>| v?.as_str().map(str::to_string);
    match a.first()?.as_str()? {
        "k" => Some(Seg::Key(text(a.get(1))?)),
        "i" => Some(Seg::Index(index(a.get(1))?)),
        "m" => Some(Seg::Item {
            key: text(a.get(1))?,
            value: text(a.get(2))?,
            index: index(a.get(3))?,
        }),
        _ => None,
    }
}

/// The findings of one render (its environment and app are the render's).
pub fn encode(findings: &[&Finding]) -> Vec<u8> {
    let list: Vec<Value> = findings
        .iter()
        .map(|f| {
            json!({
                "apiVersion": f.api_version,
                "kind": f.kind,
                "namespace": f.namespace,
                "name": f.name,
                "path": f.path,
                "at": f.at.iter().map(seg).collect::<Vec<_>>(),
                "rule": f.rule.id(),
                "severity": f.severity.name(),
                "message": f.message,
                "file": f.file,
                "line": f.line,
            })
        })
        .collect();
    Value::Array(list).to_string().into_bytes()
}

/// What [`encode`] wrote for the render of `env`/`app`; `None` when it is
/// not that (the caller then validates the render).
pub fn decode(bytes: &[u8], env: &str, app: &str) -> Option<Vec<Finding>> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    v.as_array()?.iter().map(|f| finding(f, env, app)).collect()
}

fn finding(f: &Value, env: &str, app: &str) -> Option<Finding> {
    let text = |k: &str| f.get(k)?.as_str().map(str::to_string);
    let rule = text("rule")?;
    let severity = match text("severity")?.as_str() {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    let line = match f.get("line")? {
        Value::Null => None,
        l => Some(u32::try_from(l.as_u64()?).ok()?),
    };
    Some(Finding {
        env: env.to_string(),
        app: app.to_string(),
        api_version: text("apiVersion")?,
        kind: text("kind")?,
        namespace: text("namespace")?,
        name: text("name")?,
        path: text("path")?,
        at: f
            .get("at")?
            .as_array()?
            .iter()
            .map(seg_of)
            .collect::<Option<_>>()?,
        rule: Rule::ALL.into_iter().find(|r| r.id() == rule)?,
        severity,
        message: text("message")?,
        file: match f.get("file")? {
            Value::Null => None,
            v => Some(v.as_str()?.to_string()),
        },
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_come_back_as_they_were_stored() {
        let f = Finding {
            env: "staging".into(),
            app: "shop".into(),
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: "shop".into(),
            name: "api".into(),
            path: "spec.template.spec.containers[name=api].imagePullPolcy".into(),
            at: vec![
                Seg::Key("spec".into()),
                Seg::Item {
                    key: "name".into(),
                    value: "api".into(),
                    index: 0,
                },
                Seg::Index(3),
            ],
            rule: Rule::UnknownField,
            severity: Severity::Error,
            message: "unknown field \"imagePullPolcy\"".into(),
            file: Some("apps/shop/deployment.yaml".into()),
            line: Some(18),
        };
        let mut warning = f.clone();
        (warning.severity, warning.rule, warning.file, warning.line) =
            (Severity::Warning, Rule::DeprecatedApi, None, None);
        let bytes = encode(&[&f, &warning]);
        assert_eq!(
            decode(&bytes, "staging", "shop"),
            Some(vec![f.clone(), warning])
        );
        // Findings are the render's: another app's name is taken, not read.
        let other = decode(&bytes, "prod", "web").unwrap_or_default();
        assert_eq!(other.first().map(|f| f.env.as_str()), Some("prod"));
        assert_eq!(decode(b"[{\"rule\": \"bogus\"}]", "a", "b"), None);
        assert_eq!(decode(b"not json", "a", "b"), None);
    }
}
