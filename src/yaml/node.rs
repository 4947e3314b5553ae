//! The document model: ordered mappings, sequences and scalars that remember
//! their resolved tag, their style and where they came from.

use std::fmt;

/// Where a node is in its source, and how it got into the tree: the spans a
/// format-preserving editor splices on.
///
/// Offsets are UTF-8 byte offsets into the text that was parsed (a leading
/// byte-order mark counts, CRLF counts two). `src[start..end]` is the node's
/// own text, after any `&anchor` and `!tag` properties: a scalar with its
/// quotes or its `|`/`>` header and lines, a flow collection from its opening
/// to its closing bracket, a block collection from its first key or `-` to the
/// end of its last value (without the final line break). A node made in
/// memory has the default: all zero, [`Origin::Source`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// Byte offset where the node's text starts.
    pub start: u32,
    /// Byte offset just past the node's text.
    pub end: u32,
    /// 1-based line where the node begins, counting its anchor or tag as
    /// go-yaml v3's `Node.Line` does (0 when the node was made in memory).
    pub line: u32,
    /// [`Origin`], packed with `anchor` so a position stays 24 bytes with
    /// its source id (read it with [`Pos::origin`]).
    pub(super) how: How,
    /// The anchored node's start, for [`Origin::Alias`].
    pub(super) anchor: u32,
    /// A collection written in flow style (`[a]`, `{k: v}`); false for block
    /// collections and for scalars (see [`Scalar::style`]).
    pub flow: bool,
    /// Which parsed text the offsets are in, when the caller traces where
    /// values come from ([`SourceId::NONE`] otherwise): a build that
    /// records provenance stamps every node it reads with the id of its
    /// file, so a value keeps naming its file and span however far a
    /// patch or a replacement carries it.
    pub source: SourceId,
}

/// The id of one parsed text (a file, a document of it, or a YAML string
/// embedded in another file) in a provenance table kept by whoever parsed
/// it; 0 is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u32);

impl SourceId {
    /// No source recorded.
    pub const NONE: SourceId = SourceId(0);

    /// Whether a source was recorded.
    pub fn is_some(self) -> bool {
        self != SourceId::NONE
    }
}

/// How a node got to its place in the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Origin {
    /// Written here.
    #[default]
    Source,
    /// An alias `*name`: the node's span is the alias's own text; its
    /// content (and its children's spans) are those of the anchored node,
    /// whose text starts at byte `anchor`. Editing below it edits the anchor.
    Alias {
        /// Start of the anchored node's text (after its `&name`).
        anchor: u32,
    },
    /// A key or value a `<<` merge key copied into this mapping: the span is
    /// where it was written, in the merged mapping.
    Merge,
}

/// [`Origin`]'s variant, stored apart from the alias's anchor offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum How {
    #[default]
    Source,
    Alias,
    Merge,
}

impl Pos {
    /// How the node got to its place.
    pub fn origin(&self) -> Origin {
        match self.how {
            How::Source => Origin::Source,
            How::Alias => Origin::Alias {
                anchor: self.anchor,
            },
            How::Merge => Origin::Merge,
        }
    }

    /// The same position, reached as `origin` says.
    pub fn with_origin(self, origin: Origin) -> Pos {
        let (how, anchor) = match origin {
            Origin::Source => (How::Source, 0),
            Origin::Alias { anchor } => (How::Alias, anchor),
            Origin::Merge => (How::Merge, 0),
        };
        Pos {
            how,
            anchor,
            ..self
        }
    }

    /// The node's text in `src`, the source it was parsed from (`None` for a
    /// node made in memory or a `src` that is not its source).
    pub fn text<'a>(&self, src: &'a str) -> Option<&'a str> {
        if self.line == 0 {
            return None;
        }
        src.get(self.start as usize..self.end as usize)
    }
}

/// The resolved type of a scalar, as a Go YAML decoder would see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `!!str`: quoted scalars, plain text that resolves to nothing else.
    Str,
    /// `!!int`.
    Int,
    /// `!!float`.
    Float,
    /// `!!bool`.
    Bool,
    /// `!!null`.
    Null,
    /// `!!timestamp`: decoded into `interface{}` it stays a string in Go.
    Timestamp,
    /// `!!binary`, `!foo`, …: kept verbatim (short form, e.g. `!foo`).
    /// Boxed: rare, and a one-pointer payload keeps every [`Node`] at 72
    /// bytes instead of 80.
    Other(Box<String>),
}

/// How a scalar was written in its source (kept for the format-preserving editor).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Plain, unquoted.
    #[default]
    Plain,
    /// `'single'`.
    Single,
    /// `"double"`.
    Double,
    /// `|` block.
    Literal,
    /// `>` block.
    Folded,
}

/// A scalar: its decoded text plus the tag it resolved to.
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// The decoded value as text (escapes processed, block indentation removed).
    pub text: String,
    /// The resolved tag.
    pub tag: Tag,
    /// How it was written.
    pub style: Style,
}

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The content.
    pub value: Value,
    /// Where it is in its source (see [`Pos`]).
    pub pos: Pos,
}

/// The content of a node.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A scalar.
    Scalar(Scalar),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in source order (output sorts keys; processing keeps order).
    Map(Vec<(Node, Node)>),
}

impl Scalar {
    /// A string scalar.
    pub fn str(text: impl Into<String>) -> Scalar {
        Scalar {
            text: text.into(),
            tag: Tag::Str,
            style: Style::Plain,
        }
    }
}

impl Node {
    /// A node made in memory, with no source position.
    pub fn new(value: Value) -> Node {
        Node {
            value,
            pos: Pos::default(),
        }
    }

    /// A string scalar made in memory.
    pub fn string(text: impl Into<String>) -> Node {
        Node::new(Value::Scalar(Scalar::str(text)))
    }

    /// A scalar of the given tag made in memory.
    pub fn scalar(text: impl Into<String>, tag: Tag) -> Node {
        Node::new(Value::Scalar(Scalar {
            text: text.into(),
            tag,
            style: Style::Plain,
        }))
    }

    /// `null`.
    pub fn null() -> Node {
        Node::scalar("null", Tag::Null)
    }

    /// An empty mapping.
    pub fn map() -> Node {
        Node::new(Value::Map(Vec::new()))
    }

    /// An empty sequence.
    pub fn seq() -> Node {
        Node::new(Value::Seq(Vec::new()))
    }

    /// The scalar, if this is one.
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The text of a scalar that is not null (a Go `string` field would decode it).
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if s.tag != Tag::Null => Some(&s.text),
            _ => None,
        }
    }

    /// Whether this is a null scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar(s) if s.tag == Tag::Null)
    }

    /// The entries, if this is a mapping.
    pub fn as_map(&self) -> Option<&Vec<(Node, Node)>> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The entries, if this is a mapping (mutable).
    pub fn as_map_mut(&mut self) -> Option<&mut Vec<(Node, Node)>> {
        match &mut self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is a sequence.
    pub fn as_seq(&self) -> Option<&Vec<Node>> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is a sequence (mutable).
    pub fn as_seq_mut(&mut self) -> Option<&mut Vec<Node>> {
        match &mut self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The value under a string key of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.key_text() == Some(key))
            .map(|(_, v)| v)
    }

    /// The value under a string key of a mapping (mutable).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_map_mut()?
            .iter_mut()
            .find(|(k, _)| k.key_text() == Some(key))
            .map(|(_, v)| v)
    }

    /// Follows a path of string keys.
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }

    /// The text of a scalar under a key, if any and not null.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::as_str)
    }

    /// Sets `key` to `value` in a mapping, replacing an existing entry in place
    /// or appending a new one. Does nothing if this is not a mapping.
    pub fn set(&mut self, key: &str, value: Node) {
        if let Some(m) = self.as_map_mut() {
            match m.iter_mut().find(|(k, _)| k.key_text() == Some(key)) {
                Some((_, v)) => *v = value,
                None => m.push((Node::string(key), value)),
            }
        }
    }

    /// Removes `key` from a mapping and returns its value.
    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let m = self.as_map_mut()?;
        let i = m.iter().position(|(k, _)| k.key_text() == Some(key))?;
        Some(m.remove(i).1)
    }

    /// The mapping under `key`, created (or replaced if it is null) when missing.
    pub fn map_entry(&mut self, key: &str) -> Option<&mut Node> {
        let missing = self.get(key).is_none_or(Node::is_null);
        if missing {
            self.set(key, Node::map());
        }
        self.get_mut(key)
    }

    /// The text of a mapping key, as Go decodes it into a `string` key: the
    /// scalar text whatever its tag.
    pub fn key_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// A short name for the kind of node, for error messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Scalar(s) => match s.tag {
                Tag::Null => "null",
                Tag::Bool => "bool",
                Tag::Int => "int",
                Tag::Float => "float",
                _ => "string",
            },
            Value::Seq(_) => "sequence",
            Value::Map(_) => "mapping",
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_in_place_and_appends() {
        let mut m = Node::map();
        m.set("b", Node::string("1"));
        m.set("a", Node::string("2"));
        m.set("b", Node::string("3"));
        let keys: Vec<_> = m
            .as_map()
            .unwrap()
            .iter()
            .map(|(k, _)| k.key_text().unwrap())
            .collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(m.get_str("b"), Some("3"));
        assert_eq!(
            m.remove("b").and_then(|n| n.as_str().map(String::from)),
            Some("3".into())
        );
        assert!(m.get("b").is_none());
    }

    #[test]
    fn nodes_stay_small() {
        // A parsed tree is held for a whole build (or run): the spans cost
        // 16 bytes over the 56 that a node took with its start offset and
        // line alone; a boxed `Tag::Other` keeps the scalar at 48.
        assert_eq!(std::mem::size_of::<Pos>(), 24);
        assert!(std::mem::size_of::<Node>() <= 72);
    }

    #[test]
    fn null_is_not_a_string() {
        let n = Node::null();
        assert!(n.is_null());
        assert_eq!(n.as_str(), None);
    }
}
