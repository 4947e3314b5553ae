//! Where each changed field was set, on each side of a comparison
//! (`file:line`), for the outputs that name it beside the change (the
//! markdown diff). `diff/` does not trace renders: `explain` fills it
//! ([`crate::explain::field_sources`]).

use std::collections::BTreeMap;

/// `file:line` per side, app, resource (`Kind/name` as that side renders
/// it) and field path (the change's [`super::Change::path_text`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSources {
    at: BTreeMap<[String; 4], String>,
}

impl FieldSources {
    /// Records that `path` of `resource` of `app` on `side` was set at `at`.
    pub fn insert(&mut self, side: &str, app: &str, resource: &str, path: &str, at: String) {
        let key = [side, app, resource, path].map(str::to_string);
        self.at.insert(key, at);
    }

    /// Where `path` of `resource` of `app` on `side` was set.
    pub fn get(&self, side: &str, app: &str, resource: &str, path: &str) -> Option<&str> {
        let key = [side, app, resource, path].map(str::to_string);
        self.at.get(&key).map(String::as_str)
    }
}
