//! hydrate's integration tests, in one binary to keep link time down.
#![allow(clippy::disallowed_macros)] // tests print what they measured

mod branches;
mod cache;
mod cache_trust;
mod cli;
mod conformance;
mod corpus;
mod crash;
mod demo;
mod diff;
mod dropin;
mod errors;
mod exits;
mod fuzz_replay;
mod goldens;
mod graph;
mod hydrator;
mod init;
mod layout;
mod limits;
mod pins;
mod promote;
mod promote_kill;
mod promote_layouts;
mod promote_trust;
mod remote;
mod safety_config;
mod safety_output;
mod schema;
mod set_image;
mod shard;
#[cfg(unix)]
mod since;
mod support;
mod verify;
