//! Go's predefined template functions (`text/template/funcs.go`), with Go's
//! error texts. `and`/`or` are registered for arity checks; their
//! short-circuit evaluation lives in the executor.

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::fmt::{sprint, sprintf, try_sprint, try_sprintf, try_sprintln};
use crate::gotmpl::value::Value;

use ArgType::{Any, Reflect};

/// Adds every Go builtin to `m`.
pub fn register(m: &mut FuncMap) {
    let rv_var = Signature::variadic(&[Reflect], Reflect);
    let two = Signature::fixed(&[Reflect, Reflect]);
    m.insert_builtin("and", rv_var.clone(), |_, a| {
        Ok(a.last().cloned().unwrap_or(Value::Invalid))
    });
    m.insert_builtin("or", rv_var.clone(), |_, a| {
        Ok(a.last().cloned().unwrap_or(Value::Invalid))
    });
    m.insert_builtin("not", Signature::fixed(&[Reflect]), |_, a| {
        Ok(Value::Bool(
            !a.first().and_then(Value::truth).unwrap_or(false),
        ))
    });
    m.insert_builtin("len", Signature::fixed(&[Reflect]), |_, a| length(first(a)));
    m.insert_builtin("index", rv_var.clone(), |_, a| {
        index(first(a), &a[1.min(a.len())..])
    });
    m.insert_builtin("slice", rv_var.clone(), |_, a| {
        slice(first(a), &a[1.min(a.len())..])
    });
    m.insert_builtin("eq", rv_var.clone(), |_, a| {
        eq(first(a), &a[1.min(a.len())..]).map(Value::Bool)
    });
    m.insert_builtin("ne", two.clone(), |_, a| {
        eq(first(a), &a[1.min(a.len())..]).map(|b| Value::Bool(!b))
    });
    m.insert_builtin("lt", two.clone(), |_, a| {
        lt(first(a), second(a)).map(Value::Bool)
    });
    m.insert_builtin("le", two.clone(), |_, a| {
        le(first(a), second(a)).map(Value::Bool)
    });
    m.insert_builtin("gt", two.clone(), |_, a| {
        le(first(a), second(a)).map(|b| Value::Bool(!b))
    });
    m.insert_builtin("ge", two, |_, a| {
        lt(first(a), second(a)).map(|b| Value::Bool(!b))
    });
    let any_var = Signature::variadic(&[], Any);
    m.insert_builtin("print", any_var.clone(), |_, a| {
        try_sprint(a).map(Value::from)
    });
    m.insert_builtin("println", any_var.clone(), |_, a| {
        try_sprintln(a).map(Value::from)
    });
    m.insert_builtin(
        "printf",
        Signature::variadic(&[ArgType::String], Any),
        |_, a| {
            let f = first(a).as_str().map(str::to_string).unwrap_or_default();
            try_sprintf(&f, &a[1.min(a.len())..]).map(Value::from)
        },
    );
    m.insert_builtin("html", any_var.clone(), |_, a| {
        Ok(Value::from(html_escape(&eval_args(a))))
    });
    m.insert_builtin("js", any_var.clone(), |_, a| {
        Ok(Value::from(js_escape(&eval_args(a))))
    });
    m.insert_builtin("urlquery", any_var, |_, a| {
        Ok(Value::from(query_escape(&eval_args(a))))
    });
    m.insert_builtin("call", rv_var, |_, a| call(a));
}

static INVALID: Value = Value::Invalid;

fn first(a: &[Value]) -> &Value {
    a.first().unwrap_or(&INVALID)
}

fn second(a: &[Value]) -> &Value {
    a.get(1).unwrap_or(&INVALID)
}

/// Go's `indirectInterface`: a nil interface has no element.
fn indirect_interface(v: &Value) -> Value {
    match v {
        Value::Nil => Value::Invalid,
        Value::Object(o) => o.underlying().unwrap_or_else(|| v.clone()),
        _ => v.clone(),
    }
}

fn length(v: &Value) -> Result<Value, String> {
    let n = match v.resolved() {
        Value::Invalid => return Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Value::Nil => return Err("len of nil pointer".into()),
        Value::Str(s) => s.len(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.items.len(),
        Value::Map(m) => m.len(),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(Value::Int(n as i64))
}

/// Go's `indexArg`: an integer index within `0..=cap`.
fn index_arg(index: &Value, cap: usize) -> Result<usize, String> {
    let x = match indirect_interface(index) {
        Value::Int(i) | Value::Int64(i) => i,
        Value::Uint8(u) => u as i64,
        Value::Invalid => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ))
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

fn index(item: &Value, indexes: &[Value]) -> Result<Value, String> {
    let mut item = indirect_interface(item);
    if let Value::Invalid = item {
        return Err("index of untyped nil".into());
    }
    for idx in indexes {
        item = match item.resolved() {
            Value::Nil => return Err("index of nil pointer".into()),
            Value::List(l) => {
                let x = index_arg(idx, l.items.len())?;
                match l.items.get(x) {
                    Some(v) => v.clone(),
                    None => return Err("reflect: slice index out of range".into()),
                }
            }
            Value::Bytes(b) => {
                let x = index_arg(idx, b.len())?;
                match b.get(x) {
                    Some(v) => Value::Uint8(*v),
                    None => return Err("reflect: slice index out of range".into()),
                }
            }
            Value::Str(s) => {
                let x = index_arg(idx, s.len())?;
                match s.as_bytes().get(x) {
                    Some(v) => Value::Uint8(*v),
                    None => return Err("reflect: string index out of range".into()),
                }
            }
            Value::Map(m) => {
                let key = match indirect_interface(idx) {
                    Value::Str(k) => k,
                    Value::Invalid => return Err("value is nil; should be of type string".into()),
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ))
                    }
                };
                m.get(&key).unwrap_or_else(|| m.elem.zero())
            }
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(item: &Value, indexes: &[Value]) -> Result<Value, String> {
    let item = indirect_interface(item).resolved();
    if let Value::Invalid = item {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let cap = match &item {
        Value::Str(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Value::List(l) => l.items.len(),
        Value::Bytes(b) => b.len(),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0, cap, cap];
    for (i, x) in indexes.iter().enumerate() {
        idx[i] = index_arg(x, cap)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    let (lo, hi) = (idx[0], idx[1]);
    Ok(match item {
        Value::Str(s) => match s.get(lo..hi) {
            Some(sub) => Value::from(sub),
            // Go slices bytes; a cut inside a UTF-8 sequence keeps the raw bytes.
            None => Value::from(String::from_utf8_lossy(&s.as_bytes()[lo..hi]).into_owned()),
        },
        Value::List(l) => Value::typed_list(l.elem, l.items[lo..hi].to_vec()),
        Value::Bytes(b) => Value::Bytes(b[lo..hi].into()),
        _ => Value::Invalid,
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Basic {
    Invalid,
    Bool,
    Int,
    Uint,
    Float,
    Str,
}

fn basic_kind(v: &Value) -> Basic {
    match v {
        Value::Bool(_) => Basic::Bool,
        Value::Int(_) | Value::Int64(_) => Basic::Int,
        Value::Uint8(_) => Basic::Uint,
        Value::Float(_) => Basic::Float,
        Value::Str(_) => Basic::Str,
        _ => Basic::Invalid,
    }
}

const BAD_COMPARISON: &str = "incompatible types for comparison";
const BAD_COMPARISON_TYPE: &str = "invalid type for comparison";

fn as_i(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Uint8(u) => *u as i64,
        _ => 0,
    }
}

fn as_u(v: &Value) -> u64 {
    match v {
        Value::Uint8(u) => *u as u64,
        _ => 0,
    }
}

fn as_f(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

/// Equality of two non-basic values (Go's default branch of `eq`).
fn eq_other(a: &Value, b: &Value) -> Result<bool, String> {
    let invalid = |v: &Value| matches!(v, Value::Invalid);
    if !invalid(a) && !invalid(b) && a.type_name() != b.type_name() {
        let args = [
            a.clone(),
            Value::from(a.type_name()),
            Value::from(b.type_name()),
            b.clone(),
        ];
        return Err(sprintf("non-comparable types %s: %v, %s: %v", &args));
    }
    if invalid(a) || invalid(b) {
        return Ok(invalid(a) == invalid(b));
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => Ok(std::sync::Arc::ptr_eq(x, y)),
        _ => Err(sprintf(
            "non-comparable type %s: %v",
            &[b.clone(), Value::from(b.type_name())],
        )),
    }
}

fn eq(arg1: &Value, rest: &[Value]) -> Result<bool, String> {
    let a = indirect_interface(arg1);
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic_kind(&a);
    for arg in rest {
        let b = indirect_interface(arg);
        let k2 = basic_kind(&b);
        let truth = if k1 != k2 {
            match (k1, k2) {
                (Basic::Int, Basic::Uint) => as_i(&a) >= 0 && as_i(&a) as u64 == as_u(&b),
                (Basic::Uint, Basic::Int) => as_i(&b) >= 0 && as_u(&a) == as_i(&b) as u64,
                _ => {
                    if !matches!(a, Value::Invalid) && !matches!(b, Value::Invalid) {
                        return Err(BAD_COMPARISON.into());
                    }
                    false
                }
            }
        } else {
            match k1 {
                Basic::Bool => matches!((&a, &b), (Value::Bool(x), Value::Bool(y)) if x == y),
                Basic::Float => as_f(&a) == as_f(&b),
                Basic::Int => as_i(&a) == as_i(&b),
                Basic::Uint => as_u(&a) == as_u(&b),
                Basic::Str => a.as_str() == b.as_str(),
                Basic::Invalid => eq_other(&a, &b)?,
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

fn lt(arg1: &Value, arg2: &Value) -> Result<bool, String> {
    let a = indirect_interface(arg1);
    let b = indirect_interface(arg2);
    let (k1, k2) = (basic_kind(&a), basic_kind(&b));
    if k1 == Basic::Invalid || k2 == Basic::Invalid {
        return Err(BAD_COMPARISON_TYPE.into());
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Basic::Int, Basic::Uint) => Ok(as_i(&a) < 0 || (as_i(&a) as u64) < as_u(&b)),
            (Basic::Uint, Basic::Int) => Ok(as_i(&b) >= 0 && as_u(&a) < as_i(&b) as u64),
            _ => Err(BAD_COMPARISON.into()),
        };
    }
    match k1 {
        Basic::Bool | Basic::Invalid => Err(BAD_COMPARISON_TYPE.into()),
        Basic::Float => Ok(as_f(&a) < as_f(&b)),
        Basic::Int => Ok(as_i(&a) < as_i(&b)),
        Basic::Uint => Ok(as_u(&a) < as_u(&b)),
        Basic::Str => Ok(a.as_str() < b.as_str()),
    }
}

fn le(a: &Value, b: &Value) -> Result<bool, String> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq(a, std::slice::from_ref(b))
}

/// Go's `evalArgs` for html/js/urlquery: one string as is, else `Sprint`
/// with nils printed as `<no value>`.
fn eval_args(args: &[Value]) -> String {
    if let [Value::Str(s)] = args {
        return s.to_string();
    }
    let fixed: Vec<Value> = args
        .iter()
        .map(|a| {
            if a.is_nil() {
                Value::from("<no value>")
            } else {
                a.clone()
            }
        })
        .collect();
    sprint(&fixed)
}

/// Go's `template.HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if c.is_ascii() || crate::gotmpl::fmt::is_print(c) => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `call`; this engine has no function values, so only its errors apply.
/// The executor passes the callee's source text first.
fn call(a: &[Value]) -> Result<Value, String> {
    let name = first(a).as_str().unwrap_or_default().to_string();
    match indirect_interface(second(a)) {
        Value::Invalid => Err("call of nil".into()),
        v => Err(format!("non-function {} of type {}", name, v.type_name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    #[test]
    fn comparisons_follow_go_kinds() {
        assert_eq!(eq(&Value::Int(1), &[Value::Int64(1)]), Ok(true));
        assert_eq!(
            eq(&Value::Int(1), &[Value::Float(1.0)]),
            Err(BAD_COMPARISON.into())
        );
        assert_eq!(eq(&s("a"), &[s("b"), s("a")]), Ok(true));
        assert_eq!(eq(&Value::Invalid, &[Value::Nil]), Ok(true));
        assert_eq!(eq(&Value::Nil, &[s("a")]), Ok(false));
        assert_eq!(
            lt(&Value::Int(1), &Value::Float(2.5)),
            Err(BAD_COMPARISON.into())
        );
        assert_eq!(lt(&s("B"), &s("a")), Ok(true));
        assert_eq!(
            lt(&Value::Bool(true), &Value::Bool(false)),
            Err(BAD_COMPARISON_TYPE.into())
        );
        assert_eq!(le(&Value::Int(2), &Value::Int(2)), Ok(true));
        let l = Value::list(vec![Value::Float(1.0)]);
        assert_eq!(
            eq(&l, std::slice::from_ref(&l)),
            Err("non-comparable type [%!s(float64=1)]: []interface {}".into())
        );
    }

    #[test]
    fn len_and_index() {
        assert_eq!(length(&s("héllo")).ok().map(|v| as_i(&v)), Some(6));
        assert_eq!(length(&Value::Nil).err(), Some("len of nil pointer".into()));
        assert_eq!(length(&Value::Int(3)).err(), Some("len of type int".into()));
        let l = Value::list(vec![s("x"), s("y")]);
        assert_eq!(
            index(&l, &[Value::Int(1)])
                .ok()
                .and_then(|v| v.as_str().map(String::from)),
            Some("y".into())
        );
        assert_eq!(
            index(&l, &[Value::Int(5)]).err(),
            Some("index out of range: 5".into())
        );
        assert_eq!(
            index(&l, &[Value::Int(2)]).err(),
            Some("reflect: slice index out of range".into())
        );
        assert_eq!(
            index(&l, &[Value::Int(-1)]).err(),
            Some("index out of range: -1".into())
        );
        assert!(matches!(
            index(&s("abc"), &[Value::Int(1)]),
            Ok(Value::Uint8(98))
        ));
        assert_eq!(
            index(&Value::Nil, &[]).err(),
            Some("index of untyped nil".into())
        );
        let m = Value::map(Default::default());
        assert!(matches!(index(&m, &[s("k")]), Ok(Value::Nil)));
    }

    #[test]
    fn slicing() {
        let r = slice(&s("abcdef"), &[Value::Int(1), Value::Int(3)]);
        assert_eq!(
            r.ok().and_then(|v| v.as_str().map(String::from)),
            Some("bc".into())
        );
        let l = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert!(matches!(slice(&l, &[Value::Int(1)]), Ok(Value::List(x)) if x.items.len() == 2));
        assert_eq!(
            slice(&l, &[Value::Int(2), Value::Int(1)]).err(),
            Some("invalid slice index: 2 > 1".into())
        );
    }

    #[test]
    fn escapers() {
        assert_eq!(
            html_escape("<a href=\"x\">&</a>"),
            "&lt;a href=&#34;x&#34;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(
            js_escape("it's \"q\" <x>"),
            "it\\'s \\\"q\\\" \\u003Cx\\u003E"
        );
        assert_eq!(query_escape("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(eval_args(&[Value::Int(1), Value::Int(2)]), "1 2");
        assert_eq!(eval_args(&[Value::Nil]), "<no value>");
    }
}
