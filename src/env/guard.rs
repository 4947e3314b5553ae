//! Guards on rendered output, applied by `hydrate render` before anything
//! is written: the secret guard (`secrets: allow | refuse | mask`: a plain
//! core/v1 `Secret` with `data` or `stringData` refused, or its values
//! replaced by a fixed mask) and the determinism guard (`strict`: a
//! non-deterministic render is an error). It judges rendered objects; it
//! renders and writes nothing. `diff`, `affected` and `promote` do not
//! apply it.

use std::sync::Arc;

use super::{AppWarning, Error, Output, Rendered};
use crate::k8s::{Body, Object};
use crate::warning::{Warning, WarningKind};
use crate::yaml::{self, Node};

/// `secrets:` of an environment file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secrets {
    /// Plain Secrets are written as rendered.
    Allow,
    /// A plain Secret with data is an error naming the app and resource.
    Refuse,
    /// Every value of `data`/`stringData` is replaced by [`MASK`].
    Mask,
}

impl Secrets {
    /// `allow`, `refuse` or `mask`.
    pub fn parse(s: &str) -> Option<Secrets> {
        match s {
            "allow" => Some(Secrets::Allow),
            "refuse" => Some(Secrets::Refuse),
            "mask" => Some(Secrets::Mask),
            _ => None,
        }
    }
}

/// What replaces a `stringData` value under `secrets: mask`; `data` values
/// get its base64 form ([`MASK_BASE64`]), so the Secret stays valid.
pub const MASK: &str = "**masked by hydrate**";
/// `base64(MASK)`.
pub const MASK_BASE64: &str = "KiptYXNrZWQgYnkgaHlkcmF0ZSoq";

/// The guards in force for one environment's render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    /// The secret policy.
    pub secrets: Secrets,
    /// Non-deterministic output is an error.
    pub strict: bool,
}

impl Guard {
    /// The guards of `e` as it will be written (after `--to`): `secrets:`
    /// when set, else `refuse` for a branch (a commit keeps a secret
    /// forever, and is pushed) and `allow` for a directory (which is
    /// usually not committed); `strict` when the environment or the
    /// command line (`--strict`) asks for it.
    pub fn of(e: &super::Environment, strict_flag: bool) -> Guard {
        let default = match e.output {
            Output::Branch(_) => Secrets::Refuse,
            Output::Dir(_) => Secrets::Allow,
        };
        Guard {
            secrets: e.secrets.unwrap_or(default),
            strict: strict_flag || e.strict,
        }
    }

    /// Applies the guards to one app's render: masks Secrets in place,
    /// adds a warning for each `metadata.generateName`, and returns every
    /// refusal (refused Secrets; with `strict`, each non-determinism
    /// warning).
    pub fn apply(&self, r: &mut Rendered) -> Vec<Error> {
        let mut errors = Vec::new();
        for o in &r.objects {
            // An identity-only object (a cache hit) has a name: the cache
            // keeps the document of every object without one.
            if o.node.document().is_some_and(|n| has_generate_name(n)) {
                let w = Warning::new(
                    WarningKind::NonDeterminism,
                    format!(
                        "{} uses metadata.generateName: the API server picks a new name on every apply",
                        describe(o)
                    ),
                    o.source.as_ref().map(Into::into),
                );
                r.warnings.push(AppWarning {
                    env: r.env.clone(),
                    app: r.app.clone(),
                    warning: w,
                });
            }
        }
        match self.secrets {
            Secrets::Allow => {}
            Secrets::Refuse => {
                for o in r.objects.iter().filter(|o| plain_secret(o)) {
                    errors.push(Error::Secret {
                        env: r.env.clone(),
                        app: r.app.clone(),
                        resource: describe(o),
                    });
                }
            }
            Secrets::Mask => mask(r),
        }
        if self.strict {
            for w in &r.warnings {
                if w.warning.kind == WarningKind::NonDeterminism {
                    errors.push(Error::Strict {
                        env: r.env.clone(),
                        app: r.app.clone(),
                        warning: w.warning.clone(),
                    });
                }
            }
        }
        errors
    }
}

/// Whether `o` is a plain Secret. An identity-only one (the cache hands
/// one on only to an environment whose guard lets Secrets through unread,
/// `Cache::with_secrets_unread`) counts when its type says Secret, so that
/// it is refused rather than let through.
fn plain_secret(o: &Object<Body>) -> bool {
    match &o.node {
        Body::Whole(n) => is_plain_secret(n),
        Body::IdentityOnly => o.id.gvk.group.is_empty() && o.id.gvk.kind == "Secret",
    }
}

fn has_generate_name(n: &Node) -> bool {
    n.get_path(&["metadata", "generateName"])
        .is_some_and(|g| !g.is_null())
}

/// A core/v1 `Secret` with a non-empty `data` or `stringData` mapping.
/// SealedSecret, ExternalSecret and other kinds hold no plain values.
fn is_plain_secret(n: &Node) -> bool {
    let id = crate::k8s::ObjectId::of(n);
    id.gvk.group.is_empty()
        && id.gvk.kind == "Secret"
        && ["data", "stringData"].iter().any(|k| {
            n.get(k)
                .and_then(Node::as_map)
                .is_some_and(|m| !m.is_empty())
        })
}

/// `Secret/name` (with `in namespace` when set), and helm's template.
fn describe(o: &Object<Body>) -> String {
    let mut s = format!("{}/{}", o.id.gvk.kind, o.id.name);
    if !o.id.namespace.is_empty() {
        s.push_str(&format!(" in namespace {}", o.id.namespace));
    }
    if let Some(src) = &o.source {
        s.push_str(&format!(" (from {src})"));
    }
    s
}

/// Replaces each plain Secret's values by the mask, in its object and in
/// the manifest stream. The masked document is printed by our emitter; the
/// lines the renderer printed before it (`---`, helm's `# Source:`) stay.
fn mask(r: &mut Rendered) {
    let mut manifest = String::with_capacity(r.manifest.len());
    let mut rest = r.manifest.as_str();
    for o in &mut r.objects {
        let Some(doc) = o.node.document().filter(|n| is_plain_secret(n)) else {
            continue;
        };
        let mut node = (**doc).clone();
        for (key, value) in [("data", MASK_BASE64), ("stringData", MASK)] {
            if let Some(m) = node.get_mut(key).and_then(Node::as_map_mut) {
                for (_, v) in m.iter_mut() {
                    *v = Node::string(value);
                }
            }
        }
        let Ok(doc) = yaml::to_string(&node) else {
            continue;
        };
        let head: String = o
            .printed
            .lines()
            .take_while(|l| *l == "---" || l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let printed = format!("{head}{doc}");
        if let Some(at) = rest.find(o.printed.as_str()) {
            manifest.push_str(&rest[..at]);
            manifest.push_str(&printed);
            rest = &rest[at + o.printed.len()..];
        }
        o.printed = printed;
        o.node = Body::Whole(Arc::new(node));
    }
    manifest.push_str(rest);
    r.manifest = manifest;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::Object;

    fn rendered(docs: &[&str]) -> Rendered {
        let objects: Vec<Object<Body>> = docs
            .iter()
            .map(|d| {
                let n = yaml::parse_one(d, yaml::Resolver::V3).unwrap();
                Object::new(Arc::new(n), (*d).to_string(), None).into()
            })
            .collect();
        Rendered {
            env: "dev".into(),
            app: "api".into(),
            manifest: docs.join("---\n"),
            objects,
            files_read: Vec::new(),
            warnings: Vec::new(),
        }
    }

    const SECRET: &str = "apiVersion: v1\ndata:\n  password: c2VjcmV0\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  user: admin\n";
    const SEALED: &str = "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\nspec:\n  encryptedData:\n    password: AgB\n";
    const CM: &str = "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\nmetadata:\n  name: c\n";

    #[test]
    fn refuse_names_the_secret_and_passes_sealed_ones() {
        let g = Guard {
            secrets: Secrets::Refuse,
            strict: false,
        };
        let errs = g.apply(&mut rendered(&[CM, SECRET, SEALED]));
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "dev/api: Secret/db: a plain Secret with data or stringData; the environment refuses \
             them (`secrets: refuse`, the default for branch output): render a SealedSecret or \
             ExternalSecret, or set `secrets: mask` or `secrets: allow`"
        );
        let empty = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n";
        assert!(g.apply(&mut rendered(&[empty, SEALED])).is_empty());
    }

    #[test]
    fn mask_replaces_values_in_objects_and_manifest() {
        let g = Guard {
            secrets: Secrets::Mask,
            strict: false,
        };
        let mut r = rendered(&[CM, SECRET]);
        assert!(g.apply(&mut r).is_empty());
        assert!(!r.manifest.contains("c2VjcmV0") && !r.manifest.contains("admin"));
        assert!(r.manifest.starts_with(CM), "{}", r.manifest);
        assert!(r.manifest.contains(&format!("password: {MASK_BASE64}")));
        assert_eq!(r.objects[1].printed, r.manifest[CM.len() + 4..]);
        let mut again = rendered(&[CM, SECRET]);
        g.apply(&mut again);
        assert_eq!(again.manifest, r.manifest, "masking is deterministic");
        use base64::Engine;
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(MASK),
            MASK_BASE64
        );
    }

    #[test]
    fn strict_turns_non_determinism_into_errors() {
        let mut r = rendered(&[CM]);
        r.warnings.push(AppWarning {
            env: "dev".into(),
            app: "api".into(),
            warning: Warning::new(
                WarningKind::NonDeterminism,
                "randAlphaNum is not deterministic",
                None,
            ),
        });
        let lax = Guard {
            secrets: Secrets::Allow,
            strict: false,
        };
        assert!(lax.apply(&mut r).is_empty());
        let strict = Guard {
            strict: true,
            ..lax
        };
        let errs = strict.apply(&mut r);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().contains("randAlphaNum"), "{}", errs[0]);
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n";
        assert_eq!(strict.apply(&mut rendered(&[job])).len(), 1);
    }
}
