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

/// Approximates Go's `unicode.IsPrint`: letters, marks, numbers,
/// punctuation, symbols and ASCII space (no control, format, separator or
/// private-use characters).
pub fn is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x20 || (0x7f..=0x9f).contains(&u) {
        return false;
    }
    const NOT_PRINT: &[(u32, u32)] = &[
        (0x00A0, 0x00A0),
        (0x00AD, 0x00AD),
        (0x0600, 0x0605),
        (0x061C, 0x061C),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x08E2, 0x08E2),
        (0x1680, 0x1680),
        (0x180E, 0x180E),
        (0x2000, 0x200F),
        (0x2028, 0x202F),
        (0x205F, 0x2064),
        (0x2066, 0x206F),
        (0x3000, 0x3000),
        (0xD800, 0xF8FF),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0xFFFE, 0xFFFF),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE007F),
        (0xF0000, 0x10FFFF),
    ];
    !NOT_PRINT.iter().any(|&(a, b)| (a..=b).contains(&u))
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
    }
}
