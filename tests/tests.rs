//! hydrate's integration tests, in one binary to keep link time down.

mod branches;
mod cli;
mod conformance;
mod demo;
mod diff;
mod schema;
mod support;
