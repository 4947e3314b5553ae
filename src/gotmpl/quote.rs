//! Go's `strconv.Quote` family and `unicode.IsPrint`, used by `%q`,
//! parse error messages and the `js` escaper.

/// Go's `strconv.Quote`.
pub fn quote(s: &str) -> String {
    quote_with(s, '"', false)
}

pub(crate) fn quote_with(s: &str, q: char, ascii_only: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        escape_rune(&mut out, c, q, ascii_only);
    }
    out.push(q);
    out
}

fn escape_rune(out: &mut String, c: char, q: char, ascii_only: bool) {
    if c == q || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if (ascii_only && c.is_ascii() && is_print(c)) || (!ascii_only && is_print(c)) {
        out.push(c);
        return;
    }
    match c {
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// Go's `unicode.IsPrint` (and `strconv.IsPrint`): letters, marks,
/// numbers, punctuation, symbols and ASCII space, as Unicode 15.0 assigns
/// them; a code point Go's tables do not know yet is quoted as `\uXXXX`.
pub fn is_print(c: char) -> bool {
    c == ' ' || super::gounicode::is_graphic(c)
}

/// Go's `%#U`: `U+0041 'A'`.
pub fn unicode_sharp(c: char) -> String {
    if is_print(c) {
        format!("U+{:04X} '{}'", c as u32, c)
    } else {
        format!("U+{:04X}", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            quote("a\"b\\\n\u{1}é\u{a0}"),
            "\"a\\\"b\\\\\\n\\x01é\\u00a0\""
        );
        assert_eq!(quote_with("'", '\'', false), "'\\''");
        assert_eq!(quote_with("é", '"', true), "\"\\u00e9\"");
        assert_eq!(unicode_sharp('A'), "U+0041 'A'");
        assert!(!is_print('\u{200b}') && is_print('☃'));
        // U+A7CB was assigned in Unicode 16, after Go's tables.
        assert!(!is_print('\u{a7cb}') && !is_print('\u{a0}') && is_print(' '));
    }
}
