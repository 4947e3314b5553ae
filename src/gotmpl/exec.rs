//! Tree walker with Go's `text/template/exec.go` semantics: control flow,
//! variables, template calls, output, and where errors are reported.

use std::collections::HashMap;
use std::sync::Arc;

use super::ast::{self, field_names, Arg, Branch, Command, Node, Pipe, Span, Tree};
use super::fmt::{quote, to_string, try_to_string};
use super::funcs::{FuncCtx, FuncMap, TemplateRunner};
use super::value::{Elem, Value};
use super::{stack, Error, ExecOptions, MissingKey};

/// Go's `maxExecDepth` for nested `{{template}}` calls.
pub const MAX_EXEC_DEPTH: usize = 100_000;

/// Chain of template tables: a `tpl` overlay sees its own definitions first.
pub(crate) struct Lookup<'a> {
    pub trees: &'a HashMap<String, Arc<Tree>>,
    pub parent: Option<&'a Lookup<'a>>,
    /// Name of the set's root template (for "no template ... associated").
    pub root_name: &'a str,
}

impl<'a> Lookup<'a> {
    pub fn get(&self, name: &str) -> Option<&'a Tree> {
        match self.trees.get(name) {
            Some(t) => Some(t.as_ref()),
            None => self.parent.and_then(|p| p.get(name)),
        }
    }
}

/// A value together with whether Go sees it through an `interface {}`
/// (map/slice element) – that changes some error texts.
#[derive(Clone, Debug)]
pub(crate) struct Dot {
    pub v: Value,
    pub iface: bool,
}

impl Dot {
    fn plain(v: Value) -> Self {
        Dot { v, iface: false }
    }
}

/// Node the executor is at, for error context (Go's `state.at`).
#[derive(Clone, Copy)]
pub(crate) enum At<'a> {
    None,
    Node(&'a Node),
    Pipe(&'a Pipe),
    Cmd(&'a Command),
    Arg(&'a Arg),
}

impl At<'_> {
    /// Position and Go `String()` of the node, whose spans index `src`.
    fn describe(&self, src: &str) -> Option<(usize, String)> {
        match self {
            At::None => None,
            At::Node(n) => Some((n.pos(), ast::show(src, *n).to_string())),
            At::Pipe(p) => Some((p.pos as usize, ast::show(src, *p).to_string())),
            At::Cmd(c) => Some((c.pos as usize, ast::show(src, *c).to_string())),
            At::Arg(a) => Some((a.pos(), ast::show(src, *a).to_string())),
        }
    }
}

/// How a walk ended: normally, or by `{{break}}`/`{{continue}}`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Normal,
    Break,
    Continue,
}

type R<T> = Result<T, Error>;

/// Execution state (Go's `state`).
pub(crate) struct State<'a> {
    pub lookup: &'a Lookup<'a>,
    pub funcs: &'a FuncMap,
    pub opts: &'a ExecOptions,
    pub shared: &'a super::ExecShared,
    pub tree: &'a Tree,
    pub at: At<'a>,
    /// Variables in scope; names borrow from the trees' sources.
    pub vars: Vec<(&'a str, Dot)>,
    pub depth: usize,
    /// Total nesting (template calls and nested executions) for stack hops.
    pub nest: usize,
    pub out: String,
    /// Each action printed, when the caller traces ([`super::trace`]).
    pub marks: Option<Vec<super::trace::ActionMark>>,
    /// While tracing: the `.Values` path dot stands for (`with .Values.x`).
    pub dot_values: Option<String>,
    /// While tracing: the actions of helpers run by `include` since the
    /// last printed action, with each helper's output, for the next mark.
    pub included: Vec<super::trace::Included>,
}

/// Go's dig-down after each pipeline stage: a nil `interface {}` becomes
/// "no value".
fn dig(v: Value) -> Value {
    match v {
        Value::Nil => Value::Invalid,
        other => other,
    }
}

impl<'a> State<'a> {
    /// A fresh state for executing `tree` with `data` as `$` and dot.
    pub fn new(
        lookup: &'a Lookup<'a>,
        funcs: &'a FuncMap,
        opts: &'a ExecOptions,
        shared: &'a super::ExecShared,
        tree: &'a Tree,
        data: Value,
        nest: usize,
    ) -> Self {
        State {
            lookup,
            funcs,
            opts,
            shared,
            tree,
            at: At::None,
            vars: vec![("$", Dot::plain(data))],
            depth: 0,
            nest,
            out: String::new(),
            marks: None,
            dot_values: None,
            included: Vec::new(),
        }
    }

    /// Runs the template body.
    pub fn run(&mut self) -> R<()> {
        let dot = self.vars[0].1.clone();
        let tree = self.tree;
        let nest = self.nest;
        match stack::hop(nest, || self.walk_list(&dot, &tree.root).map(|_| ())) {
            Ok(r) => r,
            Err(_) => Err(self.errorf(stack::NO_STACK)),
        }
    }

    /// Go's `state.errorf`: location and context of the current node.
    pub fn errorf(&self, msg: impl Into<String>) -> Error {
        let msg = msg.into();
        let name = &self.tree.name;
        let message = match self.at.describe(&self.tree.text) {
            None => format!("template: {name}: {msg}"),
            Some((pos, ctx)) => format!(
                "template: {}: executing {} at <{}>: {}",
                self.tree.location(pos),
                quote(name),
                ctx,
                msg
            ),
        };
        Error::Exec {
            name: name.clone(),
            message,
        }
    }

    fn walk_list(&mut self, dot: &Dot, list: &'a [Node]) -> R<Flow> {
        for n in list {
            let f = self.walk(dot, n)?;
            if f != Flow::Normal {
                return Ok(f);
            }
        }
        Ok(Flow::Normal)
    }

    fn walk(&mut self, dot: &Dot, node: &'a Node) -> R<Flow> {
        self.at = At::Node(node);
        match node {
            Node::Action(pipe) => self.walk_action(dot, node, pipe)?,
            Node::Break(_) => return Ok(Flow::Break),
            Node::Continue(_) => return Ok(Flow::Continue),
            Node::If(b) => return self.deeper(|e| e.walk_if_with(false, dot, b)),
            Node::With(b) => return self.deeper(|e| e.walk_if_with(true, dot, b)),
            Node::Range(b) => return self.deeper(|e| e.walk_range(dot, node, b)),
            Node::Template(t) => {
                self.walk_template(dot, node, &t.name, t.pipe.as_ref())?;
            }
            Node::Text(text) => {
                let src: &'a str = &self.tree.text;
                self.out.push_str(text.of(src));
            }
        }
        Ok(Flow::Normal)
    }

    /// An action: its pipeline's value printed, unless it declares
    /// variables. Not inlined: `walk` is on the path of every nested
    /// `template` call and `if`, and this arm's locals would make each of
    /// those frames larger (Go allows 100,000 nested `template` calls).
    #[inline(never)]
    fn walk_action(&mut self, dot: &Dot, node: &'a Node, pipe: &'a Pipe) -> R<()> {
        // Helpers run by a condition's or a range's pipeline are not this
        // action's.
        self.included.clear();
        let val = self.eval_pipeline(dot, pipe)?;
        let start = self.out.len();
        if pipe.decl.is_empty() {
            self.at = At::Node(node);
            match val {
                Value::Invalid | Value::Nil => self.out.push_str("<no value>"),
                // text/template's printValue takes the address of a
                // field whose pointer type is a Stringer.
                Value::Object(o) if o.pointer_string().is_some() => {
                    self.out.push_str(&o.pointer_string().unwrap_or_default())
                }
                v => {
                    let text = try_to_string(&v).map_err(|e| self.errorf(e))?;
                    self.out.push_str(&text);
                }
            }
            if self.marks.is_some() {
                self.mark(pipe, start);
            }
        }
        Ok(())
    }

    /// Records the action `pipe` that printed `out[start..]`.
    #[cold]
    fn mark(&mut self, pipe: &'a Pipe, start: usize) {
        let src: &str = &self.tree.text;
        let mark = super::trace::ActionMark {
            file: self.tree.parse_name.clone(),
            line: super::trace::line_of(src, pipe.pos as usize),
            start,
            end: self.out.len(),
            values: super::trace::values_read(src, pipe, self.dot_values.as_deref()),
            inner: std::mem::take(&mut self.included),
        };
        if let Some(m) = &mut self.marks {
            m.push(mark);
        }
    }

    fn walk_if_with(&mut self, with: bool, dot: &Dot, b: &'a Branch) -> R<Flow> {
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let r = if val.truth().unwrap_or(false) {
            if with {
                let saved = match self.marks.is_some() {
                    true => {
                        let src: &str = &self.tree.text;
                        let now =
                            super::trace::values_of_pipe(src, &b.pipe, self.dot_values.as_deref());
                        Some(std::mem::replace(&mut self.dot_values, now))
                    }
                    false => None,
                };
                let r = self.walk_list(&Dot::plain(val), &b.list);
                if let Some(saved) = saved {
                    self.dot_values = saved;
                }
                r
            } else {
                self.walk_list(dot, &b.list)
            }
        } else if let Some(e) = &b.else_list {
            self.walk_list(dot, e)
        } else {
            Ok(Flow::Normal)
        };
        self.vars.truncate(mark);
        r
    }

    /// Sets the range variables for one iteration (Go's `oneIteration`).
    fn set_range_vars(&mut self, pipe: &Pipe, index: Value, elem: &Dot) -> R<()> {
        let src: &'a str = &self.tree.text;
        let n = self.vars.len();
        if !pipe.decl.is_empty() {
            if pipe.is_assign {
                if pipe.decl.len() > 1 {
                    self.set_var(pipe.decl[0].of(src), Dot::plain(index.clone()))?;
                } else {
                    self.set_var(pipe.decl[0].of(src), elem.clone())?;
                }
            } else if n >= 1 {
                self.vars[n - 1].1 = elem.clone();
            }
        }
        if pipe.decl.len() > 1 {
            if pipe.is_assign {
                self.set_var(pipe.decl[1].of(src), elem.clone())?;
            } else if n >= 2 {
                self.vars[n - 2].1 = Dot::plain(index);
            }
        }
        Ok(())
    }

    fn walk_range(&mut self, dot: &Dot, node: &'a Node, b: &'a Branch) -> R<Flow> {
        self.at = At::Node(node);
        let mark = self.vars.len();
        let val = self.eval_pipeline(dot, &b.pipe)?.resolved();
        let items: Vec<(Value, Dot)> = match &val {
            Value::List(l) => {
                let iface = l.elem == Elem::Interface;
                l.items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        (
                            Value::Int(i as i64),
                            Dot {
                                v: v.clone(),
                                iface,
                            },
                        )
                    })
                    .collect()
            }
            Value::Map(m) => {
                let iface = m.elem == Elem::Interface;
                m.entries()
                    .into_iter()
                    .map(|(k, v)| (Value::from(k), Dot { v, iface }))
                    .collect()
            }
            Value::Bytes(bs) => bs
                .iter()
                .enumerate()
                .map(|(i, x)| (Value::Int(i as i64), Dot::plain(Value::Uint8(*x))))
                .collect(),
            Value::Int(n) | Value::Int64(n) if self.opts.range_over_int => (0..*n)
                .map(|i| (Value::Int(i), Dot::plain(Value::Int(i))))
                .collect(),
            Value::Invalid => Vec::new(),
            other => {
                return Err(self.errorf(format!("range can't iterate over {}", to_string(other))))
            }
        };
        let body_mark = self.vars.len();
        let mut ran = false;
        for (index, elem) in items {
            ran = true;
            self.set_range_vars(&b.pipe, index, &elem)?;
            let f = self.walk_list(&elem, &b.list)?;
            self.vars.truncate(body_mark);
            if f == Flow::Break {
                break;
            }
        }
        if !ran {
            if let Some(e) = &b.else_list {
                self.walk_list(dot, e)?;
            }
        }
        self.vars.truncate(mark);
        Ok(Flow::Normal)
    }

    fn walk_template(
        &mut self,
        dot: &Dot,
        node: &'a Node,
        name: &str,
        pipe: Option<&'a Pipe>,
    ) -> R<()> {
        self.at = At::Node(node);
        let Some(tmpl) = self.lookup.get(name) else {
            return Err(self.errorf(format!("template {} not defined", quote(name))));
        };
        if self.depth == MAX_EXEC_DEPTH {
            return Err(self.errorf(format!(
                "exceeded maximum template depth ({MAX_EXEC_DEPTH})"
            )));
        }
        let new_dot = match pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Value::Invalid,
        };
        let new_dot = Dot::plain(new_dot);
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$", new_dot.clone())]);
        let saved_tree = std::mem::replace(&mut self.tree, tmpl);
        let saved_at = self.at;
        self.depth += 1;
        self.nest += 1;
        let nest = self.nest;
        let r = match stack::hop(nest, || self.walk_list(&new_dot, &tmpl.root)) {
            Ok(r) => r,
            Err(_) => Err(self.errorf(stack::NO_STACK)),
        };
        self.depth -= 1;
        self.nest -= 1;
        self.tree = saved_tree;
        self.vars = saved_vars;
        if r.is_ok() {
            self.at = saved_at;
        }
        r.map(|_| ())
    }

    /// Runs `f` one nesting level deeper, on a fresh big stack at hop
    /// points: Go's goroutine stacks grow, so Go executes thousands of
    /// nested `if`/`range`/`with` bodies and parenthesised pipelines.
    fn deeper<T: Send>(&mut self, f: impl FnOnce(&mut Self) -> R<T> + Send) -> R<T> {
        self.nest += 1;
        let nest = self.nest;
        let r = match stack::hop(nest, || f(self)) {
            Ok(r) => r,
            Err(f) => {
                drop(f);
                Err(self.errorf(stack::NO_STACK))
            }
        };
        self.nest -= 1;
        r
    }

    /// Not inlined, like [`State::walk_action`]: it keeps the frames of
    /// `walk_if_with` and `walk_template` small.
    #[inline(never)]
    pub(crate) fn eval_pipeline(&mut self, dot: &Dot, pipe: &'a Pipe) -> R<Value> {
        self.deeper(|e| e.eval_pipeline_here(dot, pipe))
    }

    fn eval_pipeline_here(&mut self, dot: &Dot, pipe: &'a Pipe) -> R<Value> {
        self.at = At::Pipe(pipe);
        let mut value: Option<Value> = None;
        for cmd in &pipe.cmds {
            let v = self.eval_command(dot, cmd, value.take())?;
            value = Some(dig(v));
        }
        let v = value.unwrap_or(Value::Invalid);
        let src: &'a str = &self.tree.text;
        for d in pipe.decl.iter() {
            if pipe.is_assign {
                self.set_var(d.of(src), Dot::plain(v.clone()))?;
            } else {
                self.vars.push((d.of(src), Dot::plain(v.clone())));
            }
        }
        Ok(v)
    }

    fn set_var(&mut self, name: &str, v: Dot) -> R<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = v;
                Ok(())
            }
            None => Err(self.errorf(format!("undefined variable: {name}"))),
        }
    }

    pub(crate) fn var_value(&self, name: &str) -> R<Dot> {
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.errorf(format!("undefined variable: {name}"))),
        }
    }

    pub(crate) fn not_a_function(&self, args: &[Arg], fin: &Option<Value>) -> R<()> {
        if args.len() > 1 || fin.is_some() {
            let first = args.first().map(|a| self.show(a)).unwrap_or_default();
            return Err(self.errorf(format!("can't give argument to non-function {first}")));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Dot, cmd: &'a Command, fin: Option<Value>) -> R<Value> {
        let Some(first) = cmd.args.first() else {
            return Err(self.errorf("empty command"));
        };
        match first {
            Arg::Field { .. } => return self.eval_field_node(dot, first, &cmd.args, fin),
            Arg::Chain { .. } => return self.eval_chain_node(dot, first, &cmd.args, fin),
            Arg::Identifier(name) => {
                let name = name.of(&self.tree.text);
                return self.eval_function(dot, first, name, At::Cmd(cmd), &cmd.args, fin);
            }
            Arg::Pipe(p) => {
                self.not_a_function(&cmd.args, &fin)?;
                return self.eval_pipeline(dot, p);
            }
            Arg::Variable { .. } => return self.eval_variable_node(dot, first, &cmd.args, fin),
            _ => {}
        }
        self.at = At::Arg(first);
        self.not_a_function(&cmd.args, &fin)?;
        match first {
            Arg::Bool { val, .. } => Ok(Value::Bool(*val)),
            Arg::Dot(_) => Ok(dot.v.clone()),
            Arg::Nil(_) => Err(self.errorf("nil is not a command")),
            Arg::Number(_) => self.ideal_constant(first),
            Arg::Str { quoted, unquoted } => Ok(Value::from(self.str_value(*quoted, unquoted))),
            other => Err(self.errorf(format!(
                "can't evaluate command {}",
                quote(&self.show(other))
            ))),
        }
    }

    /// The tree's source text, which the nodes' spans index.
    #[inline]
    pub(crate) fn src(&self) -> &'a str {
        &self.tree.text
    }

    /// A string literal's value.
    pub(crate) fn str_value(&self, quoted: Span, unquoted: &'a Option<Box<str>>) -> &'a str {
        Arg::str_value(quoted, unquoted, self.src())
    }

    /// Go's `String()` of an operand.
    pub(crate) fn show(&self, a: &Arg) -> String {
        ast::show(self.src(), a).to_string()
    }

    /// Go's `idealConstant`: untyped number literal → int or float64.
    pub(crate) fn ideal_constant(&mut self, n: &'a Arg) -> R<Value> {
        self.at = At::Arg(n);
        let Arg::Number(lit) = n else {
            return Ok(Value::Invalid);
        };
        let num = &lit.num;
        let t = lit.text.of(self.src());
        let b = t.as_bytes();
        let hex_int =
            b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && !t.contains(['p', 'P']);
        let rune_int = b.first() == Some(&b'\'');
        if num.is_float && !hex_int && !rune_int && t.contains(['.', 'e', 'E', 'p', 'P']) {
            return Ok(Value::Float(num.float));
        }
        if num.is_int {
            return Ok(Value::Int(num.int));
        }
        if num.is_uint {
            return Err(self.errorf(format!("{t} overflows int")));
        }
        Ok(Value::Invalid)
    }

    pub(crate) fn eval_field_node(
        &mut self,
        dot: &Dot,
        field: &'a Arg,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(field);
        let Arg::Field { ident, .. } = field else {
            return Ok(Value::Invalid);
        };
        let names = field_names(ident.of(self.src()));
        self.eval_field_chain(dot, dot.clone(), field, names, args, fin)
    }

    pub(crate) fn eval_chain_node(
        &mut self,
        dot: &Dot,
        chain: &'a Arg,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(chain);
        let Arg::Chain(c) = chain else {
            return Ok(Value::Invalid);
        };
        if let Arg::Nil(_) = c.node {
            let text = self.show(chain);
            return Err(self.errorf(format!("indirection through explicit nil in {text}")));
        }
        let pipe = self.eval_arg_untyped(dot, &c.node)?;
        let names = field_names(c.fields.of(self.src()));
        self.eval_field_chain(dot, Dot::plain(pipe), chain, names, args, fin)
    }

    pub(crate) fn eval_variable_node(
        &mut self,
        dot: &Dot,
        var: &'a Arg,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(var);
        let Arg::Variable { ident, .. } = var else {
            return Ok(Value::Invalid);
        };
        let text = ident.of(self.src());
        let Some(dot_at) = text.find('.') else {
            let value = self.var_value(text)?;
            self.not_a_function(args, &fin)?;
            return Ok(value.v);
        };
        let value = self.var_value(&text[..dot_at])?;
        let names = field_names(&text[dot_at..]);
        self.eval_field_chain(dot, value, var, names, args, fin)
    }

    fn eval_field_chain(
        &mut self,
        dot: &Dot,
        receiver: Dot,
        node: &'a Arg,
        mut names: std::str::Split<'a, char>,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        let Some(mut name) = names.next() else {
            return Ok(receiver.v);
        };
        let mut recv = receiver;
        for next in names {
            recv = self.eval_field(dot, name, node, &[], None, recv)?;
            name = next;
        }
        Ok(self.eval_field(dot, name, node, args, fin, recv)?.v)
    }

    /// Go's `evalField`: method, struct field or map key of `receiver`.
    fn eval_field(
        &mut self,
        dot: &Dot,
        name: &str,
        node: &'a Arg,
        args: &'a [Arg],
        fin: Option<Value>,
        receiver: Dot,
    ) -> R<Dot> {
        // Named only by errors: formatted when one is made (a map's name is
        // a `format!` on every field of every template otherwise).
        let iface = receiver.iface;
        let typ = |v: &Value| match iface {
            true => "interface {}".to_string(),
            false => v.type_name(),
        };
        let obj = match &receiver.v {
            Value::Invalid => {
                if self.opts.missing_key == MissingKey::Error {
                    return Err(self.errorf(format!("nil data; no entry for key {}", quote(name))));
                }
                return Ok(Dot::plain(Value::Invalid));
            }
            Value::Nil => {
                let typ = typ(&receiver.v);
                return Err(self.errorf(format!("nil pointer evaluating {typ}.{name}")));
            }
            Value::Object(o) => Some(o.clone()),
            _ => None,
        };
        if let Some(o) = &obj {
            if o.has_method(name) {
                return self
                    .call_method(dot, o.as_ref(), name, node, args, fin)
                    .map(Dot::plain);
            }
        }
        let has_args = args.len() > 1 || fin.is_some();
        if let Some(v) = obj.as_ref().and_then(|o| o.field(name)) {
            if has_args {
                return Err(self.errorf(format!(
                    "{name} has arguments but cannot be invoked as function"
                )));
            }
            return Ok(Dot::plain(v));
        }
        if let Value::Map(m) = receiver.v.resolved() {
            if has_args {
                return Err(self.errorf(format!("{name} is not a method but has arguments")));
            }
            let iface = m.elem == Elem::Interface;
            return match m.get(name) {
                Some(v) => Ok(Dot { v, iface }),
                None => match self.opts.missing_key {
                    MissingKey::Default => Ok(Dot::plain(Value::Invalid)),
                    MissingKey::Zero => Ok(Dot {
                        v: m.elem.zero(),
                        iface,
                    }),
                    MissingKey::Error => {
                        Err(self.errorf(format!("map has no entry for key {}", quote(name))))
                    }
                },
            };
        }
        let typ = typ(&receiver.v);
        Err(self.errorf(format!("can't evaluate field {name} in type {typ}")))
    }

    fn call_method(
        &mut self,
        dot: &Dot,
        obj: &dyn super::value::Object,
        name: &str,
        node: &'a Arg,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        let mut argv = Vec::new();
        for a in args.iter().skip(1) {
            argv.push(self.eval_arg(dot, super::funcs::ArgType::Any, a)?);
        }
        if let Some(f) = fin {
            argv.push(self.validate_type(f, super::funcs::ArgType::Any)?);
        }
        obj.call_method(name, &argv).map_err(|e| {
            self.at = At::Arg(node);
            self.errorf(format!("error calling {name}: {e}"))
        })
    }

    pub(crate) fn eval_function(
        &mut self,
        dot: &Dot,
        node: &'a Arg,
        name: &str,
        at: At<'a>,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        self.at = At::Arg(node);
        let funcs = self.funcs;
        let Some(f) = funcs.get(name) else {
            return Err(self.errorf(format!("{} is not a defined function", quote(name))));
        };
        self.eval_call(dot, f, at, name, args, fin)
    }

    /// Calls a registered function after Go's arity and type checks.
    fn eval_call(
        &mut self,
        dot: &Dot,
        f: &'a super::funcs::Func,
        at: At<'a>,
        name: &str,
        args: &'a [Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        let args = if args.is_empty() { args } else { &args[1..] };
        let num_in = args.len() + usize::from(fin.is_some());
        let params = &f.sig.params;
        let num_fixed = match f.sig.variadic {
            Some(_) => {
                if num_in < params.len() {
                    return Err(self.errorf(format!(
                        "wrong number of args for {name}: want at least {} got {}",
                        params.len(),
                        args.len()
                    )));
                }
                params.len()
            }
            None => {
                if num_in != params.len() {
                    return Err(self.errorf(format!(
                        "wrong number of args for {name}: want {} got {num_in}",
                        params.len()
                    )));
                }
                args.len()
            }
        };
        if f.builtin && (name == "and" || name == "or") {
            return self.and_or(dot, name == "or", args, fin);
        }
        let mut argv = Vec::with_capacity(num_in + 1);
        for (i, a) in args.iter().enumerate() {
            let t = if i < num_fixed {
                params.get(i).copied()
            } else {
                f.sig.variadic
            };
            let t = t.unwrap_or(super::funcs::ArgType::Any);
            argv.push(self.eval_arg(dot, t, a)?);
        }
        if let Some(v) = fin {
            let t = match f.sig.variadic {
                Some(vt) if num_in > num_fixed => vt,
                _ => params
                    .get(num_in - 1)
                    .copied()
                    .unwrap_or(super::funcs::ArgType::Any),
            };
            argv.push(self.validate_type(v, t)?);
        }
        if f.builtin && name == "call" {
            let first = args.first().map(|a| self.show(a)).unwrap_or_default();
            argv.insert(0, Value::from(first));
        }
        let result = {
            let shared = self.shared;
            let template = self.tree.name.clone();
            let mut ctx = FuncCtx {
                runner: self,
                shared,
                template: &template,
            };
            (f.imp)(&mut ctx, &argv)
        };
        result.map_err(|e| {
            self.at = at;
            self.errorf(format!("error calling {name}: {e}"))
        })
    }

    /// Go 1.18+ short-circuit `and`/`or`: returns the deciding operand.
    fn and_or(&mut self, dot: &Dot, is_or: bool, args: &'a [Arg], fin: Option<Value>) -> R<Value> {
        let mut v = Value::Invalid;
        for a in args {
            v = self.eval_arg(dot, super::funcs::ArgType::Reflect, a)?;
            if v.truth().unwrap_or(false) == is_or {
                return Ok(v);
            }
        }
        if let Some(f) = fin {
            v = self.validate_type(f, super::funcs::ArgType::Reflect)?;
        }
        Ok(v)
    }
}

impl TemplateRunner for State<'_> {
    fn execute_template(&mut self, name: &str, data: Value) -> Result<String, Error> {
        if self.marks.is_some() {
            let (out, marks) = super::execute_in_traced(
                self.lookup,
                (self.funcs, self.opts, self.shared),
                name,
                data,
                self.nest + 1,
            )?;
            self.included.push(super::trace::Included {
                output: out.clone(),
                marks,
            });
            return Ok(out);
        }
        super::execute_in(
            self.lookup,
            self.funcs,
            self.opts,
            self.shared,
            name,
            data,
            self.nest + 1,
        )
    }

    fn execute_text(&mut self, name: &str, text: &str, data: Value) -> Result<String, Error> {
        let funcs = self.funcs;
        let opts = self.opts;
        let overlay = self.shared.overlay(name, text, || {
            let trees = super::parse::parse(name, text, &|n: &str| funcs.contains(n), opts)?;
            let mut overlay: HashMap<String, Arc<Tree>> = HashMap::new();
            for t in trees {
                super::associate(&mut overlay, t);
            }
            Ok(Arc::new(overlay))
        })?;
        let lookup = Lookup {
            trees: &overlay,
            parent: Some(self.lookup),
            root_name: self.lookup.root_name,
        };
        super::execute_in(
            &lookup,
            self.funcs,
            self.opts,
            self.shared,
            name,
            data,
            self.nest + 1,
        )
    }
}
