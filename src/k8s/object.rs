//! [`Object`]: one rendered Kubernetes object as every renderer hands it on
//! — its identity, its parsed document (shared, never copied) and the bytes
//! the renderer printed for it. Consumers (output, diff, promote) work on
//! these and never parse or split printed text again.
//!
//! What `env` hands on (possibly from its render cache) is an
//! `Object<Body>`: a cache hit keeps only the identity of most objects,
//! and [`Body`] says so, so that reading such a stub as a document does
//! not compile.

use std::sync::Arc;

use super::ObjectId;
use crate::yaml::Node;

/// One rendered object. `D` is what it carries beside its identity and
/// printed text: the renderers' own output always carries the parsed
/// document (`Arc<Node>`, the default); `Object<Body>` may not.
#[derive(Clone, Debug)]
pub struct Object<D = Arc<Node>> {
    /// Its identity, read from the parsed document.
    pub id: ObjectId,
    /// The document as the renderer parsed it (kustomize: the built
    /// resource; helm: the template output, parsed as helm parses it), or
    /// for an `Object<Body>`, whether it is there.
    pub node: D,
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

/// The document of an object handed on by `env`, when it carries one.
#[derive(Clone, Debug)]
pub enum Body {
    /// The whole document: a fresh render, or a cache hit that kept it (a
    /// Secret, an object without a name, or every object when the caller
    /// asked for whole documents).
    Whole(Arc<Node>),
    /// Only the identity (the object's `id`): a render cache hit for a
    /// caller that writes output, which reads no more.
    IdentityOnly,
}

impl Body {
    /// The whole document, or `None` for an identity-only object.
    pub fn document(&self) -> Option<&Arc<Node>> {
        match self {
            Body::Whole(n) => Some(n),
            Body::IdentityOnly => None,
        }
    }
}

impl From<Object> for Object<Body> {
    /// A renderer's object, handed on whole.
    fn from(o: Object) -> Object<Body> {
        Object {
            id: o.id,
            node: Body::Whole(o.node),
            printed: o.printed,
            source: o.source,
        }
    }
}
