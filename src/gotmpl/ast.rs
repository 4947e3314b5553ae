//! Parse tree, mirroring Go's `text/template/parse` node types. `Display`
//! reproduces Go's `Node.String()`, which appears in execution errors
//! (`executing "x" at <NODE>`).

use std::fmt::{self, Display, Write};
use std::sync::Arc;

/// One parsed template (a file body or a `define`/`block`).
#[derive(Debug)]
pub struct Tree {
    /// Template name (`define` name, or the name given to `parse`).
    pub name: String,
    /// Name of the source being parsed (the file), used in error locations.
    pub parse_name: String,
    /// Full source text, to turn byte positions into line:column.
    pub text: Arc<str>,
    /// Top-level nodes.
    pub root: Vec<Node>,
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
        self.root.iter().all(|n| match n {
            Node::Text { text, .. } => text.trim_ascii().is_empty(),
            Node::Comment { .. } => true,
            _ => false,
        })
    }
}

/// Statement-level node.
#[derive(Debug)]
pub enum Node {
    /// Literal text.
    Text { pos: usize, text: String },
    /// `{{/* ... */}}` (only kept when comments are parsed).
    Comment { pos: usize, text: String },
    /// `{{pipeline}}`.
    Action { pos: usize, pipe: Pipe },
    /// `{{if}}`.
    If(Branch),
    /// `{{range}}`.
    Range(Branch),
    /// `{{with}}`.
    With(Branch),
    /// `{{template "name" pipeline}}` (also what `block` leaves behind).
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    /// `{{break}}`.
    Break { pos: usize },
    /// `{{continue}}`.
    Continue { pos: usize },
}

/// Shared shape of `if`, `range` and `with`.
#[derive(Debug)]
pub struct Branch {
    pub pos: usize,
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

/// A pipeline with optional variable declarations.
#[derive(Debug)]
pub struct Pipe {
    pub pos: usize,
    /// `$x = ...` rather than `$x := ...`.
    pub is_assign: bool,
    /// Declared variable names (with `$`).
    pub decl: Vec<String>,
    pub cmds: Vec<Command>,
}

/// Frees nested parenthesised pipelines with a loop: templates may nest
/// them 100,000 deep, past what a recursive drop fits on a stack.
impl Drop for Pipe {
    fn drop(&mut self) {
        let nested = |a: &Arg| matches!(a, Arg::Pipe(_) | Arg::Chain { .. });
        if !self.cmds.iter().any(|c| c.args.iter().any(nested)) {
            return;
        }
        let mut pending: Vec<Arg> = Vec::new();
        for c in &mut self.cmds {
            pending.append(&mut c.args);
        }
        while let Some(a) = pending.pop() {
            match a {
                Arg::Pipe(mut p) => {
                    for c in &mut p.cmds {
                        pending.append(&mut c.args);
                    }
                }
                Arg::Chain { node, .. } => pending.push(*node),
                _ => {}
            }
        }
    }
}

/// One stage of a pipeline: operands separated by spaces.
#[derive(Debug)]
pub struct Command {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// A parsed number literal with all the interpretations Go keeps.
#[derive(Debug, Clone)]
pub struct Number {
    pub text: String,
    pub is_int: bool,
    pub is_uint: bool,
    pub is_float: bool,
    pub int: i64,
    pub uint: u64,
    pub float: f64,
}

/// Operand node.
#[derive(Debug)]
pub enum Arg {
    /// Function name.
    Identifier { pos: usize, name: String },
    /// `.`.
    Dot { pos: usize },
    /// `nil`.
    Nil { pos: usize },
    /// `.a.b`: identifiers without dots.
    Field { pos: usize, ident: Vec<String> },
    /// `$x.a.b`: first element is the variable name.
    Variable { pos: usize, ident: Vec<String> },
    /// `(pipe).a.b` or `fn.a`.
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    /// `true`/`false`.
    Bool { pos: usize, val: bool },
    /// Number or character literal.
    Number { pos: usize, num: Number },
    /// String literal: original quoted text and unquoted value.
    Str {
        pos: usize,
        quoted: String,
        text: String,
    },
    /// Parenthesised pipeline.
    Pipe(Box<Pipe>),
}

impl Arg {
    /// Byte offset of the node.
    pub fn pos(&self) -> usize {
        match self {
            Arg::Identifier { pos, .. }
            | Arg::Dot { pos }
            | Arg::Nil { pos }
            | Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::Bool { pos, .. }
            | Arg::Number { pos, .. }
            | Arg::Str { pos, .. } => *pos,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Dot { .. } => f.write_char('.'),
            Arg::Nil { .. } => f.write_str("nil"),
            Arg::Field { ident, .. } => {
                for id in ident {
                    write!(f, ".{id}")?;
                }
                Ok(())
            }
            Arg::Variable { ident, .. } => f.write_str(&ident.join(".")),
            Arg::Chain { node, fields, .. } => {
                match node.as_ref() {
                    Arg::Pipe(p) => write!(f, "({p})")?,
                    other => write!(f, "{other}")?,
                }
                for field in fields {
                    write!(f, ".{field}")?;
                }
                Ok(())
            }
            Arg::Bool { val, .. } => write!(f, "{val}"),
            Arg::Number { num, .. } => f.write_str(&num.text),
            Arg::Str { quoted, .. } => f.write_str(quoted),
            Arg::Pipe(p) => write!(f, "{p}"),
        }
    }
}

impl Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            match a {
                Arg::Pipe(p) => write!(f, "({p})")?,
                other => write!(f, "{other}")?,
            }
        }
        Ok(())
    }
}

impl Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.decl.is_empty() {
            f.write_str(&self.decl.join(", "))?;
            f.write_str(if self.is_assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Writes a node list as Go's `ListNode.String()` does.
pub fn write_list(f: &mut fmt::Formatter<'_>, list: &[Node]) -> fmt::Result {
    for n in list {
        write!(f, "{n}")?;
    }
    Ok(())
}

fn write_branch(f: &mut fmt::Formatter<'_>, name: &str, b: &Branch) -> fmt::Result {
    write!(f, "{{{{{name} {}}}}}", b.pipe)?;
    write_list(f, &b.list)?;
    if let Some(e) = &b.else_list {
        f.write_str("{{else}}")?;
        write_list(f, e)?;
    }
    f.write_str("{{end}}")
}

impl Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Text { text, .. } => f.write_str(text),
            Node::Comment { text, .. } => write!(f, "{{{{{text}}}}}"),
            Node::Action { pipe, .. } => write!(f, "{{{{{pipe}}}}}"),
            Node::If(b) => write_branch(f, "if", b),
            Node::Range(b) => write_branch(f, "range", b),
            Node::With(b) => write_branch(f, "with", b),
            Node::Template { name, pipe, .. } => {
                let q = crate::gotmpl::fmt::quote(name);
                match pipe {
                    Some(p) => write!(f, "{{{{template {q} {p}}}}}"),
                    None => write!(f, "{{{{template {q}}}}}"),
                }
            }
            Node::Break { .. } => f.write_str("{{break}}"),
            Node::Continue { .. } => f.write_str("{{continue}}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_is_line_and_byte_column() {
        let t = Tree {
            name: "t".into(),
            parse_name: "f.tpl".into(),
            text: Arc::from("ab\ncd{{ x }}"),
            root: vec![],
        };
        assert_eq!(t.location(8), "f.tpl:2:5");
        assert_eq!(t.location(1), "f.tpl:1:1");
    }

    #[test]
    fn strings_match_go() {
        let inner = Pipe {
            pos: 0,
            is_assign: false,
            decl: vec![],
            cmds: vec![Command {
                pos: 0,
                args: vec![Arg::Field {
                    pos: 0,
                    ident: vec!["a".into(), "b".into()],
                }],
            }],
        };
        let cmd = Command {
            pos: 0,
            args: vec![
                Arg::Identifier {
                    pos: 0,
                    name: "eq".into(),
                },
                Arg::Pipe(Box::new(inner)),
                Arg::Str {
                    pos: 0,
                    quoted: "\"x\"".into(),
                    text: "x".into(),
                },
            ],
        };
        assert_eq!(cmd.to_string(), "eq (.a.b) \"x\"");
        let t = Node::Template {
            pos: 0,
            name: "n".into(),
            pipe: None,
        };
        assert_eq!(t.to_string(), "{{template \"n\"}}");
    }
}
