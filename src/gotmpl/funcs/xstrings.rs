//! huandu/xstrings v1.5 case conversion, as Sprig's `snakecase`,
//! `kebabcase` (`camelCaseToLowerCase`) and `camelcase` (`ToPascalCase`)
//! use it: words are split by kind (upper-case run, lower-case, digits,
//! punctuation, connectors `-`/`_`/space), with Go's `unicode` categories
//! and one-rune case mappings ([`gounicode`]). Every offset is one this
//! scanner took from `char_indices`, so every cut is on a char boundary.

use crate::gotmpl::gounicode;

/// xstrings `wordType`.
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

/// Go's `utf8.RuneError`: xstrings cannot tell a U+FFFD in the text from
/// an invalid byte, and skips both.
const RUNE_ERROR: char = '\u{FFFD}';

/// xstrings `isConnector`.
fn is_connector(c: char) -> bool {
    c == '-' || c == '_' || gounicode::is_space(c)
}

/// xstrings `isAlphabet` (count.go): a letter, but not a CJK ideograph of
/// the ranges it lists (kana and hangul are alphabets).
fn is_alphabet(c: char) -> bool {
    if !gounicode::is_letter(c) {
        return false;
    }
    !matches!(c,
        '\u{4E00}'..='\u{9FCC}' | '\u{3400}'..='\u{4D85}' | '\u{20000}'..='\u{2B81D}')
}

/// `s` after its first `n` bytes (an offset of this scanner, so on a char
/// boundary; empty past the end).
fn after(s: &str, n: usize) -> &str {
    s.get(n..).unwrap_or_default()
}

/// xstrings `nextValidRune`: the first rune of `s` that is not U+FFFD and
/// the bytes up to its end; `prev` and all of `s` when there is none.
fn next_valid_rune(s: &str, prev: char) -> (char, usize) {
    s.char_indices()
        .find(|&(_, c)| c != RUNE_ERROR)
        .map_or((prev, s.len()), |(i, c)| (c, i + c.len_utf8()))
}

/// The scan of one word: the rune last read, the word's length in bytes
/// and the text after it.
struct Scan<'a> {
    r: char,
    offset: usize,
    rest: &'a str,
}

impl Scan<'_> {
    /// Takes runes while `keep` holds for them (xstrings' loops over
    /// `nextValidRune`); the rune that stopped it stays in `self.r`.
    fn take_while(&mut self, keep: impl Fn(char) -> bool) {
        while !self.rest.is_empty() {
            let (r, size) = next_valid_rune(self.rest, self.r);
            self.r = r;
            if !keep(r) {
                break;
            }
            self.offset += size;
            self.rest = after(self.rest, size);
        }
    }
}

/// xstrings `nextWord`: the kind of the word `s` starts with and its
/// length in bytes.
fn next_word(s: &str) -> (Word, usize) {
    if s.is_empty() {
        return (Word::Invalid, 0);
    }
    let (r, size) = next_valid_rune(s, RUNE_ERROR);
    if r == RUNE_ERROR {
        return (Word::Invalid, size);
    }
    let mut w = Scan {
        r,
        offset: size,
        rest: after(s, size),
    };
    let lower_alphabet = |c: char| is_alphabet(c) && !gounicode::is_upper(c);
    let kind = if is_connector(r) {
        w.take_while(is_connector);
        Word::Connector
    } else if gounicode::is_punct(r) {
        w.take_while(gounicode::is_punct);
        Word::Punct
    } else if gounicode::is_upper(r) {
        if !w.rest.is_empty() {
            upper_word(&mut w);
        }
        Word::Upper
    } else if is_alphabet(r) {
        w.take_while(lower_alphabet);
        Word::Alphabet
    } else if gounicode::is_number(r) {
        w.take_while(gounicode::is_number);
        Word::Number
    } else {
        w.take_while(|c| {
            !(is_connector(c)
                || is_alphabet(c)
                || gounicode::is_number(c)
                || gounicode::is_punct(c))
        });
        Word::Other
    };
    (kind, w.offset)
}

/// The rest of an upper-case word after its first rune: a run of upper
/// case whose last rune starts the next word when a letter follows
/// ("HTTPStatus" is "HTTP" and "Status"), or lower-case letters.
fn upper_word(w: &mut Scan<'_>) {
    let (r, size) = next_valid_rune(w.rest, w.r);
    w.r = r;
    if gounicode::is_upper(r) {
        let mut prev_size = size;
        w.offset += size;
        w.rest = after(w.rest, size);
        while !w.rest.is_empty() {
            let (r, size) = next_valid_rune(w.rest, w.r);
            w.r = r;
            if !gounicode::is_upper(r) {
                break;
            }
            prev_size = size;
            w.offset += size;
            w.rest = after(w.rest, size);
        }
        if !w.rest.is_empty() && is_alphabet(w.r) {
            w.offset -= prev_size;
        }
    } else if is_alphabet(r) {
        w.offset += size;
        w.rest = after(w.rest, size);
        w.take_while(|c| is_alphabet(c) && !gounicode::is_upper(c));
    }
}

/// The next word of `s`, the word and the text after it.
fn split(s: &str) -> (Word, &str, &str) {
    let (w, n) = next_word(s);
    match (s.get(..n), s.get(n..)) {
        (Some(word), Some(rest)) => (w, word, rest),
        _ => (w, s, ""),
    }
}

/// xstrings `toLower`: upper-case and connector words are lower-cased
/// rune by rune, connectors written as `conn`; other words as they are.
fn to_lower(buf: &mut String, w: Word, s: &str, conn: char) {
    if w != Word::Upper && w != Word::Connector {
        buf.push_str(s);
        return;
    }
    for c in s.chars() {
        if is_connector(c) {
            buf.push(conn);
        } else if gounicode::is_upper(c) {
            buf.push(gounicode::to_lower(c));
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
                // A number is part of the word before it ("Bld4Floor" is
                // "bld4_floor") unless lower-case letters follow it
                // ("HTTP2xx" is "http_2xx").
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

/// xstrings v1.5 `ToPascalCase` (`toCamelCase(str, true)`): leading
/// connectors are kept, the first rune is upper-cased; a connector is
/// dropped and the rune after it upper-cased (of a run of connectors all
/// but the last are kept); in a word that starts upper case, upper-case
/// runes are lower-cased up to its first rune that is not upper case
/// ("GOLANG_IS_GREAT" is "GolangIsGreat", "HTTP日本" is "Http日本"). A text
/// of connectors only gets its last one twice ("__" is "___").
pub fn to_pascal_case(s: &str) -> String {
    let mut buf = String::with_capacity(s.len());
    let mut chars = s.chars();
    let mut first_upper = false;
    let mut r0 = None;
    for c in chars.by_ref() {
        if !is_connector(c) {
            first_upper = gounicode::is_upper(c);
            r0 = Some(gounicode::to_upper(c));
            break;
        }
        r0 = Some(c);
        buf.push(c);
    }
    let Some(mut r0) = r0 else {
        return buf;
    };
    for c in chars {
        let r1 = r0;
        r0 = c;
        if is_connector(r0) && is_connector(r1) {
            buf.push(r1);
            continue;
        }
        if is_connector(r1) {
            first_upper = gounicode::is_upper(r0);
            r0 = gounicode::to_upper(r0);
        } else {
            if first_upper {
                if gounicode::is_upper(r0) {
                    r0 = gounicode::to_lower(r0);
                } else {
                    first_upper = false;
                }
            }
            buf.push(r1);
        }
    }
    buf.push(r0);
    buf
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
        assert_eq!(to_lower_case("HTTP20xOK", '_'), "http_20x_ok");
        assert_eq!(to_lower_case("Duration2m3s", '_'), "duration_2m3s");
    }

    #[test]
    fn snake_multibyte_words() {
        assert_eq!(to_lower_case("日本語テスト", '_'), "日本語_テスト");
        assert_eq!(to_lower_case("İstanbul", '_'), "istanbul");
        assert_eq!(to_lower_case("ÀÉÎõü", '_'), "àé_îõü");
        // U+FFFD is skipped as Go's utf8.RuneError, joining the next rune.
        assert_eq!(to_lower_case("a\u{FFFD}B", '_'), "a_\u{FFFD}b");
        assert_eq!(to_lower_case("\u{FFFD}\u{FFFD}", '_'), "\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn pascal() {
        assert_eq!(to_pascal_case("http_server"), "HttpServer");
        assert_eq!(to_pascal_case("_complex__case_"), "_Complex_Case_");
        assert_eq!(to_pascal_case("hello world"), "HelloWorld");
        assert_eq!(to_pascal_case("GOLANG_IS_GREAT"), "GolangIsGreat");
        assert_eq!(to_pascal_case("HTTP日本"), "Http日本");
        assert_eq!(to_pascal_case("__"), "___");
        assert_eq!(to_pascal_case("_"), "__");
        assert_eq!(to_pascal_case("ß"), "ß");
        assert_eq!(to_pascal_case(""), "");
    }
}
