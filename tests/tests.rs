//! hydrate's integration tests, in one binary to keep link time down.
#![allow(clippy::disallowed_macros)] // tests print what they measured

mod api;
mod architecture;
mod branches;
mod cache;
mod cache_trust;
mod cli;
mod conformance;
mod corpus;
mod crash;
mod demo;
mod diff;
mod diff_rendered;
mod doc_commands;
mod dropin;
mod env_reference;
mod errors;
mod exits;
mod explain_corpus;
mod fuzz_replay;
mod goldens;
mod graph;
#[cfg(unix)]
mod helm_symlinks;
mod hydrator;
mod init;
mod install;
mod keep_going;
mod layout;
mod limits;
mod pins;
mod precommit;
mod promote;
mod promote_kill;
mod promote_layouts;
mod promote_scope;
mod promote_trust;
mod quiet;
mod remote;
mod safety_config;
mod safety_output;
mod schema;
mod set_image;
mod settle;
mod shard;
#[cfg(unix)]
mod since;
mod support;
mod validate;
mod verify;
