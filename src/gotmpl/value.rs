//! The dynamic value model: the subset of Go's `reflect.Value` world that Helm
//! templates see (values files, `--set`, Sprig results, Helm's own objects).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

/// Element type of a Go slice or map value; only used for `%T`, zero values
/// and the few type checks Go performs on containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `interface {}` – what YAML/JSON decoding and Sprig's `list`/`dict` produce.
    Interface,
    /// `string` – e.g. Sprig's `splitList`, `keys`, Helm's `.Chart.Annotations`.
    String,
    /// `int` – e.g. Sprig's `until`.
    Int,
    /// `int64`.
    Int64,
    /// `float64`.
    Float64,
    /// `bool`.
    Bool,
    /// `[]uint8` elements (Helm's `.Files` map).
    Bytes,
}

impl Elem {
    /// Go's spelling of the type.
    pub fn go_name(self) -> &'static str {
        match self {
            Elem::Interface => "interface {}",
            Elem::String => "string",
            Elem::Int => "int",
            Elem::Int64 => "int64",
            Elem::Float64 => "float64",
            Elem::Bool => "bool",
            Elem::Bytes => "[]uint8",
        }
    }

    /// Go's zero value of the element type (`reflect.Zero`).
    pub fn zero(self) -> Value {
        match self {
            Elem::Interface => Value::Nil,
            Elem::String => Value::from(""),
            Elem::Int => Value::Int(0),
            Elem::Int64 => Value::Int64(0),
            Elem::Float64 => Value::Float(0.0),
            Elem::Bool => Value::Bool(false),
            Elem::Bytes => Value::Bytes(Arc::from(Vec::new())),
        }
    }
}

/// A Go slice: element type plus items. Immutable once built (Go code that
/// "changes" a slice in templates, e.g. Sprig's `append`, builds a new one).
#[derive(Debug)]
pub struct List {
    /// Static element type.
    pub elem: Elem,
    /// The elements.
    pub items: Vec<Value>,
}

/// A Go `map[string]T`. Go maps are reference types and Sprig's `set`/`unset`
/// mutate them in place, visibly through every reference, so the entries sit
/// behind a lock. Keys are kept sorted: Go prints and ranges maps by sorted key.
#[derive(Debug)]
pub struct Map {
    /// Static element type.
    pub elem: Elem,
    /// The [`MAP_EPOCH`] the map was made in: a host running templates
    /// at once tells maps that existed before they started (possibly
    /// shared by all) from maps one of them made.
    epoch: u64,
    entries: RwLock<BTreeMap<String, Value>>,
}

/// Advanced only by [`map_watermark`]; read (not written: no contended
/// cache line) by every [`Map::new`].
static MAP_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Starts a new epoch and returns it: every map made before this call
/// (on this thread, or on one that handed its work over before) has a
/// smaller [`Map::epoch`], every map made after it (on any thread that
/// starts later) this one or a later one.
pub fn map_watermark() -> u64 {
    MAP_EPOCH.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
}

impl Map {
    /// A new map with the given entries.
    pub fn new(elem: Elem, entries: BTreeMap<String, Value>) -> Self {
        Map {
            elem,
            epoch: MAP_EPOCH.load(std::sync::atomic::Ordering::Acquire),
            entries: RwLock::new(entries),
        }
    }

    /// When the map was made, comparable with [`map_watermark`].
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Value stored under `key`, if present.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.read().get(key).cloned()
    }

    /// Stores `value` under `key` (Go `m[key] = value`).
    pub fn insert(&self, key: String, value: Value) {
        self.write().insert(key, value);
    }

    /// Deletes `key` (Go `delete(m, key)`), returning the old value.
    pub fn remove(&self, key: &str) -> Option<Value> {
        self.write().remove(key)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// True when the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.read().contains_key(key)
    }

    /// A copy of the entries in sorted key order. Snapshotting keeps
    /// iteration free of lock re-entrancy when templates mutate while ranging.
    pub fn entries(&self) -> Vec<(String, Value)> {
        self.read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Value>> {
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Value>> {
        self.entries.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// Frees nested lists and maps with a loop instead of recursion: a value
/// built 100,000 deep in a template would otherwise overflow the stack
/// when its last reference goes. Containers still shared elsewhere stay.
fn drop_iteratively(mut pending: Vec<Value>) {
    while let Some(v) = pending.pop() {
        match v {
            Value::List(l) => {
                if let Some(mut l) = Arc::into_inner(l) {
                    pending.append(&mut l.items);
                }
            }
            Value::Map(m) => {
                if let Some(mut m) = Arc::into_inner(m) {
                    let entries = m.entries.get_mut().unwrap_or_else(|e| e.into_inner());
                    pending.extend(std::mem::take(entries).into_values());
                }
            }
            _ => {}
        }
    }
}

impl Drop for List {
    fn drop(&mut self) {
        if self
            .items
            .iter()
            .any(|v| matches!(v, Value::List(_) | Value::Map(_)))
        {
            drop_iteratively(std::mem::take(&mut self.items));
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        let entries = self.entries.get_mut().unwrap_or_else(|e| e.into_inner());
        if entries
            .values()
            .any(|v| matches!(v, Value::List(_) | Value::Map(_)))
        {
            drop_iteratively(std::mem::take(entries).into_values().collect());
        }
    }
}

/// A host object with Go fields and methods (Helm's `.Capabilities`,
/// `.Files`, `.Chart`, Sprig's semver objects, ...).
pub trait Object: Send + Sync + fmt::Debug {
    /// Go type name for `%T` and error messages, e.g. `*chart.Metadata`.
    fn type_name(&self) -> String;
    /// Whether a method of that name exists (Go looks methods up before fields).
    fn has_method(&self, _name: &str) -> bool {
        false
    }
    /// Calls a method. Only called when `has_method` said yes.
    fn call_method(&self, name: &str, _args: &[Value]) -> Result<Value, String> {
        Err(format!("can't call method {name}"))
    }
    /// A struct field or map entry of that name.
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    /// The value used for `range`, `len`, `index`, truth and printing when the
    /// object is a named map/slice/string type (e.g. Helm's `Files` map).
    fn underlying(&self) -> Option<Value> {
        None
    }
    /// Downcasting hook for host code that owns the concrete type.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// What `json.Marshal` sees: a JSON-like value (Helm's `toYaml`/`toJson`
    /// of a struct or a `MarshalJSON` type). `None`: marshals as `{}`.
    fn marshal(&self) -> Option<Value> {
        None
    }
    /// `%v` text when the type implements `fmt.Stringer`.
    fn to_go_string(&self) -> Option<String> {
        None
    }
    /// `String()` of a pointer receiver on a struct field: text/template
    /// prints the (addressable) field through it, but a copy passed to a
    /// function prints as the struct (`struct_fields`).
    fn pointer_string(&self) -> Option<String> {
        None
    }
    /// A Go struct value's fields in declaration order (unexported ones
    /// too), for `%v` (`{a b}`) and `%+v` (`{A:a B:b}`).
    fn struct_fields(&self) -> Option<Vec<(String, Value)>> {
        None
    }
    /// What `json.Marshal` prints, as object members in Go's field order;
    /// `None`: `marshal`'s map, keys sorted.
    fn marshal_fields(&self) -> Option<Vec<(String, Value)>> {
        None
    }
}

/// A Go value as templates see it.
#[derive(Clone, Debug)]
pub enum Value {
    /// Go's invalid `reflect.Value` ("no value at all"): what a missing key
    /// yields after a pipeline, or the dot of `template "x"` without data.
    /// Printed as `<no value>`; distinct from a nil interface in field access.
    Invalid,
    /// A nil `interface {}` (YAML `null`, a missing key under `missingkey=zero`).
    Nil,
    /// `bool`.
    Bool(bool),
    /// Go `int` (template literals, `len`, Sprig's `int`).
    Int(i64),
    /// Go `int64` (`--set` integers, Sprig's `int64`/`add`).
    Int64(i64),
    /// Go `uint8`/`byte` (`index` of a string).
    Uint8(u8),
    /// Go `float64` (every number from a values file).
    Float(f64),
    /// Go `string`.
    Str(Arc<str>),
    /// Go `[]byte`.
    Bytes(Arc<[u8]>),
    /// Go slice.
    List(Arc<List>),
    /// Go `map[string]T`.
    Map(Arc<Map>),
    /// Host object.
    Object(Arc<dyn Object>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(Arc::from(s))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(Arc::from(s))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl Value {
    /// A `[]interface {}`.
    pub fn list(items: Vec<Value>) -> Value {
        Value::typed_list(Elem::Interface, items)
    }

    /// A slice with the given element type.
    pub fn typed_list(elem: Elem, items: Vec<Value>) -> Value {
        Value::List(Arc::new(List { elem, items }))
    }

    /// A `map[string]interface {}`.
    pub fn map(entries: BTreeMap<String, Value>) -> Value {
        Value::Map(Arc::new(Map::new(Elem::Interface, entries)))
    }

    /// A map with the given element type.
    pub fn typed_map(elem: Elem, entries: BTreeMap<String, Value>) -> Value {
        Value::Map(Arc::new(Map::new(elem, entries)))
    }

    /// Go `%T` spelling of the dynamic type.
    pub fn type_name(&self) -> String {
        match self {
            Value::Invalid | Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Uint8(_) => "uint8".into(),
            Value::Float(_) => "float64".into(),
            Value::Str(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(l) => format!("[]{}", l.elem.go_name()),
            Value::Map(m) => format!("map[string]{}", m.elem.go_name()),
            Value::Object(o) => o.type_name(),
        }
    }

    /// Go `reflect.Kind` name (Sprig's `kindOf` and some error texts).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Invalid => "invalid",
            Value::Nil => "interface",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint8(_) => "uint8",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Bytes(_) | Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(o) => match o.underlying() {
                Some(v) => v.kind_name(),
                None => "ptr",
            },
        }
    }

    /// True for `Invalid` and `Nil`.
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Invalid | Value::Nil)
    }

    /// The string content, if this is a Go string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Go's template truth (`text/template.IsTrue`); `None` when Go cannot
    /// decide (never for this model, kept for the error path).
    pub fn truth(&self) -> Option<bool> {
        Some(match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint8(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.items.is_empty(),
            Value::Map(m) => !m.is_empty(),
            // A pointer to a struct is non-nil; named map types use their content.
            Value::Object(o) => match o.underlying() {
                Some(v) => return v.truth(),
                None => true,
            },
        })
    }

    /// Replaces an `Object` with its underlying map/slice/string, if any.
    pub fn resolved(&self) -> Value {
        match self {
            Value::Object(o) => o.underlying().unwrap_or_else(|| self.clone()),
            _ => self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_match_go() {
        assert_eq!(Value::list(vec![]).type_name(), "[]interface {}");
        assert_eq!(
            Value::map(BTreeMap::new()).type_name(),
            "map[string]interface {}"
        );
        assert_eq!(
            Value::typed_list(Elem::String, vec![]).type_name(),
            "[]string"
        );
        assert_eq!(Value::Nil.type_name(), "<nil>");
        assert_eq!(Value::Float(1.0).type_name(), "float64");
    }

    #[test]
    fn truth_follows_go_is_true() {
        assert_eq!(Value::Int(0).truth(), Some(false));
        assert_eq!(Value::from("0").truth(), Some(true));
        assert_eq!(Value::Float(0.0).truth(), Some(false));
        assert_eq!(Value::list(vec![Value::Int(0)]).truth(), Some(true));
        assert_eq!(Value::map(BTreeMap::new()).truth(), Some(false));
        assert_eq!(Value::Nil.truth(), Some(false));
    }

    #[test]
    fn map_mutation_is_shared() {
        let m = Arc::new(Map::new(Elem::Interface, BTreeMap::new()));
        let v = Value::Map(m.clone());
        m.insert("b".into(), Value::Int(1));
        m.insert("a".into(), Value::Int(2));
        let Value::Map(same) = v else { panic!() };
        let keys: Vec<String> = same.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, vec!["a", "b"]);
        assert_eq!(Elem::String.zero().as_str(), Some(""));
    }
}
