//! Builds diff's [`Resource`]s: from a render's results (the one adapter
//! from `env::Rendered`), or from a committed manifest read back.

use std::sync::Arc;

use super::{Error, Resource};
use crate::env::Rendered;
use crate::yaml::{self, Node, Resolver};

/// The resources of one rendered app: the renderers' typed objects, whose
/// parsed nodes are shared, not parsed again.
/// Diff renders without the cache, so every object carries its document;
/// one that does not is an error rather than an empty resource.
pub fn from_rendered(r: &Rendered) -> Result<Vec<Resource>, Error> {
    r.objects
        .iter()
        .map(|o| {
            let node = o.node.document().ok_or_else(|| Error::Document {
                origin: format!("{}/{}", r.env, r.app),
                message: format!("{} was handed on without its document", o.id),
            })?;
            Ok(Resource {
                app: r.app.clone(),
                group: o.id.gvk.group.clone(),
                version: o.id.gvk.version.clone(),
                kind: o.id.gvk.kind.clone(),
                namespace: o.id.namespace.clone(),
                name: o.id.name.clone(),
                node: Arc::clone(node),
            })
        })
        .collect()
}

/// The resources of a manifest stream (documents separated by `---`), as
/// `hydrate render` writes them; `origin` names the file in errors.
pub fn from_manifest(app: &str, text: &str, origin: &str) -> Result<Vec<Resource>, Error> {
    let docs = yaml::parse_all(text, Resolver::V3).map_err(|e| Error::Document {
        origin: origin.to_string(),
        message: e.to_string(),
    })?;
    Ok(docs
        .into_iter()
        .filter(|d| d.as_map().is_some_and(|m| !m.is_empty()))
        .map(|d| resource(app, d))
        .collect())
}

fn resource(app: &str, node: Node) -> Resource {
    let api = node.get_str("apiVersion").unwrap_or_default();
    let (group, version) = match api.rsplit_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api.to_string()),
    };
    let meta = |k: &str| {
        node.get_path(&["metadata", k])
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Resource {
        app: app.to_string(),
        group,
        version,
        kind: node.get_str("kind").unwrap_or_default().to_string(),
        namespace: meta("namespace"),
        name: meta("name"),
        node: Arc::new(node),
    }
}
