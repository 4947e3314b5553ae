//! Go `text/template` engine. This module owns Go template semantics –
//! lexing, parsing, execution, Go's `fmt` formatting and the builtin
//! functions – byte for byte as Go 1.23 (the Go of helm v3.17.3) behaves,
//! including its error texts. It knows nothing about charts: Helm-specific
//! behaviour enters only through functions a host registers in a
//! [`FuncMap`] (which may execute templates through [`FuncCtx`], as helm's
//! `include` and `tpl` do) and through [`Value::Object`] host objects.
//!
//! Parse once into an immutable, `Send + Sync` [`TemplateSet`]; execute many
//! times, in parallel, each execution with its own data.
//!
//! The function library ([`FuncMap::with_sprig`]) is Go's builtins and
//! Sprig v3.3.0 (`funcs/`, private). What hosts may reuse outside a
//! template is public under [`convert`] (Go-compatible YAML/JSON/TOML
//! conversion of values) and [`golib`] (base64, `path.Clean`, semver).
//!
//! Known differences from Go: strings are UTF-8 (a `"\xff"` literal or a
//! byte-cut `slice` of a string is repaired with U+FFFD); complex number
//! literals are rejected; `call` has no function values to call (only its
//! errors exist); `%x` with a precision on floats ignores the precision.
//! Unicode answers (case mappings, categories, `IsPrint`) are Go's
//! Unicode 15.0 tables (`gounicode.rs`), not the Rust toolchain's.
//! In the function library: every time zone is UTC; key/certificate
//! generators return marked placeholder PEM text and `encryptAES`,
//! `decryptAES` fail (all warn: they are random or keyed); `bcrypt` and
//! `htpasswd` hash with a random salt, as sprig does, and warn; `fromToml` errors
//! outside the common classes keep the `toml` crate's wording; regex compile
//! errors are worded by the `regex` crate.
//! Non-deterministic functions (`now`, `rand*`, `uuidv4`, `shuffle`, ...)
//! work and record a warning naming the template in [`ExecShared`].

mod ast;
pub(crate) mod convert;
mod eval;
mod exec;
mod float;
pub(crate) mod fmt;
mod funcs;
pub(crate) mod golib;
mod gounicode;
mod lexer;
mod parse;
mod quote;
mod stack;
pub(crate) mod strconv;
mod trace;
pub(crate) mod value;
mod walk;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

pub(crate) use ast::Tree;
pub use funcs::FuncMap;
pub(crate) use funcs::{ArgType, Signature};
pub(crate) use trace::ActionMark;
pub use value::{Elem, List, Map, Object, Value};

/// Errors, carrying Go's full message text.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// `template: NAME:LINE: ...` from the parser.
    #[error("{0}")]
    Parse(String),
    /// `template: NAME:LINE:COL: executing "NAME" at <...>: ...`.
    #[error("{message}")]
    Exec {
        /// Template that was executing.
        name: String,
        /// Go's full message.
        message: String,
    },
    /// `template: no template "x" associated with template "root"`.
    #[error("{0}")]
    NotFound(String),
}

/// Go's `missingkey` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// `missingkey=default`/`invalid`: a missing key is "no value".
    Default,
    /// `missingkey=zero` (what Helm uses): the element type's zero value.
    #[default]
    Zero,
    /// `missingkey=error`.
    Error,
}

/// Execution options.
#[derive(Clone, Debug, Default)]
pub struct ExecOptions {
    /// How a missing map key evaluates.
    pub missing_key: MissingKey,
    /// `range` over an integer (Go 1.24+; an error in Go 1.23, i.e. helm 3.17).
    pub range_over_int: bool,
    /// Go 1.24+'s `maxStackDepth` for parenthesised pipelines (10,000; helm
    /// 4); `None` for Go 1.23 (helm 3.17), which parses until its stack
    /// runs out, and hydrate up to its own limit.
    pub max_paren_depth: Option<usize>,
    /// Go 1.24+ counts the newlines inside `{{/* */}}` comments in the line
    /// numbers of parse errors; Go 1.23 (helm 3.17) does not
    /// (`lexer::LexOptions::comment_newlines`).
    pub comment_newlines: bool,
}

/// Go 1.24+'s `text/template/parse` `maxStackDepth`.
pub(crate) const GO_MAX_PAREN_DEPTH: usize = 10_000;

/// State shared by every nested execution of one render: counters that
/// host functions keep (Helm's per-name `include` depth) and warnings
/// (non-deterministic functions). Thread-safe because deep recursion
/// continues on helper threads.
#[derive(Debug, Default)]
pub(crate) struct ExecShared {
    counters: std::sync::Mutex<HashMap<String, i64>>,
    warnings: std::sync::Mutex<Vec<crate::warning::Warning>>,
    /// Parsed texts of [`TemplateRunner::execute_text`] (helm's `tpl`), by
    /// (name, text): a chart calls `tpl` on the same values string for
    /// every document, and parsing depends only on the text.
    overlays: Arc<std::sync::Mutex<HashMap<(String, String), Overlay>>>,
    /// Set for a speculative execution ([`ExecShared::guarded`]): maps
    /// made before this mark may be shared with templates running at the
    /// same time, so functions must not change them.
    guard: Option<u64>,
    /// A function was stopped from changing such a map.
    blocked: std::sync::atomic::AtomicBool,
}

/// The templates one text defines, as an overlay over the set.
pub(crate) type Overlay = Arc<HashMap<String, Arc<Tree>>>;

/// At most this many texts are kept per render (each at most
/// [`OVERLAY_MAX_TEXT`] bytes); others are parsed on every call.
const OVERLAY_MAX: usize = 4096;
const OVERLAY_MAX_TEXT: usize = 64 * 1024;

impl ExecShared {
    /// Adds `delta` to the counter `key` and returns the new value.
    pub fn count(&self, key: &str, delta: i64) -> i64 {
        let mut c = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let v = c.entry(key.to_string()).or_insert(0);
        *v += delta;
        *v
    }

    /// State for one of several templates run at once, sharing this
    /// state's `tpl` parses but with counters and warnings of its own:
    /// functions may change only maps made after `watermark`
    /// ([`value::map_watermark`]), i.e. by this execution; an attempt to
    /// change an older one is refused and remembered ([`ExecShared::blocked`]),
    /// and the host must then run the template again alone.
    pub fn guarded(&self, watermark: u64) -> ExecShared {
        ExecShared {
            overlays: Arc::clone(&self.overlays),
            guard: Some(watermark),
            ..ExecShared::default()
        }
    }

    /// Whether a function may change `map` in place (Go's map writes in
    /// `set`, `unset`, `merge`...); false (and remembered) when this is a
    /// guarded execution and the map is older than its watermark.
    pub fn may_mutate(&self, map: &value::Map) -> bool {
        match self.guard {
            Some(w) if map.epoch() < w => {
                self.blocked
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                false
            }
            _ => true,
        }
    }

    /// Whether this is a guarded (speculative) execution.
    pub fn is_guarded(&self) -> bool {
        self.guard.is_some()
    }

    /// Whether a guarded execution tried to change a map older than its
    /// watermark: its output is not what running it alone would give.
    pub fn blocked(&self) -> bool {
        self.blocked.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Records a warning once.
    pub fn warn(&self, warning: crate::warning::Warning) {
        let mut w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !w.contains(&warning) {
            w.push(warning);
        }
    }

    /// The overlay `text` parses to under `name`, parsed by `parse` only
    /// the first time (parse errors are not kept).
    pub(crate) fn overlay(
        &self,
        name: &str,
        text: &str,
        parse: impl FnOnce() -> Result<Overlay, Error>,
    ) -> Result<Overlay, Error> {
        let key = (name.to_string(), text.to_string());
        let lock = || self.overlays.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(o) = lock().get(&key) {
            return Ok(Arc::clone(o));
        }
        let o = parse()?;
        let mut cache = lock();
        if cache.len() < OVERLAY_MAX && text.len() <= OVERLAY_MAX_TEXT {
            cache.insert(key, Arc::clone(&o));
        }
        Ok(o)
    }

    /// The warnings recorded so far, in order.
    pub fn warnings(&self) -> Vec<crate::warning::Warning> {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A set of named templates sharing one function table (Go's associated
/// templates). Immutable after parsing, hence shareable across threads.
pub struct TemplateSet {
    name: String,
    funcs: Arc<FuncMap>,
    trees: HashMap<String, Arc<Tree>>,
}

/// Go's `associate`: a new definition replaces an old one unless it is
/// empty and the old one exists.
pub(crate) fn associate(trees: &mut HashMap<String, Arc<Tree>>, tree: Tree) {
    associate_shared(trees, Arc::new(tree));
}

/// [`associate`] for a tree parsed earlier and shared.
fn associate_shared(trees: &mut HashMap<String, Arc<Tree>>, tree: Arc<Tree>) {
    if tree.is_empty() && trees.contains_key(&tree.name) {
        return;
    }
    trees.insert(tree.name.clone(), tree);
}

impl TemplateSet {
    /// An empty set whose root template is called `name` (Helm: `gotpl`).
    pub fn new(name: &str, funcs: Arc<FuncMap>) -> Self {
        TemplateSet {
            name: name.to_string(),
            funcs,
            trees: HashMap::new(),
        }
    }

    /// Go's `t.New(name).Parse(text)`: adds the template `name` and every
    /// `define`/`block` in it; later definitions replace earlier ones.
    pub fn parse(&mut self, name: &str, text: &str) -> Result<(), Error> {
        self.parse_with(name, text, &ExecOptions::default())
    }

    /// [`TemplateSet::parse`] with the parser limits of `opts`' Go release.
    pub fn parse_with(&mut self, name: &str, text: &str, opts: &ExecOptions) -> Result<(), Error> {
        let funcs = self.funcs.clone();
        let has_func = |n: &str| funcs.contains(n);
        let trees = parse::parse(name, text, &has_func, opts)?;
        for t in trees {
            associate(&mut self.trees, t);
        }
        Ok(())
    }

    /// What [`TemplateSet::parse`] would add for `name`, without adding it:
    /// parsing depends only on the text and the set's function names, so
    /// a host may parse once and add the same trees to many sets.
    pub(crate) fn parse_detached(
        &self,
        name: &str,
        text: &str,
        opts: &ExecOptions,
    ) -> Result<Vec<Arc<Tree>>, Error> {
        let funcs = &self.funcs;
        let trees = parse::parse(name, text, &|n: &str| funcs.contains(n), opts)?;
        Ok(trees.into_iter().map(Arc::new).collect())
    }

    /// Adds trees from [`TemplateSet::parse_detached`], in order, exactly as
    /// parsing their text here would have.
    pub(crate) fn add_parsed(&mut self, trees: &[Arc<Tree>]) {
        for t in trees {
            associate_shared(&mut self.trees, Arc::clone(t));
        }
    }

    /// Whether a template of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// Names of all templates, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.trees.keys().cloned().collect();
        v.sort();
        v
    }

    /// Go's `ExecuteTemplate`: runs template `name` with `data` as dot.
    pub fn execute(&self, name: &str, data: Value, opts: &ExecOptions) -> Result<String, Error> {
        self.execute_shared(name, data, opts, &ExecShared::default())
    }

    /// [`TemplateSet::execute`] with caller-owned per-render state
    /// (include counters, warnings).
    pub(crate) fn execute_shared(
        &self,
        name: &str,
        data: Value,
        opts: &ExecOptions,
        shared: &ExecShared,
    ) -> Result<String, Error> {
        let lookup = exec::Lookup {
            trees: &self.trees,
            parent: None,
            root_name: &self.name,
        };
        execute_in(&lookup, &self.funcs, opts, shared, name, data, 0)
    }

    /// [`TemplateSet::execute_shared`] that also returns each action it
    /// printed (with those of the helpers each ran by `include`), for
    /// provenance.
    pub(crate) fn execute_traced(
        &self,
        name: &str,
        data: Value,
        opts: &ExecOptions,
        shared: &ExecShared,
    ) -> Result<(String, Vec<ActionMark>), Error> {
        let lookup = exec::Lookup {
            trees: &self.trees,
            parent: None,
            root_name: &self.name,
        };
        let Some(tree) = lookup.get(name) else {
            return execute_in(&lookup, &self.funcs, opts, shared, name, data, 0)
                .map(|out| (out, Vec::new()));
        };
        let data = match data {
            Value::Nil => Value::Invalid,
            other => other,
        };
        let mut state = exec::State::new(&lookup, &self.funcs, opts, shared, tree, data, 0);
        state.marks = Some(Vec::new());
        state.run()?;
        Ok((state.out, state.marks.unwrap_or_default()))
    }
}

/// Executes `name` found through `lookup` in a fresh state (Go's
/// `ExecuteTemplate`: template depth restarts, output is separate).
pub(crate) fn execute_in(
    lookup: &exec::Lookup<'_>,
    funcs: &FuncMap,
    opts: &ExecOptions,
    shared: &ExecShared,
    name: &str,
    data: Value,
    nest: usize,
) -> Result<String, Error> {
    let Some(tree) = lookup.get(name) else {
        return Err(Error::NotFound(format!(
            "template: no template {} associated with template {}",
            fmt::quote(name),
            fmt::quote(lookup.root_name)
        )));
    };
    // Go: reflect.ValueOf(nil) is the invalid value.
    let data = match data {
        Value::Nil => Value::Invalid,
        other => other,
    };
    let mut state = exec::State::new(lookup, funcs, opts, shared, tree, data, nest);
    state.run()?;
    Ok(state.out)
}

/// [`execute_in`], tracing the actions printed (a helper run by `include`
/// from a traced template).
pub(crate) fn execute_in_traced(
    lookup: &exec::Lookup<'_>,
    (funcs, opts, shared): (&FuncMap, &ExecOptions, &ExecShared),
    name: &str,
    data: Value,
    nest: usize,
) -> Result<(String, Vec<ActionMark>), Error> {
    let Some(tree) = lookup.get(name) else {
        return execute_in(lookup, funcs, opts, shared, name, data, nest).map(|o| (o, Vec::new()));
    };
    let data = match data {
        Value::Nil => Value::Invalid,
        other => other,
    };
    let mut state = exec::State::new(lookup, funcs, opts, shared, tree, data, nest);
    state.marks = Some(Vec::new());
    state.run()?;
    Ok((state.out, state.marks.unwrap_or_default()))
}
