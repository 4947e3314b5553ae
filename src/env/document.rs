//! Reading an environment file's text: exactly one YAML document. An
//! empty file, or a second document after `---`, is an error naming the
//! file and a real line (never line 0).

use std::path::Path;

use super::Error;
use crate::yaml::{self, Node, Resolver};

/// The one YAML document of an environment file: an empty file, or a
/// second document (`---`), is an error naming the file and line.
pub fn one_document(file: &Path, src: &str) -> Result<Node, Error> {
    let err = |line: u32, message: String| Error::Config {
        path: file.to_path_buf(),
        line: line.max(1),
        message,
    };
    let docs = yaml::parse_all(src, Resolver::V3).map_err(|e| match e {
        yaml::Error::Syntax { line, problem, .. } => err(line, problem),
        other => err(1, other.to_string()),
    })?;
    only_document(file, docs)
}

/// The one document of `docs`, parsed from `file` (see [`one_document`]).
pub fn only_document(file: &Path, docs: Vec<Node>) -> Result<Node, Error> {
    let err = |line: u32, message: String| Error::Config {
        path: file.to_path_buf(),
        line: line.max(1),
        message,
    };
    let mut docs = docs.into_iter();
    let first = docs.next().filter(|d| !d.is_null()).ok_or_else(|| {
        err(
            1,
            "the environment file is empty (it needs at least `name:` and `apps:`)".into(),
        )
    })?;
    if let Some(second) = docs.next() {
        return Err(err(
            second.pos.line,
            "an environment file holds one YAML document; found a second one (`---`)".into(),
        ));
    }
    Ok(first)
}
