//! Argument evaluation and Go's assignability checks (`evalArg`,
//! `validateType`, `evalEmptyInterface` in `text/template/exec.go`).

use super::ast::Arg;
use super::exec::{At, Dot, State};
use super::funcs::ArgType;
use super::value::{Elem, Value};
use super::Error;

type R<T> = Result<T, Error>;

impl<'a> State<'a> {
    /// Go's `evalArg` for a parameter of type `typ`.
    pub(crate) fn eval_arg(&mut self, dot: &Dot, typ: ArgType, n: &'a Arg) -> R<Value> {
        self.at = At::Arg(n);
        match n {
            Arg::Dot(_) => return self.validate_type(dot.v.clone(), typ),
            Arg::Nil(_) => {
                if typ.can_be_nil() {
                    return Ok(nil_of(typ));
                }
                return Err(self.errorf(format!("cannot assign nil to {}", typ.go_name())));
            }
            Arg::Field { .. }
            | Arg::Variable { .. }
            | Arg::Pipe(_)
            | Arg::Identifier(_)
            | Arg::Chain(_) => {
                let v = self.eval_node_value(dot, n)?;
                return self.validate_type(v, typ);
            }
            _ => {}
        }
        match typ {
            ArgType::Bool => match n {
                Arg::Bool { val, .. } => Ok(Value::Bool(*val)),
                _ => Err(self.errorf(format!("expected bool; found {}", self.show(n)))),
            },
            ArgType::Int => match n {
                Arg::Number(lit) if lit.num.is_int => Ok(Value::Int(lit.num.int)),
                _ => Err(self.errorf(format!("expected integer; found {}", self.show(n)))),
            },
            ArgType::Float64 => match n {
                Arg::Number(lit) if lit.num.is_float => Ok(Value::Float(lit.num.float)),
                _ => Err(self.errorf(format!("expected float; found {}", self.show(n)))),
            },
            ArgType::String => match n {
                Arg::Str { quoted, unquoted } => Ok(Value::from(self.str_value(*quoted, unquoted))),
                _ => Err(self.errorf(format!("expected string; found {}", self.show(n)))),
            },
            ArgType::Any | ArgType::Reflect => self.eval_empty_interface(n),
            ArgType::Map => Err(self.errorf(format!(
                "can't handle {} for arg of type {}",
                self.show(n),
                typ.go_name()
            ))),
        }
    }

    /// Evaluates a node that yields a value by evaluation (not a literal).
    fn eval_node_value(&mut self, dot: &Dot, n: &'a Arg) -> R<Value> {
        match n {
            Arg::Field { .. } => self.eval_field_node(dot, n, std::slice::from_ref(n), None),
            Arg::Variable { .. } => self.eval_variable_node(dot, n, &[], None),
            Arg::Pipe(p) => self.eval_pipeline(dot, p),
            Arg::Identifier(name) => {
                let name = name.of(self.src());
                self.eval_function(dot, n, name, At::Arg(n), &[], None)
            }
            Arg::Chain(_) => self.eval_chain_node(dot, n, &[], None),
            _ => self.eval_empty_interface(n),
        }
    }

    /// Go's `evalArg` with a nil type (only for the head of a chain).
    pub(crate) fn eval_arg_untyped(&mut self, dot: &Dot, n: &'a Arg) -> R<Value> {
        self.at = At::Arg(n);
        match n {
            Arg::Dot(_) => Ok(dot.v.clone()),
            _ => self.eval_node_value(dot, n),
        }
    }

    /// Go's `evalEmptyInterface` for literals.
    fn eval_empty_interface(&mut self, n: &'a Arg) -> R<Value> {
        self.at = At::Arg(n);
        match n {
            Arg::Bool { val, .. } => Ok(Value::Bool(*val)),
            Arg::Number(_) => self.ideal_constant(n),
            Arg::Str { quoted, unquoted } => Ok(Value::from(self.str_value(*quoted, unquoted))),
            _ => Err(self.errorf(format!(
                "can't handle assignment of {} to empty interface argument",
                self.show(n)
            ))),
        }
    }

    /// Go's `validateType`: converts `v` for a parameter of type `typ` or
    /// fails with Go's message.
    pub(crate) fn validate_type(&mut self, v: Value, typ: ArgType) -> R<Value> {
        if let Value::Invalid = v {
            if typ.can_be_nil() {
                return Ok(nil_of(typ));
            }
            return Err(self.errorf(format!("invalid value; expected {}", typ.go_name())));
        }
        let ok = match typ {
            ArgType::Reflect | ArgType::Any => return Ok(v),
            ArgType::String => matches!(v, Value::Str(_)),
            ArgType::Int => matches!(v, Value::Int(_)),
            ArgType::Float64 => matches!(v, Value::Float(_)),
            ArgType::Bool => matches!(v, Value::Bool(_)),
            ArgType::Map => {
                matches!(v.resolved(), Value::Map(ref m) if m.elem == Elem::Interface)
            }
        };
        if ok {
            return Ok(match typ {
                ArgType::Map => v.resolved(),
                _ => v,
            });
        }
        let got = match v {
            Value::Nil => "interface {}".to_string(),
            ref other => other.type_name(),
        };
        Err(self.errorf(format!(
            "wrong type for value; expected {}; got {}",
            typ.go_name(),
            got
        )))
    }
}

/// The nil value of a nil-able parameter type.
fn nil_of(typ: ArgType) -> Value {
    match typ {
        ArgType::Reflect => Value::Invalid,
        ArgType::Map => Value::map(Default::default()),
        _ => Value::Nil,
    }
}
