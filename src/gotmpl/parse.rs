//! Recursive-descent parser equivalent to Go's `text/template/parse`
//! (`parse.go`), including its error texts and line numbers.

use std::sync::Arc;

use super::ast::{
    self, Arg, Branch, Chain, Command, Node, NumberLit, Pipe, Span, TemplateCall, Tree,
};
use super::lexer::{lex, Kind, LexOptions, Token, Tokens};
use super::strconv::{number, unquote};
use super::{Error, ExecOptions};

/// Parenthesised pipelines nested deeper than this are refused with Go's
/// `maxStackDepth` message. helm 3.17 parses 100,000 (its Go check does not
/// fire), and so does hydrate: parser and executor hop to big stacks and
/// the syntax tree is freed iteratively (`ast::Pipe`'s drop).
const MAX_PAREN_DEPTH: usize = 100_000;

/// Parses `text` (named `name`) into its main tree plus one tree per
/// `define`/`block`, in definition order. `has_func` tells whether a function
/// name exists (Go checks this at parse time).
pub fn parse(
    name: &str,
    text: &str,
    has_func: &(dyn Fn(&str) -> bool + Sync),
    opts: &ExecOptions,
) -> Result<Vec<Tree>, Error> {
    let lex_opts = LexOptions {
        break_ok: !has_func("break"),
        continue_ok: !has_func("continue"),
        comment_newlines: opts.comment_newlines,
    };
    let max_paren = opts.max_paren_depth;
    if u32::try_from(text.len()).is_err() {
        return Err(Error::Parse(format!(
            "template: {name}: text of {} bytes is too large",
            text.len()
        )));
    }
    let tokens = lex(text, lex_opts);
    let mut p = Parser {
        toks: tokens,
        idx: 0,
        hi: 0,
        parse_name: name.to_string(),
        text: Arc::from(text),
        vars: vec!["$"],
        range_depth: 0,
        nest: 0,
        max_paren: max_paren.unwrap_or(MAX_PAREN_DEPTH).min(MAX_PAREN_DEPTH),
        action_line: 0,
        has_func,
        trees: Vec::new(),
        nodes: Vec::new(),
        cmds: Vec::new(),
        args: Vec::new(),
    };
    let root = p.parse_top()?;
    let main = Tree {
        name: name.to_string(),
        parse_name: name.to_string(),
        text: p.text.clone(),
        root,
    };
    let mut trees = vec![main];
    trees.append(&mut p.trees);
    Ok(trees)
}

type PResult<T> = Result<T, Error>;

/// Statement-level parse result: a node, or the `{{end}}`/`{{else}}` that
/// closes the current list.
enum Item {
    Node(Node),
    End,
    Else,
}

struct Parser<'a, 'f> {
    toks: Tokens<'a>,
    idx: usize,
    /// Furthest token index read: Go reports errors at `token[0].line`,
    /// the newest lexed token, even after backing up.
    hi: usize,
    parse_name: String,
    text: Arc<str>,
    /// Variables in scope, borrowed from the source.
    vars: Vec<&'a str>,
    range_depth: usize,
    /// Nesting of control bodies and parenthesised pipelines, for stack
    /// hops. helm 3.17 parses 100,000 nested parentheses and any depth of
    /// nested `if` (goroutine stacks grow).
    nest: usize,
    /// Parenthesised pipelines nested deeper than this are refused.
    max_paren: usize,
    action_line: u32,
    has_func: &'f (dyn Fn(&str) -> bool + Sync),
    trees: Vec<Tree>,
    /// Scratch stacks: a list, pipeline or command collects its items on
    /// top, then moves them out into an exactly sized slice. Growing a
    /// fresh vector per list by doubling cost a third of parsing.
    nodes: Vec<Node>,
    cmds: Vec<Command>,
    args: Vec<Arg>,
}

/// The span of a token (sources are at most `u32::MAX` bytes: checked
/// in [`parse`]).
fn span(t: &Token) -> Span {
    Span {
        start: t.pos,
        end: t.end,
    }
}

/// Moves the items above `mark` out of a scratch stack.
fn take_from<T>(stack: &mut Vec<T>, mark: usize) -> Box<[T]> {
    stack.drain(mark..).collect()
}

impl<'a> Parser<'a, '_> {
    fn errorf<T>(&self, msg: impl Into<String>) -> PResult<T> {
        let line = self.toks.toks.get(self.hi).map_or(1, |t| t.line);
        Err(Error::Parse(format!(
            "template: {}:{}: {}",
            self.parse_name,
            line,
            msg.into()
        )))
    }

    #[inline]
    fn at(&self, i: usize) -> Token {
        let toks = &self.toks.toks;
        let last = toks.len().saturating_sub(1);
        toks.get(i.min(last)).copied().unwrap_or(Token {
            kind: Kind::Eof,
            pos: 0,
            end: 0,
            line: 1,
        })
    }

    #[inline]
    fn next(&mut self) -> Token {
        let t = self.at(self.idx);
        let len = self.toks.toks.len();
        self.hi = self.hi.max(self.idx.min(len.saturating_sub(1)));
        if self.idx < len {
            self.idx += 1;
        }
        t
    }

    fn backup(&mut self) {
        self.idx = self.idx.saturating_sub(1);
    }

    fn peek(&mut self) -> Token {
        let t = self.next();
        self.backup();
        t
    }

    fn next_non_space(&mut self) -> Token {
        loop {
            let t = self.next();
            if t.kind != Kind::Space {
                return t;
            }
        }
    }

    fn peek_non_space(&mut self) -> Token {
        let t = self.next_non_space();
        self.backup();
        t
    }

    fn expect(&mut self, kind: Kind, context: &str) -> PResult<Token> {
        let t = self.next_non_space();
        if t.kind != kind {
            return self.unexpected(&t, context);
        }
        Ok(t)
    }

    fn unexpected<T>(&self, t: &Token, context: &str) -> PResult<T> {
        if t.kind == Kind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != t.line {
                extra = format!(
                    " in action started at {}:{}",
                    self.parse_name, self.action_line
                );
                if self.toks.val(t).ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return self.errorf(format!("{}{}", self.toks.val(t), extra));
        }
        self.errorf(format!(
            "unexpected {} in {}",
            self.toks.describe(t),
            context
        ))
    }

    fn parse_top(&mut self) -> PResult<Box<[Node]>> {
        let mark = self.nodes.len();
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let save = self.idx;
                self.next();
                if self.next_non_space().kind == Kind::Define {
                    self.parse_definition()?;
                    continue;
                }
                self.idx = save;
            }
            match self.text_or_action()? {
                Item::Node(n) => self.nodes.push(n),
                Item::End => return self.errorf("unexpected {{end}}"),
                Item::Else => return self.errorf("unexpected {{else}}"),
            }
        }
        Ok(take_from(&mut self.nodes, mark))
    }

    /// Parses a nested template body with fresh variables, then registers it.
    fn sub_tree(&mut self, name: String, context: &str) -> PResult<()> {
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let (list, end) = self.item_list()?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        match end {
            Item::End => {}
            Item::Else => return self.errorf(format!("unexpected {{{{else}}}} in {context}")),
            Item::Node(_) => return self.errorf(format!("unexpected EOF in {context}")),
        }
        let tree = Tree {
            name,
            parse_name: self.parse_name.clone(),
            text: self.text.clone(),
            root: list,
        };
        self.add_tree(tree)
    }

    /// Go's `Tree.add`: a second non-empty definition in one parse is an error.
    fn add_tree(&mut self, tree: Tree) -> PResult<()> {
        if let Some(i) = self.trees.iter().position(|t| t.name == tree.name) {
            if self.trees[i].is_empty() {
                self.trees[i] = tree;
            } else if !tree.is_empty() {
                return self.errorf(format!(
                    "template: multiple definition of template {}",
                    super::fmt::quote(&tree.name)
                ));
            }
            return Ok(());
        }
        self.trees.push(tree);
        Ok(())
    }

    fn parse_definition(&mut self) -> PResult<()> {
        let context = "define clause";
        let t = self.next_non_space();
        if !matches!(t.kind, Kind::String | Kind::RawString) {
            return self.unexpected(&t, context);
        }
        let name = match unquote(self.toks.text(&t)) {
            Ok(n) => n,
            Err(_) => return self.errorf("invalid syntax"),
        };
        self.expect(Kind::RightDelim, context)?;
        self.sub_tree(name, context)
    }

    /// Parses nodes until `{{end}}`/`{{else}}`; EOF is an error.
    fn item_list(&mut self) -> PResult<(Box<[Node]>, Item)> {
        let mark = self.nodes.len();
        while self.peek_non_space().kind != Kind::Eof {
            match self.text_or_action()? {
                Item::Node(n) => self.nodes.push(n),
                other => return Ok((take_from(&mut self.nodes, mark), other)),
            }
        }
        self.errorf("unexpected EOF")
    }

    fn text_or_action(&mut self) -> PResult<Item> {
        let t = self.next_non_space();
        match t.kind {
            Kind::Text => Ok(Item::Node(Node::Text(span(&t)))),
            Kind::LeftDelim => {
                self.action_line = t.line;
                let r = self.action();
                self.action_line = 0;
                r
            }
            _ => self.unexpected(&t, "input"),
        }
    }

    fn action(&mut self) -> PResult<Item> {
        let t = self.next_non_space();
        match t.kind {
            Kind::Block => return self.block_control().map(Item::Node),
            Kind::Break | Kind::Continue => return self.loop_control(&t).map(Item::Node),
            Kind::Else => return self.else_control(),
            Kind::End => {
                self.expect(Kind::RightDelim, "end")?;
                return Ok(Item::End);
            }
            Kind::If => return self.branch("if").map(|b| Item::Node(Node::If(b))),
            Kind::Range => return self.branch("range").map(|b| Item::Node(Node::Range(b))),
            Kind::Template => return self.template_control().map(Item::Node),
            Kind::With => return self.branch("with").map(|b| Item::Node(Node::With(b))),
            _ => {}
        }
        self.backup();
        let pipe = self.pipeline("command", Kind::RightDelim)?;
        Ok(Item::Node(Node::Action(pipe)))
    }

    fn loop_control(&mut self, kw: &Token) -> PResult<Node> {
        let word = if kw.kind == Kind::Break {
            "break"
        } else {
            "continue"
        };
        let t = self.next_non_space();
        if t.kind != Kind::RightDelim {
            return self.unexpected(&t, &format!("{{{{{word}}}}}"));
        }
        if self.range_depth == 0 {
            return self.errorf(format!("{{{{{word}}}}} outside {{{{range}}}}"));
        }
        Ok(if kw.kind == Kind::Break {
            Node::Break(kw.pos)
        } else {
            Node::Continue(kw.pos)
        })
    }

    fn else_control(&mut self) -> PResult<Item> {
        let peek = self.peek_non_space();
        if matches!(peek.kind, Kind::If | Kind::With) {
            return Ok(Item::Else);
        }
        self.expect(Kind::RightDelim, "else")?;
        Ok(Item::Else)
    }

    /// Runs `f` one nesting level deeper, on a fresh big stack at hop points.
    fn deeper<T: Send>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T> + Send) -> PResult<T> {
        self.nest += 1;
        let nest = self.nest;
        let r = match super::stack::hop(nest, || f(self)) {
            Ok(r) => r,
            Err(f) => {
                drop(f);
                self.errorf(super::stack::NO_STACK)
            }
        };
        self.nest -= 1;
        r
    }

    /// Go's `parseControl` for `if`/`range`/`with`.
    fn branch(&mut self, context: &str) -> PResult<Box<Branch>> {
        self.deeper(|p| p.branch_here(context))
    }

    fn branch_here(&mut self, context: &str) -> PResult<Box<Branch>> {
        let mark = self.vars.len();
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Item::Else = next {
            // `{{else if}}`/`{{else with}}` nest a new branch that consumes the shared {{end}}.
            let kw = self.peek().kind;
            if context == "if" && kw == Kind::If {
                self.next();
                else_list = Some(Box::from([Node::If(self.branch("if")?)]));
            } else if context == "with" && kw == Kind::With {
                self.next();
                else_list = Some(Box::from([Node::With(self.branch("with")?)]));
            } else {
                let (l, n) = self.item_list()?;
                match n {
                    Item::End => {}
                    Item::Else => return self.errorf("expected end; found {{else}}"),
                    Item::Node(_) => return self.errorf("unexpected EOF"),
                }
                else_list = Some(l);
            }
        }
        self.vars.truncate(mark);
        Ok(Box::new(Branch {
            pipe,
            list,
            else_list,
        }))
    }

    fn template_name(&mut self, t: &Token, context: &str) -> PResult<String> {
        if !matches!(t.kind, Kind::String | Kind::RawString) {
            return self.unexpected(t, context);
        }
        match unquote(self.toks.text(t)) {
            Ok(n) => Ok(n),
            Err(_) => self.errorf("invalid syntax"),
        }
    }

    fn block_control(&mut self) -> PResult<Node> {
        let context = "block clause";
        let t = self.next_non_space();
        let name = self.template_name(&t, context)?;
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        self.sub_tree(name.clone(), context)?;
        Ok(Node::Template(Box::new(TemplateCall {
            pos: t.pos,
            name,
            pipe: Some(pipe),
        })))
    }

    fn template_control(&mut self) -> PResult<Node> {
        let context = "template clause";
        let t = self.next_non_space();
        let name = self.template_name(&t, context)?;
        let mut pipe = None;
        if self.next_non_space().kind != Kind::RightDelim {
            self.backup();
            pipe = Some(self.pipeline(context, Kind::RightDelim)?);
        }
        Ok(Node::Template(Box::new(TemplateCall {
            pos: t.pos,
            name,
            pipe,
        })))
    }

    /// Parses optional declarations (`$x :=`, `$i, $v :=`, `$x =`).
    fn declarations(&mut self, context: &str, decl: &mut Vec<Span>) -> PResult<bool> {
        loop {
            let v = self.peek_non_space();
            if v.kind != Kind::Variable {
                return Ok(false);
            }
            let save = self.idx;
            self.next_non_space();
            let next = self.peek_non_space();
            match next.kind {
                Kind::Assign | Kind::Declare => {
                    self.next_non_space();
                    decl.push(span(&v));
                    self.vars.push(self.toks.text(&v));
                    return Ok(next.kind == Kind::Assign);
                }
                Kind::Char if self.toks.text(&next) == "," => {
                    self.next_non_space();
                    decl.push(span(&v));
                    self.vars.push(self.toks.text(&v));
                    if context == "range" && decl.len() < 2 {
                        let k = self.peek_non_space().kind;
                        if matches!(k, Kind::Variable | Kind::RightDelim | Kind::RightParen) {
                            continue;
                        }
                        return self.errorf("range can only initialize variables");
                    }
                    return self.errorf(format!("too many declarations in {context}"));
                }
                _ => {
                    self.idx = save;
                    return Ok(false);
                }
            }
        }
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> PResult<Pipe> {
        let pos = self.peek_non_space().pos;
        let mut decl = Vec::new();
        let is_assign = self.declarations(context, &mut decl)?;
        let mark = self.cmds.len();
        loop {
            let t = self.next_non_space();
            match t.kind {
                k if k == end => {
                    self.check_pipeline(&self.cmds[mark..], context)?;
                    return Ok(Pipe {
                        pos,
                        is_assign,
                        decl: decl.into_boxed_slice(),
                        cmds: take_from(&mut self.cmds, mark),
                    });
                }
                Kind::Bool
                | Kind::CharConstant
                | Kind::Complex
                | Kind::Dot
                | Kind::Field
                | Kind::Identifier
                | Kind::Number
                | Kind::Nil
                | Kind::RawString
                | Kind::String
                | Kind::Variable
                | Kind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    self.cmds.push(cmd);
                }
                _ => return self.unexpected(&t, context),
            }
        }
    }

    fn check_pipeline(&self, cmds: &[Command], context: &str) -> PResult<()> {
        if cmds.is_empty() {
            return self.errorf(format!("missing value for {context}"));
        }
        for (i, c) in cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args.first(),
                Some(
                    Arg::Bool { .. } | Arg::Dot(_) | Arg::Nil(_) | Arg::Number(_) | Arg::Str { .. }
                )
            ) {
                return self.errorf(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mark = self.args.len();
        loop {
            self.peek_non_space();
            if let Some(op) = self.operand()? {
                self.args.push(op);
            }
            let t = self.next();
            match t.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return self.unexpected(&t, "operand"),
            }
            break;
        }
        if self.args.len() == mark {
            return self.errorf("empty command");
        }
        Ok(Command {
            pos,
            args: take_from(&mut self.args, mark),
        })
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let first = self.peek();
        let pos = first.pos;
        let mut fields = span(&first);
        while self.peek().kind == Kind::Field {
            fields.end = span(&self.next()).end;
        }
        // Go joins the node's text and the fields' (`chain.String()`); the
        // field tokens follow the node's text directly in the source.
        let joined = |ident: Span| Span {
            start: ident.start,
            end: fields.end,
        };
        Ok(Some(match node {
            Arg::Field { ident, .. } if ident.end == fields.start => Arg::Field {
                pos,
                ident: joined(ident),
            },
            Arg::Variable { ident, .. } if ident.end == fields.start => Arg::Variable {
                pos,
                ident: joined(ident),
            },
            Arg::Bool { .. } | Arg::Str { .. } | Arg::Number(_) | Arg::Nil(_) | Arg::Dot(_) => {
                return self.errorf(format!(
                    "unexpected . after term {}",
                    super::fmt::quote(&ast::show(&self.text, &node).to_string())
                ));
            }
            other => Arg::Chain(Box::new(Chain {
                pos,
                node: other,
                fields,
            })),
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let t = self.next_non_space();
        let pos = t.pos;
        let val = self.toks.text(&t);
        Ok(Some(match t.kind {
            Kind::Identifier => {
                if !(self.has_func)(val) {
                    return self.errorf(format!("function {} not defined", super::fmt::quote(val)));
                }
                Arg::Identifier(span(&t))
            }
            Kind::Dot => Arg::Dot(pos),
            Kind::Nil => Arg::Nil(pos),
            Kind::Variable => self.use_var(&t)?,
            Kind::Field => Arg::Field {
                pos,
                ident: span(&t),
            },
            Kind::Bool => Arg::Bool {
                pos,
                val: val == "true",
            },
            Kind::CharConstant | Kind::Complex | Kind::Number => {
                match number(val, t.kind == Kind::CharConstant) {
                    Ok(num) => Arg::Number(Box::new(NumberLit {
                        text: span(&t),
                        num,
                    })),
                    Err(msg) => return self.errorf(msg),
                }
            }
            Kind::LeftParen => {
                if self.nest >= self.max_paren {
                    return self.errorf("max expression depth exceeded");
                }
                let r = self.deeper(|p| p.pipeline("parenthesized pipeline", Kind::RightParen));
                Arg::Pipe(Box::new(r?))
            }
            Kind::String | Kind::RawString => Arg::Str {
                quoted: span(&t),
                unquoted: match self.string_value(val) {
                    Ok(u) => u,
                    Err(_) => return self.errorf("invalid syntax"),
                },
            },
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }

    /// A string literal's value when it differs from the text between its
    /// quotes (Go's `strconv.Unquote` changes only escapes and, in raw
    /// strings, carriage returns; the lexer leaves no newline or quote
    /// inside).
    fn string_value(&self, quoted: &str) -> Result<Option<Box<str>>, super::strconv::NumError> {
        let inner = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default();
        let plain = quoted.len() >= 2
            && !inner
                .bytes()
                .any(|b| matches!(b, b'\\' | b'\r' | b'\n' | b'"' | b'`'));
        if plain {
            return Ok(None);
        }
        unquote(quoted).map(|u| Some(u.into_boxed_str()))
    }

    fn use_var(&self, t: &Token) -> PResult<Arg> {
        let text = self.toks.text(t);
        let name = text.split('.').next().unwrap_or_default();
        if self.vars.contains(&name) {
            return Ok(Arg::Variable {
                pos: t.pos,
                ident: span(t),
            });
        }
        self.errorf(format!("undefined variable {}", super::fmt::quote(name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::ast::Number;

    fn p(text: &str) -> Result<Vec<Tree>, String> {
        let funcs = |n: &str| matches!(n, "printf" | "eq" | "list" | "include");
        parse("t", text, &funcs, &ExecOptions::default()).map_err(|e| e.to_string())
    }

    fn round_trip(text: &str) -> String {
        match p(text) {
            Ok(trees) => trees[0]
                .root
                .iter()
                .map(|n| ast::show(&trees[0].text, n).to_string())
                .collect(),
            Err(e) => e,
        }
    }

    #[test]
    fn round_trips_like_go_string() {
        assert_eq!(round_trip("a{{.x.y}}b"), "a{{.x.y}}b");
        assert_eq!(
            round_trip("{{if .a}}A{{else if .b}}B{{else}}C{{end}}"),
            "{{if .a}}A{{else}}{{if .b}}B{{else}}C{{end}}{{end}}"
        );
        assert_eq!(
            round_trip("{{range $i, $v := .l}}{{$i}}{{end}}"),
            "{{range $i, $v := .l}}{{$i}}{{end}}"
        );
        assert_eq!(
            round_trip("{{ (printf \"%d\" 1).x | eq 2 }}"),
            "{{(printf \"%d\" 1).x | eq 2}}"
        );
        assert_eq!(
            round_trip("{{ $x := 1 }}{{ $x = 2 }}"),
            "{{$x := 1}}{{$x = 2}}"
        );
    }

    /// Go 1.24+ (helm 4) refuses parentheses nested past `maxStackDepth`;
    /// Go 1.23 (helm 3.17) has no such check.
    #[test]
    fn paren_depth_limit_is_per_go_release() {
        let nested = |n: usize| format!("{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n));
        let funcs = |_: &str| false;
        let go = |n, max| {
            let opts = ExecOptions {
                max_paren_depth: max,
                ..ExecOptions::default()
            };
            parse("t", &nested(n), &funcs, &opts).map(|_| ())
        };
        assert!(go(10_000, Some(10_000)).is_ok());
        assert_eq!(
            go(10_001, Some(10_000)).map_err(|e| e.to_string()),
            Err("template: t:1: max expression depth exceeded".into())
        );
        assert!(go(10_001, None).is_ok());
    }

    #[test]
    fn defines_become_trees() {
        let trees = p("x{{define \"a\"}}A{{end}}{{block \"b\" .}}B{{end}}").unwrap_or_default();
        let names: Vec<&str> = trees.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["t", "a", "b"]);
        assert_eq!(trees[0].root.len(), 2);
    }

    #[test]
    fn go_error_texts() {
        assert_eq!(
            round_trip("{{ $x }}"),
            "template: t:1: undefined variable \"$x\""
        );
        assert_eq!(
            round_trip("{{ foo }}"),
            "template: t:1: function \"foo\" not defined"
        );
        assert_eq!(round_trip("{{end}}"), "template: t:1: unexpected {{end}}");
        assert_eq!(round_trip("\n{{if .x}}"), "template: t:2: unexpected EOF");
        assert_eq!(
            round_trip("{{break}}"),
            "template: t:1: {{break}} outside {{range}}"
        );
        assert_eq!(
            round_trip("{{ . | 1 }}"),
            "template: t:1: non executable command in pipeline stage 2"
        );
        assert_eq!(
            round_trip("{{ }}"),
            "template: t:1: missing value for command"
        );
        assert_eq!(
            round_trip("{{ 1.x }}"),
            "template: t:1: bad number syntax: \"1.x\""
        );
        assert_eq!(
            round_trip("{{ \"a\".x }}"),
            "template: t:1: unexpected . after term \"\\\"a\\\"\""
        );
        assert_eq!(
            round_trip("{{ ) }}"),
            "template: t:1: unexpected right paren"
        );
        assert_eq!(
            round_trip("{{ .x\n\n"),
            "template: t:3: unclosed action started at t:1"
        );
        assert_eq!(
            round_trip("{{ 99999999999999999999 }}"),
            "template: t:1: integer overflow: \"99999999999999999999\""
        );
        assert_eq!(
            round_trip("{{ if }}"),
            "template: t:1: missing value for if"
        );
        assert_eq!(
            round_trip("{{ range $a, $b, $c := . }}{{end}}"),
            "template: t:1: too many declarations in range"
        );
    }

    /// Line numbers as helm 3.17 reports them, past trim markers, comments
    /// and multi-line actions (the lexer counts newlines over skipped text).
    #[test]
    fn error_lines_match_helm() {
        assert_eq!(
            round_trip("a: 1\n\n{{- \n  .x | 3 }}\n"),
            "template: t:4: non executable command in pipeline stage 2"
        );
        assert_eq!(
            round_trip("a\n{{- /* c */ -}}\n\n{{ \"x\n }}"),
            "template: t:4: unterminated quoted string"
        );
        assert_eq!(
            round_trip("x: {{ .a }}\n{{- if\n .x }}\n{{ end }} {{ end }}"),
            "template: t:4: unexpected {{end}}"
        );
        assert_eq!(
            round_trip("é{{ .x é }}"),
            "template: t:1: function \"é\" not defined"
        );
        assert_eq!(
            round_trip("{{ $x := 1 }}\n{{ range $x,\n $y := . }}{{ $z }}{{ end }}"),
            "template: t:3: undefined variable \"$z\""
        );
    }

    #[test]
    fn comment_lines_count_from_go_1_24() {
        // Recorded: helm 3.17 (Go 1.23) says line 4, helm 4 (Go 1.25) line 6.
        let text = "a\n{{/* c\n\n */ -}}\n\n{{ \"x\n }}";
        let funcs = |_: &str| false;
        let err = |comment_newlines| {
            let opts = ExecOptions {
                comment_newlines,
                ..ExecOptions::default()
            };
            parse("t", text, &funcs, &opts).err().unwrap().to_string()
        };
        assert_eq!(err(false), "template: t:4: unterminated quoted string");
        assert_eq!(err(true), "template: t:6: unterminated quoted string");
    }

    #[test]
    fn range_scopes_variables() {
        let r = round_trip("{{ range $i, $e := list \"a\" }}{{ end }}{{ $i }}");
        assert_eq!(r, "template: t:1: undefined variable \"$i\"");
    }

    #[test]
    fn numbers() {
        let trees = p("{{ 1.0 }}{{ 0x10 }}{{ 'a' }}{{ 1e3 }}").unwrap_or_default();
        let nums: Vec<Number> = trees[0]
            .root
            .iter()
            .filter_map(|n| match n {
                Node::Action(pipe) => match &pipe.cmds[0].args[0] {
                    Arg::Number(lit) => Some(lit.num.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        assert!(nums[0].is_int && nums[0].is_float);
        assert_eq!(nums[1].int, 16);
        assert_eq!(nums[2].int, 97);
        assert!(nums[3].is_int && nums[3].float == 1000.0);
    }
}
