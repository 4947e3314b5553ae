//! Sprig v3.3.0 defaults (`default`, `empty`, `coalesce`, `ternary`),
//! lists (`list.go`) and dicts (`dict.go`), with Sprig's error texts (its
//! non-`must` variants panic; Go's template engine turns that into an error).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::sprig_strings::strval;
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::stack;
use crate::gotmpl::value::{Elem, Value};

use ArgType::{Any, Bool, Map, String as Str};

/// Sprig's `empty`: Go's template falsiness.
pub fn empty(v: &Value) -> bool {
    !v.truth().unwrap_or(false)
}

/// Go's `reflect.DeepEqual` on template values.
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    equal_at(a, b, &mut Seen::default())
}

/// reflect.DeepEqual's `visited`: container pairs already under comparison
/// count as equal (so maps containing themselves compare without end).
#[derive(Default)]
struct Seen {
    pairs: HashSet<(usize, usize)>,
    depth: usize,
}

fn equal_at(a: &Value, b: &Value, seen: &mut Seen) -> bool {
    let pair = match (a, b) {
        (Value::List(x), Value::List(y)) => (Arc::as_ptr(x) as usize, Arc::as_ptr(y) as usize),
        (Value::Map(x), Value::Map(y)) => (Arc::as_ptr(x) as usize, Arc::as_ptr(y) as usize),
        _ => return scalar_equal(a, b),
    };
    if !seen.pairs.insert(pair) {
        return true;
    }
    seen.depth += 1;
    let depth = seen.depth;
    let r = stack::hop(depth, || match (a, b) {
        (Value::List(x), Value::List(y)) => {
            x.elem == y.elem
                && x.items.len() == y.items.len()
                && x.items
                    .iter()
                    .zip(&y.items)
                    .all(|(p, q)| equal_at(p, q, seen))
        }
        (Value::Map(x), Value::Map(y)) => {
            let (ex, ey) = (x.entries(), y.entries());
            x.elem == y.elem
                && ex.len() == ey.len()
                && ex
                    .iter()
                    .zip(&ey)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && equal_at(v1, v2, seen))
        }
        _ => false,
    })
    // No thread for a bigger stack: too deep to tell, so not equal.
    .unwrap_or(false);
    seen.depth -= 1;
    r
}

fn scalar_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Invalid | Value::Nil, Value::Invalid | Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Uint8(x), Value::Uint8(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::Object(x), Value::Object(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// Elements of any slice, or the Go reflect kind name for the error.
fn items(v: &Value) -> Result<Vec<Value>, String> {
    match v.resolved() {
        Value::List(l) => Ok(l.items.clone()),
        Value::Bytes(b) => Ok(b.iter().map(|x| Value::Uint8(*x)).collect()),
        Value::Invalid | Value::Nil => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Err(other.kind_name().to_string()),
    }
}

/// `items` with Sprig's "Cannot X on type K" message.
fn list_op(v: &Value, op: &str) -> Result<Vec<Value>, String> {
    items(v).map_err(|k| {
        if k.starts_with("runtime error") {
            k
        } else {
            format!("Cannot {op} on type {k}")
        }
    })
}

/// Why a guarded execution stopped ([`crate::gotmpl::ExecShared::guarded`]):
/// its host discards the output and runs the template again alone.
pub(super) const SHARED_MAP: &str = "a map shared with other templates would change";

fn map_of(v: &Value) -> Option<std::sync::Arc<crate::gotmpl::value::Map>> {
    match v.resolved() {
        Value::Map(m) => Some(m),
        _ => None,
    }
}

/// Registers defaults, list and dict functions.
pub fn register(m: &mut FuncMap) {
    register_defaults(m);
    register_lists(m);
    register_dicts(m);
}

fn register_defaults(m: &mut FuncMap) {
    m.insert("default", Signature::variadic(&[Any], Any), |_, a| {
        Ok(match a.get(1) {
            Some(g) if !empty(g) => g.clone(),
            _ => a[0].clone(),
        })
    });
    m.insert("empty", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::Bool(empty(&a[0])))
    });
    m.insert("coalesce", Signature::variadic(&[], Any), |_, a| {
        Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
    });
    m.insert("ternary", Signature::fixed(&[Any, Any, Bool]), |_, a| {
        Ok(if matches!(a[2], Value::Bool(true)) {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
}

fn register_lists(m: &mut FuncMap) {
    let any_var = Signature::variadic(&[], Any);
    m.insert("list", any_var.clone(), |_, a| Ok(Value::list(a.to_vec())));
    m.insert("tuple", any_var.clone(), |_, a| Ok(Value::list(a.to_vec())));
    let one = Signature::fixed(&[Any]);
    m.insert("first", one.clone(), |_, a| {
        Ok(list_op(&a[0], "find first")?
            .into_iter()
            .next()
            .unwrap_or(Value::Nil))
    });
    m.insert("last", one.clone(), |_, a| {
        Ok(list_op(&a[0], "find last")?.pop().unwrap_or(Value::Nil))
    });
    m.insert("rest", one.clone(), |_, a| {
        let l = list_op(&a[0], "find rest")?;
        Ok(Value::list(l.get(1..).unwrap_or_default().to_vec()))
    });
    m.insert("initial", one.clone(), |_, a| {
        let l = list_op(&a[0], "find initial")?;
        Ok(Value::list(l[..l.len().saturating_sub(1)].to_vec()))
    });
    m.insert("reverse", one.clone(), |_, a| {
        let mut l = list_op(&a[0], "find reverse")?;
        l.reverse();
        Ok(Value::list(l))
    });
    m.insert("compact", one.clone(), |_, a| {
        let l = list_op(&a[0], "compact")?;
        Ok(Value::list(l.into_iter().filter(|v| !empty(v)).collect()))
    });
    m.insert("uniq", one, |_, a| {
        let mut out: Vec<Value> = Vec::new();
        for v in list_op(&a[0], "uniq")? {
            if !out.iter().any(|o| deep_equal(o, &v)) {
                out.push(v);
            }
        }
        Ok(Value::list(out))
    });
    for name in ["append", "push"] {
        m.insert(name, Signature::fixed(&[Any, Any]), |_, a| {
            let mut l = list_op(&a[0], "push")?;
            l.push(a[1].clone());
            Ok(Value::list(l))
        });
    }
    m.insert("prepend", Signature::fixed(&[Any, Any]), |_, a| {
        let mut l = list_op(&a[0], "prepend")?;
        l.insert(0, a[1].clone());
        Ok(Value::list(l))
    });
    m.insert("has", Signature::fixed(&[Any, Any]), |_, a| {
        if a[1].is_nil() {
            return Ok(Value::Bool(false));
        }
        let l = list_op(&a[1], "find has")?;
        Ok(Value::Bool(l.iter().any(|v| deep_equal(v, &a[0]))))
    });
    m.insert("concat", any_var, |_, a| {
        let mut out = Vec::new();
        for l in a {
            out.extend(items(l).map_err(|k| format!("Cannot concat type {k} as list"))?);
        }
        Ok(Value::list(out))
    });
}

fn register_dicts(m: &mut FuncMap) {
    m.insert("dict", Signature::variadic(&[], Any), |_, a| {
        let mut d = BTreeMap::new();
        for kv in a.chunks(2) {
            d.insert(
                strval(&kv[0]),
                kv.get(1).cloned().unwrap_or_else(|| Value::from("")),
            );
        }
        Ok(Value::map(d))
    });
    m.insert("get", Signature::fixed(&[Map, Str]), |_, a| {
        let key = a[1].as_str().unwrap_or_default();
        Ok(map_of(&a[0])
            .and_then(|d| d.get(key))
            .unwrap_or_else(|| Value::from("")))
    });
    m.insert("hasKey", Signature::fixed(&[Map, Str]), |_, a| {
        let key = a[1].as_str().unwrap_or_default();
        Ok(Value::Bool(
            map_of(&a[0]).is_some_and(|d| d.contains_key(key)),
        ))
    });
    m.insert("set", Signature::fixed(&[Map, Str, Any]), |ctx, a| {
        if let Some(d) = map_of(&a[0]) {
            if !ctx.shared.may_mutate(&d) {
                return Err(SHARED_MAP.into());
            }
            d.insert(a[1].as_str().unwrap_or_default().to_string(), a[2].clone());
        }
        Ok(a[0].clone())
    });
    m.insert("unset", Signature::fixed(&[Map, Str]), |ctx, a| {
        if let Some(d) = map_of(&a[0]) {
            if !ctx.shared.may_mutate(&d) {
                return Err(SHARED_MAP.into());
            }
            d.remove(a[1].as_str().unwrap_or_default());
        }
        Ok(a[0].clone())
    });
    // Go map order is random; sorted keys are one valid order.
    m.insert("keys", Signature::variadic(&[], Map), |_, a| {
        let mut ks: Vec<Value> = Vec::new();
        for d in a.iter().filter_map(map_of) {
            ks.extend(d.entries().into_iter().map(|(k, _)| Value::from(k)));
        }
        Ok(Value::typed_list(Elem::String, ks))
    });
    m.insert("pick", Signature::variadic(&[Map], Str), |_, a| {
        Ok(pick_omit(a, true))
    });
    m.insert("omit", Signature::variadic(&[Map], Str), |_, a| {
        Ok(pick_omit(a, false))
    });
}

fn pick_omit(a: &[Value], keep_listed: bool) -> Value {
    let listed: Vec<&str> = a[1..].iter().filter_map(Value::as_str).collect();
    let mut out = BTreeMap::new();
    for (k, v) in map_of(&a[0]).map(|d| d.entries()).unwrap_or_default() {
        if listed.contains(&k.as_str()) == keep_listed {
            out.insert(k, v);
        }
    }
    Value::map(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emptiness_and_equality() {
        assert!(empty(&Value::Nil) && empty(&Value::Int(0)) && empty(&Value::from("")));
        assert!(!empty(&Value::list(vec![Value::Nil])));
        assert!(deep_equal(&Value::Int(1), &Value::Int(1)));
        assert!(!deep_equal(&Value::Int(1), &Value::Float(1.0)));
        assert!(deep_equal(
            &Value::list(vec![Value::from("a")]),
            &Value::list(vec![Value::from("a")])
        ));
    }

    #[test]
    fn list_errors_name_the_kind() {
        assert_eq!(
            list_op(&Value::from("x"), "push").err().as_deref(),
            Some("Cannot push on type string")
        );
        assert_eq!(items(&Value::Float(1.0)).err().as_deref(), Some("float64"));
    }
}
