//! Checks against the shared helm conformance vectors.
