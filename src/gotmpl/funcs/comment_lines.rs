//! Full-line comments set aside before a YAML parse whose positions are
//! thrown away (`sigs.k8s.io/yaml.Unmarshal` into values). A chart's
//! `values.yaml` is mostly comments (argo-cd's: 2,767 of 4,725 lines, three
//! quarters of its bytes), and the YAML scanner reads a comment a
//! character at a time, as it reads everything else: parsing them was most
//! of the time a big chart took to load.
//!
//! A line of spaces, then `#`, then printable ASCII is kept as its spaces
//! and `#` alone, so the scanner sees the same lines, indentation and
//! tokens. Such a line may not be a comment: inside a block scalar, or a
//! quoted scalar that spans lines, it is text. Lines that follow a block
//! scalar's header deeper than the header's line are left alone; and
//! whatever the parse of the shortened text finds, [`inside_scalar`] says
//! whether any shortened line fell inside a scalar, and then the caller
//! parses the text as it is. So the result is the full parse's, only
//! sooner when the lines were comments.

use crate::yaml::{Node, Value};

/// Below this many bytes set aside, the text is parsed as it is.
const WORTH: usize = 2048;

/// A text with its full-line comments cut to `#`.
pub struct Shortened {
    pub text: String,
    /// The byte offset, in `text`, of each shortened line's `#`, ascending.
    pub marks: Vec<u32>,
}

/// `text` with its full-line comments cut to `#`, when that sets aside
/// enough to be worth a second look.
pub fn shorten(text: &str) -> Option<Shortened> {
    shorten_past(text, WORTH)
}

/// [`shorten`], when it sets aside at least `worth` bytes.
pub fn shorten_past(text: &str, worth: usize) -> Option<Shortened> {
    // A shorter text cannot hold that many comment bytes: `fromYaml` of a
    // small string, thousands of times a render, is not copied first.
    if text.len() < worth {
        return None;
    }
    u32::try_from(text.len()).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut marks = Vec::new();
    let mut dropped = 0;
    // The indentation of an open block scalar's header line: deeper lines
    // (and blank ones) are its text.
    let mut block: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let blank = body.trim_end_matches(['\n', '\r', ' ']).is_empty();
        if let Some(parent) = block {
            if blank || indent > parent {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        match body.strip_prefix('#').and_then(comment_end) {
            Some(end) if end.len() + 1 < body.len() => {
                dropped += body.len() - 1 - end.len();
                out.push_str(line.get(..indent).unwrap_or_default());
                marks.push(u32::try_from(out.len()).ok()?);
                out.push('#');
                out.push_str(end);
            }
            _ => {
                out.push_str(line);
                if block_header(body) {
                    block = Some(indent);
                }
            }
        }
    }
    (dropped >= worth).then_some(Shortened { text: out, marks })
}

/// The line break that ends a comment's text `rest` (`\n`, `\r\n` or
/// nothing at the end of the text), when the text is printable ASCII or
/// tabs: any other character (a control character the scanner refuses, a
/// lone `\r` that breaks the line) keeps the line as it is.
fn comment_end(rest: &str) -> Option<&str> {
    let text = rest.trim_end_matches('\n');
    let text = match text.len() < rest.len() {
        true => text.strip_suffix('\r').unwrap_or(text),
        false => text,
    };
    text.bytes()
        .all(|b| b == b'\t' || (0x20..0x7f).contains(&b))
        .then(|| rest.get(text.len()..))
        .flatten()
}

/// Whether line `body` (after its indentation) may open a block scalar: it
/// ends, but for a comment, in `|` or `>` with at most two indicators
/// after a space or at its start. A line wrongly taken for one only keeps
/// comments below it as they are.
fn block_header(body: &str) -> bool {
    let line = body.trim_end_matches(['\n', '\r']);
    let line = line.split_once(" #").map_or(line, |(before, _)| before);
    let line = line.trim_end_matches(' ');
    let head = line.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
    if line.len() - head.len() > 2 {
        return false;
    }
    match head.strip_suffix(['|', '>']) {
        Some(before) => before.is_empty() || before.ends_with(' '),
        None => false,
    }
}

/// Whether a scalar of `docs` (a key or a value, in the shortened text)
/// holds one of the shortened lines (`marks`): the line was text, not a
/// comment, and the shortened parse is not the text's.
pub fn inside_scalar(docs: &[Node], marks: &[u32]) -> bool {
    let mut todo: Vec<&Node> = docs.iter().collect();
    while let Some(n) = todo.pop() {
        match &n.value {
            Value::Scalar(_) => {
                let first = marks.partition_point(|m| *m < n.pos.start);
                if marks.get(first).is_some_and(|m| *m < n.pos.end) {
                    return true;
                }
            }
            Value::Seq(items) => todo.extend(items),
            Value::Map(entries) => {
                for (k, v) in entries {
                    todo.push(k);
                    todo.push(v);
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_lines_are_cut_and_block_scalar_text_is_kept() {
        let text = "# top\na: |\n  x\n  # text\n# after\nb: 1 # end\n  # deep\n";
        let short = shorten_past(text, 1).expect("something cut");
        assert_eq!(short.text, "#\na: |\n  x\n  # text\n#\nb: 1 # end\n  #\n");
        assert_eq!(short.marks, [0, 20, 35]);
        assert!(
            shorten_past("# \u{1}\n#\n", 1).is_none(),
            "control characters stay"
        );
        assert!(shorten(text).is_none(), "too little to be worth it");
    }

    #[test]
    fn block_scalar_headers() {
        for yes in ["k: |", "k: >-", "- |2", "k: |+ # c", "|", "k: >\r\n"] {
            assert!(block_header(yes), "{yes:?}");
        }
        for no in ["k: a|", "k: |+-1", "k: 'x'", "k: v # |"] {
            assert!(!block_header(no), "{no:?}");
        }
    }
}
