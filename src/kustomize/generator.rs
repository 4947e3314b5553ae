//! `configMapGenerator` and `secretGenerator`: building the objects from
//! literals, files and env files (kustomize's `kv` loader and
//! `internal/generators`), absorbing them into the accumulated resources
//! with their behavior (`resWrangler.appendReplaceOrMerge`), and the name
//! hash suffix added at the end of a build (HashTransformer, `api/hasher`).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::model::{GeneratorArgs, GeneratorKind, GeneratorOptions};
use super::origin::Origin;
use super::resource::Resource;
use super::Error;
use crate::yaml::{self, Node, Scalar, Style, Tag, Value};

/// Reads a file named in the kustomization, as bytes.
pub type ByteReader<'a> = dyn FnMut(&str) -> Result<(PathBuf, Vec<u8>), Error> + 'a;

/// How a generated resource joins the existing ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// Must not exist yet.
    Create,
    /// Merged into an existing one.
    Merge,
    /// Replaces an existing one.
    Replace,
}

/// Runs generators given by their arguments (from a kustomization, with
/// its `generatorOptions`, or from generator plugin configs, without).
pub fn run_args(
    kpath: &Path,
    generators: &[GeneratorArgs],
    origins: &[Option<Origin>],
    global: Option<&GeneratorOptions>,
    resources: &mut Vec<Resource>,
    read: &mut ByteReader,
) -> Result<(), Error> {
    for (i, args) in generators.iter().enumerate() {
        let at = |m: String| Error::Invalid {
            path: kpath.to_path_buf(),
            line: args.line,
            message: m,
        };
        let opts = merge_options(args.options.as_ref(), global);
        let mut res = make(args, &opts, read)?;
        res.origin = origins.get(i).cloned().flatten();
        let behavior = match args.behavior.as_str() {
            "merge" => Behavior::Merge,
            "replace" => Behavior::Replace,
            _ => Behavior::Create,
        };
        absorb(resources, res, behavior).map_err(at)?;
    }
    Ok(())
}

/// MergeGlobalOptionsIntoLocal: local labels and annotations win; the
/// global flags switch on.
fn merge_options(
    local: Option<&GeneratorOptions>,
    global: Option<&GeneratorOptions>,
) -> GeneratorOptions {
    let mut o = local.cloned().unwrap_or_default();
    let Some(g) = global else {
        return o;
    };
    for (mine, theirs) in [
        (&mut o.labels, &g.labels),
        (&mut o.annotations, &g.annotations),
    ] {
        match (mine.as_mut(), theirs) {
            (None, Some(t)) => *mine = Some(t.clone()),
            (Some(m), Some(t)) => {
                for (k, v) in t {
                    if !m.iter().any(|(x, _)| x == k) {
                        m.push((k.clone(), v.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    o.disable_name_suffix_hash |= g.disable_name_suffix_hash;
    o.immutable |= g.immutable;
    o
}

/// MakeConfigMap / MakeSecret.
fn make(
    args: &GeneratorArgs,
    opts: &GeneratorOptions,
    read: &mut ByteReader,
) -> Result<Resource, Error> {
    let invalid = |m: String| {
        Error::invalid(
            format!("{} generator {:?}", kind_name(args.kind), args.name),
            m,
        )
    };
    if args.name.is_empty() {
        return Err(invalid("a configmap must have a name".into()));
    }
    let mut node = Node::map();
    node.set("apiVersion", Node::string("v1"));
    node.set("kind", Node::string(kind_name(args.kind)));
    let mut meta = Node::map();
    meta.set("name", Node::string(&args.name));
    if !args.namespace.is_empty() {
        meta.set("namespace", Node::string(&args.namespace));
    }
    node.set("metadata", meta);
    if args.kind == GeneratorKind::Secret {
        let t = if args.secret_type.is_empty() {
            "Opaque"
        } else {
            &args.secret_type
        };
        node.set("type", Node::string(t));
        // MakeSecret creates `data` before loading the sources, so a Secret
        // without any prints (and hashes) `data: {}`; MakeConfigMap adds
        // `data` only with its first entry.
        node.set("data", Node::map());
    }
    let pairs = load_pairs(args, read)?;
    let mut seen: Vec<&str> = Vec::new();
    // kustomize's FieldValidator.ErrIfInvalidKey accepts every key (a
    // TODO stub in api/internal/validate), so any key is written.
    for (k, _) in &pairs {
        if seen.contains(&k.as_str()) {
            return Err(invalid(format!(
                "configmap {} illegally repeats the key `{k}`",
                args.name
            )));
        }
        seen.push(k);
    }
    let mut sorted: Vec<&(String, Vec<u8>)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, v) in sorted {
        // makeConfigMapValueRNode: valid UTF-8 goes to data, the rest to binaryData.
        let (field, text) = match (args.kind, std::str::from_utf8(v)) {
            (GeneratorKind::ConfigMap, Ok(s)) => ("data", s.to_string()),
            (GeneratorKind::ConfigMap, Err(_)) => ("binaryData", base64_lines(v)),
            (GeneratorKind::Secret, _) => ("data", base64_lines(v)),
        };
        if let Some(m) = node.map_entry(field) {
            m.set(k, str_node(text));
        }
    }
    if let Some(m) = node.map_entry("metadata") {
        for (field, pairs) in [("labels", &opts.labels), ("annotations", &opts.annotations)] {
            let mut pairs: Vec<&(String, String)> = pairs.iter().flatten().collect();
            pairs.sort();
            for (k, v) in pairs {
                if let Some(map) = m.map_entry(field) {
                    map.set(k, str_node(v.clone()));
                }
            }
        }
    }
    if opts.immutable {
        node.set("immutable", Node::scalar("true", Tag::Bool));
    }
    let mut r = Resource::new(node);
    r.needs_hash = !opts.disable_name_suffix_hash;
    Ok(r)
}

fn kind_name(k: GeneratorKind) -> &'static str {
    match k {
        GeneratorKind::ConfigMap => "ConfigMap",
        GeneratorKind::Secret => "Secret",
    }
}

/// A `!!str` scalar, as kyaml tags generated values.
fn str_node(text: String) -> Node {
    let style = if text.contains('\n') {
        Style::Literal
    } else {
        Style::Plain
    };
    Node::new(Value::Scalar(Scalar {
        text,
        tag: Tag::Str,
        style,
    }))
}

/// kv.loader.Load: env files, then literals, then files.
fn load_pairs(
    args: &GeneratorArgs,
    read: &mut ByteReader,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut out = Vec::new();
    for env in &args.envs {
        let (path, bytes) = read(env)?;
        out.extend(env_pairs(&bytes).map_err(|m| Error::invalid(&path, m))?);
    }
    for lit in &args.literals {
        let bad = || {
            Error::invalid(
                &args.name,
                format!("invalid literal source {lit}, expected key=value"),
            )
        };
        if lit.starts_with('=') {
            return Err(bad());
        }
        let (k, v) = lit.split_once('=').ok_or_else(bad)?;
        out.push((k.to_string(), remove_quotes(v).as_bytes().to_vec()));
    }
    for f in &args.files {
        let (key, path) = file_source(f).map_err(|m| Error::invalid(&args.name, m))?;
        let (_, bytes) = read(&path)?;
        out.push((key, bytes));
    }
    Ok(out)
}

/// removeQuotes: one pair of matching outer quotes goes.
fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b[b.len() - 1] && (b[0] == b'"' || b[0] == b'\'') {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// ParseFileSource: `path` (key = base name) or `key=path`.
fn file_source(s: &str) -> Result<(String, String), String> {
    match s.matches('=').count() {
        0 => {
            let base = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
            Ok((base.to_string(), s.to_string()))
        }
        1 if s.starts_with('=') => Err(format!(
            "missing key name for file path {:?} in source {s:?}",
            &s[1..]
        )),
        1 if s.ends_with('=') => Err(format!(
            "missing file path for key name {:?} in source {s:?}",
            &s[..s.len() - 1]
        )),
        1 => {
            let (k, p) = s.split_once('=').unwrap_or((s, ""));
            Ok((k.to_string(), p.to_string()))
        }
        _ => Err(format!("source {s:?} key name or file path contains '='")),
    }
}

/// keyValuesFromLines: `KEY=value` lines; blanks and `#` comments skipped.
fn env_pairs(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = bytes.split(|&c| c == b'\n').collect();
    if bytes.ends_with(b"\n") {
        lines.pop();
    }
    for (i, mut line) in lines.into_iter().enumerate() {
        // bufio.ScanLines drops a trailing \r.
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        let Ok(mut text) = std::str::from_utf8(line) else {
            return Err(format!("line {} has invalid utf8 bytes", i + 1));
        };
        if i == 0 {
            text = text.trim_start_matches('\u{feff}');
        }
        let text = text.trim_start();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        // FieldValidator.IsEnvVarName accepts every key, as ErrIfInvalidKey.
        let (key, value) = text.split_once('=').unwrap_or((text, ""));
        out.push((key.to_string(), value.as_bytes().to_vec()));
    }
    Ok(out)
}

/// kyaml's encodeBase64: standard base64, broken into 70-column lines
/// (each followed by a newline) when longer than one line.
fn base64_lines(data: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut enc = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                enc.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                enc.push('=');
            }
        }
    }
    const LINE: usize = 70;
    if enc.len() < LINE {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / LINE + 1);
    for piece in enc.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(piece).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// appendReplaceOrMerge.
pub(super) fn absorb(
    resources: &mut Vec<Resource>,
    mut res: Resource,
    behavior: Behavior,
) -> Result<(), String> {
    let id = res.cur_id();
    let hits: Vec<usize> = resources
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.had_id(|x| x.name == id.name && x.gvk == id.gvk && x.same_namespace(&id))
        })
        .map(|(i, _)| i)
        .collect();
    match (hits.as_slice(), behavior) {
        ([], Behavior::Create) => {
            resources.push(res);
            Ok(())
        }
        ([], _) => Err(format!(
            "id {} does not exist; cannot merge or replace",
            id.id_string()
        )),
        ([_], Behavior::Create) => Err(format!(
            "id {} exists; behavior must be merge or replace",
            id.id_string()
        )),
        (&[i], _) => {
            let old = &resources[i];
            copy_merge_metadata(&mut res, old);
            if behavior == Behavior::Merge {
                // The merged resource keeps the origin annotation it had.
                if old.origin.is_some() {
                    res.origin = old.origin.clone();
                }
                for field in ["data", "binaryData"] {
                    merge_map(&mut res.node, &old.node, &[field]);
                }
            }
            resources[i] = res;
            Ok(())
        }
        _ => Err(format!(
            "found multiple objects that could accept merge of {}",
            id.id_string()
        )),
    }
}

/// CopyMergeMetaDataFieldsFrom: labels and annotations merged (the new
/// resource wins), name, namespace and build history taken from the old one.
fn copy_merge_metadata(res: &mut Resource, old: &Resource) {
    merge_map(&mut res.node, &old.node, &["metadata", "labels"]);
    merge_map(&mut res.node, &old.node, &["metadata", "annotations"]);
    let (name, ns) = (old.name().to_string(), old.namespace().to_string());
    if let Some(meta) = res.node.map_entry("metadata") {
        meta.set("name", Node::string(name));
        if ns.is_empty() {
            meta.remove("namespace");
        } else {
            meta.set("namespace", Node::string(ns));
        }
    }
    res.prev_ids = old.prev_ids.clone();
    res.prefixes = old.prefixes.clone();
    res.suffixes = old.suffixes.clone();
    // The hash annotation survives only if both ask for it.
    res.needs_hash = res.needs_hash && old.needs_hash;
}

/// mergeStringMaps(old, new) at `path`: old entries, overridden by new ones.
fn merge_map(into: &mut Node, old: &Node, path: &[&str]) {
    let Some(old_entries) = old.get_path(path).and_then(Node::as_map) else {
        return;
    };
    if old_entries.is_empty() {
        return;
    }
    let (last, parents) = match path.split_last() {
        Some(x) => x,
        None => return,
    };
    let mut cur = into;
    for p in parents {
        match cur.map_entry(p) {
            Some(n) => cur = n,
            None => return,
        }
    }
    let Some(target) = cur.map_entry(last) else {
        return;
    };
    let mine = target.as_map().cloned().unwrap_or_default();
    let mut merged: Vec<(Node, Node)> = old_entries.clone();
    for (k, v) in mine {
        match merged
            .iter_mut()
            .find(|(x, _)| x.key_text() == k.key_text())
        {
            Some(slot) => slot.1 = v,
            None => merged.push((k, v)),
        }
    }
    target.value = Value::Map(merged);
}

/// HashTransformer: `name-<hash>` for every generated resource that wants it.
pub fn add_hashes(resources: &mut [Resource]) {
    for r in resources.iter_mut().filter(|r| r.needs_hash) {
        let h = hash(&r.node);
        let name = format!("{}-{h}", r.name());
        r.store_previous_id();
        if let Some(meta) = r.node.map_entry("metadata") {
            meta.set("name", Node::string(name));
        }
    }
}

/// kustomize's Hasher for ConfigMaps and Secrets. The name is looked up as
/// one field called `metadata/name`, which never exists, so it hashes as "".
fn hash(node: &Node) -> String {
    let field = |k: &str| match node.get(k) {
        None => "\"\"".to_string(),
        Some(v) => json(v),
    };
    let kind = node.get_str("kind").unwrap_or_default();
    let mut parts = vec![
        ("data", field("data")),
        ("kind", json_string(kind)),
        ("name", "\"\"".into()),
    ];
    if kind == "Secret" {
        parts.push(("type", field("type")));
        if node.get("stringData").is_some_and(|v| v.as_map().is_some()) {
            parts.push(("stringData", field("stringData")));
        }
    } else if node.get("binaryData").is_some_and(|v| v.as_map().is_some()) {
        parts.push(("binaryData", field("binaryData")));
    }
    parts.sort_by(|a, b| a.0.cmp(b.0));
    let body: Vec<String> = parts.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    let digest = Sha256::digest(format!("{{{}}}", body.join(",")).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    // encode: the first ten hex digits, with 0 1 3 a e made unambiguous.
    hex.chars()
        .take(10)
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

/// Go's json.Marshal of a decoded YAML value (maps with sorted keys).
fn json(n: &Node) -> String {
    match &n.value {
        Value::Map(entries) => {
            let mut items: Vec<(String, String)> = entries
                .iter()
                .map(|(k, v)| (k.key_text().unwrap_or_default().to_string(), json(v)))
                .collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            let body: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}:{v}", json_string(k)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Seq(items) => format!("[{}]", items.iter().map(json).collect::<Vec<_>>().join(",")),
        Value::Scalar(s) => json_string(&s.text),
    }
}

/// A Go JSON string: HTML-safe escapes included.
fn json_string(s: &str) -> String {
    let mut out = String::new();
    yaml::write_json_string(s, true, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_kustomize() {
        // Recorded from kustomize v5.7.1: literals k=v.
        let mut cm = Node::map();
        cm.set("kind", Node::string("ConfigMap"));
        let mut data = Node::map();
        data.set("k", Node::string("v"));
        cm.set("data", data);
        assert_eq!(hash(&cm), "bdg947hgcc");
        let mut s = Node::map();
        s.set("kind", Node::string("Secret"));
        s.set("type", Node::string("Opaque"));
        let mut data = Node::map();
        data.set("k", Node::string("dg=="));
        s.set("data", data);
        assert_eq!(hash(&s), "ftgtgc4t9f");
    }

    #[test]
    fn sources() {
        assert_eq!(base64_lines(b"v"), "dg==");
        assert_eq!(
            base64_lines(&[b'x'; 60]).lines().next().map(str::len),
            Some(70)
        );
        assert!(base64_lines(&[b'x'; 60]).ends_with('\n'));
        assert_eq!(remove_quotes("'a b'"), "a b");
        assert_eq!(
            file_source("dir/app.conf").unwrap(),
            ("app.conf".into(), "dir/app.conf".into())
        );
        assert_eq!(file_source("k=p").unwrap(), ("k".into(), "p".into()));
        assert!(file_source("=p").is_err() && file_source("a=b=c").is_err());
        let pairs = env_pairs(b"\xef\xbb\xbfA=1\n# c\n\n  B=x=y\r\nC\n").unwrap();
        let keys: Vec<_> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_slice()))
            .collect();
        assert_eq!(keys, [("A", &b"1"[..]), ("B", b"x=y"), ("C", b"")]);
        // kustomize validates no key: `1A`, `a b` and `é` are all kept.
        let keys = env_pairs("1A=x\na b=y\né=z\n".as_bytes()).unwrap();
        let keys: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["1A", "a b", "é"]);
    }

    #[test]
    fn merge_behavior() {
        let opts = GeneratorOptions::default();
        let args = |lits: &[&str], behavior: &str| GeneratorArgs {
            kind: GeneratorKind::ConfigMap,
            name: "cm".into(),
            namespace: String::new(),
            behavior: behavior.into(),
            literals: lits.iter().map(|s| s.to_string()).collect(),
            files: Vec::new(),
            envs: Vec::new(),
            options: None,
            secret_type: String::new(),
            line: 0,
        };
        let mut none =
            |_: &str| -> Result<(PathBuf, Vec<u8>), Error> { Err(Error::invalid("x", "no files")) };
        let mut rs = Vec::new();
        let base = make(&args(&["a=1", "b=2"], ""), &opts, &mut none).unwrap();
        absorb(&mut rs, base, Behavior::Create).unwrap();
        let over = make(&args(&["b=3", "c=4"], "merge"), &opts, &mut none).unwrap();
        absorb(&mut rs, over, Behavior::Merge).unwrap();
        let data = rs[0].node.get("data").unwrap();
        assert_eq!(
            (data.get_str("a"), data.get_str("b"), data.get_str("c")),
            (Some("1"), Some("3"), Some("4"))
        );
        let again = make(&args(&["x=1"], ""), &opts, &mut none).unwrap();
        assert!(absorb(&mut rs, again, Behavior::Create).is_err());
        assert!(make(&args(&["a=1", "a=2"], ""), &opts, &mut none).is_err());
    }
}
