//! Parse tree, mirroring Go's `text/template/parse` node types. `Display`
//! reproduces Go's `Node.String()`, which appears in execution errors
//! (`executing "x" at <NODE>`).

use std::fmt::{self, Display, Write};
use std::sync::Arc;

/// Byte range `start..end` of a tree's source text ([`Tree::text`]).
/// Nodes keep spans instead of owned copies: a chart's parse trees would
/// otherwise hold every text run, identifier and literal a second time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The spanned text of `src` (empty if `src` is not the tree's text).
    #[inline]
    pub fn of(self, src: &str) -> &str {
        src.get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }

    /// Byte offset of the start, as node positions are reported.
    #[inline]
    pub fn pos(self) -> usize {
        self.start as usize
    }
}

/// One parsed template (a file body or a `define`/`block`).
#[derive(Debug)]
pub struct Tree {
    /// Template name (`define` name, or the name given to `parse`).
    pub name: String,
    /// Name of the source being parsed (the file), used in error locations.
    pub parse_name: String,
    /// Full source text: what the nodes' spans index, and what turns byte
    /// positions into line:column. Shared by all trees of one parse.
    pub text: Arc<str>,
    /// Top-level nodes.
    pub root: Box<[Node]>,
}

impl Tree {
    /// Go's `Tree.ErrorContext` location: `PARSENAME:LINE:COL`, COL being the
    /// 0-based byte offset within the line.
    pub fn location(&self, pos: usize) -> String {
        let pos = pos.min(self.text.len());
        let before = &self.text.as_bytes()[..pos];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let col = match before.iter().rposition(|&b| b == b'\n') {
            Some(nl) => pos - (nl + 1),
            None => pos,
        };
        format!("{}:{}:{}", self.parse_name, line, col)
    }

    /// Go's `parse.IsEmptyTree`: only whitespace text and comments.
    pub fn is_empty(&self) -> bool {
        is_empty_list(&self.root, &self.text)
    }
}

/// [`Tree::is_empty`] for a node list of source `src`.
pub fn is_empty_list(list: &[Node], src: &str) -> bool {
    list.iter().all(|n| match n {
        Node::Text(text) => text.of(src).trim_ascii().is_empty(),
        _ => false,
    })
}

/// Statement-level node.
#[derive(Debug)]
pub enum Node {
    /// Literal text.
    Text(Span),
    /// `{{pipeline}}` (at the pipeline's position).
    Action(Pipe),
    /// `{{if}}`.
    If(Box<Branch>),
    /// `{{range}}`.
    Range(Box<Branch>),
    /// `{{with}}`.
    With(Box<Branch>),
    /// `{{template "name" pipeline}}` (also what `block` leaves behind).
    Template(Box<TemplateCall>),
    /// `{{break}}`.
    Break(u32),
    /// `{{continue}}`.
    Continue(u32),
}

impl Node {
    /// Byte offset of the node.
    pub fn pos(&self) -> usize {
        match self {
            Node::Text(s) => s.pos(),
            Node::Action(p) => p.pos as usize,
            Node::If(b) | Node::Range(b) | Node::With(b) => b.pipe.pos as usize,
            Node::Template(t) => t.pos as usize,
            Node::Break(pos) | Node::Continue(pos) => *pos as usize,
        }
    }
}

/// `{{template "name" pipeline}}`.
#[derive(Debug)]
pub struct TemplateCall {
    pub pos: u32,
    pub name: String,
    pub pipe: Option<Pipe>,
}

/// Shared shape of `if`, `range` and `with` (positioned at the pipeline).
#[derive(Debug)]
pub struct Branch {
    pub pipe: Pipe,
    pub list: Box<[Node]>,
    pub else_list: Option<Box<[Node]>>,
}

/// A pipeline with optional variable declarations.
#[derive(Debug)]
pub struct Pipe {
    pub pos: u32,
    /// `$x = ...` rather than `$x := ...`.
    pub is_assign: bool,
    /// Declared variable names (with `$`).
    pub decl: Box<[Span]>,
    pub cmds: Box<[Command]>,
}

/// Frees nested parenthesised pipelines with a loop: templates may nest
/// them 100,000 deep, past what a recursive drop fits on a stack.
impl Drop for Pipe {
    fn drop(&mut self) {
        let nested = |a: &Arg| matches!(a, Arg::Pipe(_) | Arg::Chain(_));
        if !self.cmds.iter().any(|c| c.args.iter().any(nested)) {
            return;
        }
        let mut pending: Vec<Arg> = Vec::new();
        let take = |cmds: &mut [Command], pending: &mut Vec<Arg>| {
            for c in cmds {
                pending.extend(std::mem::take(&mut c.args).into_vec());
            }
        };
        take(&mut self.cmds, &mut pending);
        while let Some(a) = pending.pop() {
            match a {
                Arg::Pipe(mut p) => take(&mut p.cmds, &mut pending),
                Arg::Chain(c) => pending.push(c.node),
                _ => {}
            }
        }
    }
}

/// One stage of a pipeline: operands separated by spaces.
#[derive(Debug)]
pub struct Command {
    pub pos: u32,
    pub args: Box<[Arg]>,
}

/// A parsed number literal with all the interpretations Go keeps.
#[derive(Debug, Clone)]
pub struct Number {
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
}

/// A number or character literal: its text and its values.
#[derive(Debug)]
pub struct NumberLit {
    pub text: Span,
    pub num: Number,
}

/// `(pipe).a.b` or `fn.a`.
#[derive(Debug)]
pub struct Chain {
    pub pos: u32,
    pub node: Arg,
    /// `.a.b`, leading dot included.
    pub fields: Span,
}

/// Operand node.
#[derive(Debug)]
pub enum Arg {
    /// Function name.
    Identifier(Span),
    /// `.`.
    Dot(u32),
    /// `nil`.
    Nil(u32),
    /// `.a.b` (the text, leading dot included; `pos` is Go's, the last
    /// joined field's when several are).
    Field { pos: u32, ident: Span },
    /// `$x.a.b` (the text; the variable name is its first element).
    Variable { pos: u32, ident: Span },
    /// `(pipe).a.b` or `fn.a`.
    Chain(Box<Chain>),
    /// `true`/`false`.
    Bool { pos: u32, val: bool },
    /// Number or character literal.
    Number(Box<NumberLit>),
    /// String literal: the quoted text, and the unquoted value when it is
    /// not simply the text between the quotes (escapes, `\r` in raw).
    Str {
        quoted: Span,
        unquoted: Option<Box<str>>,
    },
    /// Parenthesised pipeline.
    Pipe(Box<Pipe>),
}

impl Arg {
    /// Byte offset of the node.
    pub fn pos(&self) -> usize {
        match self {
            Arg::Identifier(s) | Arg::Str { quoted: s, .. } => s.pos(),
            Arg::Number(n) => n.text.pos(),
            Arg::Dot(pos)
            | Arg::Nil(pos)
            | Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Bool { pos, .. } => *pos as usize,
            Arg::Chain(c) => c.pos as usize,
            Arg::Pipe(p) => p.pos as usize,
        }
    }

    /// A string literal's value.
    pub fn str_value<'s>(quoted: Span, unquoted: &'s Option<Box<str>>, src: &'s str) -> &'s str {
        match unquoted {
            Some(u) => u,
            None => {
                let q = quoted.of(src);
                q.get(1..q.len().saturating_sub(1)).unwrap_or_default()
            }
        }
    }
}

/// The dotted names of a field or chain text `.a.b`: `a`, `b`.
pub fn field_names(text: &str) -> std::str::Split<'_, char> {
    text.get(1..).unwrap_or_default().split('.')
}

/// A node with the source its spans index, printing as Go's
/// `Node.String()`.
pub struct Show<'a, T> {
    pub src: &'a str,
    pub node: &'a T,
}

/// Pairs a node with its tree's source for printing.
pub fn show<'a, T>(src: &'a str, node: &'a T) -> Show<'a, T> {
    Show { src, node }
}

impl Display for Show<'_, Arg> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let src = self.src;
        match self.node {
            Arg::Identifier(s) | Arg::Field { ident: s, .. } | Arg::Variable { ident: s, .. } => {
                f.write_str(s.of(src))
            }
            Arg::Dot(_) => f.write_char('.'),
            Arg::Nil(_) => f.write_str("nil"),
            Arg::Chain(c) => {
                match &c.node {
                    Arg::Pipe(p) => write!(f, "({})", show(src, p.as_ref()))?,
                    other => write!(f, "{}", show(src, other))?,
                }
                f.write_str(c.fields.of(src))
            }
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number(n) => f.write_str(n.text.of(src)),
            Arg::Str { quoted, .. } => f.write_str(quoted.of(src)),
            Arg::Pipe(p) => write!(f, "{}", show(src, p.as_ref())),
        }
    }
}

impl Display for Show<'_, Command> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.node.args.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            match a {
                Arg::Pipe(p) => write!(f, "({})", show(self.src, p.as_ref()))?,
                other => write!(f, "{}", show(self.src, other))?,
            }
        }
        Ok(())
    }
}

impl Display for Show<'_, Pipe> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pipe = self.node;
        for (i, d) in pipe.decl.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(d.of(self.src))?;
        }
        if !pipe.decl.is_empty() {
            f.write_str(if pipe.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in pipe.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{}", show(self.src, c))?;
        }
        Ok(())
    }
}

/// Writes a node list as Go's `ListNode.String()` does.
fn write_list(f: &mut fmt::Formatter<'_>, src: &str, list: &[Node]) -> fmt::Result {
    for n in list {
        write!(f, "{}", show(src, n))?;
    }
    Ok(())
}

fn write_branch(f: &mut fmt::Formatter<'_>, src: &str, name: &str, b: &Branch) -> fmt::Result {
    write!(f, "{{{{{name} {}}}}}", show(src, &b.pipe))?;
    write_list(f, src, &b.list)?;
    if let Some(e) = &b.else_list {
        f.write_str("{{else}}")?;
        write_list(f, src, e)?;
    }
    f.write_str("{{end}}")
}

impl Display for Show<'_, Node> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let src = self.src;
        match self.node {
            Node::Text(text) => f.write_str(text.of(src)),
            Node::Action(pipe) => write!(f, "{{{{{}}}}}", show(src, pipe)),
            Node::If(b) => write_branch(f, src, "if", b),
            Node::Range(b) => write_branch(f, src, "range", b),
            Node::With(b) => write_branch(f, src, "with", b),
            Node::Template(t) => {
                let q = crate::gotmpl::fmt::quote(&t.name);
                match &t.pipe {
                    Some(p) => write!(f, "{{{{template {q} {}}}}}", show(src, p)),
                    None => write!(f, "{{{{template {q}}}}}"),
                }
            }
            Node::Break(_) => f.write_str("{{break}}"),
            Node::Continue(_) => f.write_str("{{continue}}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(src: &str, part: &str) -> Span {
        let start = src.find(part).unwrap_or(0) as u32;
        Span {
            start,
            end: start + part.len() as u32,
        }
    }

    #[test]
    fn location_is_line_and_byte_column() {
        let t = Tree {
            name: "t".into(),
            parse_name: "f.tpl".into(),
            text: Arc::from("ab\ncd{{ x }}"),
            root: Box::new([]),
        };
        assert_eq!(t.location(8), "f.tpl:2:5");
        assert_eq!(t.location(1), "f.tpl:1:1");
    }

    #[test]
    fn strings_match_go() {
        let src = "eq .a.b \"x\"";
        let inner = Pipe {
            pos: 0,
            is_assign: false,
            decl: Box::new([]),
            cmds: Box::new([Command {
                pos: 0,
                args: Box::new([Arg::Field {
                    pos: 0,
                    ident: span(src, ".a.b"),
                }]),
            }]),
        };
        let cmd = Command {
            pos: 0,
            args: Box::new([
                Arg::Identifier(span(src, "eq")),
                Arg::Pipe(Box::new(inner)),
                Arg::Str {
                    quoted: span(src, "\"x\""),
                    unquoted: None,
                },
            ]),
        };
        assert_eq!(show(src, &cmd).to_string(), "eq (.a.b) \"x\"");
        let t = Node::Template(Box::new(TemplateCall {
            pos: 0,
            name: "n".into(),
            pipe: None,
        }));
        assert_eq!(show(src, &t).to_string(), "{{template \"n\"}}");
    }

    #[test]
    fn string_values_come_from_the_source_unless_unquoting_changed_them() {
        let src = "\"ab\" `c`";
        assert_eq!(Arg::str_value(span(src, "\"ab\""), &None, src), "ab");
        assert_eq!(Arg::str_value(span(src, "`c`"), &None, src), "c");
        assert_eq!(
            Arg::str_value(span(src, "`c`"), &Some("z".into()), src),
            "z"
        );
    }

    /// The node sizes the tree's memory depends on.
    #[test]
    fn nodes_stay_small() {
        assert!(std::mem::size_of::<Arg>() <= 32);
        assert!(std::mem::size_of::<Node>() <= 48);
        assert!(std::mem::size_of::<Command>() <= 24);
    }
}
