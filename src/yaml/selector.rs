//! Paths into a YAML document as the diff prints them and as declared
//! pins name them: keys separated by dots, `[2]` (or `.2`) for a list
//! index, and `[name=web]` for the list item whose `name` is `web`
//! (`spec.template.spec.containers[name=web].image`); a key that is not a
//! plain identifier may be quoted as a JSON string, as the diff prints it
//! (`metadata.labels."app.kubernetes.io/name"`). A path is parsed
//! strictly: an empty segment (`a..b`, `.a`, `a.`), an unclosed bracket
//! or text after one is an error, never silently read as another path.
//! [`super::edit`]'s plain paths are these without selectors.

use super::edit::Seg;
use super::Node;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
    /// The list item whose `key` is `value`.
    Match(String, String),
}

/// Parses `a.b[0].c[name=x].d`.
pub fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut key = String::new();
    let mut chars = text.chars().peekable();
    // Whether a key must come next (at the start and after a dot).
    let mut want_key = true;
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                end_key(&mut key, &mut steps, want_key)?;
                want_key = true;
            }
            '[' => {
                if !key.is_empty() {
                    end_key(&mut key, &mut steps, false)?;
                } else if want_key && !steps.is_empty() {
                    return Err("an empty segment before `[`".into());
                }
                let mut inside = String::new();
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some(c) => inside.push(c),
                        None => return Err("an unclosed `[`".into()),
                    }
                }
                steps.push(bracket(&inside)?);
                want_key = false;
                if let Some(&next) = chars.peek() {
                    if next != '.' && next != '[' {
                        return Err(format!("`{next}` after `]` (expected `.` or `[`)"));
                    }
                }
            }
            // A quoted key, as the diff prints one that is not a plain
            // identifier: a JSON string (`labels."app.kubernetes.io/name"`).
            '"' if key.is_empty() && want_key => {
                let mut quoted = String::from('"');
                let mut escaped = false;
                loop {
                    let Some(c) = chars.next() else {
                        return Err("an unclosed `\"`".into());
                    };
                    quoted.push(c);
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                let k: String = serde_json::from_str(&quoted)
                    .map_err(|e| format!("the quoted key {quoted}: {e}"))?;
                steps.push(Step::Key(k));
                want_key = false;
                if let Some(&next) = chars.peek() {
                    if next != '.' && next != '[' {
                        return Err(format!("`{next}` after a quoted key (expected `.` or `[`)"));
                    }
                }
            }
            c => {
                key.push(c);
                want_key = false;
            }
        }
    }
    end_key(&mut key, &mut steps, want_key)?;
    if steps.is_empty() {
        return Err("an empty path".into());
    }
    Ok(steps)
}

fn end_key(key: &mut String, steps: &mut Vec<Step>, empty: bool) -> Result<(), String> {
    if key.is_empty() {
        if empty {
            return Err(format!(
                "segment {} is empty (a path is KEY.KEY…, as `image.tag`; no leading, trailing or doubled `.`)",
                steps.len() + 1
            ));
        }
        return Ok(());
    }
    let k = std::mem::take(key);
    // `containers.0` indexes a list, as the diff's `containers[0]` does.
    match k.parse::<usize>() {
        Ok(i) if !steps.is_empty() => steps.push(Step::Index(i)),
        _ => steps.push(Step::Key(k)),
    }
    Ok(())
}

fn bracket(inside: &str) -> Result<Step, String> {
    if let Some((k, v)) = inside.split_once('=') {
        if k.is_empty() || v.is_empty() {
            return Err(format!("`[{inside}]` needs a key and a value"));
        }
        return Ok(Step::Match(k.to_string(), v.to_string()));
    }
    inside
        .parse::<usize>()
        .map(Step::Index)
        .map_err(|_| format!("`[{inside}]` is neither an index nor `[key=value]`"))
}

/// The plain path `steps` lead to in `doc` (a selector becomes the index
/// of the item it matches); None when a step finds nothing.
pub fn resolve(doc: &Node, steps: &[Step]) -> Option<Vec<Seg>> {
    let mut out = Vec::new();
    let mut n = doc;
    for s in steps {
        let seg = match s {
            Step::Key(k) => Seg::Key(k.clone()),
            Step::Index(i) => Seg::Index(*i),
            Step::Match(k, v) => {
                let i = n
                    .as_seq()?
                    .iter()
                    .position(|item| item.get(k).and_then(Node::as_str) == Some(v.as_str()))?;
                Seg::Index(i)
            }
        };
        n = match &seg {
            Seg::Key(k) => n.get(k)?,
            Seg::Index(i) => n.as_seq()?.get(*i)?,
        };
        out.push(seg);
    }
    Some(out)
}

/// The path when it has no selector (so it can be written where missing).
pub fn plain(steps: &[Step]) -> Option<Vec<Seg>> {
    steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => Some(Seg::Key(k.clone())),
            Step::Index(i) => Some(Seg::Index(*i)),
            Step::Match(..) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};
    use proptest::prelude::*;

    #[test]
    fn diff_paths_parse_and_select_list_items() {
        let steps = parse("spec.containers[name=app.v2].image").unwrap_or_default();
        assert_eq!(
            steps,
            [
                Step::Key("spec".into()),
                Step::Key("containers".into()),
                Step::Match("name".into(), "app.v2".into()),
                Step::Key("image".into()),
            ]
        );
        assert_eq!(parse("a.0.b").unwrap_or_default()[1], Step::Index(0));
        assert_eq!(
            parse(r#"metadata.labels."app.kubernetes.io/name""#).unwrap_or_default()[2],
            Step::Key("app.kubernetes.io/name".into())
        );
        assert_eq!(
            parse(r#"a."x\"y"[0]"#).unwrap_or_default()[1],
            Step::Key("x\"y".into())
        );
        assert_eq!(parse("a[1][2]").unwrap_or_default().len(), 3);
        let doc = parse_one(
            "spec:\n  containers:\n  - name: side\n  - name: app.v2\n    image: x\n",
            Resolver::V3,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let segs = resolve(&doc, &steps).unwrap_or_default();
        assert_eq!(
            crate::yaml::edit::path_text(&segs),
            "spec.containers[1].image"
        );
        assert!(resolve(
            &doc,
            &parse("spec.containers[name=no].image").unwrap_or_default()
        )
        .is_none());
    }

    #[test]
    fn malformed_paths_are_refused() {
        for bad in [
            "",
            ".a",
            "a.",
            "a..b",
            "a[",
            "a[]",
            "a[x]",
            "a[=b]",
            "a[k=]",
            "a[0]b",
            "a.[0]",
            "a.\"b",
            "a.\"b\"c",
            "a.\"\\q\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_printed_paths_read_back(keys in proptest::collection::vec("[a-z]{1,5}", 1..5), idx in 0usize..9) {
            let text = format!("{}[{idx}]", keys.join("."));
            let steps = parse(&text).map_err(TestCaseError::fail)?;
            prop_assert_eq!(steps.len(), keys.len() + 1);
            prop_assert_eq!(&steps[keys.len()], &Step::Index(idx));
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,30}") {
            let _ = parse(&text);
        }
    }
}
