//! Checks the engine against the shared helm function vectors
//! (`/work/shared/conformance/helm/functions/vectors.json`): every `core`
//! vector that uses only Go builtins and no chart root. Skipped when the
//! corpus is absent, so the crate's tests pass anywhere.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::lexer::{lex, Kind};
use super::{ExecOptions, FuncMap, TemplateSet, Value};

const VECTORS: &str = "/work/shared/conformance/helm/functions/vectors.json";
const HELPERS: &str = "/work/shared/conformance/helm/functions/chart/templates/_core_helpers.tpl";

/// Minimal JSON reader for the corpus (numbers become float64, as they do
/// when Helm loads values files).
struct Json<'a> {
    s: &'a [u8],
    i: usize,
}

impl Json<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Some(Value::map(m));
                    }
                    let k = self.string()?;
                    self.ws();
                    self.i += 1; // ':'
                    let v = self.value()?;
                    m.insert(k, v);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut l = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Some(Value::list(l));
                    }
                    l.push(self.value()?);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            b'"' => self.string().map(Value::from),
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Nil),
            _ => {
                let start = self.i;
                while self.i < self.s.len() && b"+-.eE0123456789".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                t.parse::<f64>().ok().map(Value::Float)
            }
        }
    }

    fn word(&mut self, w: &str, v: Value) -> Option<Value> {
        self.i += w.len();
        Some(v)
    }

    fn string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out: Vec<u16> = Vec::new();
        let mut bytes = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let ch = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                            self.i += 4;
                            out.push(u16::from_str_radix(hex, 16).ok()?);
                            if (0xD800..0xDC00).contains(out.last()?) {
                                continue;
                            }
                            let s = String::from_utf16_lossy(&out);
                            out.clear();
                            bytes.extend_from_slice(s.as_bytes());
                            continue;
                        }
                        other => other as char,
                    };
                    let mut b = [0u8; 4];
                    bytes.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                }
                c => bytes.push(c),
            }
        }
        String::from_utf8(bytes).ok()
    }
}

fn field(m: &Value, k: &str) -> Option<Value> {
    match m {
        Value::Map(map) => map.get(k),
        _ => None,
    }
}

/// True when every function used is implemented here.
fn only_builtins(text: &str, funcs: &FuncMap) -> bool {
    lex(text, true, true)
        .iter()
        .all(|t| t.kind != Kind::Identifier || funcs.contains(&t.val))
}

/// Everything Helm provides.
fn vector_funcs() -> FuncMap {
    crate::helm::template_funcs(crate::helm::HelmVersion::V3)
}

/// Runs one vector; returns a failure description.
fn check(v: &Value, funcs: &Arc<FuncMap>) -> Option<String> {
    let id = field(v, "id")?.as_str()?.to_string();
    let template = field(v, "template")?.as_str()?.to_string();
    let dot = match field(v, "dot")?.as_str()? {
        "empty" => Value::map(BTreeMap::new()),
        "data" => field(v, "values")?,
        _ => return None,
    };
    if !only_builtins(&template, funcs) {
        return None;
    }
    let file = "vectors/templates/_vectors.tpl";
    let mut set = TemplateSet::new("gotpl", funcs.clone());
    // The chart's helper templates, when present beside the vectors.
    let helpers = std::fs::read_to_string(HELPERS).unwrap_or_default();
    let got = set
        .parse("vectors/templates/_core_helpers.tpl", &helpers)
        .and_then(|_| {
            set.parse(
                file,
                &format!("{{{{define \"{id}\"}}}}{template}{{{{end}}}}"),
            )
        });
    let got = got.and_then(|_| set.execute(&id, dot, &ExecOptions::default()));
    let want = field(v, "expected_helm3").and_then(|e| e.as_str().map(str::to_string));
    let helm_err = field(v, "error_helm3").and_then(|e| e.as_str().map(str::to_string));
    match (got, want, helm_err) {
        (Ok(g), Some(w), _) if g == w => None,
        (Err(e), None, Some(h)) => {
            let mut msg = e.to_string();
            // Helm reports required/fail messages without the call chain.
            if let Some((_, rest)) = msg.split_once("HELM_ERR_START") {
                msg = rest
                    .split("HELM_ERR_END")
                    .next()
                    .unwrap_or(rest)
                    .to_string();
            }
            // Helm rewrites parse errors as "parse error at (FILE:LINE): MSG".
            let parse_form = msg
                .strip_prefix("template: ")
                .and_then(|m| m.split_once(": "))
                .map(|(loc, rest)| format!("parse error at ({loc}): {rest}"));
            if h.contains(&msg) || parse_form.is_some_and(|p| h.contains(&p)) {
                None
            } else {
                Some(format!(
                    "{id}: error text differs\n  ours: {msg}\n  helm: {h}"
                ))
            }
        }
        (g, w, _) => Some(format!("{id}: {template:?}\n  ours: {g:?}\n  want: {w:?}")),
    }
}

#[test]
fn implemented_vectors_match_helm3() {
    let Ok(text) = std::fs::read_to_string(VECTORS) else {
        eprintln!("skipped: {VECTORS} not present");
        return;
    };
    let all = Json {
        s: text.as_bytes(),
        i: 0,
    }
    .value();
    let Some(Value::List(all)) = all else {
        panic!("vectors.json did not parse");
    };
    let funcs = Arc::new(vector_funcs());
    let mut checked = 0;
    let mut failures = Vec::new();
    for v in &all.items {
        let core = field(v, "origin").is_some_and(|o| o.as_str() != Some("helm-engine-v4.1.4"));
        let runnable = field(v, "dot").is_some_and(|d| d.as_str() != Some("root"))
            && field(v, "template")
                .and_then(|t| t.as_str().map(|t| only_builtins(t, &funcs)))
                .unwrap_or(false);
        if !core || !runnable {
            continue;
        }
        checked += 1;
        if let Some(f) = check(v, &funcs) {
            failures.push(f);
        }
    }
    eprintln!("vectors checked: {checked}");
    assert!(checked > 20, "too few vectors selected: {checked}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
