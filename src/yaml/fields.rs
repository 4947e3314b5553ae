//! Strict decoding of a mapping into a typed value, table-driven: each known
//! key is listed once with the code that decodes its value, so a key cannot
//! be known without being handled, and there is no catch-all arm for a
//! value to land in by mistake. What an unknown key means (an error naming
//! the file and line, or nothing for a lenient decoder) is the caller's,
//! through [`Strict`]; this module knows no files and no schemas.

use super::{Node, Value};

/// Decodes the value of one key into the target `T`.
pub type Setter<D, T> = fn(&D, &Node, &mut T) -> Result<(), <D as Strict>::Error>;

/// One known key and its decoder.
pub type Field<D, T> = (&'static str, Setter<D, T>);

/// How keys name fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// Exactly as written (our own configuration files).
    Exact,
    /// As Go's `encoding/json` matches struct fields: ASCII case folded.
    GoJson,
}

/// The caller's side of a strict decode.
pub trait Strict {
    /// The caller's error, carrying its file and line.
    type Error;
    /// How keys are matched.
    fn keys(&self) -> Keys;
    /// A key no field names: an error naming `key`'s file and line, or
    /// `Ok` to ignore it. `known` lists the table's keys, for messages.
    fn unknown(&self, key: &Node, name: &str, known: &[&str]) -> Result<(), Self::Error>;
}

/// A [`Field`] whose decoder is one statement:
/// `field!("name", |d, v, t| t.name = d.string(v)?)`.
macro_rules! field {
    ($name:literal, |$d:pat_param, $v:pat_param, $t:pat_param| $body:expr) => {
        ($name, |$d, $v, $t| {
            $body;
            Ok(())
        })
    };
}
pub(crate) use field;

/// The field `name` selects in `table`, under `keys`.
pub fn find<D: Strict, T>(table: &[Field<D, T>], keys: Keys, name: &str) -> Option<Field<D, T>> {
    let found = match keys {
        Keys::Exact => table.iter().find(|(f, _)| *f == name),
        Keys::GoJson => table.iter().find(|(f, _)| f.eq_ignore_ascii_case(name)),
    };
    found.copied()
}

/// Decodes the entries of a mapping into `target`, key by key in file order.
/// A node that is not a mapping has no entries here: the caller decides what
/// that means before calling.
pub fn decode<D: Strict, T>(
    d: &D,
    n: &Node,
    target: &mut T,
    table: &[Field<D, T>],
) -> Result<(), D::Error> {
    let Value::Map(entries) = &n.value else {
        return Ok(());
    };
    for (k, v) in entries {
        let name = k.key_text().unwrap_or_default();
        match find(table, d.keys(), name) {
            Some((_, set)) => set(d, v, target)?,
            None => {
                let known: Vec<&str> = table.iter().map(|(f, _)| *f).collect();
                d.unknown(k, name, &known)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    struct D(Keys);

    impl Strict for D {
        type Error = String;
        fn keys(&self) -> Keys {
            self.0
        }
        fn unknown(&self, key: &Node, name: &str, known: &[&str]) -> Result<(), String> {
            Err(format!(
                "{}: unknown {name} ({})",
                key.pos.line,
                known.join(",")
            ))
        }
    }

    #[derive(Default)]
    struct T {
        a: String,
        b: String,
    }

    fn run(d: &D, src: &str) -> Result<T, String> {
        let n = parse_one(src, Resolver::V2).map_err(|e| e.to_string())?;
        let mut t = T::default();
        decode(
            d,
            &n,
            &mut t,
            &[
                ("alpha", |_, v, t: &mut T| {
                    t.a = v.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
                    Ok(())
                }),
                ("beta", |_, v, t: &mut T| {
                    t.b = v.as_scalar().map(|s| s.text.clone()).unwrap_or_default();
                    Ok(())
                }),
            ],
        )?;
        Ok(t)
    }

    #[test]
    fn each_key_lands_in_its_own_field() {
        let t = run(&D(Keys::Exact), "beta: 2\nalpha: 1\n").unwrap();
        assert_eq!((t.a.as_str(), t.b.as_str()), ("1", "2"));
        let t = run(&D(Keys::GoJson), "BETA: 2\n").unwrap();
        assert_eq!(t.b, "2");
    }

    #[test]
    fn unknown_keys_are_the_callers_error() {
        let e = run(&D(Keys::Exact), "alpha: 1\nBeta: 2\n").err().unwrap();
        assert_eq!(e, "2: unknown Beta (alpha,beta)");
        let e = run(&D(Keys::GoJson), "gamma: 1\n").err().unwrap();
        assert!(e.starts_with("1: unknown gamma"), "{e}");
    }
}
