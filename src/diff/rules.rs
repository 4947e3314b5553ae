//! Ignore rules and `expected:` paths, in Argo CD's `ignoreDifferences`
//! shape: a resource selector (group, kind, name, namespace, plus `app`)
//! and paths as `jsonPointers` or `jqPathExpressions`. Ignored paths are
//! removed from both sides before comparing, as Argo CD normalises live and
//! desired state; expected paths are resolved on both sides and the changes
//! under them are set apart. Only the common jq forms are understood
//! (`.a.b`, `."k"`, `.a[0]`, `.a[]`, `select(.f == "v")`, pipes between
//! them); anything else is an error naming the file and line, never a rule
//! that silently matches nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::tree::{Change, Step};
use super::{Error, Resource};
use crate::env::{DiffRule, Environment};
use crate::yaml::{Node, Value};

/// One step of a path pattern.
#[derive(Clone, Debug, PartialEq)]
enum Pat {
    /// A JSON pointer token: a key, or an index of a list.
    Token(String),
    /// `.key`.
    Key(String),
    /// `[n]`.
    Index(usize),
    /// `[]`: every item (or every value of a mapping).
    All,
    /// `select(.a.b == "v")`: the current node, if that field has that value.
    Select(Vec<String>, String),
}

/// Which resources a rule is about.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// Only this app.
    pub app: Option<String>,
    /// API group.
    pub group: Option<String>,
    /// Kind.
    pub kind: Option<String>,
    /// Name (as rendered, or the identity name).
    pub name: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
}

impl Target {
    fn matches(&self, r: &Resource, identity: &str) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.app, &r.app)
            && eq(&self.group, &r.group)
            && eq(&self.kind, &r.kind)
            && eq(&self.namespace, &r.namespace)
            && self
                .name
                .as_deref()
                .is_none_or(|n| n == r.name || n == identity)
    }
}

#[derive(Clone, Debug)]
struct Rule {
    target: Target,
    paths: Vec<Vec<Pat>>,
    secret: bool,
}

/// Compiled ignore rules, expected paths and secret marks.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    ignore: Vec<Rule>,
    expected: Vec<Rule>,
}

/// Concrete paths on each side that a set of rules covers.
#[derive(Debug, Default)]
pub(crate) struct Covered {
    from: Vec<Vec<Step>>,
    to: Vec<Vec<Step>>,
}

impl Covered {
    /// Whether a change lies at or below a covered path on its side.
    pub(crate) fn covers(&self, c: &Change) -> bool {
        let under = |paths: &[Vec<Step>], p: &Option<Vec<Step>>| {
            p.as_ref()
                .is_some_and(|p| paths.iter().any(|c| p.starts_with(c)))
        };
        under(&self.from, &c.from_path) || under(&self.to, &c.to_path)
    }
}

impl Rules {
    /// The `diff:` rules of an environment file.
    pub fn from_environment(env: &Environment) -> Result<Rules, Error> {
        let mut rules = Rules::default();
        for r in &env.diff.ignore_differences {
            rules.ignore.push(compile(&env.file, r)?);
        }
        for r in &env.diff.expected {
            rules.expected.push(compile(&env.file, r)?);
        }
        Ok(rules)
    }

    /// Adds another set (the other environment's, the command line's).
    pub fn extend(&mut self, other: Rules) {
        self.ignore.extend(other.ignore);
        self.expected.extend(other.expected);
    }

    /// `--ignore [KIND[/NAME]=]PATH`, PATH a JSON pointer or a jq path.
    pub fn add_command_line(&mut self, spec: &str) -> Result<(), Error> {
        let (sel, path) = match spec.split_once('=') {
            Some((sel, path)) if !sel.starts_with(['/', '.']) => (Some(sel), path),
            _ => (None, spec),
        };
        let mut target = Target::default();
        if let Some(sel) = sel {
            let (kind, name) = sel.split_once('/').unwrap_or((sel, ""));
            target.kind = Some(kind.to_string());
            target.name = (!name.is_empty()).then(|| name.to_string());
        }
        let file = Path::new("--ignore");
        let pats = if path.starts_with('/') {
            pointer(path).map_err(|m| rule_err(file, 0, m))?
        } else {
            jq(path).map_err(|m| rule_err(file, 0, m))?
        };
        self.ignore.push(Rule {
            target,
            paths: vec![pats],
            secret: false,
        });
        Ok(())
    }

    /// Removes ignored paths from `node` (a copy is made only when a rule
    /// applies). `other` is the matching resource on the other side: a
    /// rule about either applies to both.
    pub(crate) fn normalise(
        &self,
        node: &mut Arc<Node>,
        r: &Resource,
        other: Option<&Resource>,
        identity: &str,
    ) {
        for rule in &self.ignore {
            let hit = rule.target.matches(r, identity)
                || other.is_some_and(|o| rule.target.matches(o, identity));
            if !hit {
                continue;
            }
            let mut found = Vec::new();
            for p in &rule.paths {
                resolve(node, p, &mut Vec::new(), &mut found);
            }
            if found.is_empty() {
                continue;
            }
            // Deepest and last items first, so earlier indices stay valid.
            found.sort();
            found.dedup();
            let n = Arc::make_mut(node);
            for path in found.iter().rev() {
                remove(n, path);
            }
        }
    }

    /// Whether a rule marks this resource as secret.
    pub(crate) fn is_secret(&self, r: &Resource, identity: &str) -> bool {
        self.ignore
            .iter()
            .chain(&self.expected)
            .any(|rule| rule.secret && rule.target.matches(r, identity))
    }

    /// The paths of both nodes that `expected:` rules cover.
    pub(crate) fn expected_paths(
        &self,
        from: &Resource,
        to: &Resource,
        identity: &str,
        a: &Node,
        b: &Node,
    ) -> Covered {
        let mut c = Covered::default();
        for rule in &self.expected {
            if !rule.target.matches(from, identity) && !rule.target.matches(to, identity) {
                continue;
            }
            for p in &rule.paths {
                resolve(a, p, &mut Vec::new(), &mut c.from);
                resolve(b, p, &mut Vec::new(), &mut c.to);
            }
        }
        c
    }
}

fn rule_err(file: &Path, line: u32, message: String) -> Error {
    Error::Rule {
        file: PathBuf::from(file),
        line,
        message,
    }
}

fn compile(file: &Path, r: &DiffRule) -> Result<Rule, Error> {
    let mut paths = Vec::new();
    for (p, line) in &r.json_pointers {
        paths.push(pointer(p).map_err(|m| rule_err(file, *line, m))?);
    }
    for (p, line) in &r.jq_path_expressions {
        paths.push(jq(p).map_err(|m| rule_err(file, *line, m))?);
    }
    if paths.is_empty() && !r.secret {
        return Err(rule_err(
            file,
            r.line,
            "a diff rule needs `jsonPointers`, `jqPathExpressions` or `secret: true`".into(),
        ));
    }
    Ok(Rule {
        target: Target {
            app: r.app.clone(),
            group: r.group.clone(),
            kind: r.kind.clone(),
            name: r.name.clone(),
            namespace: r.namespace.clone(),
        },
        paths,
        secret: r.secret,
    })
}

/// RFC 6901: `/a/b~1c/0`.
fn pointer(p: &str) -> Result<Vec<Pat>, String> {
    let Some(rest) = p.strip_prefix('/') else {
        return Err(format!("JSON pointer `{p}` must start with `/`"));
    };
    Ok(rest
        .split('/')
        .map(|t| Pat::Token(t.replace("~1", "/").replace("~0", "~")))
        .collect())
}

fn unsupported(expr: &str, why: &str) -> String {
    format!(
        "unsupported jq path expression `{expr}` ({why}); hydrate understands .a.b, .\"k\", .a[0], .a[], select(.f == \"v\") and pipes between them"
    )
}

/// The jq path forms Argo CD users write.
fn jq(expr: &str) -> Result<Vec<Pat>, String> {
    let mut out = Vec::new();
    for (i, part) in split_pipes(expr).iter().enumerate() {
        let part = part.trim();
        if let Some(inner) = part
            .strip_prefix("select(")
            .and_then(|r| r.find(')').map(|end| (&r[..end], &r[end + 1..])))
        {
            let (cond, rest) = inner;
            let (lhs, rhs) = cond
                .split_once("==")
                .ok_or_else(|| unsupported(expr, "select needs `==`"))?;
            let field = path_steps(lhs.trim(), expr)?;
            let keys: Vec<String> = field
                .into_iter()
                .map(|p| match p {
                    Pat::Key(k) => Ok(k),
                    _ => Err(unsupported(expr, "select compares a field")),
                })
                .collect::<Result<_, _>>()?;
            out.push(Pat::Select(keys, literal(rhs.trim(), expr)?));
            if !rest.trim().is_empty() {
                out.extend(path_steps(rest.trim(), expr)?);
            }
        } else if i > 0 || !part.is_empty() {
            if part.is_empty() {
                return Err(unsupported(expr, "empty pipe"));
            }
            out.extend(path_steps(part, expr)?);
        }
    }
    if out.is_empty() {
        return Err(unsupported(expr, "the whole resource"));
    }
    Ok(out)
}

fn split_pipes(expr: &str) -> Vec<String> {
    let (mut parts, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut prev = ' ';
    for c in expr.chars() {
        if c == '"' && prev != '\\' {
            quoted = !quoted;
        }
        if c == '|' && !quoted {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
        prev = c;
    }
    parts.push(cur);
    parts
}

fn literal(s: &str, expr: &str) -> Result<String, String> {
    if let Some(q) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return serde_json::from_str::<String>(&format!("\"{q}\""))
            .map_err(|_| unsupported(expr, "bad string"));
    }
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    if plain && (s.parse::<f64>().is_ok() || matches!(s, "true" | "false" | "null")) {
        return Ok(s.to_string());
    }
    Err(unsupported(
        expr,
        "select compares with a string, number or boolean",
    ))
}

/// `.a.b[0][]."k"["k"]`.
fn path_steps(s: &str, expr: &str) -> Result<Vec<Pat>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    if b.first() != Some(&b'.') {
        return Err(unsupported(expr, "a path starts with `.`"));
    }
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                if i >= b.len() {
                    if out.is_empty() {
                        break;
                    }
                    return Err(unsupported(expr, "trailing `.`"));
                }
                if b[i] == b'"' {
                    let (k, n) = quoted(&s[i..]).ok_or_else(|| unsupported(expr, "bad key"))?;
                    out.push(Pat::Key(k));
                    i += n;
                } else if b[i] == b'[' {
                    continue;
                } else {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    if start == i || b[start].is_ascii_digit() {
                        return Err(unsupported(expr, "a key is an identifier or quoted"));
                    }
                    out.push(Pat::Key(s[start..i].to_string()));
                }
            }
            b'[' => {
                let close = s[i..]
                    .find(']')
                    .ok_or_else(|| unsupported(expr, "unclosed `[`"))?;
                let inner = &s[i + 1..i + close];
                if inner.is_empty() {
                    out.push(Pat::All);
                } else if let Ok(n) = inner.parse::<usize>() {
                    out.push(Pat::Index(n));
                } else if let Some((k, _)) = quoted(inner).filter(|(_, n)| *n == inner.len()) {
                    out.push(Pat::Key(k));
                } else {
                    return Err(unsupported(expr, "an index is a number, a key or empty"));
                }
                i += close + 1;
            }
            _ => return Err(unsupported(expr, "not a path")),
        }
    }
    Ok(out)
}

/// A JSON string at the start of `s`, and how many bytes it took.
fn quoted(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => {
                let k = serde_json::from_str::<String>(&s[..=i]).ok()?;
                return Some((k, i + 1));
            }
            _ => i += 1,
        }
    }
    None
}

/// Every concrete path of `node` that `pats` matches.
fn resolve(node: &Node, pats: &[Pat], prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let Some((first, rest)) = pats.split_first() else {
        out.push(prefix.clone());
        return;
    };
    let mut descend = |n: &Node, step: Step, prefix: &mut Vec<Step>| {
        prefix.push(step);
        resolve(n, rest, prefix, out);
        prefix.pop();
    };
    match (first, &node.value) {
        (Pat::Token(k) | Pat::Key(k), Value::Map(m)) => {
            if let Some((_, v)) = m.iter().find(|(key, _)| key.key_text() == Some(k)) {
                descend(v, Step::Key(k.clone()), prefix);
            }
        }
        (Pat::Token(t), Value::Seq(items)) => {
            if let Some(v) = t
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).map(|v| (i, v)))
            {
                descend(v.1, Step::Index(v.0), prefix);
            }
        }
        (Pat::Index(i), Value::Seq(items)) => {
            if let Some(v) = items.get(*i) {
                descend(v, Step::Index(*i), prefix);
            }
        }
        (Pat::All, Value::Seq(items)) => {
            for (i, v) in items.iter().enumerate() {
                descend(v, Step::Index(i), prefix);
            }
        }
        (Pat::All, Value::Map(m)) => {
            for (k, v) in m {
                descend(
                    v,
                    Step::Key(k.key_text().unwrap_or_default().to_string()),
                    prefix,
                );
            }
        }
        (Pat::Select(field, want), _) => {
            let keys: Vec<&str> = field.iter().map(String::as_str).collect();
            let hit = node
                .get_path(&keys)
                .and_then(Node::as_scalar)
                .is_some_and(|s| &s.text == want);
            if hit {
                resolve(node, rest, prefix, out);
            }
        }
        _ => {}
    }
}

fn remove(node: &mut Node, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut n = node;
    for step in parents {
        let next = match step {
            Step::Key(k) => n.get_mut(k),
            Step::Index(i) => n.as_seq_mut().and_then(|items| items.get_mut(*i)),
        };
        match next {
            Some(x) => n = x,
            None => return,
        }
    }
    match (last, &mut n.value) {
        (Step::Key(k), Value::Map(_)) => {
            n.remove(k);
        }
        (Step::Index(i), Value::Seq(items)) if *i < items.len() => {
            items.remove(*i);
        }
        _ => {}
    }
}

/// `--ignore-profile helm`: the labels a chart bump changes everywhere
/// (`helm.sh/chart`, `chart`, `app.kubernetes.io/version`) and the
/// `checksum/*` annotations charts use to roll pods.
pub(crate) fn helm_profile(node: &mut Node) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if k.key_text() == Some("metadata") {
                    if let Some(Value::Map(labels)) = v.get_mut("labels").map(|l| &mut l.value) {
                        labels.retain(|(k, _)| {
                            !matches!(
                                k.key_text(),
                                Some("helm.sh/chart" | "chart" | "app.kubernetes.io/version")
                            )
                        });
                    }
                    if let Some(Value::Map(ann)) = v.get_mut("annotations").map(|a| &mut a.value) {
                        ann.retain(|(k, _)| {
                            !k.key_text().is_some_and(|k| k.starts_with("checksum/"))
                        });
                    }
                }
                helm_profile(v);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(helm_profile),
        Value::Scalar(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    fn paths(expr: &str, doc: &str) -> Vec<Vec<Step>> {
        let pats = if expr.starts_with('/') {
            pointer(expr).unwrap()
        } else {
            jq(expr).unwrap()
        };
        let n = parse_one(doc, Resolver::V3).unwrap();
        let mut out = Vec::new();
        resolve(&n, &pats, &mut Vec::new(), &mut out);
        out
    }

    const DOC: &str = "spec: {containers: [{name: a, image: x}, {name: b, image: y}]}\nmetadata: {annotations: {a.b/c: v}}\n";

    #[test]
    fn common_jq_forms() {
        let k = |s: &str| Step::Key(s.into());
        assert_eq!(
            paths(r#".spec.containers[] | select(.name == "b")"#, DOC),
            [vec![k("spec"), k("containers"), Step::Index(1)]]
        );
        assert_eq!(
            paths(r#".spec.containers[] | select(.name == "a") | .image"#, DOC),
            [vec![k("spec"), k("containers"), Step::Index(0), k("image")]]
        );
        assert_eq!(
            paths(r#".spec.containers[]|select(.name=="a").image"#, DOC),
            [vec![k("spec"), k("containers"), Step::Index(0), k("image")]]
        );
        assert_eq!(paths(".spec.containers[1].image", DOC).len(), 1);
        assert_eq!(paths(".spec.containers[].image", DOC).len(), 2);
        assert_eq!(paths(r#".metadata.annotations."a.b/c""#, DOC).len(), 1);
        assert_eq!(paths(r#".metadata.annotations["a.b/c"]"#, DOC).len(), 1);
        assert_eq!(paths("/metadata/annotations/a.b~1c", DOC).len(), 1);
        assert_eq!(paths("/spec/containers/1/image", DOC).len(), 1);
    }

    #[test]
    fn unsupported_jq_is_an_error() {
        for bad in [
            ".spec | del(.x)",
            ".a.b // 3",
            ".spec.containers[] | select(.name | startswith(\"a\"))",
            ".[\"a\"",
            "spec.x",
            ".",
            ".a-b",
        ] {
            assert!(jq(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn removal_keeps_earlier_indices_valid() {
        let mut n = parse_one("l: [a, b, c, d]", Resolver::V3).unwrap();
        let mut found = Vec::new();
        for i in [0, 2] {
            resolve(
                &n,
                &[Pat::Key("l".into()), Pat::Index(i)],
                &mut Vec::new(),
                &mut found,
            );
        }
        found.sort();
        for p in found.iter().rev() {
            remove(&mut n, p);
        }
        assert_eq!(crate::yaml::to_string(&n).unwrap(), "l:\n- b\n- d\n");
    }

    #[test]
    fn helm_profile_drops_chart_labels_and_checksums_everywhere() {
        let mut n = parse_one(
            "metadata: {labels: {helm.sh/chart: c-1, app: x}}\nspec: {template: {metadata: {labels: {app.kubernetes.io/version: '1'}, annotations: {checksum/config: abc, keep: z}}}}\n",
            Resolver::V3,
        )
        .unwrap();
        helm_profile(&mut n);
        assert_eq!(
            crate::yaml::to_string(&n).unwrap(),
            "metadata:\n  labels:\n    app: x\nspec:\n  template:\n    metadata:\n      annotations:\n        keep: z\n      labels: {}\n"
        );
    }
}
