//! The functions Helm v3.17.3 layers over Sprig (`pkg/engine/funcs.go`,
//! `engine.go`): `include` (with its per-name nesting limit), `tpl`,
//! `required`, `fail`, the YAML/JSON/TOML converters, `lookup` (always
//! empty: there is no cluster), `getHostByName` (DNS disabled), and the
//! removal of `env`/`expandenv`. They are registered on gotmpl's
//! [`FuncMap`] through its public API; the converters they wrap are
//! gotmpl's [`crate::gotmpl::convert`].

use std::collections::BTreeMap;

use super::HelmVersion;
use crate::gotmpl::convert::{
    error_map, from_json, from_toml, json_kind, parse_yaml, to_json, to_toml, to_yaml,
    to_yaml_pretty, try_to_yaml, TomlError, TomlLines,
};
use crate::gotmpl::fmt::quote;
use crate::gotmpl::{ArgType, FuncMap, Signature, Value};

use ArgType::{Any, String as Str};

/// Helm's `recursionMaxNums` for `include`.
pub const INCLUDE_MAX: i64 = 1000;
/// Counters (in [`crate::gotmpl::ExecShared`]) of `tpl` nesting and of the
/// bytes all `tpl` calls of one render produced.
const TPL_DEPTH: &str = "tpl:depth";
pub(super) const TPL_BYTES: &str = "tpl:bytes";
/// Total `tpl` output per render: far above real charts, far below the RAM.
pub(super) const TPL_MAX_BYTES: i64 = 64 << 20;
/// Markers Helm wraps `required`/`fail` messages in (`warnWrap`).
pub const WARN_START: &str = "HELM_ERR_START";
/// End marker of [`WARN_START`].
pub const WARN_END: &str = "HELM_ERR_END";

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Everything a template of `version`'s helm sees: Go's builtins, Sprig
/// v3.3.0 and helm's own functions (`pkg/engine/funcs.go`).
pub fn func_map(version: HelmVersion) -> FuncMap {
    let mut m = FuncMap::with_sprig();
    register(&mut m);
    if version == HelmVersion::V4 {
        register_v4(&mut m);
    }
    m
}

/// Registers Helm's functions on top of Sprig's (call after Sprig).
fn register(m: &mut FuncMap) {
    m.remove("env");
    m.remove("expandenv");
    register_templates(m);
    register_json(m);
    let one = Signature::fixed(&[Str]);
    m.insert("toYaml", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(to_yaml(&a[0])))
    });
    m.insert("toYamlPretty", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(to_yaml_pretty(&a[0])))
    });
    m.insert("fromYaml", one.clone(), |_, a| {
        Ok(match parse_yaml(s(&a[0])) {
            Ok(Value::Map(m)) => Value::Map(m),
            Ok(Value::Nil) => Value::map(BTreeMap::new()),
            Ok(other) => error_map(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )),
            Err(e) => error_map(e),
        })
    });
    m.insert("fromYamlArray", one.clone(), |_, a| {
        Ok(match parse_yaml(s(&a[0])) {
            Ok(Value::List(l)) => Value::List(l),
            Ok(Value::Nil) => Value::list(Vec::new()),
            Ok(other) => Value::list(vec![Value::from(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                json_kind(&other)
            ))]),
            Err(e) => Value::list(vec![Value::from(e)]),
        })
    });
    m.insert("toToml", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(to_toml(&a[0]).unwrap_or_else(|e| e)))
    });
    m.insert("fromToml", one, |_, a| {
        match from_toml(s(&a[0]), TomlLines::V1_4) {
            Ok(v) => Ok(v),
            Err(TomlError::Parse(e)) => Ok(error_map(e)),
            Err(TomlError::TooDeep(e)) => Err(e),
        }
    });
    // helm `template` runs lookup without a cluster: `lookup` returns an
    // empty map (funcs.go `lookupFunc` stub). What a real install gets
    // depends on the cluster, so the render warns (and `--strict` refuses).
    m.insert("lookup", Signature::fixed(&[Str, Str, Str, Str]), |ctx, _| {
        ctx.shared.warn(crate::warning::Warning::new(
            crate::warning::WarningKind::NonDeterminism,
            "lookup returns an empty result without a cluster; an install would see the cluster's objects",
            Some(ctx.template.into()),
        ));
        Ok(Value::map(BTreeMap::new()))
    });
    m.insert("getHostByName", Signature::fixed(&[Str]), |_, _| {
        Ok(Value::from(""))
    });
}

fn register_templates(m: &mut FuncMap) {
    m.insert("include", Signature::fixed(&[Str, Any]), |ctx, a| {
        let name = s(&a[0]);
        let key = format!("include:{name}");
        if ctx.shared.count(&key, 0) > INCLUDE_MAX {
            return Err(format!(
                "rendering template has a nested reference name: {name}: unable to execute template"
            ));
        }
        ctx.shared.count(&key, 1);
        let r = ctx.runner.execute_template(name, a[1].clone());
        ctx.shared.count(&key, -1);
        r.map(Value::from).map_err(|e| e.to_string())
    });
    m.insert("tpl", Signature::fixed(&[Str, Any]), |ctx, a| {
        let text = s(&a[0]);
        // helm's tplFun has no bound: a values string calling tpl on itself
        // grows until memory runs out. hydrate stops at include's depth and
        // at a total output size, with an error naming the template.
        if ctx.shared.count(TPL_DEPTH, 0) >= INCLUDE_MAX {
            return Err(format!(
                "tpl nested more than {INCLUDE_MAX} deep: unable to execute template"
            ));
        }
        ctx.shared.count(TPL_DEPTH, 1);
        let r = ctx.runner.execute_text("gotpl", text, a[1].clone());
        ctx.shared.count(TPL_DEPTH, -1);
        if let Ok(out) = &r {
            if ctx.shared.count(TPL_BYTES, out.len() as i64) > TPL_MAX_BYTES {
                return Err(format!(
                    "tpl output exceeds {TPL_MAX_BYTES} bytes in total: unable to execute template"
                ));
            }
        }
        match r {
            Ok(out) => Ok(Value::from(out.replace("<no value>", ""))),
            Err(crate::gotmpl::Error::Parse(e)) => {
                Err(format!("cannot parse template {}: {e}", quote(text)))
            }
            Err(e) => Err(format!(
                "error during tpl function execution for {}: {e}",
                quote(text)
            )),
        }
    });
    m.insert("required", Signature::fixed(&[Str, Any]), |_, a| {
        let missing = match &a[1] {
            Value::Invalid | Value::Nil => true,
            Value::Str(v) => v.is_empty(),
            _ => false,
        };
        if missing {
            return Err(format!("{WARN_START}{}{WARN_END}", s(&a[0])));
        }
        Ok(a[1].clone())
    });
    m.insert("fail", Signature::fixed(&[Str]), |_, a| {
        Err(format!("{WARN_START}{}{WARN_END}", s(&a[0])))
    });
}

/// helm4's additions (pkg/engine/funcs.go v4.1.4): `mustToYaml` reports
/// marshal errors instead of printing an empty string.
fn register_v4(m: &mut FuncMap) {
    // helm 4 builds with BurntSushi/toml v1.5, whose error lines differ.
    m.insert(
        "fromToml",
        Signature::fixed(&[Str]),
        |_, a| match from_toml(s(&a[0]), TomlLines::V1_5) {
            Ok(v) => Ok(v),
            Err(TomlError::Parse(e)) => Ok(error_map(e)),
            Err(TomlError::TooDeep(e)) => Err(e),
        },
    );
    m.insert("mustToYaml", Signature::fixed(&[Any]), |_, a| {
        try_to_yaml(&a[0]).map(Value::from)
    });
    // helm 4 builds with Masterminds/semver v3.4.0 (lower-case errors,
    // leading zeros refused).
    crate::gotmpl::golib::register_semver_v3_4(m);
}

fn register_json(m: &mut FuncMap) {
    // Helm's toJson swallows marshal errors (Sprig's must* variants report them).
    m.insert("toJson", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(to_json(&a[0]).unwrap_or_default()))
    });
    let one = Signature::fixed(&[Str]);
    m.insert("fromJson", one.clone(), |_, a| {
        Ok(match from_json(s(&a[0])) {
            Ok(Value::Map(m)) => Value::Map(m),
            Ok(Value::Nil) => Value::map(BTreeMap::new()),
            Ok(other) => error_map(format!(
                "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                json_kind(&other)
            )),
            Err(e) => error_map(e),
        })
    });
    m.insert("fromJsonArray", one.clone(), |_, a| {
        Ok(match from_json(s(&a[0])) {
            Ok(Value::List(l)) => Value::List(l),
            Ok(Value::Nil) => Value::list(Vec::new()),
            Ok(other) => Value::list(vec![Value::from(format!(
                "json: cannot unmarshal {} into Go value of type []interface {{}}",
                json_kind(&other)
            ))]),
            Err(e) => Value::list(vec![Value::from(e)]),
        })
    });
    m.insert("mustFromJson", one, |_, a| from_json(s(&a[0])));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::{ExecOptions, TemplateSet};
    use std::sync::Arc;

    fn run(text: &str) -> String {
        let mut m = FuncMap::with_sprig();
        register(&mut m);
        let mut set = TemplateSet::new("gotpl", Arc::new(m));
        let r = set
            .parse("t", text)
            .and_then(|_| set.execute("t", Value::map(BTreeMap::new()), &ExecOptions::default()));
        r.unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn include_limits_nesting() {
        assert_eq!(run(r#"{{define "a"}}x{{end}}{{include "a" .}}"#), "x");
        let r = run(r#"{{define "r"}}{{include "r" .}}{{end}}{{include "r" .}}"#);
        assert!(
            r.contains(
                "rendering template has a nested reference name: r: unable to execute template"
            ),
            "{r}"
        );
    }

    #[test]
    fn tpl_required_fail() {
        assert_eq!(run(r#"{{tpl "{{ .x }}" (dict "x" 1)}}"#), "1");
        assert_eq!(run(r#"{{tpl "{{ .missing }}" .}}"#), "");
        assert!(run(r#"{{tpl "{{ bad" .}}"#).contains("cannot parse template \"{{ bad\""));
        assert!(run(r#"{{required "need it" .x}}"#).contains("HELM_ERR_STARTneed itHELM_ERR_END"));
        assert_eq!(run(r#"{{required "ok" 0}}"#), "0");
        assert!(run(r#"{{fail "boom"}}"#).contains("HELM_ERR_STARTboomHELM_ERR_END"));
        assert!(run(r#"{{env "HOME"}}"#).starts_with("ERR"));
        // Absurd sizes fail instead of exhausting memory.
        assert!(run(r#"{{repeat 9999999999999 "ab"}}"#).contains("Repeat output length overflow"));
        assert!(run(r#"{{until 9999999999999 | len}}"#).contains("len out of range"));
    }

    #[test]
    fn converters() {
        assert_eq!(
            run(r#"{{fromJson "[1]"}}"#),
            "map[Error:json: cannot unmarshal array into Go value of type map[string]interface {}]"
        );
        assert_eq!(run(r#"{{fromYaml "a: 1" | toJson}}"#), r#"{"a":1}"#);
        assert_eq!(run(r#"{{dict "h" "<a>" | toRawJson}}"#), r#"{"h":"<a>"}"#);
        assert_eq!(run(r#"{{lookup "v1" "Pod" "" "" | len}}"#), "0");
    }
}
