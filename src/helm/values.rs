//! Values: user layers (`-f`, `--set-json`, `--set`, `--set-string`,
//! `--set-file`, `--set-literal`, in helm's fixed order), helm's strvals
//! syntax and typing, `CoalesceValues` (chart defaults under user values,
//! `null` deletes, subchart sections and globals), and dependency
//! enabling by `tags`/`condition` with `alias` renames.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::chart::Chart;
use super::Error;
use crate::gotmpl::convert::deep_copy;
use crate::gotmpl::value::Map;
use crate::gotmpl::Value;

/// A `--set`-style flag.
#[derive(Clone, Debug)]
pub enum SetKind {
    /// `--set`: typed values.
    Typed,
    /// `--set-string`.
    String,
    /// `--set-json`.
    Json,
    /// `--set-file`: values are file paths.
    File,
    /// `--set-literal`: one key, the rest verbatim.
    Literal,
}

fn new_map() -> Value {
    Value::map(BTreeMap::new())
}

fn as_map(v: &Value) -> Option<Arc<Map>> {
    match v {
        Value::Map(m) => Some(m.clone()),
        _ => None,
    }
}

/// helm's `mergeMaps`: `b` over `a`, maps merged recursively.
pub(super) fn merge_maps(a: &Value, b: &Value) -> Value {
    let out = deep_copy(a);
    let (Some(o), Some(bm)) = (as_map(&out), as_map(b)) else {
        return deep_copy(b);
    };
    for (k, v) in bm.entries() {
        match (o.get(&k), &v) {
            (Some(old @ Value::Map(_)), Value::Map(_)) => o.insert(k, merge_maps(&old, &v)),
            _ => o.insert(k, v),
        }
    }
    out
}

/// Values written inline as YAML (an app's `values:`, kustomize's
/// generated values), typed as helm reads a values file: sigs.k8s.io/yaml,
/// so go-yaml v2 scalars carried through JSON's types.
pub fn from_node(n: &crate::yaml::Node) -> Result<Value, Error> {
    crate::gotmpl::convert::from_node(n).map_err(Error::Values)
}

/// Reads one `-f` file.
pub fn read_values_file(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Values(format!("open {}: {e}", path.display())))?;
    let bad = |line, e: &str| {
        Error::ValuesFile(Box::new(super::FileError {
            file: path.to_path_buf(),
            line,
            message: format!("failed to parse {}: {e}", path.display()),
        }))
    };
    match crate::gotmpl::convert::parse_yaml_at(&text) {
        Ok(Value::Map(m)) => Ok(Value::Map(m)),
        Ok(Value::Nil) => Ok(new_map()),
        Ok(_) => Err(bad(
            None,
            "error unmarshaling JSON: json: cannot unmarshal into Go value of type map[string]interface {}",
        )),
        Err(e) => Err(bad(e.line, &e.message)),
    }
}

/// strvals `typedVal`.
fn typed(v: &str, string: bool) -> Value {
    if string {
        return Value::from(v);
    }
    if v.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if v.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if v.eq_ignore_ascii_case("null") {
        return Value::Nil;
    }
    if v == "0" {
        return Value::Int64(0);
    }
    if v.len() > 1 && v.starts_with('0') {
        return Value::from(v);
    }
    let digits = v.strip_prefix(['+', '-']).unwrap_or(v);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = v.parse::<i64>() {
            return Value::Int64(i);
        }
    }
    Value::from(v)
}

/// A key path step.
#[derive(Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Splits `a.b[1].c` into steps (`\.` escapes a dot).
fn key_path(key: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut cur = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '.' => {
                if !cur.is_empty() {
                    steps.push(Step::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    steps.push(Step::Key(std::mem::take(&mut cur)));
                }
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    n.push(d);
                }
                let i: usize = n
                    .parse()
                    .map_err(|_| format!("strconv.Atoi: parsing {:?}: invalid syntax", n))?;
                if i > 65536 {
                    return Err(format!(
                        "index of {i} is greater than maximum supported index 65536"
                    ));
                }
                steps.push(Step::Index(i));
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        steps.push(Step::Key(cur));
    }
    if steps.is_empty() {
        return Err(format!("key {key:?} has no value"));
    }
    Ok(steps)
}

/// Sets `value` at `steps` inside `root` (maps and lists created as needed).
fn set_path(root: &Value, steps: &[Step], value: Value) -> Value {
    let Some((first, rest)) = steps.split_first() else {
        return value;
    };
    match first {
        Step::Key(k) => {
            let m = match as_map(root) {
                Some(m) => m,
                None => match as_map(&new_map()) {
                    Some(m) => m,
                    None => return root.clone(),
                },
            };
            let child = m.get(k).unwrap_or(Value::Nil);
            let v = set_path(&child, rest, value);
            m.insert(k.clone(), v);
            Value::Map(m)
        }
        Step::Index(i) => {
            let mut items = match root {
                Value::List(l) => l.items.clone(),
                _ => Vec::new(),
            };
            if items.len() <= *i {
                items.resize(*i + 1, Value::Nil);
            }
            let child = items[*i].clone();
            items[*i] = set_path(&child, rest, value);
            Value::list(items)
        }
    }
}

/// Splits `a=b,c=d` at unescaped commas outside `{...}` lists.
fn split_pairs(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth <= 0 => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn unescape(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Applies one `--set*` argument to `base`.
pub(super) fn apply_set(base: &Value, arg: &str, kind: &SetKind) -> Result<Value, Error> {
    let bad = |m: String| Error::Values(format!("failed parsing --set data: {m}"));
    if let SetKind::Literal = kind {
        let (k, v) = arg
            .split_once('=')
            .ok_or_else(|| bad(format!("key {arg:?} has no value")))?;
        return Ok(set_path(base, &key_path(k).map_err(bad)?, Value::from(v)));
    }
    let mut out = base.clone();
    for pair in split_pairs(arg) {
        if pair.is_empty() {
            continue;
        }
        let (k, v) = match pair.split_once('=') {
            Some(kv) => kv,
            None => return Err(bad(format!("key {pair:?} has no value"))),
        };
        let steps = key_path(k).map_err(bad)?;
        let value = match kind {
            SetKind::Json => {
                crate::gotmpl::convert::from_json(v).map_err(|e| bad(format!("json: {e}")))?
            }
            SetKind::File => {
                let data = std::fs::read_to_string(v).map_err(|e| bad(format!("open {v}: {e}")))?;
                Value::from(data)
            }
            _ => {
                let string = matches!(kind, SetKind::String);
                if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
                    Value::list(
                        split_pairs(inner)
                            .iter()
                            .filter(|x| !x.is_empty())
                            .map(|x| typed(&unescape(x), string))
                            .collect(),
                    )
                } else {
                    typed(&unescape(v), string)
                }
            }
        };
        out = set_path(&out, &steps, value);
    }
    Ok(out)
}

/// `coalesceTablesFullKey(dst, src)`: fills `dst` from `src` where missing.
fn coalesce_tables(dst: &Map, src: &Map, merge: bool) {
    for (k, sv) in src.entries() {
        match dst.get(&k) {
            Some(Value::Nil) if !merge => {
                dst.remove(&k);
            }
            None => dst.insert(k, sv),
            Some(Value::Map(dm)) => {
                if let Value::Map(sm) = &sv {
                    coalesce_tables(&dm, sm, merge);
                }
            }
            Some(_) => {}
        }
    }
}

/// `coalesceValues`: the chart's defaults under `v` (user values);
/// `merge` keeps user nulls instead of deleting (helm's `MergeValues`).
fn coalesce_values(chart: &Chart, v: &Map, merge: bool) {
    let Some(defaults) = as_map(&deep_copy(&chart.values)) else {
        return;
    };
    for (k, dv) in defaults.entries() {
        match v.get(&k) {
            Some(Value::Nil) => {
                if !merge {
                    v.remove(&k);
                }
            }
            Some(Value::Map(um)) => {
                if let Value::Map(dm) = &dv {
                    coalesce_tables(&um, dm, merge);
                }
            }
            Some(_) => {}
            None => v.insert(k, dv),
        }
    }
}

/// `coalesceGlobals`: the parent's `global` over the child's.
fn coalesce_globals(child: &Map, parent: &Map) {
    let dg = match child.get("global") {
        Some(Value::Map(m)) => m,
        _ => match as_map(&new_map()) {
            Some(m) => m,
            None => return,
        },
    };
    if let Some(Value::Map(sg)) = parent.get("global") {
        for (k, sv) in sg.entries() {
            match (&sv, dg.get(&k)) {
                (Value::Map(_), None) => dg.insert(k, deep_copy(&sv)),
                (Value::Map(_), Some(Value::Map(dm))) => {
                    let vv = deep_copy(&sv);
                    if let Value::Map(vm) = &vv {
                        coalesce_tables(vm, &dm, true);
                    }
                    dg.insert(k, vv);
                }
                (Value::Map(_), Some(_)) => {}
                (_, Some(Value::Map(_))) => {}
                _ => dg.insert(k, sv),
            }
        }
    }
    child.insert("global".into(), Value::Map(dg));
}

/// `CoalesceValues(chart, user)`: the final `.Values` tree.
pub(super) fn coalesce(chart: &Chart, user: &Value) -> Value {
    coalesce_with(chart, user, false)
}

/// `CoalesceValues` (`merge` false) or `MergeValues` (true).
fn coalesce_with(chart: &Chart, user: &Value, merge: bool) -> Value {
    let out = deep_copy(user);
    let Some(v) = as_map(&out) else {
        return out;
    };
    coalesce_values(chart, &v, merge);
    for sub in &chart.dependencies {
        let section = match v.get(&sub.name) {
            Some(Value::Map(m)) => Value::Map(m),
            Some(_) => continue,
            None => {
                let m = new_map();
                v.insert(sub.name.clone(), m.clone());
                m
            }
        };
        if let Some(sm) = as_map(&section) {
            coalesce_globals(&sm, &v);
        }
        let merged = coalesce_with(sub, &section, merge);
        v.insert(sub.name.clone(), merged);
    }
    out
}

/// Looks up a dotted path (`a.b.c`) in a values tree.
fn path_value(v: &Value, path: &str) -> Option<Value> {
    let mut cur = v.clone();
    for part in path.split('.') {
        cur = as_map(&cur)?.get(part)?;
    }
    Some(cur)
}

/// Applies `condition`/`tags` (removing disabled subcharts) and `alias`
/// (renaming), recursively, as helm's `processDependencyEnabled` does. A
/// chart that lists no dependencies is left alone, subcharts and all.
pub(super) fn process_dependencies(
    chart: &mut Chart,
    user: &Value,
    prefix: &str,
    version: super::HelmVersion,
) -> Result<(), Error> {
    let declared = chart.declared_dependencies();
    if declared.is_empty() {
        return Ok(());
    }
    let field = |dep: &Value, k: &str| match dep {
        Value::Map(m) => m.get(k).and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    };
    // helm's CheckDependencies names every entry no subchart matches.
    let missing: Vec<&Value> = declared
        .iter()
        .filter(|dep| {
            let name = field(dep, "name").unwrap_or_default();
            !chart.dependencies.iter().any(|c| c.name == name)
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing_dependencies(&missing, version));
    }
    // helm's IsCompatibleRange: the entry's `version` constraint admits the
    // subchart's version (an empty or bad constraint admits none).
    let compatible = |dep: &Value, c: &Chart| {
        let constraint = field(dep, "version").unwrap_or_default();
        let version = path_value(&c.metadata, "version")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        crate::gotmpl::golib::Version::parse(&version)
            .and_then(|v| crate::gotmpl::golib::constraint_check(&constraint, &v))
            .unwrap_or(false)
    };
    // Subcharts no entry names (with a matching version) come first, then
    // one copy per entry that one satisfies (getAliasDependency): a
    // subchart no entry's constraint admits stays under its own name.
    let mut listed = vec![false; chart.dependencies.len()];
    let mut copies: Vec<(usize, Chart)> = Vec::new();
    for (i, dep) in declared.iter().enumerate() {
        let name = field(dep, "name").unwrap_or_default();
        let Some(pos) = chart
            .dependencies
            .iter()
            .position(|c| c.name == name && compatible(dep, c))
        else {
            continue;
        };
        listed[pos] = true;
        let mut sub = chart.dependencies[pos].clone();
        sub.declared = true;
        if let Some(alias) = field(dep, "alias").filter(|a| !a.is_empty()) {
            sub.name = alias;
        }
        copies.push((i, sub));
    }
    let mut all: Vec<(Option<usize>, Chart)> = Vec::new();
    for (c, was_listed) in chart.dependencies.iter().zip(listed) {
        if !was_listed {
            all.push((None, c.clone()));
        }
    }
    all.extend(copies.into_iter().map(|(i, c)| (Some(i), c)));
    chart.dependencies = all.iter().map(|(_, c)| c.clone()).collect();
    let values = coalesce(chart, user);
    // helm removes every subchart named as a disabled entry is (after
    // its alias), listed or not.
    let mut disabled = std::collections::BTreeSet::new();
    for dep in &declared {
        if !dependency_enabled(dep, &values, prefix) {
            disabled.insert(entry_name(dep));
        }
    }
    all.retain(|(_, c)| !disabled.contains(&c.name));
    // helm keeps every entry not disabled in the metadata, matched by a
    // subchart or not (import-values still apply), named by its alias.
    chart.kept = Some(
        declared
            .iter()
            .enumerate()
            .map(|(i, dep)| (i, entry_name(dep)))
            .filter(|(_, name)| !disabled.contains(name))
            .collect(),
    );
    let mut keep: Vec<Chart> = all.into_iter().map(|(_, c)| c).collect();
    // helm recurses with the parent's whole coalesced values and a longer
    // path prefix: a subchart's conditions are read from the top, so a
    // parent's values for `alias.sub.enabled` decide.
    for sub in &mut keep {
        let p = format!("{prefix}{}.", sub.name);
        process_dependencies(sub, &values, &p, version)?;
    }
    chart.dependencies = keep;
    Ok(())
}

/// A dependency entry's name once helm has processed it: its alias if set.
fn entry_name(dep: &Value) -> String {
    let field = |k: &str| path_value(dep, k).and_then(|v| v.as_str().map(str::to_string));
    field("alias")
        .filter(|a| !a.is_empty())
        .or_else(|| field("name"))
        .unwrap_or_default()
}

/// helm's `CheckDependencies` text for the entries no subchart matches
/// (all of them, in Chart.yaml's order; helm 4 starts it in lower case),
/// then how to vendor each: hydrate never downloads.
fn missing_dependencies(deps: &[&Value], version: super::HelmVersion) -> Error {
    let field =
        |dep: &Value, k: &str| path_value(dep, k).and_then(|v| v.as_str().map(str::to_string));
    let mut names = Vec::new();
    let mut sources = Vec::new();
    for dep in deps {
        let name = field(dep, "name").unwrap_or_default();
        match (field(dep, "version"), field(dep, "repository")) {
            (Some(v), Some(r)) if !r.is_empty() => sources.push(format!("{name} {v} from {r}")),
            (_, Some(r)) if !r.is_empty() => sources.push(format!("{name} from {r}")),
            _ => {}
        }
        names.push(name);
    }
    let what = if names.len() == 1 {
        "the dependency"
    } else {
        "the dependencies"
    };
    let from = if sources.is_empty() {
        String::new()
    } else {
        format!(" ({})", sources.join(", "))
    };
    let an = match version {
        super::HelmVersion::V3 => "An",
        super::HelmVersion::V4 => "an",
    };
    Error::Chart(format!(
        "{an} error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}\nhydrate works offline: vendor {what}{from} into the chart's charts/ directory, e.g. with `helm dependency build CHART`, and commit it",
        names.join(", ")
    ))
}

/// `processDependencyTags` then `processDependencyConditions` for one
/// entry: the first condition that is a bool decides, else its tags (keys
/// of the top-level `tags` table) do.
fn dependency_enabled(dep: &Value, values: &Value, prefix: &str) -> bool {
    let mut enabled = true;
    let tags = match path_value(values, "tags") {
        Some(Value::Map(t)) => Some(t),
        _ => None,
    };
    if let (Some(Value::List(dtags)), Some(t)) = (path_value(dep, "tags"), &tags) {
        let (mut has_true, mut has_false) = (false, false);
        for tag in &dtags.items {
            match tag.as_str().and_then(|k| t.get(k)) {
                Some(Value::Bool(true)) => has_true = true,
                Some(Value::Bool(false)) => has_false = true,
                _ => {}
            }
        }
        enabled = has_true || !has_false;
    }
    if let Some(cond) = path_value(dep, "condition").and_then(|v| v.as_str().map(str::to_string)) {
        // helm trims the whole list, not each condition.
        for c in cond.trim().split(',').filter(|c| !c.is_empty()) {
            if let Some(Value::Bool(b)) = path_value(values, &format!("{prefix}{c}")) {
                return b;
            }
        }
    }
    enabled
}

/// `pathToMap`: nests `data` under a dotted path (`.` is the root).
fn path_to_map(path: &str, data: Value) -> Value {
    if path == "." {
        return data;
    }
    let mut out = data;
    for part in path.split('.').filter(|p| !p.is_empty()).rev() {
        let mut m = BTreeMap::new();
        m.insert(part.to_string(), out);
        out = Value::map(m);
    }
    out
}

/// `processDependencyImportValues` (bottom-up): each `import-values`
/// entry copies a table of the dependency's values (`child`/`parent`
/// pairs, or `exports.NAME` for plain strings) into the chart's values,
/// under the chart's own values (which win).
///
/// helm 3 rewrites each entry's `import-values` as it applies them, into
/// a form it then no longer reads, and the copies of one chart share the
/// entries: so only the first copy processed imports. `consumed` holds the
/// (chart id, entry index) pairs applied (`None` for helm 4, which copies
/// the entries with the chart).
pub(super) fn process_import_values(
    chart: &mut Chart,
    consumed: &mut Option<std::collections::HashSet<(usize, usize)>>,
) {
    for sub in &mut chart.dependencies {
        process_import_values(sub, consumed);
    }
    let declared = chart.declared_dependencies();
    if declared.is_empty() {
        return;
    }
    // After `process_dependencies`, the entries kept, named by their alias.
    let entries: Vec<(usize, String)> = match &chart.kept {
        Some(kept) => kept.clone(),
        None => declared
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let name = path_value(d, "name").and_then(|v| v.as_str().map(str::to_string));
                (i, name.unwrap_or_default())
            })
            .collect(),
    };
    let cvals = coalesce_with(chart, &new_map(), true);
    let imported = new_map();
    let Some(b) = as_map(&imported) else { return };
    for (i, name) in entries {
        if let Some(done) = consumed {
            if !done.insert((chart.id, i)) {
                continue;
            }
        }
        let Some(Value::List(ivs)) = declared.get(i).and_then(|d| path_value(d, "import-values"))
        else {
            continue;
        };
        for iv in &ivs.items {
            let (child, parent) = match iv {
                Value::Map(m) => (
                    m.get("child")
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    m.get("parent")
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                ),
                Value::Str(s) => (format!("exports.{s}"), ".".to_string()),
                _ => continue,
            };
            let Some(table @ Value::Map(_)) = path_value(&cvals, &format!("{name}.{child}")) else {
                continue;
            };
            if let Value::Map(src) = path_to_map(&parent, deep_copy(&table)) {
                merge_tables(&b, &src);
            }
        }
    }
    if let Some(cv) = as_map(&cvals) {
        coalesce_tables(&cv, &b, true);
    }
    chart.values = cvals;
}

/// helm's `MergeTables(dst, src)`: keeps `dst` values and fills in from
/// `src`, recursing into tables (nulls kept).
fn merge_tables(dst: &Map, src: &Map) {
    coalesce_tables(dst, src, true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::convert::parse_yaml;
    use crate::gotmpl::fmt::to_string;

    #[test]
    fn set_syntax_and_types() {
        let v = apply_set(
            &new_map(),
            "a.b=1,c=true,d=007,e=x\\,y,l={1,two},n=null",
            &SetKind::Typed,
        );
        let v = v.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            to_string(&v),
            "map[a:map[b:1] c:true d:007 e:x,y l:[1 two] n:<nil>]"
        );
        let v =
            apply_set(&new_map(), "list[1]=B", &SetKind::Typed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(to_string(&v), "map[list:[<nil> B]]");
        let v = apply_set(&new_map(), "f=1.50", &SetKind::Typed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(to_string(&v), "map[f:1.50]");
        let v = apply_set(&new_map(), "big=99999999999999999999", &SetKind::Typed);
        assert!(matches!(
            v.map(|v| path_value(&v, "big")),
            Ok(Some(Value::Str(_)))
        ));
        assert!(apply_set(&new_map(), "novalue", &SetKind::Typed).is_err());
    }

    #[test]
    fn import_values_copy_child_tables() {
        let child = Chart {
            metadata: parse_yaml("name: c").unwrap_or(Value::Nil),
            name: "c".into(),
            values: parse_yaml("exports: {data: {d: 1}}\nx: {k: child}").unwrap_or(Value::Nil),
            templates: Default::default(),
            files: Default::default(),
            dependencies: vec![],
            schema: None,
            dir: Default::default(),
            id: crate::helm::chart::next_id(),
            declared: false,
            kept: None,
            full_path: None,
            links: Vec::new(),
        };
        let mut parent = Chart {
            metadata: parse_yaml("name: p\ndependencies: [{name: c, import-values: [data, {child: x, parent: imp}]}]")
                .unwrap_or(Value::Nil),
            name: "p".into(),
            values: parse_yaml("imp: {k: parent}").unwrap_or(Value::Nil),
            templates: Default::default(),
            files: Default::default(),
            dependencies: vec![child],
            schema: None,
            dir: Default::default(),
            id: crate::helm::chart::next_id(),
            declared: false,
            kept: None,
            full_path: None,
            links: Vec::new(),
        };
        process_import_values(&mut parent, &mut None);
        assert_eq!(
            to_string(&path_value(&parent.values, "d").unwrap_or(Value::Nil)),
            "1"
        );
        assert_eq!(
            to_string(&path_value(&parent.values, "imp.k").unwrap_or(Value::Nil)),
            "parent"
        );
    }

    #[test]
    fn coalesce_defaults_and_nulls() {
        let chart = Chart {
            metadata: new_map(),
            name: "c".into(),
            values: parse_yaml("a: 1\nb: {x: 1, y: 2}\nd: keep").unwrap_or(Value::Nil),
            templates: Default::default(),
            files: Default::default(),
            dependencies: vec![],
            schema: None,
            dir: Default::default(),
            id: crate::helm::chart::next_id(),
            declared: false,
            kept: None,
            full_path: None,
            links: Vec::new(),
        };
        let user = parse_yaml("b: {x: 5, y: null}\nd: null").unwrap_or(Value::Nil);
        assert_eq!(to_string(&coalesce(&chart, &user)), "map[a:1 b:map[x:5]]");
        // MergeValues keeps the nulls for a later coalesce to apply (`y` is YAML 1.1 true).
        assert_eq!(
            to_string(&coalesce_with(&chart, &user, true)),
            "map[a:1 b:map[true:<nil> x:5] d:<nil>]"
        );
        let merged = merge_maps(
            &parse_yaml("m: {a: 1}").unwrap_or(Value::Nil),
            &parse_yaml("m: {b: 2}").unwrap_or(Value::Nil),
        );
        assert_eq!(to_string(&merged), "map[m:map[a:1 b:2]]");
    }
}
