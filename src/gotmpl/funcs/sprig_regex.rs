//! Sprig v3.3.0 regex functions (`regex.go`) with Go `regexp` semantics:
//! RE2 syntax with ASCII-only `\d \w \s \b`, Go's rules for successive
//! empty matches in `FindAll`/`ReplaceAll`/`Split`, and `$name` expansion.
//! The non-`must` variants panic in Go on a bad pattern, which the
//! template engine reports as an error too.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::{Captures, Regex};

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::value::{Elem, Value};

use ArgType::{Int, String as Str};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        _ => 0,
    }
}

/// Go's class escapes are ASCII-only; Rust's are Unicode.
fn translate(pat: &str) -> String {
    let mut out = String::with_capacity(pat.len() + 8);
    let mut in_class = false;
    let mut chars = pat.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let class = match n {
                    'd' => Some("0-9"),
                    'w' => Some("0-9A-Za-z_"),
                    's' => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                match (class, in_class) {
                    (Some(c), true) => out.push_str(c),
                    (Some(c), false) => {
                        out.push('[');
                        out.push_str(c);
                        out.push(']');
                    }
                    (None, _) => match n {
                        'D' | 'W' | 'S' if !in_class => {
                            let c = match n {
                                'D' => "0-9",
                                'W' => "0-9A-Za-z_",
                                _ => "\\t\\n\\f\\r ",
                            };
                            out.push_str("[^");
                            out.push_str(c);
                            out.push(']');
                        }
                        'b' | 'B' if !in_class => {
                            out.push_str("(?-u:\\");
                            out.push(n);
                            out.push(')');
                        }
                        _ => {
                            out.push('\\');
                            out.push(n);
                        }
                    },
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // POSIX class [:alpha:] inside a bracket expression.
                out.push('[');
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Patterns compiled on this thread, reused: charts call `regexMatch` and
/// friends with the same few literal patterns for every object. Cleared
/// when full, so it stays small.
const COMPILED_MAX: usize = 256;
/// Longer patterns are compiled each time (and not kept).
const COMPILED_PATTERN_MAX: usize = 4096;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Result<Regex, String>>> = RefCell::new(HashMap::new());
}

/// Compiles with Go's error prefix (memoised per thread).
pub fn compile(pat: &str) -> Result<Regex, String> {
    if let Some(r) = COMPILED.with(|c| c.borrow().get(pat).cloned()) {
        return r;
    }
    let r = compile_new(pat);
    if pat.len() > COMPILED_PATTERN_MAX {
        return r;
    }
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= COMPILED_MAX {
            c.clear();
        }
        c.insert(pat.to_string(), r.clone());
    });
    r
}

fn compile_new(pat: &str) -> Result<Regex, String> {
    Regex::new(&translate(pat)).map_err(|e| {
        let detail = e.to_string();
        let last = detail.lines().last().unwrap_or("invalid pattern").trim();
        let last = last.strip_prefix("error: ").unwrap_or(last);
        format!("error parsing regexp: {last}: `{pat}`")
    })
}

/// Go's `allMatches` loop: (start, end) of up to `n` matches (`n < 0`: all),
/// skipping an empty match right after the previous match.
fn all_matches(re: &Regex, text: &str, n: i64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut prev_end: Option<usize> = None;
    while (n < 0 || (out.len() as i64) < n) && pos <= text.len() {
        let Some(m) = re.find_at(text, pos) else {
            break;
        };
        let mut accept = true;
        if m.end() == m.start() {
            if Some(m.start()) == prev_end {
                accept = false;
            }
            pos = next_char(text, m.end());
        } else {
            pos = m.end();
        }
        prev_end = Some(m.end());
        if accept {
            out.push((m.start(), m.end()));
        }
    }
    out
}

fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(at + 1, |c| at + c.len_utf8())
}

/// Go's `Regexp.ReplaceAllString` (`literal`: `ReplaceAllLiteralString`).
fn replace_all(re: &Regex, text: &str, repl: &str, literal: bool) -> String {
    let mut out = String::new();
    let mut last_end = 0;
    let mut search = 0;
    while search <= text.len() {
        let Some(caps) = re.captures_at(text, search) else {
            break;
        };
        let Some(m) = caps.get(0) else {
            break;
        };
        out.push_str(&text[last_end..m.start()]);
        if m.end() > last_end || m.start() == 0 {
            if literal {
                out.push_str(repl);
            } else {
                expand(&caps, repl, &mut out);
            }
        }
        last_end = m.end();
        let width = text[search..].chars().next().map_or(1, char::len_utf8);
        search = if search + width > m.end() {
            search + width
        } else if search + 1 > m.end() {
            search + 1
        } else {
            m.end()
        };
    }
    out.push_str(&text[last_end.min(text.len())..]);
    out
}

/// Go's `Regexp.Expand`: `$1`, `$name`, `${name}`, `$$`; the name is the
/// longest run of letters, digits and `_`; unknown groups expand to "".
fn expand(caps: &Captures<'_>, tpl: &str, out: &mut String) {
    let mut rest = tpl;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let (name, after) = if let Some(r) = rest.strip_prefix('{') {
            match r.find('}') {
                Some(j) if j > 0 && r[..j].bytes().all(is_name_byte) => (&r[..j], &r[j + 1..]),
                _ => {
                    out.push('$');
                    continue;
                }
            }
        } else {
            let j = rest.bytes().take_while(|b| is_name_byte(*b)).count();
            if j == 0 {
                out.push('$');
                continue;
            }
            (&rest[..j], &rest[j..])
        };
        rest = after;
        let group = match name.parse::<usize>() {
            Ok(n) => caps.get(n),
            Err(_) => caps.name(name),
        };
        if let Some(g) = group {
            out.push_str(g.as_str());
        }
    }
    out.push_str(rest);
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Go's `Regexp.Split`.
fn split(re: &Regex, text: &str, n: i64, empty_pattern: bool) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !empty_pattern && text.is_empty() {
        return vec![String::new()];
    }
    let mut out = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for (a, b) in all_matches(re, text, n) {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = a;
        if b != 0 {
            out.push(text[beg..end].to_string());
        }
        beg = b;
    }
    if end != text.len() {
        out.push(text[beg..].to_string());
    }
    out
}

fn strings(v: Vec<String>) -> Value {
    Value::typed_list(Elem::String, v.into_iter().map(Value::from).collect())
}

/// Registers the regex functions and their `must` variants.
pub fn register(m: &mut FuncMap) {
    for must in [false, true] {
        let name = |n: &str| {
            if must {
                format!("must{}{}", n[..1].to_uppercase(), &n[1..])
            } else {
                n.to_string()
            }
        };
        m.insert(
            &name("regexMatch"),
            Signature::fixed(&[Str, Str]),
            move |_, a| match compile(s(&a[0])) {
                Ok(re) => Ok(Value::Bool(re.is_match(s(&a[1])))),
                Err(e) if must => Err(e),
                Err(_) => Ok(Value::Bool(false)),
            },
        );
        m.insert(
            &name("regexFindAll"),
            Signature::fixed(&[Str, Str, Int]),
            |_, a| {
                let re = compile(s(&a[0]))?;
                let text = s(&a[1]);
                let found = all_matches(&re, text, int(&a[2]));
                Ok(strings(
                    found
                        .into_iter()
                        .map(|(x, y)| text[x..y].to_string())
                        .collect(),
                ))
            },
        );
        m.insert(&name("regexFind"), Signature::fixed(&[Str, Str]), |_, a| {
            let re = compile(s(&a[0]))?;
            Ok(Value::from(re.find(s(&a[1])).map_or("", |m| m.as_str())))
        });
        m.insert(
            &name("regexReplaceAll"),
            Signature::fixed(&[Str, Str, Str]),
            |_, a| {
                let re = compile(s(&a[0]))?;
                Ok(Value::from(replace_all(&re, s(&a[1]), s(&a[2]), false)))
            },
        );
        m.insert(
            &name("regexReplaceAllLiteral"),
            Signature::fixed(&[Str, Str, Str]),
            |_, a| {
                let re = compile(s(&a[0]))?;
                Ok(Value::from(replace_all(&re, s(&a[1]), s(&a[2]), true)))
            },
        );
        m.insert(
            &name("regexSplit"),
            Signature::fixed(&[Str, Str, Int]),
            |_, a| {
                let re = compile(s(&a[0]))?;
                Ok(strings(split(
                    &re,
                    s(&a[1]),
                    int(&a[2]),
                    s(&a[0]).is_empty(),
                )))
            },
        );
    }
    m.insert("regexQuoteMeta", Signature::fixed(&[Str]), |_, a| {
        let mut out = String::new();
        for c in s(&a[0]).chars() {
            if r"\.+*?()|[]{}^$".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
        Ok(Value::from(out))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Regex {
        compile(p).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn go_empty_match_rules() {
        let r = re("a*");
        assert_eq!(all_matches(&r, "baaab", -1), vec![(0, 0), (1, 4), (5, 5)]);
        assert_eq!(replace_all(&r, "baaab", "-", false), "-b-b-");
        assert_eq!(
            split(&re("a"), "banana", -1, false),
            vec!["b", "n", "n", ""]
        );
        assert_eq!(split(&re("a"), "banana", 2, false), vec!["b", "nana"]);
        assert_eq!(split(&re(""), "abc", -1, true), vec!["a", "b", "c"]);
        assert_eq!(split(&re("x"), "", -1, false), vec![""]);
    }

    #[test]
    fn expansion_and_ascii_classes() {
        let r = re(r"(?P<first>\w+) (\w+)");
        assert_eq!(
            replace_all(&r, "ab cd", "$2 ${first}$$ $3x", false),
            "cd ab$ "
        );
        assert_eq!(replace_all(&r, "ab cd", "$2", true), "$2");
        assert!(!re(r"^\d$").is_match("٣"));
        assert!(re(r"[\d]").is_match("5"));
        assert!(compile("(").is_err_and(|e| e.starts_with("error parsing regexp")));
    }
}
