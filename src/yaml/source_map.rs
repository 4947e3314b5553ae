//! Provenance of parsed values: which file (and which part of it) a node's
//! span is in. A reader that traces stamps every node of a text it parses
//! with that text's [`SourceId`] ([`stamp`]); the nodes then carry it
//! through every copy and move a build makes, so the value a build prints
//! still names the file and the span it was written at.
//!
//! It records where texts are; it does not read files or decide what a
//! location means.

use std::path::{Path, PathBuf};

use super::{Node, Pos, SourceId, Value};

/// Where one parsed text lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceText {
    /// The file, as the reader named it.
    pub file: PathBuf,
    /// The byte offset of the text in the file (a later document of a
    /// multi-document file starts past 0). Offsets are in the text as it
    /// was parsed: a reader that turned CRLF into LF first says so in
    /// `crlf`.
    pub offset: u32,
    /// Lines of the file before the text.
    pub line_offset: u32,
    /// The text is (a document of) a YAML string held by a scalar of the
    /// file (an inline patch), which starts at this line; offsets and
    /// `line_offset` are inside the string, not the file.
    pub embedded_at: Option<u32>,
    /// The reader turned the file's CRLF line ends into LF before parsing.
    pub crlf: bool,
}

impl SourceText {
    /// A text that is the whole of `file`, or its document starting at
    /// byte `offset` after `line_offset` lines.
    pub fn file(file: &Path, offset: u32, line_offset: u32) -> SourceText {
        SourceText {
            file: file.to_path_buf(),
            offset,
            line_offset,
            embedded_at: None,
            crlf: false,
        }
    }

    /// A YAML string held by the scalar at `line` of `file`.
    pub fn embedded(file: &Path, line: u32) -> SourceText {
        SourceText {
            file: file.to_path_buf(),
            offset: 0,
            line_offset: 0,
            embedded_at: Some(line),
            crlf: false,
        }
    }
}

/// The texts one traced read parsed, by id.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    texts: Vec<SourceText>,
}

/// Where a node was written: its file, its line there and its byte span in
/// the text that was parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location<'m> {
    /// The text it is in.
    pub text: &'m SourceText,
    /// Its 1-based line in the file (for an embedded text, the line of
    /// the scalar holding it plus the line inside the string).
    pub line: u32,
    /// Its byte offsets in the file (inside the string, for an embedded
    /// text).
    pub start: u32,
    /// Just past its text.
    pub end: u32,
}

impl SourceMap {
    /// Records `text` and returns its id (never [`SourceId::NONE`]).
    pub fn add(&mut self, text: SourceText) -> SourceId {
        if let Some(i) = self.texts.iter().position(|t| *t == text) {
            return SourceId(i as u32 + 1);
        }
        self.texts.push(text);
        SourceId(self.texts.len() as u32)
    }

    /// The text of `id`.
    pub fn get(&self, id: SourceId) -> Option<&SourceText> {
        let i = (id.0 as usize).checked_sub(1)?;
        self.texts.get(i)
    }

    /// Where a node at `pos` was written, when it was traced.
    pub fn locate(&self, pos: &Pos) -> Option<Location<'_>> {
        let text = self.get(pos.source)?;
        if pos.line == 0 {
            return None;
        }
        let line = text.embedded_at.unwrap_or(0) + text.line_offset + pos.line;
        Some(Location {
            text,
            line,
            start: text.offset + pos.start,
            end: text.offset + pos.end,
        })
    }
}

/// Marks every node of `node` (itself included) as read from `id`.
pub fn stamp(node: &mut Node, id: SourceId) {
    node.pos.source = id;
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| stamp(n, id)),
        Value::Map(entries) => {
            for (k, v) in entries {
                stamp(k, id);
                stamp(v, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    #[test]
    fn a_stamped_value_names_its_file_line_and_span() {
        let src = "a:\n  b: hello\n";
        let mut n = parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"));
        let mut map = SourceMap::default();
        let id = map.add(SourceText::file(Path::new("x/doc.yaml"), 100, 7));
        assert_eq!(
            map.add(SourceText::file(Path::new("x/doc.yaml"), 100, 7)),
            id
        );
        stamp(&mut n, id);
        let b = n.get_path(&["a", "b"]).unwrap_or_else(|| panic!("no a.b"));
        let at = map.locate(&b.pos).unwrap_or_else(|| panic!("not traced"));
        assert_eq!(at.text.file, Path::new("x/doc.yaml"));
        assert_eq!(at.line, 9);
        assert_eq!((at.start - 100, at.end - 100), (8, 13));
        assert_eq!(
            &src[(at.start - 100) as usize..(at.end - 100) as usize],
            "hello"
        );
        assert!(map.locate(&Node::string("new").pos).is_none());
    }
}
