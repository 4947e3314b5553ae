//! Go-compatible conversions of template [`Value`]s, for hosts that build
//! template data or reuse the converters outside a template: YAML through
//! sigs.k8s.io/yaml (go-yaml v2, then JSON's types), Go's `encoding/json`,
//! and TOML as BurntSushi/toml prints it. These are the routines the
//! function library's converters are built on; the functions themselves
//! (`toYaml`, `fromJson`, ...) are registered by whoever offers them.

use super::funcs::{json, sprig_dicts, toml, yamlconv};
use super::Value;

pub use json::{error_map, json_kind, unmarshal as from_json};
pub use sprig_dicts::deep_copy;
pub use toml::{from_toml, to_toml};
pub use yamlconv::{from_node, parse_yaml, to_yaml, to_yaml_pretty, try_to_yaml};

/// `json.Marshal`: compact, HTML-escaped.
pub fn to_json(v: &Value) -> Result<String, String> {
    json::marshal(v, json::COMPACT)
}
