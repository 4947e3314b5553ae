//! hydrate: render Kubernetes manifests as `kustomize build` and `helm template`
//! do, for every app of every environment, offline and in parallel.
//!
//! The library is the engine; `main.rs` and `cli/` only parse arguments, call
//! into it and map errors to exit codes.
//!
//! The public surface is small and documented (everything else is private
//! to the crate, and a type it reaches can always be named):
//!
//! - [`kustomize::build`] (`kustomize build`), [`helm::load`],
//!   [`helm::render`] and [`helm::template`] (`helm template`), with their
//!   `Options`, results and errors; [`kustomize_build_options`] and
//!   [`helm_template_options`] parse the real tools' flags into them;
//! - [`env::load_environments`], [`env::plan`] and
//!   [`env::render_all_cached`]: every app of every environment, rendered
//!   in parallel, optionally through the [`env::Cache`];
//! - [`render::run`]: render and write each environment's output (a
//!   directory or a branch), as `hydrate render` does;
//! - [`diff::compare`] over [`diff::from_rendered`] sides, and its text,
//!   markdown and JSON forms;
//! - [`promote::promote`], [`validate::run`] and [`explain::explain`];
//! - the YAML model ([`yaml::parse_all`], [`yaml::Node`],
//!   [`yaml::to_stream`]), objects ([`k8s::Object`]), warnings
//!   ([`warning::Warning`]) and Go templates ([`gotmpl::TemplateSet`]).
#![deny(missing_docs)]
// A public item whose type cannot be named is an API nobody can use well:
// such a type is either made part of the surface or kept off it.
#![warn(unnameable_types)]

pub mod diff;
pub mod env;
pub mod explain;
pub mod gotmpl;
pub mod helm;
pub mod k8s;
pub mod kustomize;
pub mod promote;
pub mod render;
pub mod validate;
pub mod warning;
pub mod yaml;

mod cli;
mod compare;
mod fx;
mod git;
mod init;
mod lock;
mod output;
mod realpath;
mod verify;

/// The drop-in commands' command lines, parsed as the binary parses them:
/// `hydrate kustomize build` takes `kubectl kustomize`'s flags and
/// `hydrate helm template` takes helm's, so a program holding a user's
/// kustomize or helm command line gets the [`kustomize::Options`] or
/// [`helm::Options`] the binary would run with.
pub use cli::{helm_template_options, kustomize_build_options};

/// Runs the `hydrate` command line on the process's arguments and returns
/// its exit code (0 ok, 1 a finding, 2 an error): what the binary calls.
///
/// The YAML parser catches the rare panics of libyaml-safer and reports them
/// as syntax errors naming the file; this keeps those panics off stderr
/// (every other panic is printed as usual).
pub fn run_cli() -> std::process::ExitCode {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !yaml::in_guarded_parse() {
            default(info);
        }
    }));
    cli::run()
}
