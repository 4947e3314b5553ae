//! docs/environment.md is generated from schemas/environment.schema.json:
//! this test generates it again and fails when the two differ, so the
//! reference cannot drift from the schema hydrate checks files against.
//! `UPDATE_DOCS=1 cargo test --test tests env_reference` rewrites it.

use serde_json::Value;

use crate::support::repo;

const PAGE: &str = "docs/environment.md";

#[test]
fn the_environment_reference_is_generated_from_the_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/environment.schema.json")).unwrap(),
    )
    .unwrap();
    let want = generate(&schema);
    let path = repo().join(PAGE);
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        println!("rewrote {PAGE}");
        return;
    }
    panic!(
        "{PAGE} differs from what schemas/environment.schema.json generates; \
         edit the schema, then run `UPDATE_DOCS=1 cargo test --test tests env_reference`"
    );
}

/// The page: the schema's description, then one table row per key, nested
/// keys as dotted paths (`[]` for list items), then the shared definitions.
fn generate(schema: &Value) -> String {
    let mut out = String::from(
        "# Environment file reference\n\n\
         <!-- Generated from schemas/environment.schema.json by tests/env_reference.rs.\n     \
         Edit the schema, then run: UPDATE_DOCS=1 cargo test --test tests env_reference -->\n\n",
    );
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        out.push_str(&markdown(d));
        out.push_str("\n\n");
    }
    out.push_str(
        "Every file is checked against the schema when it is read, before anything \
         renders; an unknown key or a value of the wrong type is an error naming the \
         file and line. [The render page](commands/render.md#environment-files) shows \
         a complete file and explains the rules that span keys (paths, branches, \
         guards).\n\n",
    );
    table(&mut out, schema);
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, def) in defs {
            out.push_str(&format!("\n## `{name}`\n\n"));
            if let Some(d) = def.get("description").and_then(Value::as_str) {
                out.push_str(&markdown(d));
                out.push_str("\n\n");
            }
            table(&mut out, def);
        }
    }
    out
}

fn table(out: &mut String, schema: &Value) {
    out.push_str("| key | type | required | description |\n|---|---|---|---|\n");
    rows(out, "", schema);
}

/// One row per property of `schema` (an object, or a list of objects),
/// then the rows of its nested objects.
fn rows(out: &mut String, prefix: &str, schema: &Value) {
    let object = match schema.get("type").and_then(Value::as_str) {
        Some("array") => match schema.get("items") {
            Some(items) => items,
            None => return,
        },
        _ => schema,
    };
    let Some(props) = object.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Required keys first, then the others, each in name order.
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort_by_key(|k| (!required.contains(&k.as_str()), k.to_string()));
    for key in keys {
        let prop = &props[key];
        let path = format!("{prefix}{key}");
        let description = prop
            .get("description")
            .and_then(Value::as_str)
            .map(markdown)
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{path}` | {} | {} | {description} |\n",
            type_of(prop).replace('|', "\\|"),
            if required.contains(&key.as_str()) {
                "yes"
            } else {
                ""
            },
        ));
        let child = if prop.get("type").and_then(Value::as_str) == Some("array") {
            format!("{path}[].")
        } else {
            format!("{path}.")
        };
        rows(out, &child, prop);
    }
}

/// A short description of a property's type: `string`, `list of string`,
/// `one of a, b`, `object`, with its constraints.
fn type_of(prop: &Value) -> String {
    if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[`{name}`](#{})", name.to_lowercase());
    }
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        let mut shown: Vec<String> = Vec::new();
        for v in values.iter().map(|v| format!("`{}`", plain(v))) {
            if !shown.contains(&v) {
                shown.push(v);
            }
        }
        return format!("one of {}", shown.join(", "));
    }
    if let Some(alts) = prop.get("oneOf").and_then(Value::as_array) {
        if !prop.get("type").is_some_and(Value::is_string) {
            let shown: Vec<String> = alts.iter().map(type_of).collect();
            return shown.join(", or ");
        }
    }
    let mut text = match prop.get("type") {
        Some(Value::String(t)) if t == "array" => match prop.get("items") {
            Some(items) => format!("list of {}", type_of(items)),
            None => "list".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts.iter().map(plain).collect::<Vec<_>>().join(" or "),
        _ => "any".into(),
    };
    if prop.get("minLength").and_then(Value::as_u64) == Some(1) {
        text.push_str(", not empty");
    }
    if let Some(p) = prop.get("pattern").and_then(Value::as_str) {
        text.push_str(&format!(", matching `{p}`"));
    }
    if let Some(req) = prop.get("required").and_then(Value::as_array) {
        let names: Vec<String> = req.iter().map(|r| format!("`{}`", plain(r))).collect();
        if !names.is_empty() && text == "object" {
            text = format!("object with {}", names.join(", "));
        }
    }
    text
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A description as Markdown table text: `|` escaped, and `<` outside code
/// spans written as `&lt;` so `<name>` is not read as an HTML tag.
fn markdown(text: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '|' => out.push_str("\\|"),
            '<' if !in_code => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}
