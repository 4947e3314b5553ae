//! hydrate: render Kubernetes manifests as `kustomize build` and `helm template`
//! do, for every app of every environment, offline and in parallel.
//!
//! The library is the engine; `main.rs` and `cli/` only parse arguments, call
//! into it and map errors to exit codes.

pub mod cli;
pub mod diff;
pub mod env;
pub mod explain;
pub mod git;
pub mod gotmpl;
pub mod helm;
pub mod init;
pub mod k8s;
pub mod kustomize;
pub mod output;
pub mod promote;
pub mod render;
pub mod review;
pub mod validate;
pub mod verify;
pub mod warning;
pub mod yaml;
