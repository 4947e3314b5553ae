//! Errors of a kustomize build: each names the file it is about.

use std::path::PathBuf;

/// A failed build.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not valid YAML.
    #[error("{}:{line}: {problem}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line, 0 when unknown.
        line: u32,
        /// What is wrong.
        problem: String,
    },
    /// The input is well-formed but kustomize would reject it.
    #[error("{}{}: {message}", path.display(), line_suffix(*line))]
    Invalid {
        /// The file (or directory) at fault.
        path: PathBuf,
        /// 1-based line, 0 when unknown.
        line: u32,
        /// Kustomize's complaint, in its words where practical.
        message: String,
    },
    /// A kustomization lists a remote resource (a URL or a git
    /// repository): hydrate renders offline, so it must be vendored.
    #[error(
        "{}: {entry:?} is a remote resource and hydrate renders offline: vendor it into the repository \
         (`kustomize localize {} <new-dir>` copies the kustomization with its remote resources; \
         or copy the files under the repository and list their local path)",
        path.display(),
        dir.display()
    )]
    Remote {
        /// The kustomization file.
        path: PathBuf,
        /// Its directory, as `kustomize localize` takes it.
        dir: PathBuf,
        /// The entry as written.
        entry: String,
    },
    /// A kustomization uses a field hydrate does not implement yet.
    #[error("{}: not supported yet: {field}", path.display())]
    NotSupported {
        /// The kustomization file.
        path: PathBuf,
        /// The field.
        field: String,
    },
}

fn line_suffix(line: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

impl Error {
    /// An [`Error::Invalid`] without a line.
    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Invalid {
            path: path.into(),
            line: 0,
            message: message.into(),
        }
    }

    /// Wraps a YAML error with the file it came from.
    pub fn yaml(path: impl Into<PathBuf>, e: crate::yaml::Error) -> Error {
        match e {
            crate::yaml::Error::Syntax { line, problem, .. } => Error::Yaml {
                path: path.into(),
                line,
                problem,
            },
            other => Error::invalid(path, other.to_string()),
        }
    }
}
