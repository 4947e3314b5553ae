//! The YAML core: a document model with positions, parsing with go-yaml's
//! resolution rules (v2 for Helm, v3 for kustomize), and an emitter that
//! prints byte-for-byte what go-yaml v2 prints after `sigs.k8s.io/yaml`'s
//! JSON round trip (the output of `kustomize build` and Helm's `toYaml`).
//!
//! It knows nothing about Kubernetes.

pub(crate) mod edit;
/// A step of a path the format-preserving editor follows (a promotion
/// pin's place in its file).
pub use edit::Seg as EditSeg;
mod emit;
pub(crate) mod fields;
mod json;
mod keyorder;
mod node;
mod number;
mod parse;
mod resolve;
pub(crate) mod selector;
pub(crate) mod source_map;

pub use emit::to_string;
pub(crate) use emit::{float_text, fold_round_trip};
pub use json::to_json;
pub(crate) use json::write_json_string;
pub use node::{Node, Origin, Pos, Scalar, SourceId, Style, Tag, Value};
pub(crate) use number::{format_g, format_json};
pub(crate) use parse::{in_guarded_parse, MAX_DEPTH};
pub use parse::{parse_all, parse_one};
pub use resolve::Resolver;
pub(crate) use resolve::{parse_int, resolve_plain, yaml11_bool, Int};

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
