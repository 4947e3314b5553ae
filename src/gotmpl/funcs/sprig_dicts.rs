//! Sprig v3.3.0 list/dict functions beyond the basics (`list.go`,
//! `dict.go`, `defaults.go`, `reflect.go`): `without`, `chunk`, Sprig's
//! `slice`, `all`/`any`, `dig`, `pluck`, `values`, `merge` and
//! `mergeOverwrite` (dario.cat/mergo v1.0.1 rules), `deepCopy`, the
//! reflection helpers, and the `must` twins of functions whose plain form
//! already fails (Go's non-`must` form panics with the same message).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::sprig_collections::{deep_equal, empty};
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::fmt::to_string;
use crate::gotmpl::value::{Elem, List, Map as GoMap, Value};
use crate::gotmpl::walk::{Nesting, Path};

use ArgType::{Any, Int, Map, String as Str};

/// Elements of a slice, or Sprig's error naming the reflect kind.
fn slice_items(v: &Value, msg: impl Fn(&str) -> String) -> Result<Vec<Value>, String> {
    match v.resolved() {
        Value::List(l) => Ok(l.items.clone()),
        Value::Bytes(b) => Ok(b.iter().map(|x| Value::Uint8(*x)).collect()),
        Value::Invalid | Value::Nil => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Err(msg(other.kind_name())),
    }
}

fn as_map(v: &Value) -> Option<Arc<GoMap>> {
    match v.resolved() {
        Value::Map(m) => Some(m),
        _ => None,
    }
}

fn int(v: &Value) -> i64 {
    super::sprig_math::to_int64(v)
}

/// Go's `reflect.Value.Kind().String()` of an `interface{}` argument.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Invalid | Value::Nil => "invalid",
        other => other.kind_name(),
    }
}

/// Registers the functions of this file.
pub fn register(m: &mut FuncMap) {
    let any_var = Signature::variadic(&[], Any);
    m.insert("all", any_var.clone(), |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !empty(v))))
    });
    m.insert("any", any_var.clone(), |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !empty(v))))
    });
    m.insert("without", Signature::variadic(&[Any], Any), |_, a| {
        let l = slice_items(&a[0], |k| format!("Cannot find without on type {k}"))?;
        let omit = &a[1..];
        Ok(Value::list(
            l.into_iter()
                .filter(|v| !omit.iter().any(|o| deep_equal(o, v)))
                .collect(),
        ))
    });
    m.insert("chunk", Signature::fixed(&[Int, Any]), |_, a| {
        let size = int(&a[0]);
        let l = slice_items(&a[1], |k| format!("Cannot chunk type {k}"))?;
        if size <= 0 {
            return Err("runtime error: makeslice: len out of range".into());
        }
        Ok(Value::list(
            l.chunks(size as usize)
                .map(|c| Value::list(c.to_vec()))
                .collect(),
        ))
    });
    m.insert("slice", Signature::variadic(&[Any], Any), |_, a| {
        sprig_slice(a)
    });
    m.insert("dig", any_var, |_, a| dig(a));
    m.insert("pluck", Signature::variadic(&[Str], Map), |_, a| {
        let key = a[0].as_str().unwrap_or_default();
        Ok(Value::list(
            a[1..]
                .iter()
                .filter_map(as_map)
                .filter_map(|d| d.get(key))
                .collect(),
        ))
    });
    // Go ranges maps in random order; key order is one of the possible results.
    m.insert("values", Signature::fixed(&[Map]), |_, a| {
        let d = as_map(&a[0]).map(|d| d.entries()).unwrap_or_default();
        Ok(Value::list(d.into_iter().map(|(_, v)| v).collect()))
    });
    for (name, overwrite) in [
        ("merge", false),
        ("mustMerge", false),
        ("mergeOverwrite", true),
        ("mustMergeOverwrite", true),
    ] {
        m.insert(name, Signature::variadic(&[Map], Map), move |ctx, a| {
            if let Some(dst) = as_map(&a[0]) {
                for src in a[1..].iter().filter_map(as_map) {
                    let may = |m: &GoMap| ctx.shared.may_mutate(m);
                    merge_into(&dst, &src, overwrite, &may, &mut Path::default())
                        .map_err(|why| why.describe(&a[0].type_name()))?;
                    if ctx.shared.blocked() {
                        return Err(super::sprig_collections::SHARED_MAP.into());
                    }
                }
            }
            Ok(a[0].clone())
        });
    }
    for name in ["deepCopy", "mustDeepCopy"] {
        m.insert(name, Signature::fixed(&[Any]), |_, a| {
            try_deep_copy(&a[0]).map_err(|why| why.describe(&a[0].type_name()))
        });
    }
    register_reflect(m);
    register_must_aliases(m);
}

fn register_reflect(m: &mut FuncMap) {
    m.insert("typeOf", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(a[0].type_name()))
    });
    m.insert("typeIs", Signature::fixed(&[Str, Any]), |_, a| {
        Ok(Value::Bool(
            a[0].as_str() == Some(a[1].type_name().as_str()),
        ))
    });
    m.insert("typeIsLike", Signature::fixed(&[Str, Any]), |_, a| {
        let t = a[1].type_name();
        let want = a[0].as_str().unwrap_or_default();
        Ok(Value::Bool(want == t || format!("*{want}") == t))
    });
    m.insert("kindOf", Signature::fixed(&[Any]), |_, a| {
        Ok(Value::from(kind_of(&a[0])))
    });
    m.insert("kindIs", Signature::fixed(&[Str, Any]), |_, a| {
        Ok(Value::Bool(a[0].as_str() == Some(kind_of(&a[1]))))
    });
    m.insert("deepEqual", Signature::fixed(&[Any, Any]), |_, a| {
        Ok(Value::Bool(deep_equal(&a[0], &a[1])))
    });
}

/// `mustX` behaves as `X` where `X` already reports its failure.
fn register_must_aliases(m: &mut FuncMap) {
    for name in [
        "push", "append", "prepend", "first", "last", "rest", "initial", "reverse", "compact",
        "uniq", "without", "has", "chunk", "slice",
    ] {
        let must = format!("must{}{}", name[..1].to_uppercase(), &name[1..]);
        m.alias(&must, name);
    }
}

/// Sprig's `slice`: `list[start:end]` of any slice, keeping its type.
fn sprig_slice(a: &[Value]) -> Result<Value, String> {
    let (elem, items) = match a[0].resolved() {
        Value::List(l) => (l.elem, l.items.clone()),
        Value::Bytes(b) => {
            let v: Vec<Value> = b.iter().map(|x| Value::Uint8(*x)).collect();
            (Elem::Interface, v)
        }
        Value::Invalid | Value::Nil => {
            return Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => {
            return Err(format!(
                "list should be type of slice or array but {}",
                other.kind_name()
            ))
        }
    };
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    let start = a.get(1).map_or(0, int);
    let end = a.get(2).map_or(items.len() as i64, int);
    if start < 0 || end < start || end as usize > items.len() {
        return Err("reflect.Value.Slice: slice index out of bounds".into());
    }
    if let Value::Bytes(b) = a[0].resolved() {
        return Ok(Value::Bytes(Arc::from(&b[start as usize..end as usize])));
    }
    Ok(Value::List(Arc::new(List {
        elem,
        items: items[start as usize..end as usize].to_vec(),
    })))
}

/// Sprig's `dig KEY... DEFAULT DICT`.
fn dig(a: &[Value]) -> Result<Value, String> {
    if a.len() < 3 {
        return Err("dig needs at least three arguments".into());
    }
    let conv = |v: &Value| -> Result<Arc<GoMap>, String> {
        match v {
            Value::Map(m) if m.elem == Elem::Interface => Ok(m.clone()),
            other => Err(format!(
                "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                if other.is_nil() {
                    "nil".to_string()
                } else {
                    other.type_name()
                }
            )),
        }
    };
    let mut dict = conv(&a[a.len() - 1])?;
    let default = a[a.len() - 2].clone();
    let keys = &a[..a.len() - 2];
    for (i, k) in keys.iter().enumerate() {
        let Value::Str(k) = k else {
            return Err(format!(
                "interface conversion: interface {{}} is {}, not string",
                if k.is_nil() {
                    "nil".to_string()
                } else {
                    k.type_name()
                }
            ));
        };
        let Some(step) = dict.get(k) else {
            return Ok(default);
        };
        if i + 1 == keys.len() {
            return Ok(step);
        }
        dict = conv(&step)?;
    }
    Ok(default)
}

/// mergo's `isEmptyValue` through an interface.
fn is_empty_value(v: &Value) -> bool {
    empty(v)
}

/// mergo `deepMerge` of `map[string]interface{}`: maps present on both
/// sides merge recursively (in place); otherwise the source value is taken
/// when the destination lacks the key or holds an empty value, or always
/// with `overwrite`.
/// `may` says whether `dst` (and each nested map merged into) may be
/// changed; one it refuses is left as it is (the caller gives up).
fn merge_into(
    dst: &GoMap,
    src: &GoMap,
    overwrite: bool,
    may: &(dyn Fn(&GoMap) -> bool + Sync),
    path: &mut Path,
) -> Result<(), Nesting> {
    if !may(dst) {
        return Ok(());
    }
    for (k, sv) in src.entries() {
        let dv = dst.get(&k);
        if sv.is_nil() {
            if overwrite {
                dst.insert(k, Value::Nil);
            } else if dv.is_none() || dv.as_ref().is_some_and(is_empty_value) {
                dst.insert(k, sv);
            }
            continue;
        }
        if let (Value::Map(sm), Some(d @ Value::Map(dm))) = (&sv, &dv) {
            path.descend(d, |p| merge_into(dm, sm, overwrite, may, p))??;
            if !dm.is_empty() {
                continue;
            }
        }
        let keep = !overwrite && dv.as_ref().is_some_and(|d| !is_empty_value(d));
        if !keep {
            dst.insert(k, sv);
        }
    }
    Ok(())
}

/// copystructure's `Copy`: fresh maps and slices all the way down. Where a
/// map contains itself (copystructure would recurse forever) the copy
/// shares that inner map; [`try_deep_copy`] reports it instead.
pub fn deep_copy(v: &Value) -> Value {
    copy_of(v, &mut Path::default(), false).unwrap_or_else(|_| v.clone())
}

/// [`deep_copy`], failing on a map that contains itself or nesting past
/// the walk limit.
pub fn try_deep_copy(v: &Value) -> Result<Value, Nesting> {
    copy_of(v, &mut Path::default(), true)
}

fn copy_of(v: &Value, path: &mut Path, strict: bool) -> Result<Value, Nesting> {
    if !matches!(v, Value::List(_) | Value::Map(_)) {
        return Ok(v.clone());
    }
    let copied = path.descend(v, |p| match v {
        Value::List(l) => {
            let items = l
                .items
                .iter()
                .map(|x| copy_of(x, p, strict))
                .collect::<Result<_, _>>()?;
            Ok(Value::List(Arc::new(List {
                elem: l.elem,
                items,
            })))
        }
        Value::Map(m) => {
            let mut e = BTreeMap::new();
            for (k, x) in m.entries() {
                e.insert(k, copy_of(&x, p, strict)?);
            }
            Ok(Value::typed_map(m.elem, e))
        }
        other => Ok(other.clone()),
    });
    match copied {
        Ok(r) => r,
        Err(why) if strict => Err(why),
        Err(_) => Ok(v.clone()),
    }
}

/// `%v` of a value, for messages.
#[allow(dead_code)]
fn show(v: &Value) -> String {
    to_string(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, Value)]) -> Value {
        Value::map(kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn merge_keeps_or_overwrites() {
        let dst = map(&[
            ("a", Value::from("1")),
            ("e", Value::from("")),
            ("n", map(&[("x", Value::Int(1))])),
        ]);
        let src = map(&[
            ("a", Value::from("2")),
            ("b", Value::from("3")),
            ("e", Value::from("4")),
            ("n", map(&[("x", Value::Int(2)), ("y", Value::Int(3))])),
        ]);
        let (Some(d), Some(s)) = (as_map(&dst), as_map(&src)) else {
            panic!("maps");
        };
        assert!(merge_into(&d, &s, false, &|_| true, &mut Path::default()).is_ok());
        assert_eq!(to_string(&dst), "map[a:1 b:3 e:4 n:map[x:1 y:3]]");
        assert!(merge_into(&d, &s, true, &|_| true, &mut Path::default()).is_ok());
        assert_eq!(to_string(&dst), "map[a:2 b:3 e:4 n:map[x:2 y:3]]");
    }

    #[test]
    fn dig_slice_and_kinds() {
        let d = map(&[("a", map(&[("b", Value::from("c"))]))]);
        let r = dig(&[
            Value::from("a"),
            Value::from("b"),
            Value::from("def"),
            d.clone(),
        ]);
        assert_eq!(r.map(|v| to_string(&v)).as_deref(), Ok("c"));
        let r = dig(&[Value::from("x"), Value::from("def"), d]);
        assert_eq!(r.map(|v| to_string(&v)).as_deref(), Ok("def"));
        let l = Value::list(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        let r = sprig_slice(&[l.clone(), Value::Int(1), Value::Int(2)]);
        assert_eq!(r.map(|v| to_string(&v)).as_deref(), Ok("[2]"));
        assert!(sprig_slice(&[l, Value::Int(2), Value::Int(5)]).is_err());
        assert_eq!(kind_of(&Value::Nil), "invalid");
        let c = deep_copy(&map(&[("k", Value::list(vec![]))]));
        assert_eq!(to_string(&c), "map[k:[]]");
    }
}
