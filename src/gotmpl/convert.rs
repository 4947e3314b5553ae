//! Go-compatible conversions of template [`Value`]s, for hosts that build
//! template data or reuse the converters outside a template: YAML through
//! sigs.k8s.io/yaml (go-yaml v2, then JSON's types), Go's `encoding/json`,
//! and TOML as BurntSushi/toml prints it. These are the routines the
//! function library's converters are built on; the functions themselves
//! (`toYaml`, `fromJson`, ...) are registered by whoever offers them.

use super::funcs::{json, sprig_dicts, toml, yamlconv};
use super::Value;

pub(crate) use json::{error_map, json_kind, unmarshal as from_json};
pub(crate) use sprig_dicts::deep_copy;
pub(crate) use toml::{from_toml, to_toml, TomlError, TomlLines};
pub(crate) use yamlconv::{
    from_node, parse_yaml, parse_yaml_node, to_yaml, to_yaml_pretty, try_to_yaml,
};

/// A YAML document that does not convert: sigs.k8s.io/yaml's message and
/// the line the YAML parser names, when it names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based line.
    pub line: Option<u32>,
    /// The full message (`error converting YAML to JSON: yaml: line 3: ...`).
    pub message: String,
}

/// [`parse_yaml`], keeping the line of a syntax error.
pub fn parse_yaml_at(text: &str) -> Result<Value, YamlError> {
    yamlconv::parse_yaml_at(text).map_err(|(line, message)| YamlError { line, message })
}

/// `json.Marshal`: compact, HTML-escaped.
pub fn to_json(v: &Value) -> Result<String, String> {
    json::marshal(v, json::COMPACT)
}
