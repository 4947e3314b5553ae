//! Go library routines the function library is built on, for hosts that
//! need the same Go behaviour outside a template (helm's chart loader and
//! `.Files`): `encoding/base64`'s standard encoding, `path.Clean` and
//! Masterminds semver (the version and constraint checks Sprig and helm
//! share).

pub(crate) use super::funcs::sprig_encoding::b64_encode;
pub(crate) use super::funcs::sprig_semver::{
    constraint_check, register_v3_4 as register_semver_v3_4, Version,
};
pub(crate) use super::funcs::sprig_text::path_clean;
