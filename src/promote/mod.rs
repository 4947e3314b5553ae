//! Promotion: pins (what is released of an app in an environment), plans
//! (FROM's pins that differ in TO), policies (block globs, the downgrade
//! guard), and the source commits that carry them (promote, set-image,
//! set-value, rollback), plus history and the pins board read back from
//! commit trailers. Files are edited only through `yaml::edit`; git only
//! through `git/`.

mod apply;
mod approve;
mod assignment;
mod board;
mod convention;
mod copy;
mod gates;
mod history;
mod image_ref;
mod image_spec;
mod message;
mod ops;
mod pin;
mod plan;
mod reasons;
mod route;
mod snapshot;
mod together;
mod traced;

use std::path::PathBuf;

pub use apply::Outcome;
pub(crate) use approve::{approve, push as push_approvals};
pub(crate) use assignment::Assignment;
pub(crate) use board::board;
pub(crate) use copy::diff as copy_diff;
pub use copy::{Copy, NotCopied};
pub(crate) use gates::APPROVALS_REF;
pub(crate) use history::history;
pub(crate) use image_spec::ImageSpec;
pub use ops::{promote, PromoteOptions, PromoteReport};
pub(crate) use ops::{promote_each, rollback, set_image, set_value, targets, Rollback, SetReport};
pub use pin::{Pin, Place};
pub use plan::{Item, Plan, Refusal};
pub(crate) use reasons::{explain as explain_pins, json as reasons_json, text as reasons_text};
pub(crate) use route::{
    json as routes_json, markdown as routes_markdown, routes, text as routes_text,
};
pub(crate) use together::{promote_together, Together};

/// The render errors' messages, with the snapshot directory they were
/// rendered in left out of the paths they name, so they name files as the
/// repository does (never a temporary directory).
fn in_repository(errors: &[crate::env::Error], root: &std::path::Path) -> String {
    let prefix = format!("{}/", root.display());
    errors
        .iter()
        .map(|e| e.to_string().replace(&prefix, ""))
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// A promotion failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] crate::env::Error),
    /// A pin cannot be read.
    #[error("{0}")]
    Pin(String),
    /// A file cannot be edited (nothing was changed).
    #[error("{}: {message}", file.display())]
    Edit {
        /// The file.
        file: PathBuf,
        /// Why.
        message: String,
    },
    /// The policies refuse the plan (use `--force` to override).
    #[error("refused without --force:\n  {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Refused(Vec<Refusal>),
    /// The policies hold back everything the promotion would change (a
    /// finding: the rest would have gone ahead).
    #[error("nothing promoted: everything is held:\n  {}", .0.iter().map(|r| format!("held: {} ({})", r.app(), r.reason())).collect::<Vec<_>>().join("\n  "))]
    Held(Vec<Refusal>),
    /// Files to edit have uncommitted changes.
    #[error("uncommitted changes in {}; commit or stash them first", .0.join(", "))]
    Uncommitted(Vec<String>),
    /// Renders failed after the edit (nothing was written or committed).
    #[error("{} render(s) failed after the edit; nothing was written or committed:\n  {}", .errors.len(), in_repository(.errors, .root))]
    Render {
        /// The failures.
        errors: Vec<crate::env::Error>,
        /// Where the sources were rendered (a snapshot of a commit): the
        /// message names files relative to the repository instead.
        root: PathBuf,
    },
    /// The message template failed.
    #[error("commit message template: {0}")]
    Template(String),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// Writing the rendered output failed.
    #[error(transparent)]
    Output(#[from] crate::render::Error),
    /// A usage problem (unknown environment, app, …).
    #[error("{0}")]
    Usage(String),
}
