//! `values.schema.json` validation (helm's `ValidateAgainstSchema`): the
//! chart's schema checks its values, each subchart's schema checks its
//! own section, and all failures are reported together, with helm's
//! heading. JSON Schema itself is `boon`'s.

use super::chart::Chart;
use super::Error;
use crate::gotmpl::Value;

/// A template value as JSON (what helm's validator sees after `json.Marshal`).
fn to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Invalid | Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) | Value::Int64(i) => J::from(*i),
        Value::Uint8(u) => J::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Str(s) => J::String(s.to_string()),
        Value::Bytes(b) => J::String(crate::gotmpl::golib::b64_encode(b)),
        Value::List(l) => J::Array(l.items.iter().map(to_json).collect()),
        Value::Map(m) => J::Object(
            m.entries()
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Object(o) => o.marshal().map_or(J::Null, |v| to_json(&v)),
    }
}

/// Validates one chart's values; returns the failure lines.
fn check_one(schema: &[u8], values: &Value) -> Result<Vec<String>, String> {
    let json: serde_json::Value =
        serde_json::from_slice(schema).map_err(|e| format!("unable to parse schema: {e}"))?;
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V7);
    let loc = "file:///values.schema.json";
    compiler
        .add_resource(loc, json)
        .map_err(|e| e.to_string())?;
    let mut schemas = boon::Schemas::new();
    let idx = compiler
        .compile(loc, &mut schemas)
        .map_err(|e| e.to_string())?;
    match schemas.validate(&to_json(values), idx) {
        Ok(()) => Ok(Vec::new()),
        Err(e) => Ok(format!("{e:#}")
            .lines()
            .map(|l| format!("- {}", l.trim()))
            .collect()),
    }
}

fn walk(chart: &Chart, values: &Value, out: &mut String) -> Result<(), Error> {
    if let Some(schema) = &chart.schema {
        let lines = check_one(schema, values).map_err(Error::Values)?;
        if !lines.is_empty() {
            out.push_str(&format!("{}:\n{}\n", chart.name, lines.join("\n")));
        }
    }
    for sub in &chart.dependencies {
        let section = match values {
            Value::Map(m) => m.get(&sub.name),
            _ => None,
        };
        match section {
            Some(v @ Value::Map(_)) => walk(sub, &v, out)?,
            _ => continue,
        }
    }
    Ok(())
}

/// `chartutil.ValidateAgainstSchema`.
pub fn validate(chart: &Chart, values: &Value) -> Result<(), Error> {
    let mut out = String::new();
    walk(chart, values, &mut out)?;
    if out.is_empty() {
        return Ok(());
    }
    Err(Error::Values(format!(
        "values don't meet the specifications of the schema(s) in the following chart(s):\n{out}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::convert::parse_yaml;

    #[test]
    fn schema_failures_are_reported() {
        let schema =
            br#"{"type":"object","required":["name"],"properties":{"port":{"type":"integer"}}}"#;
        let ok = parse_yaml("name: x\nport: 80").unwrap_or(Value::Nil);
        assert_eq!(check_one(schema, &ok), Ok(Vec::new()));
        let bad = parse_yaml("port: 8.5").unwrap_or(Value::Nil);
        let lines = check_one(schema, &bad).unwrap_or_default();
        assert!(!lines.is_empty());
        assert!(check_one(b"{nope", &ok).is_err());
    }
}
