//! Output assembly as `helm template` prints it (`releaseutil`
//! `SortManifests`/`SplitManifests`, `action.renderResources`,
//! `cmd/helm/template.go`): documents split by helm's separator regexp,
//! hooks told apart by `helm.sh/hook`, both sorted stably by the install
//! kind order, CRDs first with `--include-crds`, `# Source:` headers,
//! `--show-only` filtering, and the printed documents as typed objects
//! (each document is parsed once, here, for sorting and for the caller).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::chart::Chart;
use super::head_scan;
use super::{Error, Options};
use crate::gotmpl::convert::{from_node, parse_yaml_node};
use crate::gotmpl::Value;
use crate::k8s::Object;
use crate::warning::{Warning, WarningKind};
use crate::yaml::Node;

/// helm's `SplitManifests` in document order: what splitting on the regexp
/// `(?:^|\s*\n)---\s*` gives. A `---` splits when it starts the text or
/// follows a newline the previous separator did not eat (a separator eats
/// the whitespace after it, so `---\n---` leaves a `---` document).
pub fn split_manifests(text: &str) -> Vec<&str> {
    let t = text.trim();
    let b = t.as_bytes();
    let ws = |c: u8| matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    let mut pieces = Vec::new();
    // A separator starts the text or a line whose line break the last
    // separator's blanks did not eat: after one, the search for the next
    // `\n---` starts where they end.
    let newline_dashes = memchr::memmem::Finder::new(b"\n---");
    let next = |from: usize| newline_dashes.find(&b[from..]).map(|off| from + off + 1);
    let mut start = 0;
    let mut at = if t.starts_with("---") {
        Some(0)
    } else {
        next(0)
    };
    while let Some(sep) = at {
        pieces.push(&t[start..sep]);
        let mut end = sep + 3;
        while end < b.len() && ws(b[end]) {
            end += 1;
        }
        start = end;
        at = next(end);
    }
    pieces.push(&t[start..]);
    pieces
        .into_iter()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect()
}

struct Manifest<'a> {
    path: &'a str,
    content: &'a str,
    node: Option<Arc<Node>>,
    kind: String,
    test_hook: bool,
}

/// `lessByKind` over helm's install order.
fn kind_less(order: &[&str], a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let pa = order.iter().position(|k| *k == a);
    let pb = order.iter().position(|k| *k == b);
    match (pa, pb) {
        (None, None) => a.cmp(b),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => x.cmp(&y),
    }
}

fn str_at(v: &Value, path: &[&str]) -> Option<Value> {
    let mut cur = v.clone();
    for p in path {
        cur = match cur {
            Value::Map(m) => m.get(p)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// What `SortManifests` reads of a document: its kind and hook events,
/// and the parsed document (a mapping; `None` for an empty document).
struct Head {
    kind: String,
    hook: Option<String>,
    node: Option<Arc<Node>>,
}

/// A document as a client reading the whole stream sees it: it is printed
/// followed by a line break, so a block scalar that ends it keeps its final
/// newline (clip chomping). Kind and hooks are the same either way.
fn parse_document(doc: &str) -> Result<Option<Node>, String> {
    if doc.ends_with('\n') {
        parse_yaml_node(doc)
    } else {
        parse_yaml_node(&format!("{doc}\n"))
    }
}

/// The [`Head`] of a document, or helm's YAML parse error.
fn head(path: &str, doc: &str) -> Result<Head, Error> {
    let parse_error = |e| Error::Render(format!("YAML parse error on {path}: {e}"));
    let node = parse_document(doc).map_err(parse_error)?;
    let v = match &node {
        Some(n) => from_node(n).map_err(parse_error)?,
        None => Value::Nil,
    };
    if !matches!(v, Value::Map(_) | Value::Nil) {
        return Err(Error::Render(format!(
            "YAML parse error on {path}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type releaseutil.SimpleHead",
            crate::gotmpl::convert::json_kind(&v)
        )));
    }
    let kind = match str_at(&v, &["kind"]) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    };
    let hook = match str_at(&v, &["metadata", "annotations", "helm.sh/hook"]) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    };
    let node = node.filter(|n| n.as_map().is_some()).map(Arc::new);
    Ok(Head { kind, hook, node })
}

const HOOK_EVENTS: &[&str] = &[
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// CRD files of the chart and its subcharts (`Chart.CRDObjects`), as
/// (path from the top chart, content).
fn crds(c: &Chart, full: &str, out: &mut Vec<(String, String)>) -> Result<(), Error> {
    for (name, data) in c.files.iter() {
        let ext_ok = [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e));
        if name.starts_with("crds/") && ext_ok {
            let data = data.bytes().map_err(Error::Render)?;
            out.push((
                format!("{full}/{name}"),
                String::from_utf8_lossy(data).into_owned(),
            ));
        }
    }
    for d in &c.dependencies {
        let tree_path = format!("{full}/charts/{}", d.name);
        crds(d, d.full_path.as_deref().unwrap_or(&tree_path), out)?;
    }
    Ok(())
}

/// A document as `renderResources` hands it on: template path and content.
#[derive(Debug, Clone, PartialEq)]
pub struct Document<'a> {
    /// Path from the top chart (`chart/templates/x.yaml`).
    pub path: Cow<'a, str>,
    /// The document (trimmed; CRD files verbatim): a slice of the
    /// template's output, not a copy.
    pub content: Cow<'a, str>,
    /// The parsed document, when it is a mapping (not for CRD files, which
    /// helm prints without parsing).
    pub node: Option<Arc<Node>>,
}

/// Everything `helm template` prints, grouped as helm writes it: CRDs
/// (with `--include-crds`), manifests in install order, then the hooks
/// left after `--no-hooks`/`--skip-tests`.
#[derive(Debug, Default)]
pub struct Sorted<'a> {
    /// `crds/` files.
    pub crds: Vec<Document<'a>>,
    /// Non-hook documents.
    pub manifests: Vec<Document<'a>>,
    /// Hook documents.
    pub hooks: Vec<Document<'a>>,
}

/// The [`Head`] of a document; without `nodes`, read by the head scanner
/// when the document is simple enough (no node is kept then), else by the
/// full parser, which also reports helm's errors.
fn head_of(path: &str, doc: &str, nodes: bool) -> Result<Head, Error> {
    if nodes {
        return head(path, doc);
    }
    let Some(h) = head_scan::scan(doc) else {
        return head(path, doc);
    };
    // Debug builds (the test suites) check every scanned document against
    // the full parser.
    debug_assert!(
        head(path, doc).is_ok_and(|f| f.kind == h.kind && f.hook == h.hook),
        "head scanner disagrees with the parser on {path}: {doc:?}"
    );
    Ok(Head {
        kind: h.kind,
        hook: h.hook,
        node: None,
    })
}

/// `SortManifests` plus `renderResources`' CRD and hook selection. With
/// `nodes`, every document that is a mapping keeps its parsed node (for
/// [`objects`]); without, documents are only read as far as sorting needs.
pub fn sort<'a>(
    chart: &Chart,
    files: &'a BTreeMap<String, String>,
    opts: &Options,
    nodes: bool,
) -> Result<Sorted<'a>, Error> {
    let mut manifests = Vec::new();
    let mut hooks = Vec::new();
    // Each file's documents are split and read on any core; they are
    // taken in path order, so the first error is the one helm reports.
    let heads: Vec<Result<Vec<(&str, Head)>, Error>> = files
        .par_iter()
        .map(|(path, content)| {
            if path.ends_with("NOTES.txt") || content.trim().is_empty() {
                return Ok(Vec::new());
            }
            split_manifests(content)
                .into_iter()
                .map(|doc| head_of(path, doc, nodes).map(|h| (doc, h)))
                .collect()
        })
        .collect();
    for ((path, _), docs) in files.iter().zip(heads) {
        for (doc, Head { kind, hook, node }) in docs? {
            let m = |test_hook| Manifest {
                path,
                content: doc,
                node,
                kind,
                test_hook,
            };
            match hook {
                None => manifests.push(m(false)),
                Some(h) => {
                    let events: Vec<String> =
                        h.split(',').map(|e| e.trim().to_lowercase()).collect();
                    if events.iter().any(|e| !HOOK_EVENTS.contains(&e.as_str())) {
                        continue;
                    }
                    let test = events.iter().any(|e| e == "test" || e == "test-success");
                    hooks.push(m(test));
                }
            }
        }
    }
    let order = opts.helm_version.install_order();
    manifests.sort_by(|a, b| kind_less(order, &a.kind, &b.kind));
    hooks.sort_by(|a, b| kind_less(order, &a.kind, &b.kind));
    let doc = |m: Manifest<'a>| Document {
        path: Cow::Borrowed(m.path),
        content: Cow::Borrowed(m.content),
        node: m.node,
    };
    let mut crd_files = Vec::new();
    if opts.include_crds {
        crds(chart, &chart.name, &mut crd_files)?;
    }
    Ok(Sorted {
        crds: crd_files
            .into_iter()
            .map(|(path, content)| Document {
                path: Cow::Owned(path),
                content: Cow::Owned(content),
                node: None,
            })
            .collect(),
        manifests: manifests.into_iter().map(doc).collect(),
        hooks: if opts.no_hooks {
            Vec::new()
        } else {
            hooks
                .into_iter()
                .filter(|h| !(opts.skip_tests && h.test_hook))
                .map(doc)
                .collect()
        },
    })
}

/// The stdout of `helm template` (without `--output-dir`).
pub fn assemble(sorted: &Sorted, opts: &Options) -> Result<String, Error> {
    let all = || {
        sorted
            .crds
            .iter()
            .chain(&sorted.manifests)
            .chain(&sorted.hooks)
    };
    let size: usize = all().map(|d| d.path.len() + d.content.len() + 16).sum();
    // One buffer, sized once: the documents before the hooks are printed
    // trimmed (template.go prints `strings.TrimSpace(manifests)`), then
    // a newline, then each hook.
    let mut out = String::with_capacity(size + 1);
    let push = |out: &mut String, d: &Document| {
        for part in ["---\n# Source: ", &d.path, "\n", &d.content, "\n"] {
            out.push_str(part);
        }
    };
    for d in sorted.crds.iter().chain(&sorted.manifests) {
        push(&mut out, d);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    for h in &sorted.hooks {
        push(&mut out, h);
    }
    if opts.show_only.is_empty() {
        return Ok(out);
    }
    show_only(&out, &opts.show_only)
}

/// The printed documents that are objects, in output order (with
/// `--show-only`, those it keeps, pattern by pattern), each with the text
/// printed for it. A `crds/` file is parsed here (helm prints it verbatim),
/// one object per document; a part that is not an object is a warning.
pub fn objects(sorted: &Sorted, opts: &Options) -> (Vec<Object>, Vec<Warning>) {
    let all: Vec<&Document> = sorted
        .crds
        .iter()
        .chain(&sorted.manifests)
        .chain(&sorted.hooks)
        .collect();
    let shown: Vec<&Document> = if opts.show_only.is_empty() {
        all
    } else {
        opts.show_only
            .iter()
            .flat_map(|p| {
                all.iter()
                    .filter(move |d| {
                        d.path
                            .split_once('/')
                            .is_some_and(|(_, rest)| super::path_match::path_match(p, rest))
                    })
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let mut objects = Vec::new();
    let mut warnings = Vec::new();
    for d in shown {
        let printed = |text: &str| format!("# Source: {}\n{text}\n", d.path);
        let source = Some(d.path.to_string());
        if let Some(node) = &d.node {
            objects.push(Object::new(node.clone(), printed(&d.content), source));
            continue;
        }
        let pieces = split_manifests(&d.content);
        let single = pieces.len() == 1;
        for piece in pieces {
            match parse_document(piece) {
                Ok(Some(n)) if n.as_map().is_some() => {
                    let text = if single { &d.content } else { piece };
                    objects.push(Object::new(Arc::new(n), printed(text), source.clone()));
                }
                Ok(n) if n.as_ref().is_none_or(Node::is_null) => {}
                Ok(_) | Err(_) => warnings.push(Warning::new(
                    WarningKind::NotAnObject,
                    "a document of this file is not a Kubernetes object; it is printed but not handed on as a resource",
                    Some(d.path.to_string().into()),
                )),
            }
        }
    }
    (objects, warnings)
}

/// `--show-only`: keep documents whose `# Source:` path (without the chart
/// name) matches one of the patterns (Go `filepath.Match`).
fn show_only(out: &str, patterns: &[String]) -> Result<String, Error> {
    let docs = split_manifests(out);
    let mut kept = String::new();
    for p in patterns {
        let mut missing = true;
        for d in &docs {
            let Some(src) = d.lines().find_map(|l| l.strip_prefix("# Source: ")) else {
                continue;
            };
            let Some((_, rest)) = src.split_once('/') else {
                continue;
            };
            if super::path_match::path_match(p, rest) {
                kept.push_str(&format!("---\n{d}\n"));
                missing = false;
            }
        }
        if missing {
            return Err(Error::Render(format!(
                "could not find template {p} in chart"
            )));
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A block YAML value, printed at an indentation.
    #[derive(Clone, Debug)]
    enum Block {
        Scalar(&'static str),
        Map(Vec<(&'static str, Block)>),
        Seq(Vec<Block>),
    }

    impl Block {
        /// `self` as the value after `lead` (a key and its colon, or a
        /// dash) on a line at `col`.
        fn print(&self, col: usize, lead: &str, out: &mut Vec<String>) {
            let pad = " ".repeat(col);
            match self {
                Block::Scalar(v) => out.push(format!("{pad}{lead}{v}")),
                Block::Map(entries) if entries.is_empty() => out.push(format!("{pad}{lead} {{}}")),
                Block::Seq(items) if items.is_empty() => out.push(format!("{pad}{lead} []")),
                Block::Map(entries) => {
                    let at = if lead.is_empty() {
                        col
                    } else {
                        out.push(format!("{pad}{lead}"));
                        col + 2
                    };
                    for (k, v) in entries {
                        v.print(at, &format!("{k}:"), out);
                    }
                }
                Block::Seq(items) => {
                    out.push(format!("{pad}{lead}"));
                    for v in items {
                        v.print(col + 2, "-", out);
                    }
                }
            }
        }
    }

    fn scanner_doc() -> impl Strategy<Value = String> {
        let scalar = prop::sample::select(vec![
            " v",
            " Job",
            " 'x'",
            " \"a\\tb\"",
            " \"J\\\"b\"",
            " |\n      text\n\n      more",
            " >-\n      folded",
            " x # c",
            " :a",
            " 1e400",
            " 0x1F",
            " yes",
            " pre-install",
            " \"\"",
            " ~",
            "",
            " 'a''b'",
            " --port=80",
            " 'x' y",
            " a: b",
            " [1]",
            " &a x",
            " plain\n      continued",
            " 'open\n      closed'",
            " -1",
            " .inf",
        ])
        .prop_map(Block::Scalar);
        let key = prop::sample::select(vec![
            "kind",
            "kind",
            "metadata",
            "annotations",
            "helm.sh/hook",
            "a",
            "b",
            "x-y",
            "\"q\"",
            "'s'",
            "null",
            "1.5",
            "\"helm.sh/hook\"",
        ]);
        let tree = scalar.prop_recursive(4, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec((key.clone(), inner.clone()), 0..4).prop_map(Block::Map),
                proptest::collection::vec(inner, 0..3).prop_map(Block::Seq),
            ]
        });
        let top = proptest::collection::vec(
            (
                prop::sample::select(vec!["kind", "metadata", "spec", "a"]),
                tree,
            ),
            1..4,
        );
        let noise = proptest::option::weighted(
            0.3,
            (
                any::<prop::sample::Index>(),
                prop::sample::select(vec![
                    "\tx: 1",
                    "  - a",
                    " b: 1",
                    "---",
                    "a: b: c",
                    "'",
                    "  x",
                    "- - a",
                    "a: [1, 2]",
                ]),
            ),
        );
        (top, noise).prop_map(|(top, noise)| {
            let mut out = Vec::new();
            Block::Map(top).print(0, "", &mut out);
            let mut lines: Vec<String> = out.join("\n").split('\n').map(String::from).collect();
            if let Some((at, line)) = noise {
                let i = at.index(lines.len() + 1);
                lines.insert(i, line.to_string());
            }
            lines.join("\n")
        })
    }

    proptest! {
        /// The separator search is helm's `SplitManifests`: its regexp,
        /// `(?:^|\s*\n)---\s*`, over the trimmed text (RE2's leftmost-first
        /// matches, which Rust's `regex` shares).
        #[test]
        fn splits_where_helms_separator_regexp_does(text in "[-\n a\t]{0,40}") {
            let re = regex::Regex::new(r"(?:^|\s*\n)---\s*").map_err(|e| TestCaseError::fail(e.to_string()))?;
            let want: Vec<&str> = re
                .split(text.trim())
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .collect();
            prop_assert_eq!(split_manifests(&text), want);
        }

        /// A document the head scanner reads is one the full parser reads,
        /// with the same kind and hook: the scanner may only decline.
        #[test]
        fn the_head_scanner_reads_only_what_the_parser_reads_alike(
            doc in scanner_doc()
        ) {
            if let Some(h) = head_scan::scan(&doc) {
                let full = head("t.yaml", &doc);
                prop_assert!(full.is_ok(), "{doc:?}: {:?}", full.err());
                let full = full.map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&h.kind, &full.kind, "{:?}", doc);
                prop_assert_eq!(&h.hook, &full.hook, "{:?}", doc);
            }
        }
    }

    #[test]
    fn splits_like_helms_separator_regexp() {
        assert_eq!(
            split_manifests("a: 1\n---\nb: 2\n--- \nc: 3"),
            ["a: 1", "b: 2", "c: 3"]
        );
        // A separator eats the newline a following one would need.
        assert_eq!(split_manifests("---\n---\na: 1"), ["---\na: 1"]);
        assert_eq!(split_manifests("x: a---b\n---foo"), ["x: a---b", "foo"]);
        assert!(split_manifests("  \n---\n ").is_empty());
    }

    #[test]
    fn split_like_helm() {
        assert_eq!(split_manifests("a: 1\n---\nb: 2\n"), vec!["a: 1", "b: 2"]);
        assert_eq!(split_manifests("---\n---\nx: 1"), vec!["---\nx: 1"]);
        assert_eq!(split_manifests("--- # c\nx: 1"), vec!["# c\nx: 1"]);
        assert_eq!(
            split_manifests("a: |\n  x\n  ---\n  y"),
            vec!["a: |\n  x\n  ---\n  y"]
        );
    }

    #[test]
    fn trimmed_block_scalar_document_parses() {
        let doc = "kind: ConfigMap\ndata:\n  s: |\n    a\n    ---\n    b";
        assert_eq!(
            head("t", doc).ok().map(|h| h.kind).as_deref(),
            Some("ConfigMap")
        );
        assert!(head("t", "- a list").is_err());
    }

    #[test]
    fn kind_order() {
        let mut v = vec![
            "Zed",
            "ValidatingWebhookConfiguration",
            "Deployment",
            "Namespace",
            "Abc",
        ];
        let v3 = super::super::HelmVersion::V3.install_order();
        v.sort_by(|a, b| kind_less(v3, a, b));
        assert_eq!(
            v,
            vec![
                "Namespace",
                "Deployment",
                "Abc",
                "ValidatingWebhookConfiguration",
                "Zed"
            ]
        );
        let v4 = super::super::HelmVersion::V4.install_order();
        v.sort_by(|a, b| kind_less(v4, a, b));
        assert_eq!(v[2], "ValidatingWebhookConfiguration");
    }
}
