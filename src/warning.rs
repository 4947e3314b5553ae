//! Warnings as data: what a render reports besides its output (deprecated
//! kustomization fields, non-deterministic template functions, printed
//! documents that are not objects). Renderers return them; the CLI decides
//! how to print them. It imports nothing from hydrate.

use std::fmt;
use std::path::PathBuf;

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// A deprecated input field (kustomize's `# Warning: 'bases' is
    /// deprecated...`).
    Deprecation,
    /// A template function whose result changes on every render (`now`,
    /// `randAlphaNum`, `uuidv4`, `genCA`, ...).
    NonDeterminism,
    /// A printed document that cannot be read as a Kubernetes object (a
    /// `crds/` file that does not parse): printed, but not handed on as an
    /// [`crate::k8s::Object`].
    NotAnObject,
    /// An environment file that renders nothing where something was meant:
    /// no apps, or a `discover:` glob that matches no directory.
    Config,
    /// The render cache: an entry that failed authentication (rendered
    /// again), or no key to authenticate with (the cache is off).
    Cache,
    /// A chart file that is a symlink, followed (helm's `found symbolic
    /// link in path` log line, which the message is).
    Symlink,
}

impl WarningKind {
    /// Every kind.
    pub const ALL: [WarningKind; 6] = [
        WarningKind::Deprecation,
        WarningKind::NonDeterminism,
        WarningKind::NotAnObject,
        WarningKind::Config,
        WarningKind::Cache,
        WarningKind::Symlink,
    ];

    /// The kind [`WarningKind::as_str`] names.
    pub fn from_name(name: &str) -> Option<WarningKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// A short stable name (`deprecation`, `non-determinism`, `not-an-object`,
    /// `config`, `cache`, `symlink`).
    pub fn as_str(self) -> &'static str {
        match self {
            WarningKind::Deprecation => "deprecation",
            WarningKind::NonDeterminism => "non-determinism",
            WarningKind::NotAnObject => "not-an-object",
            WarningKind::Config => "config",
            WarningKind::Cache => "cache",
            WarningKind::Symlink => "symlink",
        }
    }
}

/// One warning of a render.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Warning {
    /// What it is about.
    pub kind: WarningKind,
    /// The message, without file or line.
    pub message: String,
    /// The file it is about: a kustomization, or a chart template as helm
    /// names it (`chart/templates/x.yaml`).
    pub file: Option<PathBuf>,
    /// 1-based line in `file`, when known.
    pub line: Option<u32>,
}

impl Warning {
    /// A warning without a line.
    pub fn new(kind: WarningKind, message: impl Into<String>, file: Option<PathBuf>) -> Warning {
        Warning {
            kind,
            message: message.into(),
            file,
            line: None,
        }
    }
}

impl fmt::Display for Warning {
    /// `file:line: message`, with whatever parts are known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_what_is_known() {
        let mut w = Warning::new(WarningKind::Deprecation, "old field", None);
        assert_eq!(w.to_string(), "old field");
        w.file = Some("k/kustomization.yaml".into());
        assert_eq!(w.to_string(), "k/kustomization.yaml: old field");
        w.line = Some(3);
        assert_eq!(w.to_string(), "k/kustomization.yaml:3: old field");
        assert_eq!(WarningKind::NonDeterminism.as_str(), "non-determinism");
        for k in [
            WarningKind::Deprecation,
            WarningKind::NonDeterminism,
            WarningKind::NotAnObject,
            WarningKind::Config,
            WarningKind::Cache,
        ] {
            assert_eq!(WarningKind::from_name(k.as_str()), Some(k));
        }
        assert_eq!(WarningKind::from_name("other"), None);
    }
}
