//! Parser tests: documents, tags, spans and go-yaml's limits.
use super::*;

fn one(src: &str) -> Node {
    parse_one(src, Resolver::V3).unwrap()
}

#[test]
fn maps_seqs_scalars_and_positions() {
    let n = one("a: 1\nb:\n- x\n- 'y'\nc: {d: true}\n");
    assert_eq!(n.get("a").unwrap().as_scalar().unwrap().tag, Tag::Int);
    let b = n.get("b").unwrap().as_seq().unwrap();
    assert_eq!(b[1].as_scalar().unwrap().style, Style::Single);
    assert_eq!(b[1].pos.line, 4);
    assert_eq!(n.get_path(&["c", "d"]).unwrap().kind_name(), "bool");
}

#[test]
fn multi_document_and_empty_documents() {
    let docs = parse_all("a: 1\n---\n---\nb: 2\n", Resolver::V3).unwrap();
    assert_eq!(docs.len(), 3);
    assert!(docs[1].is_null());
    assert!(parse_all("", Resolver::V3).unwrap().is_empty());
    assert!(parse_all("# only a comment\n", Resolver::V3)
        .unwrap()
        .is_empty());
}

#[test]
fn aliases_and_merge_keys() {
    let n = one("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nz: *b\n");
    assert_eq!(n.get_path(&["other", "x"]).unwrap().as_str(), Some("1"));
    assert_eq!(n.get_path(&["other", "y"]).unwrap().as_str(), Some("3"));
    assert_eq!(n.get_path(&["z", "y"]).unwrap().as_str(), Some("2"));
}

#[test]
fn explicit_tags() {
    let n = one("a: !!str 3\nb: !!int \"4\"\nc: !custom x\nd: ! 5\n");
    assert_eq!(n.get("a").unwrap().as_scalar().unwrap().tag, Tag::Str);
    assert_eq!(n.get("b").unwrap().as_scalar().unwrap().tag, Tag::Int);
    assert_eq!(
        n.get("c").unwrap().as_scalar().unwrap().tag,
        Tag::Other(Box::new("!custom".into()))
    );
    assert_eq!(n.get("d").unwrap().as_scalar().unwrap().tag, Tag::Str);
    assert!(parse_one("a: !!int abc\n", Resolver::V3).is_err());
}

#[test]
fn block_scalar_at_end_of_input_without_a_line_break() {
    // libyaml keeps the content and drops the missing final break.
    for (src, want) in [
        ("a: |\n  x\n  y", "x\ny"),
        ("a: |+\n  x", "x"),
        ("a: >\n  x\n  y", "x y"),
        ("- |-\n  x", "x"),
        ("a: |\n  x\n", "x\n"),
    ] {
        let n = parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        let v = n.as_map().map(|m| &m[0].1).or(n.as_seq().map(|s| &s[0]));
        assert_eq!(v.and_then(Node::as_str), Some(want), "{src:?}");
    }
}

#[test]
fn errors_carry_line_and_never_panic() {
    let e = parse_one("a: b\n  c: d\n  - e\n", Resolver::V3).unwrap_err();
    assert!(matches!(e, Error::Syntax { line: 2, .. }), "{e:?}");
    // libyaml-safer issues #6 and #7 panic inside the crate: returning at
    // all (either way) is what this checks.
    let _ = parse_all("foo: |  \n", Resolver::V3);
    let _ = parse_all("{a: !!str}", Resolver::V3);
    assert!(parse_one("a: *nope\n", Resolver::V3).is_err());
}

/// The source text of the node under `path` (string keys, or indexes for sequences).
fn text<'a>(src: &'a str, n: &Node, path: &[&str]) -> &'a str {
    let node = path.iter().fold(n, |n, k| match k.parse::<usize>() {
        Ok(i) => &n.as_seq().unwrap()[i],
        Err(_) => n.get(k).unwrap(),
    });
    node.pos.text(src).unwrap()
}

fn key_text<'a>(src: &'a str, n: &Node, key: &str) -> &'a str {
    let map = n.as_map().unwrap();
    let (k, _) = map.iter().find(|(k, _)| k.key_text() == Some(key)).unwrap();
    k.pos.text(src).unwrap()
}

#[test]
fn scalar_spans_are_their_source_text() {
    let src = "a: \"x y\"\nb: 'q''s'\nc: plain  text\n  folded on\nd: |\n  lit\n  more\ne: >-\n  f\n\"k\": [1, \"two\"]\n";
    let n = one(src);
    assert_eq!(text(src, &n, &["a"]), "\"x y\"");
    assert_eq!(text(src, &n, &["b"]), "'q''s'");
    assert_eq!(text(src, &n, &["c"]), "plain  text\n  folded on");
    assert_eq!(text(src, &n, &["d"]), "|\n  lit\n  more\n");
    assert_eq!(text(src, &n, &["e"]), ">-\n  f\n");
    assert_eq!(key_text(src, &n, "k"), "\"k\"");
    assert_eq!(text(src, &n, &["k", "1"]), "\"two\"");
    assert_eq!(n.get("d").unwrap().pos.line, 5);
}

#[test]
fn collection_spans_and_styles() {
    let src = "top:\n  x: 1\n  l:\n  - a\n  - b: {c: d}\n\n# after\nflow: [1, {e: f}]\nnested:\n- - a\n  - b\n";
    let n = one(src);
    let top = n.get("top").unwrap();
    assert_eq!(text(src, &n, &["top"]), "x: 1\n  l:\n  - a\n  - b: {c: d}");
    assert!(!top.pos.flow);
    assert_eq!(text(src, &n, &["top", "l"]), "- a\n  - b: {c: d}");
    assert_eq!(text(src, &n, &["top", "l", "1", "b"]), "{c: d}");
    assert!(
        n.get_path(&["top", "l"]).unwrap().as_seq().unwrap()[1]
            .get("b")
            .unwrap()
            .pos
            .flow
    );
    assert_eq!(text(src, &n, &["flow"]), "[1, {e: f}]");
    assert!(n.get("flow").unwrap().pos.flow);
    assert_eq!(text(src, &n, &["flow", "1"]), "{e: f}");
    assert_eq!(text(src, &n, &["nested"]), "- - a\n  - b");
    assert_eq!(text(src, &n, &["nested", "0"]), "- a\n  - b");
    assert_eq!(n.pos.text(src), Some(src.trim_end()));
    assert_eq!((n.pos.start, n.pos.line), (0, 1));
}

#[test]
fn empty_values_have_empty_spans_after_their_colon() {
    let src = "a:\nb: 1\nc:";
    let n = one(src);
    assert_eq!(n.get("a").unwrap().pos.start, 2);
    assert_eq!(text(src, &n, &["a"]), "");
    assert_eq!(text(src, &n, &["c"]), "");
    assert_eq!(n.pos.text(src), Some(src));
}

#[test]
fn spans_with_crlf_bom_and_documents() {
    let src = "a: x\r\nb:\r\n  c: 'q'\r\n";
    let n = one(src);
    assert_eq!(text(src, &n, &["b", "c"]), "'q'");
    assert_eq!(text(src, &n, &["b"]), "c: 'q'");
    assert_eq!(n.get_path(&["b", "c"]).unwrap().pos.line, 3);

    let src = "\u{feff}a: b\n";
    let n = one(src);
    assert_eq!(key_text(src, &n, "a"), "a");
    assert_eq!(text(src, &n, &["a"]), "b");

    let src = "a: 1\n---\nb: 'two'\n...\n--- |\n  three\n";
    let docs = parse_all(src, Resolver::V3).unwrap();
    assert_eq!(text(src, &docs[1], &["b"]), "'two'");
    assert_eq!(docs[2].pos.text(src), Some("|\n  three\n"));
    assert_eq!(docs[2].pos.line, 5);

    // A block scalar running into the end of input (parsed padded).
    let src = "a: |\n  x";
    assert_eq!(text(src, &one(src), &["a"]), "|\n  x");
}

#[test]
fn anchors_aliases_and_merges_keep_their_spans() {
    let src = "base: &b {x: 1}\nv: &s !!str 5\nblk: &k\n  # c\n  y: 2\nref: *b\nw:  *s\nm:\n  <<: *b\n  z: 3\n";
    let n = one(src);
    assert_eq!(text(src, &n, &["base"]), "{x: 1}");
    assert_eq!(text(src, &n, &["v"]), "5");
    assert_eq!(text(src, &n, &["blk"]), "y: 2");
    assert_eq!(
        n.get("blk").unwrap().pos.line,
        3,
        "go-yaml: the line of the anchor"
    );

    let base = n.get("base").unwrap().pos;
    let r = n.get("ref").unwrap();
    assert_eq!(r.pos.text(src), Some("*b"));
    assert_eq!(r.pos.origin(), Origin::Alias { anchor: base.start });
    assert!(r.pos.flow);
    // Below an alias, spans are the anchored node's.
    assert_eq!(text(src, &n, &["ref", "x"]), "1");
    assert_eq!(
        r.get("x").unwrap().pos,
        n.get_path(&["base", "x"]).unwrap().pos
    );
    let w = n.get("w").unwrap();
    assert_eq!(w.pos.text(src), Some("*s"));
    let v = n.get("v").unwrap().pos;
    assert_eq!(w.pos.origin(), Origin::Alias { anchor: v.start });

    let m = n.get("m").unwrap();
    let (k, x) = m
        .as_map()
        .unwrap()
        .iter()
        .find(|(k, _)| k.key_text() == Some("x"))
        .unwrap();
    assert_eq!(
        (k.pos.origin(), x.pos.origin()),
        (Origin::Merge, Origin::Merge)
    );
    assert_eq!((k.pos.text(src), x.pos.text(src)), (Some("x"), Some("1")));
    assert_eq!(m.get("z").unwrap().pos.origin(), Origin::Source);
    assert_eq!(text(src, &n, &["m"]), "<<: *b\n  z: 3");
}

#[test]
fn nodes_made_in_memory_have_no_text() {
    assert_eq!(Node::string("x").pos.text("x"), None);
}

/// The 501-byte "billion laughs" document of go-yaml's limit_test.go kind.
pub(crate) fn alias_bomb() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (i, c) in "bcdefghi".chars().enumerate() {
        let prev = char::from(b'a' + i as u8);
        let refs = vec![format!("*{prev}"); 9].join(",");
        s.push_str(&format!("{c}: &{c} [{refs}]\n"));
    }
    s
}

#[test]
fn alias_bombs_fail_before_expanding() {
    let e = parse_all(&alias_bomb(), Resolver::V2).unwrap_err();
    assert!(
        e.to_string()
            .contains("document contains excessive aliasing"),
        "{e}"
    );
    assert!(matches!(e, Error::Syntax { line: 1.., .. }), "{e:?}");
    // 20,000 flat aliases of a small map: 3 of every 4 operations aliased.
    let flat = format!("a: &a {{x: 1, y: 2}}\nl:\n{}", "- *a\n".repeat(20_000));
    assert!(parse_one(&flat, Resolver::V2).is_ok());
    // Streams of documents with aliases parse.
    let many = format!("{}---\n", "a: &a [1, 2, 3]\nb: [*a, *a, *a, *a]\n").repeat(2000);
    assert_eq!(
        parse_all(&many, Resolver::V2).map(|d| d.len()).ok(),
        Some(2001)
    );
}

#[test]
fn the_alias_ratio_follows_go_yaml() {
    assert_eq!(allowed_alias_ratio(1000), 0.99);
    assert_eq!(allowed_alias_ratio(4_000_000), 0.10);
    assert!((allowed_alias_ratio(2_200_000) - 0.545).abs() < 1e-9);
    let mut b = Budget::default();
    assert!(b.count(900, 0, 1).is_ok());
    // 99% of at most 1,000 operations is fine: go-yaml needs more than 1,000.
    assert!(b.count(100, 100, 1).is_ok());
    let mut b = Budget::default();
    assert!(b.count(10, 0, 1).is_ok());
    assert!(b.count(1000, 1000, 7).is_err());
}

#[test]
fn nesting_stops_at_go_yaml_depth() {
    for deep in [
        format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)),
        format!("{}x\n", "- ".repeat(50_000)),
        format!("{}x\n", "{a: ".repeat(10_001)),
    ] {
        let e = parse_all(&deep, Resolver::V3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1, column 0: exceeded max depth of 10000"
        );
        // A release build takes about 0.2 s (libyaml's simple-key scan is
        // quadratic in the flow level): benches/limits.sh measures it.
    }
    let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse_one(&at_limit, Resolver::V3).is_ok());
}

#[test]
fn padded_input_never_reaches_the_crate_panic() {
    // Block scalars at the end of input without a break used to panic
    // inside libyaml-safer; now they are parsed with a break added.
    let n = parse_one("a: |\n  x\n  y", Resolver::V3).unwrap();
    assert_eq!(n.get_str("a"), Some("x\ny"));
    assert_eq!(
        parse_one("a: b", Resolver::V3).unwrap().get_str("a"),
        Some("b")
    );
}

/// Scalar texts and structure, without tags or positions.
fn shape(n: &Node) -> String {
    match &n.value {
        Value::Scalar(s) => format!("{:?}", s.text),
        Value::Seq(items) => format!(
            "[{}]",
            items.iter().map(shape).collect::<Vec<_>>().join(",")
        ),
        Value::Map(m) => {
            let entries: Vec<_> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", shape(k), shape(v)))
                .collect();
            format!("{{{}}}", entries.join(","))
        }
    }
}

/// Each node's span, put back at its column and parsed alone, gives the node.
fn holds_alias(n: &Node) -> bool {
    n.pos.origin() != Origin::Source
        || match &n.value {
            Value::Scalar(_) => false,
            Value::Seq(items) => items.iter().any(holds_alias),
            Value::Map(m) => m.iter().any(|(k, v)| holds_alias(k) || holds_alias(v)),
        }
}

fn reparses(src: &str, n: &Node, file: &std::path::Path) {
    if n.pos.origin() != Origin::Source {
        return; // its span is the alias text or lies in the merged mapping
    }
    let text = n
        .pos
        .text(src)
        .unwrap_or_else(|| panic!("{file:?}: {:?}", n.pos));
    let start = n.pos.start as usize;
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let header = text.lines().next().unwrap_or("");
    let explicit_indent =
        text.starts_with(['|', '>']) && header.contains(|c: char| c.is_ascii_digit());
    // A collection holding an alias or a merge cannot be parsed alone when its anchor
    // lies outside it; its own children are still checked.
    if !text.is_empty() && !explicit_indent && !holds_alias(n) {
        let padded = format!(
            "{}{text}",
            " ".repeat(src[line_start..start].chars().count())
        );
        let again =
            parse_one(&padded, Resolver::V3).unwrap_or_else(|e| panic!("{file:?} {padded:?}: {e}"));
        assert_eq!(shape(&again), shape(n), "{file:?} at {}", n.pos.line);
    }
    match &n.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter().for_each(|i| reparses(src, i, file)),
        Value::Map(m) => m.iter().for_each(|(k, v)| {
            reparses(src, k, file);
            reparses(src, v, file);
        }),
    }
}

#[test]
fn every_span_in_the_test_data_reparses_to_its_node() {
    let mut documents = 0;
    insta::glob!("../../../testdata", "**/*.yaml", |path| {
        let src = std::fs::read_to_string(path).unwrap_or_default();
        for doc in parse_all(&src, Resolver::V3).unwrap_or_default() {
            reparses(&src, &doc, path);
            documents += 1;
        }
    });
    assert!(documents > 100, "{documents} documents checked");
}
