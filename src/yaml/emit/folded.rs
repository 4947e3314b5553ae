//! go-yaml v3's folded-scalar round trip: what a folded (`>`) scalar's value
//! becomes when go-yaml v3 writes it in folded style and reads it back.
//!
//! kustomize (kyaml) writes every resource it reads as YAML text and reads
//! that text again, keeping each scalar's style. The trip is lossless for
//! every style but one: `yaml_emitter_write_folded_scalar` decides whether
//! a line break needs an extra empty line (so that the scanner keeps it
//! rather than folding it to a space) by looking at the first character of
//! the *whole value* (its `k := 0`), not at the line after the break. Then
//! `yaml_parser_scan_block_scalar` does not fold a break in front of a
//! more-indented line (its `leading_blank`/`trailing_blank` rule) and keeps
//! the extra empty line too. So `first,` / `  more indented`, read as
//! `"first,\n  more indented"`, comes back as `"first,\n\n  more indented"`,
//! which `kubectl kustomize` prints as a literal block with an empty line.
//! And a value that starts with a blank gets no extra empty lines at all, so
//! its kept breaks fold to spaces on the way back.
//!
//! Line wrapping at the emitter's width (80 columns) is not modelled: it
//! only changes the value inside a more-indented line longer than that.

use super::analyze::analyze;
use crate::yaml::node::{Node, Style, Value};
use crate::yaml::parse::parse_one;
use crate::yaml::resolve::Resolver;

/// Replaces the text of every folded scalar value in `node` with what
/// go-yaml v3's folded round trip makes of it (see the module doc).
pub fn fold_round_trip(node: &mut Node) {
    match &mut node.value {
        Value::Scalar(s) if s.style == Style::Folded => {
            if let Some(text) = folded_round_trip(&s.text) {
                s.text = text;
            }
        }
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(fold_round_trip),
        Value::Map(pairs) => pairs.iter_mut().for_each(|(_, v)| fold_round_trip(v)),
    }
}

/// libyaml's is_break, for one character.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t')
}

/// The value after the round trip, or `None` when it comes back unchanged
/// for certain (no line break, or a style other than folded is chosen).
pub fn folded_round_trip(value: &str) -> Option<String> {
    // go-yaml v3's analysis counts a tab apart from the special characters
    // (its `tab_characters`), which keep v2 out of block styles but not v3;
    // a tab weighs in no other block rule, so any printable stands in.
    if !value.chars().any(is_break) || !analyze(&value.replace('\t', "x")).block {
        return None;
    }
    let text = format!("v: >{}\n{}", hints(value), folded_body(value));
    let node = parse_one(&text, Resolver::V3).ok()?;
    match node.get("v").map(|v| &v.value) {
        Some(Value::Scalar(s)) => Some(s.text.clone()),
        _ => None,
    }
}

/// yaml_emitter_write_block_scalar_hints: an indentation indicator when the
/// value starts with a space or a break, and the chomping indicator.
fn hints(value: &str) -> String {
    let mut out = String::new();
    let first = value.chars().next();
    if first.is_some_and(|c| c == ' ' || is_break(c)) {
        out.push('2');
    }
    let mut back = value.chars().rev();
    match (back.next(), back.next()) {
        (None, _) => out.push('-'),
        (Some(last), _) if !is_break(last) => out.push('-'),
        (Some(_), None) => out.push('+'),
        (Some(_), Some(before)) if is_break(before) => out.push('+'),
        _ => {}
    }
    out
}

/// yaml_emitter_write_folded_scalar at indentation 2 (without wrapping):
/// the scalar's lines, each ending in a line break.
fn folded_body(value: &str) -> String {
    // Its `k := 0` loop: the first character after the value's leading
    // breaks decides for every line whether an extra break is written.
    let extra_breaks = value
        .chars()
        .find(|&c| !is_break(c))
        .is_some_and(|c| !is_blank(c));
    let mut out = String::new();
    let mut breaks = true;
    let mut leading_spaces = true;
    for c in value.chars() {
        if is_break(c) {
            if !breaks && !leading_spaces && c == '\n' && extra_breaks {
                out.push('\n');
            }
            out.push(c);
            breaks = true;
        } else {
            if breaks {
                out.push_str("  ");
                leading_spaces = is_blank(c);
            }
            out.push(c);
            breaks = false;
        }
    }
    if !out.ends_with(is_break) {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::folded_round_trip;

    #[test]
    fn a_more_indented_line_gains_an_empty_line_before_it() {
        assert_eq!(
            folded_round_trip("first,\n  more indented\nback").as_deref(),
            Some("first,\n\n  more indented\nback")
        );
        assert_eq!(
            folded_round_trip("one two\n\n  indented\n\nthree\n").as_deref(),
            Some("one two\n\n\n  indented\n\nthree\n")
        );
    }

    #[test]
    fn kept_breaks_survive_unless_the_value_starts_with_a_blank() {
        assert_eq!(folded_round_trip("a\nb\n").as_deref(), Some("a\nb\n"));
        assert_eq!(
            folded_round_trip(" lead\nx\ny").as_deref(),
            Some(" lead\nx y")
        );
    }

    #[test]
    fn single_lines_and_quoted_styles_are_left_alone() {
        assert_eq!(folded_round_trip("one line"), None);
        // A space before a break: go-yaml picks double quotes, lossless.
        assert_eq!(folded_round_trip("a \n  b"), None);
    }
}
