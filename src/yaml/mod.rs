//! The YAML core: a document model with positions, parsing with go-yaml's
//! resolution rules (v2 for Helm, v3 for kustomize), and an emitter that
//! prints byte-for-byte what go-yaml v2 prints after `sigs.k8s.io/yaml`'s
//! JSON round trip (the output of `kustomize build` and Helm's `toYaml`).
//!
//! It knows nothing about Kubernetes.

pub mod edit;
mod emit;
pub mod fields;
mod json;
mod keyorder;
mod node;
mod number;
mod parse;
mod resolve;
pub mod selector;
pub mod source_map;

pub use emit::{float_text, fold_round_trip, to_string};
pub use json::{to_json, write_json_string};
pub use keyorder::natural_cmp;
pub use node::{Node, Origin, Pos, Scalar, SourceId, Style, Tag, Value};
pub use number::{format_e, format_f, format_g, format_json};
pub use parse::{in_guarded_parse, parse_all, parse_one, MAX_DEPTH};
pub use resolve::{
    is_timestamp, parse_int, resolve_plain, timestamp_rfc3339, yaml11_bool, Int, Resolver,
};

/// A YAML error without a file: callers add the path.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text is not valid YAML.
    #[error("line {line}, column {column}: {problem}")]
    Syntax {
        /// 1-based line (0 when unknown).
        line: u32,
        /// 1-based column (0 when unknown).
        column: u32,
        /// What went wrong, in libyaml's words.
        problem: String,
    },
    /// The data cannot be printed as YAML (NaN, a non-scalar key, …).
    #[error("cannot print {what} as YAML")]
    Unsupported {
        /// What could not be printed.
        what: String,
    },
}

/// Joins documents the way `kustomize build` does: each printed alone,
/// separated by `---` lines.
pub fn to_stream(docs: &[Node]) -> Result<String, Error> {
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&to_string(d)?);
    }
    Ok(out)
}
