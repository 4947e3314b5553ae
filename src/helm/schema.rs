//! `values.schema.json` validation (helm's `ValidateAgainstSchema`): the
//! chart's schema checks its values, each subchart's schema checks its
//! own section, and all failures are reported together, with helm's
//! heading. JSON Schema itself is `boon`'s; each failure is worded as the
//! validator of the helm being matched words it: helm 3's
//! xeipuuv/gojsonschema (`- FIELD: DESCRIPTION`, [`gojsonschema_lines`])
//! or helm 4's santhosh-tekuri/jsonschema v6 (`- at 'POINTER': MESSAGE`,
//! [`jsonschema_v6_lines`]).

use std::borrow::Cow;

use boon::{ErrorKind, InstanceToken, ValidationError};

use super::chart::Chart;
use super::version::HelmVersion;
use super::Error;
use crate::gotmpl::fmt::quote;
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
fn check_one(schema: &[u8], values: &Value, version: HelmVersion) -> Result<Vec<String>, String> {
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
    let instance = to_json(values);
    match schemas.validate(&instance, idx) {
        Ok(()) => Ok(Vec::new()),
        Err(e) => Ok(match version {
            HelmVersion::V3 => gojsonschema_lines(&e, &instance),
            HelmVersion::V4 => jsonschema_v6_lines(&e),
        }),
    }
}

/// A JSON number as Go's `%v` prints a `float64` (jsonschema v6 converts
/// its `big.Rat`s with `Float64()`).
fn float_v(n: &serde_json::Number) -> String {
    crate::gotmpl::fmt::to_string(&Value::Float(n.as_f64().unwrap_or_default()))
}

/// A JSON number as gojsonschema's messages print it: a `big.Float`
/// through `String()` (`%.10g`).
fn float_g10(n: &serde_json::Number) -> String {
    let x = Value::Float(n.as_f64().unwrap_or_default());
    crate::gotmpl::fmt::sprintf("%.10g", &[x])
}

/// jsonschema v6's `quote`: Go's `%q` inside single quotes, `"` bare and
/// `'` escaped.
fn v6_quote(s: &str) -> String {
    let q = quote(s).replace("\\\"", "\"").replace('\'', "\\'");
    let inner = q
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(&q);
    format!("'{inner}'")
}

/// jsonschema v6's `display` of a primitive value.
fn v6_display(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => v6_quote(s),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => "value".into(),
        serde_json::Value::Number(n) => float_v(n),
        serde_json::Value::Null => "<nil>".into(),
        serde_json::Value::Bool(b) => b.to_string(),
    }
}

fn v6_join<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    items
        .into_iter()
        .map(v6_quote)
        .collect::<Vec<_>>()
        .join(", ")
}

fn primitive(v: &serde_json::Value) -> bool {
    !matches!(
        v,
        serde_json::Value::Array(_) | serde_json::Value::Object(_)
    )
}

/// jsonschema v6's `ErrorKind.LocalizedString` (English), per kind.
fn v6_message(kind: &ErrorKind<'_, '_>) -> String {
    use ErrorKind as K;
    match kind {
        K::Group | K::Reference { .. } => "validation failed".into(),
        K::Schema { url } => format!("jsonschema validation failed with {}", v6_quote(url)),
        K::ContentSchema => "contentSchema failed".into(),
        K::PropertyName { prop } => format!("invalid propertyName {}", v6_quote(prop)),
        K::RefCycle {
            url,
            kw_loc1,
            kw_loc2,
        } => format!(
            "both {kw_loc1} and {kw_loc2} resolve to {} causing reference cycle",
            quote(url)
        ),
        K::FalseSchema => "false schema".into(),
        K::Type { got, want } => {
            let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            format!("got {got}, want {}", want.join(" or "))
        }
        K::Enum { want } if want.iter().all(primitive) => match want.as_slice() {
            [one] => format!("value must be {}", v6_display(one)),
            _ => format!(
                "value must be one of {}",
                want.iter().map(v6_display).collect::<Vec<_>>().join(", ")
            ),
        },
        K::Enum { .. } => "enum failed".into(),
        K::Const { want } if primitive(want) => format!("value must be {}", v6_display(want)),
        K::Const { .. } => "const failed".into(),
        K::Format { got, want, err } => {
            format!("{} is not valid {want}: {err}", v6_display(got))
        }
        K::MinProperties { got, want } => format!("minProperties: got {got}, want {want}"),
        K::MaxProperties { got, want } => format!("maxProperties: got {got}, want {want}"),
        K::AdditionalProperties { got } => format!(
            "additional properties {} not allowed",
            v6_join(got.iter().map(Cow::as_ref))
        ),
        K::Required { want } => match want.as_slice() {
            [one] => format!("missing property {}", v6_quote(one)),
            _ => format!("missing properties {}", v6_join(want.iter().copied())),
        },
        K::Dependency { prop, missing } | K::DependentRequired { prop, missing } => format!(
            "properties {} required, if {} exists",
            v6_join(missing.iter().copied()),
            v6_quote(prop)
        ),
        K::MinItems { got, want } => format!("minItems: got {got}, want {want}"),
        K::MaxItems { got, want } => format!("maxItems: got {got}, want {want}"),
        K::Contains => "no items match contains schema".into(),
        K::MinContains { got, want } if got.is_empty() => {
            format!("min {want} items required to match contains schema, but none matched")
        }
        K::MinContains { got, want } => format!(
            "min {want} items required to match contains schema, but matched {} items at {}",
            got.len(),
            join_ints(got)
        ),
        K::MaxContains { got, want } => format!(
            "max {want} items required to match contains schema, but matched {} items at {}",
            got.len(),
            join_ints(got)
        ),
        K::UniqueItems { got } => format!("items at {} and {} are equal", got[0], got[1]),
        K::AdditionalItems { got } => format!("last {got} additionalItem(s) not allowed"),
        K::MinLength { got, want } => format!("minLength: got {got}, want {want}"),
        K::MaxLength { got, want } => format!("maxLength: got {got}, want {want}"),
        K::Pattern { got, want } => {
            format!(
                "{} does not match pattern {}",
                v6_quote(got),
                v6_quote(want)
            )
        }
        K::ContentEncoding { want, err } => {
            format!("value is not {} encoded: {err}", v6_quote(want))
        }
        K::ContentMediaType { want, err, .. } => {
            format!("value if not of mediatype {}: {err}", v6_quote(want))
        }
        K::Minimum { got, want } => {
            format!("minimum: got {}, want {}", float_v(got), float_v(want))
        }
        K::Maximum { got, want } => {
            format!("maximum: got {}, want {}", float_v(got), float_v(want))
        }
        K::ExclusiveMinimum { got, want } => format!(
            "exclusiveMinimum: got {}, want {}",
            float_v(got),
            float_v(want)
        ),
        K::ExclusiveMaximum { got, want } => format!(
            "exclusiveMaximum: got {}, want {}",
            float_v(got),
            float_v(want)
        ),
        K::MultipleOf { got, want } => {
            format!("multipleOf: got {}, want {}", float_v(got), float_v(want))
        }
        K::Not => "not failed".into(),
        K::AllOf => "allOf failed".into(),
        K::AnyOf => "anyOf failed".into(),
        K::OneOf(None) => "oneOf failed, none matched".into(),
        K::OneOf(Some((i, j))) => format!("oneOf failed, subschemas {i}, {j} matched"),
    }
}

/// Go's `%v` of an `[]int` without its brackets.
fn join_ints(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")
}

/// The instance location as a JSON pointer (`/a/0/b~1c`).
fn pointer(e: &ValidationError<'_, '_>) -> String {
    e.instance_location
        .tokens
        .iter()
        .map(|t| match t {
            InstanceToken::Prop(p) => format!("/{}", p.replace('~', "~0").replace('/', "~1")),
            InstanceToken::Item(i) => format!("/{i}"),
        })
        .collect()
}

/// helm 4: jsonschema v6's `ValidationError.Error()` (its `display`, not
/// verbose) without the first line, which helm trims: one `- at 'PTR':
/// MESSAGE` line per error, a cause two spaces deeper than its parent, a
/// `$ref` with a single cause not shown.
fn jsonschema_v6_lines(e: &ValidationError<'_, '_>) -> Vec<String> {
    fn display(e: &ValidationError<'_, '_>, indent: usize, out: &mut Vec<String>) {
        let skip = e.causes.len() == 1 && matches!(e.kind, ErrorKind::Reference { .. });
        let mut next = indent;
        if !skip {
            if indent > 0 {
                let text = match e.kind {
                    ErrorKind::Schema { .. } => v6_message(&e.kind),
                    _ => format!("at {}: {}", v6_quote(&pointer(e)), v6_message(&e.kind)),
                };
                out.push(format!("{}- {text}", "  ".repeat(indent - 1)));
            }
            next += 1;
        }
        for cause in &e.causes {
            display(cause, next, out);
        }
    }
    let mut out = Vec::new();
    display(e, 0, &mut out);
    out
}

/// gojsonschema's field of an error: the path below `(root)` joined with
/// `.`, or `(root)` itself.
fn gojsonschema_field(e: &ValidationError<'_, '_>) -> String {
    let parts: Vec<String> = e
        .instance_location
        .tokens
        .iter()
        .map(|t| match t {
            InstanceToken::Prop(p) => p.to_string(),
            InstanceToken::Item(i) => i.to_string(),
        })
        .collect();
    match parts.is_empty() {
        true => "(root)".into(),
        false => parts.join("."),
    }
}

/// gojsonschema's English description of one failure (its `locales.go`);
/// `None` for the grouping kinds, whose causes are described instead.
fn gojsonschema_descriptions(
    e: &ValidationError<'_, '_>,
    instance: &serde_json::Value,
) -> Option<Vec<String>> {
    use ErrorKind as K;
    let json_type = |v: &serde_json::Value| match v {
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => "integer".to_string(),
        serde_json::Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
            "integer".to_string()
        }
        other => boon_type_name(other).to_string(),
    };
    let field = gojsonschema_field(e);
    let one = |s: String| Some(vec![s]);
    match &e.kind {
        K::Group | K::Schema { .. } | K::Reference { .. } => None,
        K::Required { want } => Some(want.iter().map(|p| format!("{p} is required")).collect()),
        K::Type { want, .. } => {
            let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            let expected = match want.as_slice() {
                [one] => one.clone(),
                _ => format!("[{}]", want.join(",")),
            };
            let given = value_at(instance, e).map_or_else(String::new, json_type);
            one(format!(
                "Invalid type. Expected: {expected}, given: {given}"
            ))
        }
        K::Enum { want } => one(format!(
            "{field} must be one of the following: {}",
            want.iter()
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        K::Const { want } => one(format!(
            "{field} does not match: {}",
            serde_json::to_string(want).unwrap_or_default()
        )),
        K::Format { want, .. } => one(format!("Does not match format '{want}'")),
        K::MinProperties { want, .. } => one(format!("Must have at least {want} properties")),
        K::MaxProperties { want, .. } => one(format!("Must have at most {want} properties")),
        K::AdditionalProperties { got } => Some(
            got.iter()
                .map(|p| format!("Additional property {p} is not allowed"))
                .collect(),
        ),
        K::Dependency { missing, .. } | K::DependentRequired { missing, .. } => Some(
            missing
                .iter()
                .map(|d| format!("Has a dependency on {d}"))
                .collect(),
        ),
        K::MinItems { want, .. } => one(format!("Array must have at least {want} items")),
        K::MaxItems { want, .. } => one(format!("Array must have at most {want} items")),
        K::Contains | K::MinContains { .. } | K::MaxContains { .. } => {
            one("At least one of the items must match".into())
        }
        K::UniqueItems { got } => one(format!("array items[{},{}] must be unique", got[0], got[1])),
        K::AdditionalItems { .. } => one("No additional items allowed on array".into()),
        K::MinLength { want, .. } => one(format!(
            "String length must be greater than or equal to {want}"
        )),
        K::MaxLength { want, .. } => one(format!(
            "String length must be less than or equal to {want}"
        )),
        K::Pattern { want, .. } => one(format!("Does not match pattern '{want}'")),
        K::Minimum { want, .. } => one(format!(
            "Must be greater than or equal to {}",
            float_g10(want)
        )),
        K::Maximum { want, .. } => {
            one(format!("Must be less than or equal to {}", float_g10(want)))
        }
        K::ExclusiveMinimum { want, .. } => {
            one(format!("Must be greater than {}", float_g10(want)))
        }
        K::ExclusiveMaximum { want, .. } => one(format!("Must be less than {}", float_g10(want))),
        K::MultipleOf { want, .. } => one(format!("Must be a multiple of {}", float_g10(want))),
        K::Not => one("Must not validate the schema (not)".into()),
        K::AllOf => one("Must validate all the schemas (allOf)".into()),
        K::AnyOf => one("Must validate at least one schema (anyOf)".into()),
        K::OneOf(_) => one("Must validate one and only one schema (oneOf)".into()),
        K::FalseSchema => one("False always fails validation".into()),
        K::PropertyName { prop } => one(format!("Property name of \"{prop}\" does not match")),
        K::RefCycle { .. }
        | K::ContentEncoding { .. }
        | K::ContentMediaType { .. }
        | K::ContentSchema => one(v6_message(&e.kind)),
    }
}

/// The part of `instance` an error is about.
fn value_at<'v>(
    instance: &'v serde_json::Value,
    e: &ValidationError<'_, '_>,
) -> Option<&'v serde_json::Value> {
    e.instance_location
        .tokens
        .iter()
        .try_fold(instance, |v, t| match t {
            InstanceToken::Prop(p) => v.get(p.as_ref()),
            InstanceToken::Item(i) => v.get(i),
        })
}

/// JSON Schema's name of a value's type.
fn boon_type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// helm 3: gojsonschema's `ResultError.String()` per failure, `- FIELD:
/// DESCRIPTION`. gojsonschema reports a failed `anyOf`/`oneOf`/`allOf`/
/// `not` as one error of its own rather than its subschemas' failures;
/// the grouping errors (`$ref`, the schema itself) are walked through.
fn gojsonschema_lines(e: &ValidationError<'_, '_>, instance: &serde_json::Value) -> Vec<String> {
    fn walk(e: &ValidationError<'_, '_>, instance: &serde_json::Value, out: &mut Vec<String>) {
        match gojsonschema_descriptions(e, instance) {
            Some(descriptions) => {
                let field = gojsonschema_field(e);
                out.extend(descriptions.iter().map(|d| format!("- {field}: {d}")));
            }
            None => {
                for cause in &e.causes {
                    walk(cause, instance, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(e, instance, &mut out);
    out
}

fn walk(
    chart: &Chart,
    values: &Value,
    version: HelmVersion,
    out: &mut String,
) -> Result<(), Error> {
    if let Some(schema) = &chart.schema {
        let lines = check_one(schema, values, version).map_err(Error::Values)?;
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
            Some(v @ Value::Map(_)) => walk(sub, &v, version, out)?,
            _ => continue,
        }
    }
    Ok(())
}

/// `chartutil.ValidateAgainstSchema`.
pub fn validate(chart: &Chart, values: &Value, version: HelmVersion) -> Result<(), Error> {
    let mut out = String::new();
    walk(chart, values, version, &mut out)?;
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
        assert_eq!(check_one(schema, &ok, HelmVersion::V3), Ok(Vec::new()));
        let bad = parse_yaml("port: 8.5").unwrap_or(Value::Nil);
        let lines = check_one(schema, &bad, HelmVersion::V3).unwrap_or_default();
        assert_eq!(
            lines,
            [
                "- (root): name is required",
                "- port: Invalid type. Expected: integer, given: number"
            ]
        );
        let lines = check_one(schema, &bad, HelmVersion::V4).unwrap_or_default();
        assert_eq!(
            lines,
            [
                "- at '': missing property 'name'",
                "- at '/port': got number, want integer"
            ]
        );
        assert!(check_one(b"{nope", &ok, HelmVersion::V3).is_err());
    }

    #[test]
    fn each_helm_words_a_minimum_as_its_validator_does() {
        let schema = r#"{"properties":{"é/x":{"minimum":1.5}}}"#.as_bytes();
        let bad = parse_yaml("é/x: -5").unwrap_or(Value::Nil);
        assert_eq!(
            check_one(schema, &bad, HelmVersion::V3),
            Ok(vec![
                "- é/x: Must be greater than or equal to 1.5".to_string()
            ])
        );
        assert_eq!(
            check_one(schema, &bad, HelmVersion::V4),
            Ok(vec!["- at '/é~1x': minimum: got -5, want 1.5".to_string()])
        );
    }
}
