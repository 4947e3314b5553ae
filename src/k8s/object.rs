//! [`Object`]: one rendered Kubernetes object as every renderer hands it on
//! — its identity, its parsed document (shared, never copied) and the bytes
//! the renderer printed for it. Consumers (output, diff, promote) work on
//! these and never parse or split printed text again.

use std::sync::Arc;

use super::ObjectId;
use crate::yaml::Node;

/// One rendered object.
#[derive(Clone, Debug)]
pub struct Object {
    /// Its identity, read from the parsed document.
    pub id: ObjectId,
    /// The document as the renderer parsed it (kustomize: the built
    /// resource; helm: the template output, parsed as helm parses it).
    pub node: Arc<Node>,
    /// What the renderer printed for this object alone: kustomize's
    /// document, or helm's `# Source: <template>` line and document.
    pub printed: String,
    /// Where it came from, when the renderer knows: helm's `# Source:`
    /// template path (`chart/templates/x.yaml`).
    pub source: Option<String>,
}

impl Object {
    /// An object whose id is read from `node`.
    pub fn new(node: Arc<Node>, printed: String, source: Option<String>) -> Object {
        Object {
            id: ObjectId::of(&node),
            node,
            printed,
            source,
        }
    }
}
