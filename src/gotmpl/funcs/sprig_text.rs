//! Sprig v3.3.0 string functions beyond the basics: case conversion
//! (goutils, xstrings v1.5), splitting, abbreviation, wrapping, paths,
//! `seq`, `toStrings`, `sortAlpha`.

use std::collections::BTreeMap;

use super::sprig_strings::{strslice, strval};
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::gounicode;
use crate::gotmpl::value::{Elem, Value};

use ArgType::{Any, Int, String as Str};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

fn ok(v: impl Into<String>) -> Result<Value, String> {
    Ok(Value::from(v.into()))
}

fn strings(v: Vec<String>) -> Value {
    Value::typed_list(Elem::String, v.into_iter().map(Value::from).collect())
}

/// Registers the functions of this file.
pub fn register(m: &mut FuncMap) {
    let one = Signature::fixed(&[Str]);
    m.insert("title", one.clone(), |_, a| ok(title(s(&a[0]))));
    m.insert("untitle", one.clone(), |_, a| ok(untitle(s(&a[0]))));
    m.insert("swapcase", one.clone(), |_, a| ok(swapcase(s(&a[0]))));
    m.insert("initials", one.clone(), |_, a| ok(initials(s(&a[0]))));
    m.insert("snakecase", one.clone(), |_, a| {
        ok(super::xstrings::to_lower_case(s(&a[0]), '_'))
    });
    m.insert("kebabcase", one.clone(), |_, a| {
        ok(super::xstrings::to_lower_case(s(&a[0]), '-'))
    });
    m.insert("camelcase", one.clone(), |_, a| {
        ok(super::xstrings::to_pascal_case(s(&a[0])))
    });
    m.insert("nospace", one.clone(), |_, a| {
        ok(delete_white_space(s(&a[0])))
    });
    m.insert("trimall", Signature::fixed(&[Str, Str]), |_, a| {
        let cut: Vec<char> = s(&a[0]).chars().collect();
        ok(s(&a[1]).trim_matches(cut.as_slice()))
    });
    m.insert("substr", Signature::fixed(&[Int, Int, Str]), |_, a| {
        substring(int(&a[0]), int(&a[1]), s(&a[2])).map(Value::from)
    });
    m.insert("split", Signature::fixed(&[Str, Str]), |_, a| {
        Ok(numbered(split_n(s(&a[1]), s(&a[0]), -1)))
    });
    m.insert("splitn", Signature::fixed(&[Str, Int, Str]), |_, a| {
        Ok(numbered(split_n(s(&a[2]), s(&a[0]), int(&a[1]))))
    });
    m.insert("abbrev", Signature::fixed(&[Int, Str]), |_, a| {
        let (w, text) = (int(&a[0]), s(&a[1]));
        if w < 4 {
            return ok(text);
        }
        ok(abbreviate(text, 0, w).unwrap_or_default())
    });
    m.insert("abbrevboth", Signature::fixed(&[Int, Int, Str]), |_, a| {
        let (l, r, text) = (int(&a[0]), int(&a[1]), s(&a[2]));
        if r < 4 || l > 0 && r < 7 {
            return ok(text);
        }
        ok(abbreviate(text, l, r).unwrap_or_default())
    });
    m.insert("wrap", Signature::fixed(&[Int, Str]), |_, a| {
        ok(wrap_custom(s(&a[1]), int(&a[0]), "", false))
    });
    m.insert("wrapWith", Signature::fixed(&[Int, Str, Str]), |_, a| {
        ok(wrap_custom(s(&a[2]), int(&a[0]), s(&a[1]), true))
    });
    m.insert("plural", Signature::fixed(&[Str, Str, Int]), |_, a| {
        Ok(if int(&a[2]) == 1 {
            a[0].clone()
        } else {
            a[1].clone()
        })
    });
    m.insert("toStrings", Signature::fixed(&[Any]), |_, a| {
        Ok(strings(strslice(&a[0])))
    });
    m.insert("sortAlpha", Signature::fixed(&[Any]), |_, a| {
        Ok(strings(match a[0].resolved() {
            Value::List(_) | Value::Bytes(_) => {
                let mut v = strslice(&a[0]);
                v.sort();
                v
            }
            other => vec![strval(&other)],
        }))
    });
    m.insert("seq", Signature::variadic(&[], Int), |_, a| {
        let p: Vec<i64> = a.iter().map(int).collect();
        ok(seq(&p))
    });
    m.insert("hello", Signature::fixed(&[]), |_, _| ok("Hello!"));
    register_paths(m);
}

/// Go's `path` package (also `filepath` on Unix, where they agree).
fn register_paths(m: &mut FuncMap) {
    let one = Signature::fixed(&[Str]);
    for (name, os) in [("base", "osBase"), ("dir", "osDir"), ("clean", "osClean")] {
        let f = match name {
            "base" => path_base,
            "dir" => path_dir,
            _ => path_clean,
        };
        m.insert(name, one.clone(), move |_, a| ok(f(s(&a[0]))));
        m.insert(os, one.clone(), move |_, a| ok(f(s(&a[0]))));
    }
    for name in ["ext", "osExt"] {
        m.insert(name, one.clone(), |_, a| ok(path_ext(s(&a[0]))));
    }
    for name in ["isAbs", "osIsAbs"] {
        m.insert(name, one.clone(), |_, a| {
            Ok(Value::Bool(s(&a[0]).starts_with('/')))
        });
    }
}

/// Go's `strings.Title`: `unicode.ToTitle` on the first rune of every
/// word; a word starts after a separator (`strings.isSeparator`: ASCII
/// other than letters, digits and `_`; above ASCII only `unicode.IsSpace`
/// runes, letters and digits never).
pub fn title(text: &str) -> String {
    let is_sep = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if gounicode::is_letter(c) || gounicode::is_digit(c) {
            false
        } else {
            gounicode::is_space(c)
        }
    };
    let mut prev = ' ';
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        out.push(if is_sep(prev) {
            gounicode::to_title(c)
        } else {
            c
        });
        prev = c;
    }
    out
}

/// goutils `Uncapitalize` (sprig `untitle`): `unicode.ToLower` on the
/// first rune of each word, words separated by `unicode.IsSpace` runes.
fn untitle(text: &str) -> String {
    let mut next = true;
    text.chars()
        .map(|c| {
            if gounicode::is_space(c) {
                next = true;
                c
            } else if next {
                next = false;
                gounicode::to_lower(c)
            } else {
                c
            }
        })
        .collect()
}

/// goutils `SwapCase`: upper and title case (Lu, Lt) to lower, lower case
/// (Ll) to upper, or to title case at the start of the text or after a
/// `unicode.IsSpace` rune; letters of no case and marks such as `ⓐ` or
/// U+0345 are kept and end a run of spaces.
fn swapcase(text: &str) -> String {
    let mut ws = true;
    text.chars()
        .map(|c| {
            if gounicode::is_upper(c) || gounicode::is_title(c) {
                ws = false;
                gounicode::to_lower(c)
            } else if gounicode::is_lower(c) {
                if ws {
                    ws = false;
                    gounicode::to_title(c)
                } else {
                    gounicode::to_upper(c)
                }
            } else {
                ws = gounicode::is_space(c);
                c
            }
        })
        .collect()
}

/// Go's `unicode.IsSpace` on a byte taken as a Latin-1 rune.
fn byte_is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0x85 | 0xA0)
}

/// goutils `Initials`: works byte-wise, re-encoding each byte as a rune.
fn initials(text: &str) -> String {
    let mut gap = true;
    let mut out = String::new();
    for &b in text.as_bytes() {
        if byte_is_space(b) {
            gap = true;
        } else if gap {
            out.push(char::from(b));
            gap = false;
        }
    }
    out
}

/// goutils `DeleteWhiteSpace`: byte-wise, like `initials`.
fn delete_white_space(text: &str) -> String {
    if !text.bytes().any(byte_is_space) {
        return text.to_string();
    }
    text.bytes()
        .filter(|b| !byte_is_space(*b))
        .map(char::from)
        .collect()
}

/// A Go string slice `s[a:b]` as Go would do it, with Go's panic text.
fn go_slice(text: &str, a: i64, b: i64) -> Result<String, String> {
    let len = text.len() as i64;
    if b < 0 || b > len {
        return Err(format!(
            "runtime error: slice bounds out of range [:{b}] with length {len}"
        ));
    }
    if a < 0 || a > b {
        return Err(format!(
            "runtime error: slice bounds out of range [{a}:{b}]"
        ));
    }
    Ok(String::from_utf8_lossy(&text.as_bytes()[a as usize..b as usize]).into_owned())
}

/// Sprig's `substring`.
fn substring(start: i64, end: i64, text: &str) -> Result<String, String> {
    let len = text.len() as i64;
    if start < 0 {
        return go_slice(text, 0, end);
    }
    if end < 0 || end > len {
        return go_slice(text, start, len);
    }
    go_slice(text, start, end)
}

/// Go's `strings.SplitN` (`n < 0`: all parts; `n == 0`: none).
pub fn split_n(text: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<String> = text.chars().map(String::from).collect();
        if n > 0 && (n as usize) < chars.len() {
            let head = n as usize - 1;
            let rest: String = chars[head..].concat();
            let mut v = chars[..head].to_vec();
            v.push(rest);
            return v;
        }
        return chars;
    }
    if n < 0 {
        return text.split(sep).map(String::from).collect();
    }
    text.splitn(n as usize, sep).map(String::from).collect()
}

/// Sprig's `split`/`splitn` result: `map[string]string` keyed `_0`, `_1`...
fn numbered(parts: Vec<String>) -> Value {
    let m: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| (format!("_{i}"), Value::from(p)))
        .collect();
    Value::typed_map(Elem::String, m)
}

/// goutils `AbbreviateFull` (byte offsets; `None` for its errors).
fn abbreviate(text: &str, offset: i64, max: i64) -> Option<String> {
    let len = text.len() as i64;
    if text.is_empty() {
        return Some(String::new());
    }
    if max < 4 {
        return None;
    }
    if len <= max {
        return Some(text.to_string());
    }
    let mut offset = offset.min(len);
    // Go's `len(str)-offset` wraps for an offset near math.MinInt64 (then
    // negative, so the offset moves to the tail), as helm prints.
    if len.wrapping_sub(offset) < max - 3 {
        offset = len - (max - 3);
    }
    let cut = |a: i64, b: i64| {
        String::from_utf8_lossy(&text.as_bytes()[a.max(0) as usize..b.max(0) as usize]).into_owned()
    };
    if offset <= 4 {
        return Some(format!("{}...", cut(0, max - 3)));
    }
    if max < 7 {
        return None;
    }
    if offset + max - 3 < len {
        let rest = cut(offset, len);
        return Some(format!("...{}", abbreviate(&rest, 0, max - 3)?));
    }
    Some(format!("...{}", cut(len - (max - 3), len)))
}

/// goutils `WrapCustom` (byte offsets, splits at spaces only).
fn wrap_custom(text: &str, width: i64, newline: &str, long_words: bool) -> String {
    if text.is_empty() {
        return String::new();
    }
    let nl = if newline.is_empty() { "\n" } else { newline };
    let width = width.max(1) as usize;
    let b = text.as_bytes();
    let len = b.len();
    let cut = |x: usize, y: usize| String::from_utf8_lossy(&b[x..y]).into_owned();
    let mut off = 0usize;
    let mut out = String::new();
    while len - off > width {
        if b[off] == b' ' {
            off += 1;
            continue;
        }
        let end = (width + off + 1).min(len);
        match b[off..end].iter().rposition(|&c| c == b' ') {
            Some(p) => {
                out.push_str(&cut(off, off + p));
                out.push_str(nl);
                off += p + 1;
            }
            None if long_words => {
                out.push_str(&cut(off, off + width));
                out.push_str(nl);
                off += width;
            }
            None => {
                let end = width + off;
                match b[end..].iter().position(|&c| c == b' ') {
                    None => {
                        out.push_str(&cut(off, len));
                        off = len;
                    }
                    Some(i) => {
                        out.push_str(&cut(off, end + i));
                        out.push_str(nl);
                        off = end + i + 1;
                    }
                }
            }
        }
    }
    out.push_str(&cut(off, len));
    out
}

/// Sprig's `untilStep` as plain integers (empty past a sane length).
fn until_step(start: i64, stop: i64, step: i64) -> Vec<i64> {
    let mut v = Vec::new();
    let len = if step != 0 {
        (i128::from(stop) - i128::from(start)) / i128::from(step)
    } else {
        0
    };
    if len > super::MAX_RESULT_ITEMS as i128 {
        return v;
    }
    let mut i = start;
    if stop < start {
        while step < 0 && i > stop {
            v.push(i);
            i += step;
        }
    } else {
        while step > 0 && i < stop {
            v.push(i);
            i += step;
        }
    }
    v
}

/// Sprig's `seq` (GNU seq-like).
fn seq(p: &[i64]) -> String {
    let nums = match *p {
        [end] => {
            let inc = if end < 1 { -1 } else { 1 };
            until_step(1, end + inc, inc)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(start, end + step, step)
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if step > 0 {
                    return String::new();
                }
            }
            until_step(start, end + inc, step)
        }
        _ => return String::new(),
    };
    let parts: Vec<String> = nums.iter().map(i64::to_string).collect();
    parts.join(" ")
}

/// Go's `path.Clean`.
pub fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// Go's `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// Go's `path.Dir`.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

/// Go's `path.Ext`.
fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_helpers() {
        assert_eq!(title("hello world-foo o'neil"), "Hello World-Foo O'Neil");
        assert_eq!(untitle("Hello World"), "hello world");
        assert_eq!(swapcase("This Is A.Test"), "tHIS iS a.tEST");
        assert_eq!(initials("foo bar  baz"), "fbb");
        assert_eq!(delete_white_space("a b\tc"), "abc");
    }

    #[test]
    fn substr_and_split() {
        assert_eq!(substring(1, 3, "hello").as_deref(), Ok("el"));
        assert_eq!(substring(-1, 2, "hello").as_deref(), Ok("he"));
        assert_eq!(substring(2, -1, "hello").as_deref(), Ok("llo"));
        assert!(substring(-1, 9, "hi").is_err());
        assert_eq!(split_n("a/b/c", "/", 2), vec!["a", "b/c"]);
        assert_eq!(split_n("abc", "", 2), vec!["a", "bc"]);
        assert!(split_n("abc", "b", 0).is_empty());
    }

    #[test]
    fn abbreviate_and_wrap() {
        assert_eq!(abbreviate("hello world", 0, 5).as_deref(), Some("he..."));
        assert_eq!(
            abbreviate("1234 5678 9123", 5, 10).as_deref(),
            Some("...5678...")
        );
        // helm 3.17.3: `abbrevboth -9223372036854775808 10` of 23 `a`s.
        assert_eq!(
            abbreviate(&"a".repeat(23), i64::MIN, 10).as_deref(),
            Some("...aaaaaaa")
        );
        assert_eq!(wrap_custom("Hello World", 5, "", false), "Hello\nWorld");
        assert_eq!(wrap_custom("Helloworld", 5, "<br>", true), "Hello<br>world");
    }

    #[test]
    fn seq_and_paths() {
        assert_eq!(seq(&[3]), "1 2 3");
        assert_eq!(seq(&[0]), "1 0");
        assert_eq!(seq(&[2, -2]), "2 1 0 -1 -2");
        assert_eq!(seq(&[0, 3, 9]), "0 3 6 9");
        assert_eq!(seq(&[9, 3, 0]), "");
        assert_eq!(seq(&[0, 1, i64::MAX - 1]), "");
        assert_eq!(path_clean("a/../../b//c/."), "../b/c");
        assert_eq!(path_clean("/../x"), "/x");
        assert_eq!(path_base("/a/b/"), "b");
        assert_eq!(path_dir("a/b/c"), "a/b");
        assert_eq!(path_ext("a.b/c.tar.gz"), ".gz");
    }
}
