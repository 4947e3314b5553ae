//! hydrate's integration tests, in one binary to keep link time down.

mod branches;
mod cli;
mod conformance;
mod corpus;
mod demo;
mod diff;
mod dropin;
mod goldens;
mod hydrator;
mod layout;
mod limits;
mod promote;
mod remote;
mod schema;
mod support;
