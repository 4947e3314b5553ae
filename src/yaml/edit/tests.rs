//! The editor's regression fixtures (testdata/edit: `<case>.yaml` edited
//! into `<case>.expected.yaml`), its property test over every YAML file
//! under testdata/, and one over generated sources with multi-byte keys,
//! values and comments.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::yaml::parse_all;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

fn set(doc: usize, path: &[Seg], value: &str) -> Change {
    Change::Set {
        doc,
        path: path.to_vec(),
        value: value.to_string(),
    }
}

/// Applies `changes` to `<case>.yaml` and compares with `<case>.expected.yaml`.
fn fixture(case: &str, resolver: Resolver, changes: &[Change]) {
    let dir = testdata().join("edit");
    let read = |name: String| {
        std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let src = read(format!("{case}.yaml"));
    let want = read(format!("{case}.expected.yaml"));
    let got = apply_all(&src, resolver, changes).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(got, want, "{case}");
}

#[test]
fn inline_comment_after_a_tag_stays() {
    let path = [key("images"), Seg::Index(0), key("newTag")];
    fixture("comment-after-tag", Resolver::V3, &[set(0, &path, "1.5.0")]);
}

#[test]
fn one_image_of_a_list_changes() {
    let path = [key("images"), Seg::Index(1), key("newTag")];
    fixture("image-list", Resolver::V3, &[set(0, &path, "2.1.0")]);
}

#[test]
fn flow_mappings_are_edited_and_extended_in_flow_style() {
    let tag = |i| [key("images"), Seg::Index(i), key("newTag")];
    // `1.10` is a float to YAML: it must be quoted to stay a tag.
    fixture(
        "flow-mapping",
        Resolver::V3,
        &[set(0, &tag(0), "1.10"), set(0, &tag(1), "0.3.0")],
    );
}

#[test]
fn anchors_and_aliases_stay() {
    let path = [key("worker"), key("pullPolicy")];
    fixture("anchors", Resolver::V2, &[set(0, &path, "IfNotPresent")]);
    // An anchored value changes where it is written, and so wherever it
    // is aliased or merged: exactly what the file says.
    let src = std::fs::read_to_string(testdata().join("edit/anchors.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = apply(
        &src,
        Resolver::V2,
        &set(0, &[key("image"), key("tag")], "2.3.1"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, src.replace("tag: 2.3.0", "tag: 2.3.1"));
    // Editing through an alias or a merge is refused: edit the anchor.
    let e = apply(
        &src,
        Resolver::V2,
        &set(0, &[key("sidecar"), key("image"), key("tag")], "9"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("alias"), "{e}");
    let e = apply(
        &src,
        Resolver::V2,
        &set(0, &[key("worker"), key("tag")], "9"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("merge"), "{e}");
}

#[test]
fn blank_lines_between_entries_stay() {
    let path = [key("images"), Seg::Index(1), key("newTag")];
    fixture("blank-lines", Resolver::V3, &[set(0, &path, "2.0.0")]);
}

#[test]
fn crlf_line_endings_stay_and_new_items_use_them() {
    let item = Insert::Map(vec![
        ("name".into(), Insert::Scalar("api".into())),
        ("newTag".into(), Insert::Scalar("2.0.0".into())),
    ]);
    let append = Change::Append {
        doc: 0,
        path: vec![key("images")],
        item,
    };
    fixture("crlf", Resolver::V3, &[append]);
}

#[test]
fn a_bom_stays() {
    fixture(
        "bom",
        Resolver::V2,
        &[set(0, &[key("image"), key("tag")], "010")],
    );
}

#[test]
fn only_the_addressed_document_changes() {
    fixture(
        "multi-document",
        Resolver::V2,
        &[set(1, &[key("image"), key("tag")], "yes")],
    );
}

#[test]
fn plain_scalars_are_quoted_when_they_would_change_type() {
    for v in [
        "1.10", "010", "yes", "on", "~", "1e3", "0x1f", "true", "null", "", "- x", "a: b",
    ] {
        assert!(!plain_ok(v, false), "{v}");
        let out = apply("tag: x\n", Resolver::V3, &set(0, &[key("tag")], v))
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert!(out.starts_with("tag: \""), "{v}: {out}");
    }
    for v in ["1.4.3", "v2", "2.4.0-rc.1", "sha256:ab12"] {
        let out = apply("tag: x # c\n", Resolver::V3, &set(0, &[key("tag")], v))
            .unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(out, format!("tag: {v} # c\n"));
    }
    // Quoted styles are kept.
    let out = apply("tag: 'a'\n", Resolver::V3, &set(0, &[key("tag")], "it's"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "tag: 'it''s'\n");
    // A plain integer stays an integer when the new value is one.
    let out =
        apply("n: 3\n", Resolver::V2, &set(0, &[key("n")], "4")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "n: 4\n");
}

#[test]
fn missing_keys_are_inserted_with_sibling_indentation() {
    let src = "a:\n    b: 1   # keep\nc: d\n";
    let out = apply(
        src,
        Resolver::V2,
        &set(0, &[key("a"), key("e"), key("f")], "x"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "a:\n    b: 1   # keep\n    e:\n        f: x\nc: d\n");
    let out =
        apply("a: 1", Resolver::V2, &set(0, &[key("b")], "x")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "a: 1\nb: x\n");
}

#[test]
fn block_scalars_and_unknown_paths_are_refused() {
    let e = apply("a: |\n  x\n", Resolver::V2, &set(0, &[key("a")], "y")).unwrap_err();
    assert!(e.to_string().contains("block scalars"), "{e}");
    let e = apply(
        "a: [1]\n",
        Resolver::V2,
        &set(0, &[key("a"), Seg::Index(3)], "y"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("a[3]"), "{e}");
}

/// Every scalar of a document, with its path.
fn scalar_paths(n: &Node, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match &n.value {
        Value::Scalar(_) if !path.is_empty() => out.push(path.clone()),
        Value::Scalar(_) => {}
        Value::Seq(items) => {
            for (i, it) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                scalar_paths(it, path, out);
                path.pop();
            }
        }
        Value::Map(entries) => {
            for (k, v) in entries {
                let Some(k) = k.key_text() else { continue };
                if entries
                    .iter()
                    .filter(|(k2, _)| k2.key_text() == Some(k))
                    .count()
                    > 1
                {
                    continue;
                }
                path.push(Seg::Key(k.to_string()));
                scalar_paths(v, path, out);
                path.pop();
            }
        }
    }
}

fn yaml_files() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in walkdir_sorted(&testdata()) {
        let ext = e.extension().and_then(|x| x.to_str());
        if matches!(ext, Some("yaml" | "yml")) {
            if let Ok(s) = std::fs::read_to_string(&e) {
                out.push((e, s));
            }
        }
    }
    out
}

fn walkdir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(walkdir_sorted(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The byte ranges where `a` and `b` differ: what lies between their
/// longest common prefix and suffix, both cut on char boundaries (two
/// texts may share the first byte of different multi-byte characters).
fn differing(a: &str, b: &str) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let mut prefix = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !(a.is_char_boundary(prefix) && b.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count()
        .min(room);
    while !(a.is_char_boundary(a.len() - suffix) && b.is_char_boundary(b.len() - suffix)) {
        suffix -= 1;
    }
    (prefix..a.len() - suffix, prefix..b.len() - suffix)
}

#[test]
fn differing_ranges_are_cut_on_char_boundaries() {
    // é and è share their first byte; ©/é their last.
    assert_eq!(differing("aéb", "aèb"), (1..3, 1..3));
    assert_eq!(differing("x©", "xé"), (1..3, 1..3));
    assert_eq!(differing("éé", "é"), (2..4, 2..2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For every YAML file under testdata/ and a random scalar edit: the
    /// bytes outside the splice are unchanged, and the edited text parses
    /// to the edit applied to the parsed source (or the edit is refused and
    /// nothing changes).
    #[test]
    fn edits_splice_only_their_scalar(pick in any::<prop::sample::Index>(),
                                      which in any::<prop::sample::Index>(),
                                      value in "[a-zA-Z0-9.:@_~ -]{0,12}") {
        let files = yaml_files();
        prop_assume!(!files.is_empty());
        let (file, src) = &files[pick.index(files.len())];
        let Ok(docs) = parse_all(src, Resolver::V2) else { return Ok(()) };
        let mut targets = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            let mut found = Vec::new();
            scalar_paths(doc, &mut Vec::new(), &mut found);
            targets.extend(found.into_iter().map(|p| (d, p)));
        }
        prop_assume!(!targets.is_empty());
        let (doc, path) = targets[which.index(targets.len())].clone();
        let change = set(doc, &path, &value);
        // A refused edit changes nothing; an accepted one is checked.
        if let Ok(out) = apply(src, Resolver::V2, &change) {
            let target = get(&docs[doc], &path).ok_or_else(|| TestCaseError::fail("no target"))?;
            let span = (target.pos.start, target.pos.end);
            // Bytes outside the splice are unchanged: what differs in the
            // source lies in the scalar's span (a multi-line plain scalar
            // becomes one line), and in the output on one line.
            // An edit to the value already written changes no byte; an
            // empty difference lies nowhere, so it is inside any span.
            let (old, new) = differing(src, &out);
            prop_assert!(old.is_empty() && new.is_empty()
                || old.start >= span.0 as usize && old.end <= span.1 as usize,
                "{}: {old:?} outside {span:?}", file.display());
            prop_assert!(!out.get(new).unwrap_or_default().contains('\n'), "{}", file.display());
            let mut want = docs.clone();
            // The scalar changes where it is written and in every copy
            // (aliases, merges) that shares its span.
            let old = target.as_scalar().cloned();
            replace_span(&mut want[doc], span, &Node::scalar(value.clone(), kept_tag(old.as_ref(), &value)));
            let got = parse_all(&out, Resolver::V2).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| same(a, b)),
                "{}: {} = {:?}", file.display(), path_text(&path), value);
        }
    }
}

#[test]
fn values_in_multi_line_flow_collections_are_quoted_for_flow_context() {
    let src = "images: [\n  {name: x,\n   newTag: a}\n]\n";
    let path = [key("images"), Seg::Index(0), key("newTag")];
    let out = apply(src, Resolver::V3, &set(0, &path, "b,c")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "images: [\n  {name: x,\n   newTag: \"b,c\"}\n]\n");
}

/// Words with multi-byte characters (2, 3 and 4 bytes) and the indicators
/// that make the editor quote: keys, values and comments of the generated
/// sources below.
const WORDS: &[&str] = &[
    "é",
    "ñandú",
    "日本語",
    "ключ",
    "🚀",
    "a🚀b",
    "x",
    "app-é",
    "é:é",
    "é #é",
    "'é'",
    "\"日\"",
    "-é",
    "é,ü",
    "[日]",
    "{é}",
    "é ",
    " é",
    "1.5",
    "true",
    "ü\tü",
    "é\\n",
];

/// One scalar as written: plain when it stays a string there, else quoted
/// (single or double).
fn written(v: &str, flow: bool, single: bool) -> String {
    if plain_ok(v, flow) {
        v.to_string()
    } else if single && !v.chars().any(char::is_control) {
        format!("'{}'", v.replace('\'', "''"))
    } else {
        double_quoted(v)
    }
}

/// A value under a top-level key, in one of the layouts the editor meets.
#[derive(Clone, Debug)]
enum Shape {
    Scalar(String, bool),
    Block(Vec<(String, String)>, usize),
    Items(Vec<String>, usize),
    FlowMap(Vec<(String, String)>),
    FlowSeq(Vec<String>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let word = || prop::sample::select(WORDS);
    let pairs = || prop::collection::vec((word(), word()), 1..4);
    let items = || prop::collection::vec(word(), 1..4);
    prop_oneof![
        (word(), any::<bool>()).prop_map(|(w, s)| Shape::Scalar(w.to_string(), s)),
        (pairs(), 1..5usize).prop_map(|(p, step)| Shape::Block(
            p.into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            step
        )),
        (items(), 0..4usize)
            .prop_map(|(i, pad)| Shape::Items(i.into_iter().map(str::to_string).collect(), pad)),
        pairs().prop_map(|p| Shape::FlowMap(
            p.into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        )),
        items().prop_map(|i| Shape::FlowSeq(i.into_iter().map(str::to_string).collect())),
    ]
}

/// The YAML text of top-level `entries`, each followed by `comment` when set.
fn source(entries: &[(String, Shape)], comment: Option<&str>, crlf: bool) -> String {
    let nl = if crlf { "\r\n" } else { "\n" };
    let tail = comment.map_or(String::new(), |c| format!(" # {c}"));
    let mut out = comment.map_or(String::new(), |c| format!("# {c}{nl}"));
    for (k, shape) in entries {
        let k = written(k, false, false);
        match shape {
            Shape::Scalar(v, single) => {
                out.push_str(&format!("{k}: {}{tail}{nl}", written(v, false, *single)));
            }
            Shape::Block(pairs, step) => {
                out.push_str(&format!("{k}:{tail}{nl}"));
                for (k2, v2) in pairs {
                    let pad = " ".repeat(*step);
                    let (k2, v2) = (written(k2, false, true), written(v2, false, false));
                    out.push_str(&format!("{pad}{k2}: {v2}{tail}{nl}"));
                }
            }
            Shape::Items(items, pad) => {
                out.push_str(&format!("{k}:{nl}"));
                for i in items {
                    let pad = " ".repeat(*pad);
                    out.push_str(&format!("{pad}- {}{tail}{nl}", written(i, false, true)));
                }
            }
            Shape::FlowMap(pairs) => {
                let parts: Vec<String> = pairs
                    .iter()
                    .map(|(a, b)| {
                        format!("{}: {}", written(a, true, false), written(b, true, true))
                    })
                    .collect();
                out.push_str(&format!("{k}: {{{}}}{tail}{nl}", parts.join(", ")));
            }
            Shape::FlowSeq(items) => {
                let parts: Vec<String> = items.iter().map(|i| written(i, true, false)).collect();
                out.push_str(&format!("{k}: [{}]{tail}{nl}", parts.join(", ")));
            }
        }
    }
    out
}

/// Every path of `n`: its scalars, its sequences and (for inserts) a new
/// key under each mapping.
fn edit_paths(n: &Node, path: &mut Vec<Seg>, new_key: &str, out: &mut Vec<Vec<Seg>>) {
    if !path.is_empty() && !matches!(n.value, Value::Map(_)) {
        out.push(path.clone());
    }
    match &n.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => {
            for (i, it) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                edit_paths(it, path, new_key, out);
                path.pop();
            }
        }
        Value::Map(entries) => {
            path.push(Seg::Key(new_key.to_string()));
            out.push(path.clone());
            path.pop();
            for (k, v) in entries {
                let Some(k) = k.key_text() else { continue };
                path.push(Seg::Key(k.to_string()));
                edit_paths(v, path, new_key, out);
                path.pop();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Set and Append on sources whose keys, values and comments hold
    /// multi-byte characters: the editor never panics (every offset it
    /// cuts at is a character boundary), and an edit it accepts re-parses
    /// with the new value where the path says.
    #[test]
    fn multi_byte_sources_edit_without_panic(
        entries in prop::collection::vec((prop::sample::select(WORDS), shape()), 1..5),
        comment in prop::option::of(prop::sample::select(WORDS)),
        crlf in any::<bool>(),
        new_key in prop::sample::select(WORDS),
        value in prop::sample::select(WORDS),
        pick in any::<prop::sample::Index>(),
        append in any::<bool>(),
    ) {
        let entries: Vec<(String, Shape)> =
            entries.into_iter().map(|(k, s)| (k.to_string(), s)).collect();
        let src = source(&entries, comment, crlf);
        let docs = parse_all(&src, Resolver::V3).map_err(|e| TestCaseError::fail(format!("{e}: {src:?}")))?;
        let mut paths = Vec::new();
        edit_paths(&docs[0], &mut Vec::new(), new_key, &mut paths);
        prop_assume!(!paths.is_empty());
        let path = paths[pick.index(paths.len())].clone();
        let change = if append {
            Change::Append { doc: 0, path: path.clone(), item: Insert::Scalar(value.to_string()) }
        } else {
            set(0, &path, value)
        };
        for resolver in [Resolver::V2, Resolver::V3] {
            let out = match apply(&src, resolver, &change) {
                Ok(out) => out,
                // The editor's own check failed: it wrote text that reads
                // otherwise (a value it should have quoted).
                Err(e @ EditError::Mismatch { .. }) => {
                    return Err(TestCaseError::fail(format!("{e}: {src:?} {change:?}")));
                }
                // Refused: Append to a scalar, Set on a collection.
                Err(_) => continue,
            };
            let got = parse_all(&out, resolver).map_err(|e| TestCaseError::fail(format!("{e}: {out:?}")))?;
            let at = get(&got[0], &path).ok_or_else(|| TestCaseError::fail(format!("lost {}: {out:?}", path_text(&path))))?;
            let text = match (&change, &at.value) {
                (Change::Set { .. }, Value::Scalar(s)) => Some(s.text.as_str()),
                (Change::Append { .. }, Value::Seq(items)) => items.last().and_then(Node::as_str),
                _ => None,
            };
            prop_assert_eq!(text, Some(value), "{:?} → {:?}", src, out);
        }
    }
}

/// A value starting with a blank is quoted: written plain, YAML would drop
/// the blank (`k:  é` reads `é`) and the edit was refused as a mismatch.
#[test]
fn values_with_leading_blanks_are_quoted() {
    for (value, want) in [(" é", "k: \" é\"\n"), ("\té", "k: \"\\té\"\n")] {
        let out = apply("k: x\n", Resolver::V3, &set(0, &[key("k")], value));
        assert_eq!(out.ok().as_deref(), Some(want), "{value:?}");
    }
}

#[test]
fn a_multi_line_plain_scalar_is_replaced_by_one_line() {
    // The splice covers the scalar's lines; what follows it is kept.
    let src = "a: one\n  two é\nb: é\n";
    let out = apply(src, Resolver::V2, &set(0, &[key("a")], "x")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, "a: x\nb: é\n");
}
