//! Dotted paths into a document (`image.tag`, `env[0].value`, `a.b.0.c`):
//! the one grammar for the paths people type (set-value's PATH, an
//! environment file's `pins:`). A path is a `.`-separated list of
//! segments; a segment is a non-empty key followed by any number of `[N]`
//! indexes; a segment of digits after the first is an index too. Anything
//! else is refused with the reason, never read as a neighbouring path: an
//! empty segment (`image..tag`, `.image.tag`, `image.tag.`) would
//! otherwise be silently read as `image.tag`.

use super::Seg;

/// Why a dotted path is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Nothing at all.
    #[error("the path is empty")]
    Empty,
    /// `image..tag`, `.image`, `image.`.
    #[error("segment {number} is empty (a path is KEY.KEY…, as `image.tag`; no leading, trailing or doubled `.`)")]
    EmptySegment {
        /// 1-based.
        number: usize,
    },
    /// `[0]` or `a.[0]`: an index needs the key it indexes.
    #[error("segment {number} `{segment}` has no key before `[`")]
    NoKey {
        /// 1-based.
        number: usize,
        /// The segment.
        segment: String,
    },
    /// `a[x]`, `a[]`, `a[-1]`, `a[0`, `a]`, `a[0]b`.
    #[error("segment {number} `{segment}`: an index is digits in brackets right after the key, as `env[0]`")]
    BadIndex {
        /// 1-based.
        number: usize,
        /// The segment.
        segment: String,
    },
    /// A line break or other control character (it would end the commit
    /// message line the path is recorded on).
    #[error("contains the control character U+{:04X}", u32::from(*.0))]
    Control(char),
}

/// Parses `a.b[0].c` (or `a.b.0.c`) into segments, refusing what is not
/// a path (see the module documentation).
pub fn try_parse_path(text: &str) -> Result<Vec<Seg>, PathError> {
    if let Some(c) = text.chars().find(|c| c.is_control() || is_yaml_break(*c)) {
        return Err(PathError::Control(c));
    }
    if text.is_empty() {
        return Err(PathError::Empty);
    }
    let mut out = Vec::new();
    for (i, part) in text.split('.').enumerate() {
        segment(part, i + 1, &mut out)?;
    }
    Ok(out)
}

/// The segments of a path that [`try_parse_path`] accepts; the callers'
/// paths are checked where they are read (an environment file's `pins:`,
/// set-value's PATH), so an unchecked invalid path yields no segments
/// rather than a neighbouring path.
pub fn parse_path(text: &str) -> Vec<Seg> {
    try_parse_path(text).unwrap_or_default()
}

/// One `.`-separated segment: `key`, `key[0][1]`, or digits (an index
/// after the first segment).
fn segment(part: &str, number: usize, out: &mut Vec<Seg>) -> Result<(), PathError> {
    let bad = || PathError::BadIndex {
        number,
        segment: part.to_string(),
    };
    if part.is_empty() {
        return Err(PathError::EmptySegment { number });
    }
    let (key, mut indexes) = match part.split_once('[') {
        Some((k, rest)) => (k, Some(rest)),
        None => (part, None),
    };
    if key.is_empty() {
        return Err(PathError::NoKey {
            number,
            segment: part.to_string(),
        });
    }
    if key.contains(']') {
        return Err(bad());
    }
    match key.parse::<usize>() {
        Ok(i) if !out.is_empty() && all_digits(key) => out.push(Seg::Index(i)),
        _ => out.push(Seg::Key(key.to_string())),
    }
    while let Some(rest) = indexes {
        let (digits, after) = rest.split_once(']').ok_or_else(bad)?;
        if !all_digits(digits) {
            return Err(bad());
        }
        out.push(Seg::Index(digits.parse().map_err(|_| bad())?));
        indexes = match after {
            "" => None,
            more => Some(more.strip_prefix('[').ok_or_else(bad)?),
        };
    }
    Ok(())
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// YAML's line breaks beyond the ASCII ones (go-yaml reads NEL, LS and PS
/// as breaks: yaml_private.h is_break).
pub fn is_yaml_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// A path as `a.b[0].c`.
pub fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for p in path {
        match p {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }

    #[test]
    fn paths_parse_into_keys_and_indexes() {
        assert_eq!(
            try_parse_path("image.tag"),
            Ok(vec![key("image"), key("tag")])
        );
        assert_eq!(
            try_parse_path("env[0].value"),
            Ok(vec![key("env"), Seg::Index(0), key("value")])
        );
        assert_eq!(
            try_parse_path("a.b.0.c"),
            Ok(vec![key("a"), key("b"), Seg::Index(0), key("c")])
        );
        assert_eq!(
            try_parse_path("m[1][2]"),
            Ok(vec![key("m"), Seg::Index(1), Seg::Index(2)])
        );
        // The first segment is always a key; `+1` is a key, not index 1.
        assert_eq!(try_parse_path("0.+1"), Ok(vec![key("0"), key("+1")]));
        assert_eq!(
            try_parse_path("annotations.acme-shop/x y"),
            Ok(vec![key("annotations"), key("acme-shop/x y")])
        );
    }

    #[test]
    fn malformed_paths_are_refused_with_the_reason() {
        let cases: [(&str, PathError); 9] = [
            ("", PathError::Empty),
            ("image..tag", PathError::EmptySegment { number: 2 }),
            (".image.tag", PathError::EmptySegment { number: 1 }),
            ("image.tag.", PathError::EmptySegment { number: 3 }),
            (
                "[0].a",
                PathError::NoKey {
                    number: 1,
                    segment: "[0]".into(),
                },
            ),
            (
                "a[x]",
                PathError::BadIndex {
                    number: 1,
                    segment: "a[x]".into(),
                },
            ),
            (
                "a.b[0",
                PathError::BadIndex {
                    number: 2,
                    segment: "b[0".into(),
                },
            ),
            (
                "a[0]b",
                PathError::BadIndex {
                    number: 1,
                    segment: "a[0]b".into(),
                },
            ),
            ("image.tag\n", PathError::Control('\n')),
        ];
        for (text, want) in cases {
            assert_eq!(try_parse_path(text), Err(want), "{text:?}");
        }
        assert!(try_parse_path("a]").is_err());
        assert!(try_parse_path("a[]").is_err());
        assert!(try_parse_path("a[99999999999999999999999]").is_err());
        assert!(try_parse_path("a\u{2028}b").is_err());
        assert_eq!(parse_path("image..tag"), Vec::<Seg>::new());
    }

    fn segs() -> impl Strategy<Value = Vec<Seg>> {
        let first = "[a-zA-Z_][a-zA-Z0-9_/ -]{0,8}".prop_map(Seg::Key);
        let seg = prop_oneof![
            "[a-zA-Z_][a-zA-Z0-9_/ -]{0,8}".prop_map(Seg::Key),
            (0usize..1000).prop_map(Seg::Index),
        ];
        (first, proptest::collection::vec(seg, 0..6)).prop_map(|(f, rest)| {
            let mut v = vec![f];
            v.extend(rest);
            v
        })
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,24}|[a.\\[\\]0-9]{0,16}") {
            let _ = try_parse_path(&text);
        }

        #[test]
        fn written_paths_parse_back(path in segs()) {
            let text = path_text(&path);
            prop_assert_eq!(try_parse_path(&text), Ok(path));
        }
    }
}
