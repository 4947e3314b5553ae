//! Function registry. Every template function has a Go-like signature
//! (parameter types) because Go type-checks and converts arguments before the
//! call (`wrong type for value; expected string; got float64`), and the
//! executor needs to reproduce that. Functions get a [`FuncCtx`] so that
//! host functions such as Helm's `include` and `tpl` can execute templates.

pub(crate) mod builtin;
mod comment_lines;
pub(crate) mod json;
pub(crate) mod sprig_bcrypt;
pub(crate) mod sprig_collections;
pub(crate) mod sprig_date;
pub(crate) mod sprig_dicts;
pub(crate) mod sprig_encoding;
pub(crate) mod sprig_float;
pub(crate) mod sprig_math;
pub(crate) mod sprig_regex;
pub(crate) mod sprig_semver;
pub(crate) mod sprig_strings;
pub(crate) mod sprig_text;
pub(crate) mod sprig_url;
pub(crate) mod toml;
mod xstrings;
pub(crate) mod yamlconv;

use std::collections::HashMap;
use std::sync::Arc;

use super::value::Value;
use super::Error;

/// Largest string a function may build (Go would try and exhaust memory).
pub const MAX_RESULT_BYTES: usize = 1 << 30;
/// Largest list a function may build.
pub const MAX_RESULT_ITEMS: usize = 1 << 26;

/// Go parameter type of a template function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// `reflect.Value`: receives the raw value, even invalid/nil (Go builtins).
    Reflect,
    /// `interface {}`: anything; invalid becomes nil.
    Any,
    /// `string`.
    String,
    /// `int`.
    Int,
    /// `float64`.
    Float64,
    /// `bool`.
    Bool,
    /// `map[string]interface {}`.
    Map,
}

impl ArgType {
    /// Go spelling of the type, for error messages.
    pub fn go_name(self) -> &'static str {
        match self {
            ArgType::Reflect => "reflect.Value",
            ArgType::Any => "interface {}",
            ArgType::String => "string",
            ArgType::Int => "int",
            ArgType::Float64 => "float64",
            ArgType::Bool => "bool",
            ArgType::Map => "map[string]interface {}",
        }
    }

    /// Go's `canBeNil` (`reflect.Value` counts, as in text/template).
    pub fn can_be_nil(self) -> bool {
        matches!(self, ArgType::Reflect | ArgType::Any | ArgType::Map)
    }
}

/// Parameters of a function: fixed ones, then an optional variadic tail.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Fixed parameters.
    pub params: Vec<ArgType>,
    /// Element type of a trailing `...T` parameter.
    pub variadic: Option<ArgType>,
}

impl Signature {
    /// Fixed parameters only.
    pub fn fixed(params: &[ArgType]) -> Self {
        Signature {
            params: params.to_vec(),
            variadic: None,
        }
    }

    /// Fixed parameters plus `...rest`.
    pub fn variadic(params: &[ArgType], rest: ArgType) -> Self {
        Signature {
            params: params.to_vec(),
            variadic: Some(rest),
        }
    }
}

/// Access to the running template set, for functions like `include`/`tpl`.
pub trait TemplateRunner {
    /// Executes the named template with `data` as dot (Go's `ExecuteTemplate`).
    fn execute_template(&mut self, name: &str, data: Value) -> Result<String, Error>;
    /// Parses `text` as a new template named `name` that can see (and
    /// shadow) the current set, then executes it (Helm's `tpl`).
    fn execute_text(&mut self, name: &str, text: &str, data: Value) -> Result<String, Error>;
}

/// What a function receives besides its arguments.
pub struct FuncCtx<'a> {
    /// Template execution hook.
    pub runner: &'a mut dyn TemplateRunner,
    /// Per-render state shared by nested executions.
    pub shared: &'a super::ExecShared,
    /// Name of the template whose action calls the function.
    pub template: &'a str,
}

/// Implementation of a function: converted arguments in, value or Go error
/// text out (the executor prefixes `error calling NAME: `).
pub type FuncImpl = dyn Fn(&mut FuncCtx<'_>, &[Value]) -> Result<Value, String> + Send + Sync;

/// A registered function.
#[derive(Clone)]
pub struct Func {
    /// Parameter types.
    pub sig: Signature,
    /// The code.
    pub imp: Arc<FuncImpl>,
    /// Go builtins are looked up after user functions but `and`/`or`/`call`
    /// get special evaluation only when they are the builtins.
    pub builtin: bool,
}

/// Name → function table. Build it once, share it (`Arc`) between parses
/// and executions.
#[derive(Clone, Default)]
pub struct FuncMap {
    funcs: HashMap<String, Func>,
}

impl FuncMap {
    /// The Go builtins (`and`, `or`, `not`, `len`, `index`, `slice`, `eq`...).
    pub fn with_builtins() -> Self {
        let mut m = FuncMap::default();
        builtin::register(&mut m);
        m
    }

    /// Go builtins plus Sprig v3.3.0 (`sprig.TxtFuncMap`), as Helm's
    /// function map layers them.
    pub fn with_sprig() -> Self {
        let mut m = FuncMap::with_builtins();
        sprig_strings::register(&mut m);
        sprig_collections::register(&mut m);
        sprig_math::register(&mut m);
        sprig_float::register(&mut m);
        sprig_semver::register(&mut m);
        sprig_date::register(&mut m);
        sprig_text::register(&mut m);
        sprig_encoding::register(&mut m);
        sprig_bcrypt::register(&mut m);
        sprig_regex::register(&mut m);
        sprig_dicts::register(&mut m);
        sprig_url::register(&mut m);
        json::register(&mut m);
        m
    }

    /// Adds or replaces a function (Go's `Funcs`: user functions shadow builtins).
    pub(crate) fn insert(
        &mut self,
        name: &str,
        sig: Signature,
        imp: impl Fn(&mut FuncCtx<'_>, &[Value]) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        self.funcs.insert(
            name.to_string(),
            Func {
                sig,
                imp: Arc::new(imp),
                builtin: false,
            },
        );
    }

    /// Registers a Go builtin.
    pub(crate) fn insert_builtin(
        &mut self,
        name: &str,
        sig: Signature,
        imp: impl Fn(&mut FuncCtx<'_>, &[Value]) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        self.funcs.insert(
            name.to_string(),
            Func {
                sig,
                imp: Arc::new(imp),
                builtin: true,
            },
        );
    }

    /// Registers `name` as another name of the existing function `of`.
    pub(crate) fn alias(&mut self, name: &str, of: &str) {
        if let Some(f) = self.funcs.get(of).cloned() {
            self.funcs.insert(name.to_string(), f);
        }
    }

    /// Removes a function (Helm deletes Sprig's `env`/`expandenv`).
    pub(crate) fn remove(&mut self, name: &str) {
        self.funcs.remove(name);
    }

    /// Looks a function up.
    pub(crate) fn get(&self, name: &str) -> Option<&Func> {
        self.funcs.get(name)
    }

    /// Whether the name is defined (parse-time check).
    pub fn contains(&self, name: &str) -> bool {
        self.funcs.contains_key(name)
    }

    /// Every defined name, sorted (tests call every function).
    #[cfg(test)]
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.funcs.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_functions_shadow_builtins() {
        let mut m = FuncMap::with_builtins();
        assert!(m.get("len").is_some_and(|f| f.builtin));
        m.insert("len", Signature::fixed(&[ArgType::Any]), |_, _| {
            Ok(Value::Int(7))
        });
        assert!(m.get("len").is_some_and(|f| !f.builtin));
        assert!(!m.contains("upper"));
        assert!(ArgType::Reflect.can_be_nil() && !ArgType::String.can_be_nil());
    }
}
