//! huandu/xstrings v1.5 case conversion, as Sprig's `snakecase`,
//! `kebabcase` (`camelCaseToLowerCase`) and `camelcase` (`ToPascalCase`)
//! use it: words are split by kind (upper-case run, lower-case, digits,
//! punctuation, connectors `-`/`_`/space).

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || c.is_whitespace()
}

/// xstrings `isAlphabet`: letters only (Go `unicode.IsLetter`).
fn is_alpha(c: char) -> bool {
    c.is_alphabetic() && !c.is_numeric()
}

/// Go's `unicode.IsPunct` approximated: ASCII punctuation except the
/// symbol classes Go files elsewhere (`$+<=>^`|~`), plus non-ASCII
/// punctuation-like characters.
fn is_punct(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation() && !"$+<=>^`|~".contains(c);
    }
    !c.is_alphanumeric() && !c.is_whitespace() && !c.is_control() && c.len_utf8() < 4 && {
        let u = c as u32;
        (0x2010..=0x2027).contains(&u) || (0x3000..=0x303F).contains(&u) || u == 0xA1 || u == 0xBF
    }
}

/// xstrings `nextWord`: (kind, byte length).
fn next_word(s: &str) -> (Word, usize) {
    let mut it = s.char_indices().peekable();
    let Some((_, r)) = it.next() else {
        return (Word::Invalid, 0);
    };
    let end_of = |it: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        it.peek().map_or(s.len(), |(i, _)| *i)
    };
    let take_while = |it: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
                      f: &dyn Fn(char) -> bool| {
        while let Some((_, c)) = it.peek() {
            if !f(*c) {
                break;
            }
            it.next();
        }
    };
    let kind = if is_connector(r) {
        take_while(&mut it, &is_connector);
        Word::Connector
    } else if is_punct(r) {
        take_while(&mut it, &is_punct);
        Word::Punct
    } else if r.is_uppercase() {
        match it.peek().map(|(_, c)| *c) {
            Some(c) if c.is_uppercase() => {
                // An upper-case run; its last letter starts the next word
                // when a lower-case letter follows.
                let mut prev_start = end_of(&mut it);
                it.next();
                while let Some((i, c)) = it.peek().copied() {
                    if !c.is_uppercase() {
                        break;
                    }
                    prev_start = i;
                    it.next();
                }
                let end = end_of(&mut it);
                if end < s.len() && it.peek().is_some_and(|(_, c)| is_alpha(*c)) {
                    return (Word::Upper, prev_start);
                }
                return (Word::Upper, end);
            }
            Some(c) if is_alpha(c) => {
                take_while(&mut it, &|c| is_alpha(c) && !c.is_uppercase());
            }
            _ => {}
        }
        Word::Upper
    } else if is_alpha(r) {
        take_while(&mut it, &|c| is_alpha(c) && !c.is_uppercase());
        Word::Alphabet
    } else if r.is_numeric() {
        take_while(&mut it, &|c: char| c.is_numeric());
        Word::Number
    } else {
        take_while(&mut it, &|c| {
            !(is_connector(c) || is_alpha(c) || c.is_numeric() || is_punct(c))
        });
        Word::Other
    };
    (kind, end_of(&mut it))
}

fn split(s: &str) -> (Word, &str, &str) {
    let (w, n) = next_word(s);
    (w, &s[..n], &s[n..])
}

fn to_lower(buf: &mut String, w: Word, s: &str, conn: char) {
    if w != Word::Upper && w != Word::Connector {
        buf.push_str(s);
        return;
    }
    for c in s.chars() {
        if is_connector(c) {
            buf.push(conn);
        } else if c.is_uppercase() {
            buf.extend(c.to_lowercase());
        } else {
            buf.push(c);
        }
    }
}

/// xstrings `camelCaseToLowerCase` (`ToSnakeCase`, `ToKebabCase`).
pub fn to_lower_case(s: &str, conn: char) -> String {
    if s.is_empty() {
        return String::new();
    }
    let mut buf = String::with_capacity(s.len() + 4);
    let (mut wt, mut word, mut rest) = split(s);
    while !rest.is_empty() {
        if wt != Word::Connector {
            to_lower(&mut buf, wt, word, conn);
        }
        let prev = wt;
        let last = word;
        (wt, word, rest) = split(rest);
        match prev {
            Word::Number => {
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut buf, wt, word, conn);
                    (wt, word, rest) = split(rest);
                }
                if wt != Word::Invalid && wt != Word::Punct && wt != Word::Connector {
                    buf.push(conn);
                }
            }
            Word::Connector => to_lower(&mut buf, prev, last, conn),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if wt != Word::Connector && wt != Word::Punct {
                        buf.push(conn);
                    }
                    continue;
                }
                if rest.is_empty() {
                    continue;
                }
                let last = word;
                (wt, word, rest) = split(rest);
                if wt != Word::Alphabet {
                    to_lower(&mut buf, Word::Number, last, conn);
                    if wt != Word::Connector && wt != Word::Punct {
                        buf.push(conn);
                    }
                    continue;
                }
                buf.push(conn);
                to_lower(&mut buf, Word::Number, last, conn);
                while wt == Word::Alphabet || wt == Word::Number {
                    to_lower(&mut buf, wt, word, conn);
                    (wt, word, rest) = split(rest);
                }
                if wt != Word::Invalid && wt != Word::Connector && wt != Word::Punct {
                    buf.push(conn);
                }
            }
        }
    }
    to_lower(&mut buf, wt, word, conn);
    buf
}

/// xstrings `ToPascalCase`: connectors are dropped and the rune after
/// them upper-cased; the first rune is upper-cased; other case is kept.
pub fn to_pascal_case(s: &str) -> String {
    let mut buf = String::with_capacity(s.len());
    let mut chars = s.chars();
    let mut r0 = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            r0 = Some(c);
            break;
        }
        buf.push(c);
    }
    let Some(first) = r0 else {
        return buf;
    };
    let mut r0 = upper(first);
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            buf.push(r1);
            continue;
        }
        if is_connector(r1) {
            r0 = upper(r0);
        } else {
            buf.push(r1);
        }
    }
    buf.push(r0);
    buf
}

fn upper(c: char) -> char {
    let mut u = c.to_uppercase();
    if u.len() == 1 {
        u.next().unwrap_or(c)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_and_kebab() {
        assert_eq!(to_lower_case("FirstName", '_'), "first_name");
        assert_eq!(to_lower_case("HTTPServer", '_'), "http_server");
        assert_eq!(to_lower_case("NoHTTPS", '_'), "no_https");
        assert_eq!(to_lower_case("GO_PATH", '_'), "go_path");
        assert_eq!(to_lower_case("GO PATH", '_'), "go_path");
        assert_eq!(to_lower_case("fooBar", '-'), "foo-bar");
        assert_eq!(to_lower_case("Bld4Floor3rd", '_'), "bld4_floor_3rd");
    }

    #[test]
    fn pascal() {
        assert_eq!(to_pascal_case("http_server"), "HttpServer");
        assert_eq!(to_pascal_case("_my_field"), "_MyField");
        assert_eq!(to_pascal_case("hello world"), "HelloWorld");
        assert_eq!(to_pascal_case("ab__cd"), "Ab_Cd");
    }
}
