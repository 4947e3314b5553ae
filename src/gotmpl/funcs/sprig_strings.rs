//! Sprig v3.3.0 string functions (`strings.go`, parts of `functions.go`).
//! Parameter types follow Sprig's Go signatures so that Go's argument
//! checks (`wrong type for value; expected string; got float64`) apply.

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::fmt::{quote, to_string, try_sprintf, try_to_string};
use crate::gotmpl::gounicode;
use crate::gotmpl::value::{Elem, Value};

use ArgType::{Any, Int, String as Str};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

fn ok(v: impl Into<String>) -> Result<Value, String> {
    Ok(Value::from(v.into()))
}

/// Sprig's `strval`: strings as is, bytes as text, anything else `%v`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => to_string(other),
    }
}

/// Sprig's `strslice`: a list of strings from a slice (nils dropped from
/// `[]interface{}`), nothing from nil, or the single value.
pub fn strslice(v: &Value) -> Vec<String> {
    match v.resolved() {
        Value::List(l) if l.elem == Elem::Interface => {
            l.items.iter().filter(|x| !x.is_nil()).map(strval).collect()
        }
        Value::List(l) => l.items.iter().map(strval).collect(),
        Value::Invalid | Value::Nil => Vec::new(),
        other => vec![strval(&other)],
    }
}

/// Registers Sprig's string functions.
pub fn register(m: &mut FuncMap) {
    let one = Signature::fixed(&[Str]);
    let two = Signature::fixed(&[Str, Str]);
    // Go strings.ToUpper/ToLower: one rune to one rune (no `ß` → `SS`, no
    // final sigma), with Go's Unicode 15 tables.
    m.insert("upper", one.clone(), |_, a| {
        ok(gounicode::str_to_upper(s(&a[0])))
    });
    m.insert("lower", one.clone(), |_, a| {
        ok(gounicode::str_to_lower(s(&a[0])))
    });
    m.insert("trim", one.clone(), |_, a| ok(s(&a[0]).trim()));
    m.insert("nospace", one.clone(), |_, a| {
        ok(s(&a[0])
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>())
    });
    m.insert("trimSuffix", two.clone(), |_, a| {
        ok(s(&a[1]).strip_suffix(s(&a[0])).unwrap_or(s(&a[1])))
    });
    m.insert("trimPrefix", two.clone(), |_, a| {
        ok(s(&a[1]).strip_prefix(s(&a[0])).unwrap_or(s(&a[1])))
    });
    m.insert("trimAll", two.clone(), |_, a| {
        let cut: Vec<char> = s(&a[0]).chars().collect();
        ok(s(&a[1]).trim_matches(cut.as_slice()))
    });
    m.insert("contains", two.clone(), |_, a| {
        Ok(Value::Bool(s(&a[1]).contains(s(&a[0]))))
    });
    m.insert("hasPrefix", two.clone(), |_, a| {
        Ok(Value::Bool(s(&a[1]).starts_with(s(&a[0]))))
    });
    m.insert("hasSuffix", two.clone(), |_, a| {
        Ok(Value::Bool(s(&a[1]).ends_with(s(&a[0]))))
    });
    m.insert("replace", Signature::fixed(&[Str, Str, Str]), |_, a| {
        ok(go_replace(s(&a[2]), s(&a[0]), s(&a[1])))
    });
    m.insert("repeat", Signature::fixed(&[Int, Str]), |_, a| {
        let n = int(&a[0]);
        if n < 0 {
            return Err("strings: negative Repeat count".into());
        }
        // Go panics on overflow; far below that we refuse rather than exhaust memory.
        if (n as u128) * (s(&a[1]).len() as u128) > super::MAX_RESULT_BYTES as u128 {
            return Err("strings: Repeat output length overflow".into());
        }
        ok(s(&a[1]).repeat(n as usize))
    });
    m.insert("indent", Signature::fixed(&[Int, Str]), |_, a| {
        indent(int(&a[0]), s(&a[1])).map(Value::from)
    });
    m.insert("nindent", Signature::fixed(&[Int, Str]), |_, a| {
        indent(int(&a[0]), s(&a[1])).map(|v| Value::from(format!("\n{v}")))
    });
    m.insert("trunc", Signature::fixed(&[Int, Str]), |_, a| {
        ok(trunc(int(&a[0]), s(&a[1])))
    });
    let any_var = Signature::variadic(&[], Any);
    m.insert("quote", any_var.clone(), |_, a| ok(quote_all(a, false)));
    m.insert("squote", any_var.clone(), |_, a| ok(quote_all(a, true)));
    m.insert("cat", any_var, |_, a| {
        let kept: Vec<Value> = a.iter().filter(|v| !v.is_nil()).cloned().collect();
        let format = "%v ".repeat(kept.len());
        try_sprintf(format.trim(), &kept).map(Value::from)
    });
    m.insert("toString", Signature::fixed(&[Any]), |_, a| match &a[0] {
        Value::Str(_) | Value::Bytes(_) => ok(strval(&a[0])),
        other => try_to_string(other).map(Value::from),
    });
    m.insert("join", Signature::fixed(&[Str, Any]), |_, a| {
        ok(strslice(&a[1]).join(s(&a[0])))
    });
    m.insert("splitList", two, |_, a| {
        let parts = go_split(s(&a[1]), s(&a[0]));
        Ok(Value::typed_list(
            Elem::String,
            parts.into_iter().map(Value::from).collect(),
        ))
    });
}

/// Go's `strings.Replace(src, old, new, -1)` (an empty `old` inserts
/// `new` around every rune).
fn go_replace(src: &str, old: &str, new: &str) -> String {
    if !old.is_empty() {
        return src.replace(old, new);
    }
    let mut out = String::from(new);
    for c in src.chars() {
        out.push(c);
        out.push_str(new);
    }
    out
}

/// Go's `strings.Split`: an empty separator splits into runes.
fn go_split(src: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return src.chars().map(String::from).collect();
    }
    src.split(sep).map(String::from).collect()
}

/// Sprig's `indent`: `strings.Repeat(" ", spaces)` before every line. A
/// negative count is Go's `strings.Repeat` panic, which text/template
/// returns as the call's error (helm 3 and 4 print it so).
fn indent(spaces: i64, v: &str) -> Result<String, String> {
    if spaces < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let pad = " ".repeat(spaces.min(super::MAX_RESULT_BYTES as i64 / 1024) as usize);
    Ok(format!("{pad}{}", v.replace('\n', &format!("\n{pad}"))))
}

/// Sprig's `trunc`: negative counts keep the tail; byte offsets as in Go.
fn trunc(c: i64, s: &str) -> String {
    let len = s.len() as i64;
    let cut = |at: i64| String::from_utf8_lossy(&s.as_bytes()[..at as usize]).into_owned();
    if c < 0 && len + c > 0 {
        return String::from_utf8_lossy(&s.as_bytes()[(len + c) as usize..]).into_owned();
    }
    if c >= 0 && len > c {
        return cut(c);
    }
    s.to_string()
}

/// Sprig's `quote`/`squote`: nils are skipped, the rest quoted and joined
/// by spaces (`quote` uses Go's `%q`).
fn quote_all(args: &[Value], single: bool) -> String {
    let parts: Vec<String> = args
        .iter()
        .filter(|v| !v.is_nil())
        .map(|v| {
            if single {
                format!("'{}'", strval(v))
            } else {
                quote(&strval(v))
            }
        })
        .collect();
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_sprig() {
        assert_eq!(indent(2, "a\nb").as_deref(), Ok("  a\n  b"));
        assert_eq!(
            indent(-3, "a"),
            Err("strings: negative Repeat count".into())
        );
        assert_eq!(trunc(2, "abcdef"), "ab");
        assert_eq!(trunc(-2, "abcdef"), "ef");
        assert_eq!(trunc(10, "abc"), "abc");
        assert_eq!(go_replace("ab", "", "-"), "-a-b-");
        assert_eq!(go_split("a,b", ","), vec!["a", "b"]);
        let q = quote_all(&[Value::from("a\"b"), Value::Nil, Value::Int(1)], false);
        assert_eq!(q, "\"a\\\"b\" \"1\"");
        assert_eq!(strval(&Value::Float(1e6)), "1e+06");
        let l = Value::list(vec![Value::from("a"), Value::Nil, Value::Int(2)]);
        assert_eq!(strslice(&l), vec!["a", "2"]);
    }
}
