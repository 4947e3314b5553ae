//! The host objects templates see: `.Files` (helm's `engine.files` with
//! `Get`, `GetBytes`, `Glob`, `Lines`, `AsConfig`, `AsSecrets`),
//! `.Capabilities` (`KubeVersion`, `APIVersions.Has`, `HelmVersion`) and
//! `.Chart` (`chart.Metadata` fields plus `IsRoot`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::FileData;
use crate::gotmpl::convert::to_yaml;
use crate::gotmpl::golib::b64_encode;
use crate::gotmpl::{Elem, Object, Value};

/// gobwas/glob with `/` as separator: `*` and `?` stay within a path
/// segment, `**` crosses segments, `[...]` classes, `{a,b}` alternatives.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    GlobPattern::new(pattern).matches(name)
}

/// A [`glob_match`] pattern parsed once, for matching many names (a
/// chart's every file against every `.helmignore` line).
#[derive(Clone, Debug)]
pub struct GlobPattern {
    /// The `{a,b}` alternatives' token lists; `None` when malformed
    /// (matches nothing).
    alternatives: Option<Vec<Vec<Glob>>>,
    /// The pattern has no wildcard: it matches only this text.
    literal: Option<String>,
}

impl GlobPattern {
    /// Parses `pattern`.
    pub fn new(pattern: &str) -> GlobPattern {
        // Matched directly rather than through a regex: compiling a regex
        // each time was most of a small chart's render time.
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        let alternatives = parse_glob(&chars, &mut i, false);
        let lit = |t: &Glob| match t {
            Glob::Lit(c) => Some(*c),
            _ => None,
        };
        let literal = match alternatives.as_deref() {
            Some([toks]) => toks.iter().map(lit).collect(),
            _ => None,
        };
        GlobPattern {
            alternatives,
            literal,
        }
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        let Some(alternatives) = &self.alternatives else {
            return false;
        };
        if let Some(text) = &self.literal {
            return text == name;
        }
        let name: Vec<char> = name.chars().collect();
        alternatives.iter().any(|toks| glob_tokens(toks, &name))
    }
}

#[derive(Clone, Debug)]
enum Glob {
    Lit(char),
    /// `*`: any run without `/`.
    Star,
    /// `**`: any run.
    Super,
    /// `?`: one character but `/`.
    One,
    /// `[...]` / `[!...]`: inclusive ranges.
    Class(bool, Vec<(char, char)>),
}

/// Parses up to the end (or, inside braces, up to `,`/`}`), expanding
/// `{a,b}` alternatives into separate token lists. `None` when malformed.
fn parse_glob(p: &[char], i: &mut usize, nested: bool) -> Option<Vec<Vec<Glob>>> {
    let mut seqs: Vec<Vec<Glob>> = vec![Vec::new()];
    while *i < p.len() {
        let c = p[*i];
        *i += 1;
        let tok = match c {
            ',' | '}' if nested => {
                *i -= 1;
                return Some(seqs);
            }
            '*' if p.get(*i) == Some(&'*') => {
                *i += 1;
                Glob::Super
            }
            '*' => Glob::Star,
            '?' => Glob::One,
            '[' => {
                let neg = p.get(*i) == Some(&'!');
                if neg {
                    *i += 1;
                }
                let mut items = Vec::new();
                loop {
                    let d = *p.get(*i)?;
                    *i += 1;
                    if d == ']' {
                        break;
                    }
                    if p.get(*i) == Some(&'-') && p.get(*i + 1).is_some_and(|e| *e != ']') {
                        items.push((d, p[*i + 1]));
                        *i += 2;
                    } else {
                        items.push((d, d));
                    }
                }
                if items.is_empty() {
                    return None;
                }
                Glob::Class(neg, items)
            }
            '{' => {
                let mut alts = Vec::new();
                loop {
                    alts.extend(parse_glob(p, i, true)?);
                    match p.get(*i) {
                        Some(',') => *i += 1,
                        Some('}') => {
                            *i += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                seqs = seqs
                    .iter()
                    .flat_map(|s| {
                        alts.iter().map(move |a| {
                            let mut v = s.clone();
                            v.extend(a.iter().cloned());
                            v
                        })
                    })
                    .collect();
                continue;
            }
            '}' => return None,
            '\\' => Glob::Lit(*p.get(*i).inspect(|_| *i += 1)?),
            other => Glob::Lit(other),
        };
        for s in &mut seqs {
            s.push(tok.clone());
        }
    }
    if nested {
        return None;
    }
    Some(seqs)
}

fn glob_tokens(toks: &[Glob], s: &[char]) -> bool {
    let Some((first, rest)) = toks.split_first() else {
        return s.is_empty();
    };
    match first {
        Glob::Lit(c) => s.first() == Some(c) && glob_tokens(rest, &s[1..]),
        Glob::One => s.first().is_some_and(|c| *c != '/') && glob_tokens(rest, &s[1..]),
        Glob::Class(neg, items) => {
            s.first()
                .is_some_and(|c| items.iter().any(|(lo, hi)| (lo..=hi).contains(&c)) != *neg)
                && glob_tokens(rest, &s[1..])
        }
        Glob::Star => {
            for k in 0..=s.len() {
                if glob_tokens(rest, &s[k..]) {
                    return true;
                }
                if s.get(k) == Some(&'/') {
                    break;
                }
            }
            false
        }
        Glob::Super => (0..=s.len()).any(|k| glob_tokens(rest, &s[k..])),
    }
}

/// Helm's `files` type: path → bytes.
#[derive(Debug)]
pub struct Files {
    entries: Arc<BTreeMap<String, FileData>>,
}

impl Files {
    /// Files of one chart, from bytes.
    #[cfg(test)]
    pub fn new(entries: BTreeMap<String, Vec<u8>>) -> Files {
        Files::shared(Arc::new(
            entries
                .into_iter()
                .map(|(k, v)| (k, FileData::loaded(v)))
                .collect(),
        ))
    }

    /// Files of one chart, shared with the loaded chart.
    pub fn shared(entries: Arc<BTreeMap<String, FileData>>) -> Files {
        Files { entries }
    }

    /// A file's bytes; empty when there is no such file (helm's `GetBytes`).
    fn bytes(&self, name: &str) -> Result<&[u8], String> {
        self.entries.get(name).map_or(Ok(&[][..]), FileData::bytes)
    }

    fn text(&self, name: &str) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.bytes(name)?).into_owned())
    }
}

fn name_arg(args: &[Value]) -> Result<&str, String> {
    match args.first() {
        Some(Value::Str(s)) => Ok(s),
        Some(other) => Err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
        None => Err("wrong number of args: want 1 got 0".into()),
    }
}

impl Object for Files {
    fn type_name(&self) -> String {
        "engine.files".into()
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Get" | "GetBytes" | "Glob" | "Lines" | "AsConfig" | "AsSecrets"
        )
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        match name {
            "Get" => Ok(Value::from(self.text(name_arg(args)?)?)),
            "GetBytes" => Ok(Value::Bytes(Arc::from(self.bytes(name_arg(args)?)?))),
            "Lines" => {
                let text = self.text(name_arg(args)?)?;
                let text = text.strip_suffix('\n').unwrap_or(&text);
                Ok(Value::typed_list(
                    Elem::String,
                    text.split('\n').map(Value::from).collect(),
                ))
            }
            "Glob" => {
                let pat = name_arg(args)?;
                let hits: BTreeMap<String, FileData> = self
                    .entries
                    .iter()
                    .filter(|(k, _)| glob_match(pat, k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok(Value::Object(Arc::new(Files::shared(Arc::new(hits)))))
            }
            "AsConfig" | "AsSecrets" => {
                let m = self
                    .entries
                    .iter()
                    .map(|(k, v)| {
                        let v = v.bytes()?;
                        let base = k.rsplit('/').next().unwrap_or(k).to_string();
                        let val = if name == "AsConfig" {
                            String::from_utf8_lossy(v).into_owned()
                        } else {
                            b64_encode(v)
                        };
                        Ok((base, Value::from(val)))
                    })
                    .collect::<Result<BTreeMap<String, Value>, String>>()?;
                if m.is_empty() {
                    return Ok(Value::from(""));
                }
                Ok(Value::from(to_yaml(&Value::map(m))))
            }
            _ => Err(format!("can't call method {name}")),
        }
    }

    fn underlying(&self) -> Option<Value> {
        let m: BTreeMap<String, Value> = self
            .entries
            .iter()
            // A deferred file that no longer reads (changed during the
            // run) shows as empty here: printing a host object cannot fail.
            .map(|(k, v)| {
                (
                    k.clone(),
                    Value::Bytes(Arc::from(v.bytes().unwrap_or_default())),
                )
            })
            .collect();
        Some(Value::typed_map(Elem::Bytes, m))
    }
}

/// A struct-like object with named fields (`.Capabilities`, `.Chart`, ...).
#[derive(Debug)]
pub struct Record {
    type_name: String,
    fields: BTreeMap<String, Value>,
    /// `String()` when the Go type is a Stringer.
    string: Option<String>,
    /// What `json.Marshal` prints.
    json: Option<Value>,
    /// Whether `String()` has a pointer receiver (see `Object::pointer_string`).
    pointer_string: bool,
    /// The struct's fields in Go's order, for `%v`.
    struct_fields: Option<Vec<(String, Value)>>,
    /// `json.Marshal`'s members in Go's order.
    json_fields: Option<Vec<(String, Value)>>,
}

impl Record {
    /// A record of the given Go type.
    pub fn new(type_name: &str, fields: BTreeMap<String, Value>) -> Record {
        Record {
            type_name: type_name.into(),
            fields,
            string: None,
            json: None,
            pointer_string: false,
            struct_fields: None,
            json_fields: None,
        }
    }

    /// With a `String()` method on the pointer type only.
    pub fn with_pointer_string(mut self, s: String) -> Record {
        self.string = Some(s);
        self.pointer_string = true;
        self
    }

    /// With Go's field order for `%v`.
    pub fn with_struct_fields(mut self, fields: Vec<(String, Value)>) -> Record {
        self.struct_fields = Some(fields);
        self
    }

    /// With a JSON form whose members keep Go's field order.
    pub fn with_json_fields(mut self, fields: Vec<(String, Value)>) -> Record {
        self.json = Some(Value::map(fields.iter().cloned().collect()));
        self.json_fields = Some(fields);
        self
    }
}

impl Object for Record {
    fn type_name(&self) -> String {
        self.type_name.clone()
    }

    fn has_method(&self, name: &str) -> bool {
        name == "String" && self.string.is_some()
    }

    fn call_method(&self, _name: &str, _args: &[Value]) -> Result<Value, String> {
        Ok(Value::from(self.string.clone().unwrap_or_default()))
    }

    fn field(&self, name: &str) -> Option<Value> {
        self.fields.get(name).cloned()
    }

    fn to_go_string(&self) -> Option<String> {
        self.string.clone().filter(|_| !self.pointer_string)
    }

    fn pointer_string(&self) -> Option<String> {
        self.string.clone().filter(|_| self.pointer_string)
    }

    fn struct_fields(&self) -> Option<Vec<(String, Value)>> {
        self.struct_fields.clone()
    }

    fn marshal(&self) -> Option<Value> {
        self.json.clone()
    }

    fn marshal_fields(&self) -> Option<Vec<(String, Value)>> {
        self.json_fields.clone()
    }
}

/// `chartutil.VersionSet`: a `[]string` with a `Has` method.
#[derive(Debug)]
pub struct VersionSet(pub Vec<String>);

impl Object for VersionSet {
    fn type_name(&self) -> String {
        "chartutil.VersionSet".into()
    }

    fn has_method(&self, name: &str) -> bool {
        name == "Has"
    }

    fn call_method(&self, _name: &str, args: &[Value]) -> Result<Value, String> {
        let v = name_arg(args)?;
        Ok(Value::Bool(self.0.iter().any(|x| x == v)))
    }

    fn underlying(&self) -> Option<Value> {
        Some(Value::typed_list(
            Elem::String,
            self.0.iter().map(|s| Value::from(s.as_str())).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("files/*", "files/a.txt"));
        assert!(!glob_match("files/*", "files/sub/c.yaml"));
        assert!(glob_match("files/**", "files/sub/c.yaml"));
        assert!(glob_match("*.{txt,md}", "a.md"));
        assert!(glob_match("templates/.?*", "templates/.x"));
        assert!(!glob_match("templates/.?*", "templates/x"));
        assert!(glob_match("[a-c]?.yaml", "b1.yaml"));
        assert!(!glob_match("[!a-c]?.yaml", "b1.yaml"));
        assert!(glob_match("{x,y{1,2}}/*", "y2/f"));
        assert!(!glob_match("{x,y", "x"));
        assert!(glob_match("a\\*b", "a*b"));
        assert!(!glob_match("a\\*b", "axb"));
        assert!(glob_match("Chart.lock", "Chart.lock"));
        assert!(!glob_match("Chart.lock", "Chart.loc"));
        assert!(!glob_match("Chart.lock", "Chart.locks"));
    }

    #[test]
    fn files_methods() {
        let mut m = BTreeMap::new();
        m.insert("files/a.txt".to_string(), b"one\ntwo\n".to_vec());
        m.insert("files/b.txt".to_string(), b"bravo".to_vec());
        let f = Files::new(m);
        let lines = f.call_method("Lines", &[Value::from("files/a.txt")]);
        assert_eq!(
            lines.map(|v| crate::gotmpl::fmt::to_string(&v)).as_deref(),
            Ok("[one two]")
        );
        let conf = f.call_method("AsConfig", &[]);
        assert_eq!(
            conf.map(|v| crate::gotmpl::fmt::to_string(&v)).as_deref(),
            Ok("a.txt: |\n  one\n  two\nb.txt: bravo")
        );
        let vs = VersionSet(vec!["v1".into()]);
        assert!(matches!(
            vs.call_method("Has", &[Value::from("v1")]),
            Ok(Value::Bool(true))
        ));
    }
}
