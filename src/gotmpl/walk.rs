//! The path of a recursive walk over template values: printing, JSON, YAML
//! and TOML conversion, deep copies and merges. Values may nest as deep as
//! a template loop makes them (`$d = dict "a" $d`, 20,000 times) and, since
//! Sprig's `set` mutates maps in place, a map may contain itself. A walk
//! asks this module before descending into a container: it refuses a map
//! already open on the path (a cycle) and nesting past [`MAX_DEPTH`], and
//! [`Path::descend`] moves the walk onto a big stack at the hop points of
//! [`super::stack`]. This module knows no output format and no error text
//! of the walks that use it.

use std::collections::HashSet;

use super::stack;
use super::Value;

/// Deepest nesting a walk follows. Go has no limit short of its 1 GB
/// goroutine stack; values this deep take seconds to build in a template.
pub const MAX_DEPTH: usize = 100_000;

/// Stack of each thread a walk continues on, every 1,024 levels: a level
/// of the walks here takes a few KiB even unoptimised.
const HOP_STACK_BYTES: usize = 64 << 20;

/// Why a walk stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// A map contains itself (directly or through other containers).
    Cycle,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// No thread with a bigger stack could be started (a tight
    /// `ulimit -v`) to go deeper.
    NoStack,
}

impl Nesting {
    /// Text for a message about a value of Go type `type_name`.
    pub fn describe(self, type_name: &str) -> String {
        match self {
            Nesting::Cycle => format!("{type_name} contains itself"),
            Nesting::TooDeep => format!("{type_name} nested more than {MAX_DEPTH} levels"),
            Nesting::NoStack => format!("{type_name} nested too deep for the stack available"),
        }
    }
}

/// The containers open on the way from the root to the current value.
#[derive(Debug, Default)]
pub struct Path {
    open: HashSet<usize>,
    depth: usize,
    deepest: usize,
}

/// Identity of a mutable container: the address of its shared map. Lists
/// are immutable once built, so every cycle passes through a map.
fn key(v: &Value) -> Option<usize> {
    match v {
        Value::Map(m) => Some(std::sync::Arc::as_ptr(m) as usize),
        _ => None,
    }
}

impl Path {
    /// Runs `f` one level below `v` (a list or map), on a big stack when
    /// the depth calls for it.
    pub fn descend<T: Send>(
        &mut self,
        v: &Value,
        f: impl FnOnce(&mut Path) -> T + Send,
    ) -> Result<T, Nesting> {
        if self.depth >= MAX_DEPTH {
            return Err(Nesting::TooDeep);
        }
        let k = key(v);
        if let Some(k) = k {
            if !self.open.insert(k) {
                return Err(Nesting::Cycle);
            }
        }
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        let depth = self.depth;
        let r = stack::hop_with(depth, HOP_STACK_BYTES, || f(self)).map_err(|_| Nesting::NoStack);
        self.depth -= 1;
        if let Some(k) = k {
            self.open.remove(&k);
        }
        r
    }

    /// [`Path::descend`] for a walker `s` that keeps its path in a field
    /// (`field` picks it): the path is lent to the step below and returned.
    pub fn descend_within<S: Send, T: Send>(
        s: &mut S,
        field: fn(&mut S) -> &mut Path,
        v: &Value,
        f: impl FnOnce(&mut S) -> T + Send,
    ) -> Result<T, Nesting> {
        let mut path = std::mem::take(field(s));
        let r = path.descend(v, |p| {
            *field(s) = std::mem::take(p);
            let r = f(s);
            *p = std::mem::take(field(s));
            r
        });
        *field(s) = path;
        r
    }

    /// The deepest nesting entered so far (1 for a flat list or map).
    pub fn deepest(&self) -> usize {
        self.deepest
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn depth_of(v: &Value, path: &mut Path) -> Result<usize, Nesting> {
        let children: Vec<Value> = match v {
            Value::Map(m) => m.entries().into_iter().map(|(_, v)| v).collect(),
            Value::List(l) => l.items.clone(),
            _ => return Ok(0),
        };
        path.descend(v, |p| {
            let mut max = 0;
            for c in &children {
                max = max.max(depth_of(c, p)?);
            }
            Ok(max + 1)
        })?
    }

    #[test]
    fn deep_values_walk_on_a_small_stack() {
        let r = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let mut v = Value::map(BTreeMap::new());
                for _ in 0..20_000 {
                    v = Value::list(vec![v]);
                }
                depth_of(&v, &mut Path::default())
            })
            .ok()
            .and_then(|h| h.join().ok());
        assert_eq!(r, Some(Ok(20_001)));
    }

    #[test]
    fn a_map_containing_itself_is_a_cycle() {
        let v = Value::map(BTreeMap::new());
        if let Value::Map(m) = &v {
            m.insert("x".into(), Value::list(vec![v.clone()]));
        }
        assert_eq!(depth_of(&v, &mut Path::default()), Err(Nesting::Cycle));
        if let Value::Map(m) = &v {
            m.remove("x"); // break the cycle so the map is freed
        }
    }

    #[test]
    fn the_same_map_twice_side_by_side_is_no_cycle() {
        let inner = Value::map(BTreeMap::new());
        let v = Value::list(vec![inner.clone(), inner]);
        assert_eq!(depth_of(&v, &mut Path::default()), Ok(2));
    }

    #[test]
    fn too_deep_is_refused() {
        let mut path = Path {
            depth: MAX_DEPTH,
            ..Path::default()
        };
        let v = Value::list(vec![]);
        assert_eq!(path.descend(&v, |_| ()), Err(Nesting::TooDeep));
    }
}
