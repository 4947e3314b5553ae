//! hydrate's integration tests, in one binary to keep link time down.

mod branches;
mod cache;
mod cli;
mod conformance;
mod corpus;
mod crash;
mod demo;
mod diff;
mod dropin;
mod errors;
mod fuzz_replay;
mod goldens;
mod hydrator;
mod init;
mod layout;
mod limits;
mod promote;
mod promote_kill;
mod promote_trust;
mod remote;
mod safety_config;
mod safety_output;
mod schema;
mod shard;
#[cfg(unix)]
mod since;
mod support;
mod verify;
