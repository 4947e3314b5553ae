//! hydrate's integration tests, in one binary to keep link time down.

mod cli;
mod conformance;
mod demo;
mod support;
