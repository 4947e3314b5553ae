//! Offline validation of rendered objects: each against the schema of its
//! group/version/kind for the environment's Kubernetes version (bundled,
//! [`bundle`]), custom resources against the `openAPIV3Schema` of the CRDs
//! the repository itself renders or lists ([`crds`]), and every apiVersion
//! against the table of removed and deprecated APIs ([`removed`]).
//!
//! It judges objects other modules rendered: it renders nothing itself
//! except, for a finding in a kustomize app, a traced rebuild to name the
//! file and line a value was written at ([`locate`]), and it writes
//! nothing. Two passes, so a render can drop each app's documents as it
//! finishes: [`Validator::first`] checks what has a built-in schema and
//! keeps custom resources and CRDs; [`Validator::finish`] checks the custom
//! resources once every CRD is known. The first pass's findings are kept
//! in the render cache beside the render ([`stored`]).

mod bundle;
mod check;
pub(crate) mod crds;
mod locate;
pub(crate) mod removed;
pub(crate) mod report;
pub(crate) mod run;
pub use run::{run, Error as RunError, Options, Report};
pub(crate) mod stored;

use std::sync::Arc;

pub(crate) use bundle::Catalog;
pub(crate) use bundle::DEFAULT_KUBE_VERSION;
pub(crate) use crds::Crds;
pub(crate) use locate::locate;

use crate::k8s::{Body, Object};
use crate::yaml::Node;

/// Why validation could not run (not a finding).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An environment's `kubeVersion` has no bundled schemas.
    #[error("kubeVersion {version}: no bundled schemas (bundled: {})", known.join(", "))]
    KubeVersion {
        /// As written.
        version: String,
        /// The bundled versions.
        known: Vec<String>,
    },
    /// The compiled-in bundle is damaged (a build problem).
    #[error("the bundled Kubernetes schemas are unreadable: {0}")]
    Bundle(String),
    /// A `crds:` file cannot be read or parsed.
    #[error("{}:{line}: {message}", path.display())]
    CrdFile {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line (0: the whole file).
        line: u32,
        /// Why.
        message: String,
    },
    /// A render was handed on without an object's document (a render
    /// cache asked for whole documents never does this).
    #[error("{env}/{app}: {object} was handed on without its document")]
    NoDocument {
        /// Environment.
        env: String,
        /// App.
        app: String,
        /// The object's id.
        object: String,
    },
}

/// Which check a finding comes from (the SARIF rule id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// A field the schema does not declare.
    UnknownField,
    /// A value of the wrong JSON type.
    WrongType,
    /// A required field is missing.
    Required,
    /// A value outside the schema's enum.
    Enum,
    /// Two list-map items with the same keys, or a set with a value twice.
    DuplicateKey,
    /// A CRD value limit (minimum, maxLength, pattern, ...).
    Value,
    /// The apiVersion is no longer served by the environment's Kubernetes.
    RemovedApi,
    /// The apiVersion is deprecated in the environment's Kubernetes.
    DeprecatedApi,
    /// No schema for the object's type.
    NoSchema,
}

impl Rule {
    /// Every rule, in the order [`Rule::id`] lists them.
    pub const ALL: [Rule; 9] = [
        Rule::UnknownField,
        Rule::WrongType,
        Rule::Required,
        Rule::Enum,
        Rule::DuplicateKey,
        Rule::Value,
        Rule::RemovedApi,
        Rule::DeprecatedApi,
        Rule::NoSchema,
    ];

    /// `unknown-field`, ...
    pub fn id(self) -> &'static str {
        match self {
            Rule::UnknownField => "unknown-field",
            Rule::WrongType => "wrong-type",
            Rule::Required => "required",
            Rule::Enum => "enum",
            Rule::DuplicateKey => "duplicate-key",
            Rule::Value => "value",
            Rule::RemovedApi => "removed-api",
            Rule::DeprecatedApi => "deprecated-api",
            Rule::NoSchema => "no-schema",
        }
    }

    /// One line on what the rule checks.
    pub fn description(self) -> &'static str {
        match self {
            Rule::UnknownField => {
                "A field the type's schema does not declare (often a misspelling)."
            }
            Rule::WrongType => "A value of another type than the schema declares.",
            Rule::Required => "A field the schema requires is missing.",
            Rule::Enum => "A value the schema's enum does not list.",
            Rule::DuplicateKey => {
                "Two items of a list-map with the same keys, or a set with a value twice."
            }
            Rule::Value => {
                "A value outside a CRD schema's limits (minimum, maxLength, pattern, ...)."
            }
            Rule::RemovedApi => {
                "An apiVersion the environment's Kubernetes version no longer serves."
            }
            Rule::DeprecatedApi => {
                "An apiVersion deprecated in the environment's Kubernetes version."
            }
            Rule::NoSchema => "A type with no bundled schema and no CRD in the repository.",
        }
    }
}

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Invalid: `validate` exits 1, `render` refuses to write.
    Error,
    /// Reported, not fatal.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One step of a path into an object, shown in the diff's syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
    /// A list item shown by its first list-map key (`containers[name=api]`),
    /// at `index`.
    Item {
        /// The key.
        key: String,
        /// Its value.
        value: String,
        /// Where the item is.
        index: usize,
    },
}

/// `spec.template.spec.containers[name=api].image` (keys that are not
/// plain identifiers JSON-quoted, as the diff quotes them), then `.missing`.
pub(crate) fn path_text(path: &[Seg], missing: Option<&str>) -> String {
    let mut s = String::new();
    let key = |s: &mut String, k: &str| {
        if !s.is_empty() {
            s.push('.');
        }
        let plain = !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit());
        if plain {
            s.push_str(k);
        } else {
            s.push_str(&serde_json::Value::String(k.to_string()).to_string());
        }
    };
    for seg in path {
        match seg {
            Seg::Key(k) => key(&mut s, k),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
            Seg::Item { key, value, .. } => s.push_str(&format!("[{key}={value}]")),
        }
    }
    if let Some(m) = missing {
        key(&mut s, m);
    }
    s
}

/// One problem with one rendered object.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Environment.
    pub env: String,
    /// App.
    pub app: String,
    /// The object's `apiVersion`.
    pub api_version: String,
    /// Its `kind`.
    pub kind: String,
    /// Its namespace (empty when unset).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The field, in the diff's path syntax (empty: the whole object).
    pub path: String,
    /// The node the finding is at (for a missing field, its parent).
    pub at: Vec<Seg>,
    /// Which check.
    pub rule: Rule,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// The source file the value was written in, when hydrate knows it
    /// (kustomize: traced; helm: the template), relative to the root.
    pub file: Option<String>,
    /// Its 1-based line in `file`, when known.
    pub line: Option<u32>,
}

impl Finding {
    /// `Deployment default/api` (no namespace: `Deployment api`).
    pub fn object(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One app's rendered objects, as validation sees them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AppObjects<'a> {
    /// Environment.
    pub env: &'a str,
    /// App.
    pub app: &'a str,
    /// The environment's Kubernetes version (`1.31`).
    pub kube_version: &'a str,
    /// The render's objects.
    pub objects: &'a [Object<Body>],
}

/// A custom resource kept for [`Validator::finish`].
#[derive(Clone, Debug)]
struct Custom {
    env: String,
    app: String,
    kube_version: String,
    node: Arc<Node>,
    source: Option<String>,
}

/// What the first pass found and what it left for the second.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    findings: Vec<Finding>,
    custom: Vec<Custom>,
    crds: Crds,
    /// Objects checked.
    pub objects: usize,
    /// The (environment, app) renders checked in this run, not answered by
    /// stored findings: theirs are worth storing ([`Pending::store`]).
    fresh: Vec<(String, String)>,
}

impl Pending {
    /// Adds another app's pass.
    pub fn merge(&mut self, other: Pending) {
        self.findings.extend(other.findings);
        self.custom.extend(other.custom);
        self.crds.merge(other.crds);
        self.objects += other.objects;
        self.fresh.extend(other.fresh);
    }

    /// Locates the first pass's findings, then stores those of the renders
    /// checked afresh beside their cached renders, so the next run with
    /// the same renders does not check (or trace) them again.
    pub fn store(
        &mut self,
        root: &std::path::Path,
        envs: &[crate::env::Environment],
        cache: &crate::env::Cache,
    ) {
        if self.fresh.is_empty() {
            return;
        }
        locate(root, envs, &mut self.findings);
        for (env, app) in &self.fresh {
            let of_app: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| &f.env == env && &f.app == app)
                .collect();
            cache.store_findings(env, app, &stored::encode(&of_app));
        }
    }

    /// Whether a kept custom resource has no CRD among those seen so far
    /// or in `extra`.
    pub fn lacks_crds(&self, extra: &Crds) -> bool {
        self.custom.iter().any(|c| {
            let av = c.node.get_str("apiVersion").unwrap_or_default();
            let kind = c.node.get_str("kind").unwrap_or_default();
            self.crds.get(av, kind, &c.env).is_none() && extra.get(av, kind, &c.env).is_none()
        })
    }

    /// Records the CRDs of an app that is not validated itself (another
    /// environment's): their schemas validate the selected apps' resources.
    /// Identity-only objects are left out: the cache validation renders
    /// through carries whole documents.
    pub fn add_crds_of(&mut self, env: &str, app: &str, objects: &[Object<Body>]) {
        for n in objects.iter().filter_map(|o| o.node.document()) {
            self.crds.add(n, &format!("{env}/{app}"), Some(env));
        }
    }
}

/// The checks of one run.
#[derive(Default)]
pub(crate) struct Validator {
    catalog: Catalog,
    /// A type with no schema is an error, not a warning.
    pub strict: bool,
}

impl Validator {
    /// A validator; `strict`: a type with no schema is an error.
    pub fn new(strict: bool) -> Validator {
        Validator {
            catalog: Catalog::default(),
            strict,
        }
    }

    /// Checks every object of `app` that has a built-in schema or a
    /// removed apiVersion; keeps custom resources and CRDs for
    /// [`Validator::finish`].
    pub fn first(&self, app: AppObjects) -> Result<Pending, Error> {
        let schemas = self.catalog.version(app.kube_version)?;
        let mut p = Pending {
            objects: app.objects.len(),
            ..Default::default()
        };
        for o in app.objects {
            let Some(node) = o.node.document() else {
                return Err(Error::NoDocument {
                    env: app.env.to_string(),
                    app: app.app.to_string(),
                    object: o.id.to_string(),
                });
            };
            if o.id.gvk.kind == "CustomResourceDefinition" {
                p.crds
                    .add(node, &format!("{}/{}", app.env, app.app), Some(app.env));
            }
            let av = o.id.gvk.api_version();
            let kind = o.id.gvk.kind.as_str();
            let mut found = Vec::new();
            let api = removed::lookup(&av, kind, &schemas.version);
            if let Some((rule, message)) = &api {
                found.push((
                    check::Issue {
                        at: Vec::new(),
                        missing: None,
                        rule: *rule,
                        message: message.clone(),
                    },
                    if *rule == Rule::RemovedApi {
                        Severity::Error
                    } else {
                        Severity::Warning
                    },
                ));
            }
            if let Some(schema) = schemas.for_type(&av, kind) {
                found.extend(
                    check::check(node, schema, &schemas, false)
                        .into_iter()
                        .map(|i| (i, Severity::Error)),
                );
            } else if !matches!(api, Some((Rule::RemovedApi, _))) {
                p.custom.push(Custom {
                    env: app.env.to_string(),
                    app: app.app.to_string(),
                    kube_version: app.kube_version.to_string(),
                    node: Arc::clone(node),
                    source: o.source.clone(),
                });
            }
            let (env, name) = (app.env, app.app);
            p.findings.extend(
                found
                    .into_iter()
                    .map(|(i, sev)| finding(env, name, node, o.source.as_deref(), i, sev)),
            );
        }
        Ok(p)
    }

    /// Both passes over apps already rendered together (one side of a
    /// diff): each app's first pass, in parallel, then the custom
    /// resources against the CRDs of all of them and of `extra`.
    pub fn all(&self, apps: &[AppObjects], extra: &Crds) -> Result<Vec<Finding>, Error> {
        use rayon::prelude::*;
        let passes: Vec<Pending> = apps
            .par_iter()
            .map(|a| self.first(*a))
            .collect::<Result<_, _>>()?;
        let mut p = Pending::default();
        for one in passes {
            p.merge(one);
        }
        self.finish(p, extra)
    }

    /// [`Validator::first`], or its findings as stored with a cached
    /// render (`stored`, from `env::Cache::take_findings`): then only the
    /// CRDs and custom resources are parsed (from their printed text, the
    /// hit's documents holding only identities) and kept for
    /// [`Validator::finish`].
    pub fn first_or_stored(
        &self,
        app: AppObjects,
        stored: Option<&[u8]>,
    ) -> Result<Pending, Error> {
        let Some(bytes) = stored else {
            let mut p = self.first(app)?;
            p.fresh.push((app.env.to_string(), app.app.to_string()));
            return Ok(p);
        };
        let parse = |o: &Object<Body>| {
            crate::yaml::parse_all(&o.printed, crate::yaml::Resolver::V3)
                .ok()
                .and_then(|docs| docs.into_iter().find(|d| d.as_map().is_some()))
        };
        if let Some(p) = self.first_stored(app, bytes, &parse)? {
            return Ok(p);
        }
        // Stored findings of another shape: the documents are identities,
        // so validate them parsed again from their printed text.
        let objects: Vec<Object<Body>> = app
            .objects
            .iter()
            .map(|o| Object {
                node: parse(o).map_or_else(|| o.node.clone(), |n| Body::Whole(Arc::new(n))),
                ..o.clone()
            })
            .collect();
        let mut p = self.first(AppObjects {
            objects: &objects,
            ..app
        })?;
        p.fresh.push((app.env.to_string(), app.app.to_string()));
        Ok(p)
    }

    fn first_stored(
        &self,
        app: AppObjects,
        bytes: &[u8],
        parse: &dyn Fn(&Object<Body>) -> Option<Node>,
    ) -> Result<Option<Pending>, Error> {
        let Some(findings) = stored::decode(bytes, app.env, app.app) else {
            return Ok(None);
        };
        let schemas = self.catalog.version(app.kube_version)?;
        let mut p = Pending {
            objects: app.objects.len(),
            findings,
            ..Default::default()
        };
        for o in app.objects {
            let av = o.id.gvk.api_version();
            let kind = o.id.gvk.kind.as_str();
            let crd = kind == "CustomResourceDefinition";
            let removed = matches!(
                removed::lookup(&av, kind, &schemas.version),
                Some((Rule::RemovedApi, _))
            );
            let custom = !removed && schemas.for_type(&av, kind).is_none();
            if !crd && !custom {
                continue;
            }
            let Some(node) = parse(o) else {
                return Ok(None);
            };
            if crd {
                p.crds
                    .add(&node, &format!("{}/{}", app.env, app.app), Some(app.env));
            }
            if custom {
                p.custom.push(Custom {
                    env: app.env.to_string(),
                    app: app.app.to_string(),
                    kube_version: app.kube_version.to_string(),
                    node: Arc::new(node),
                    source: o.source.clone(),
                });
            }
        }
        Ok(Some(p))
    }

    /// Checks the kept custom resources against the CRDs of every pass and
    /// of `extra` (`crds:` files), and returns every finding, sorted.
    pub fn finish(&self, mut p: Pending, extra: &Crds) -> Result<Vec<Finding>, Error> {
        for c in std::mem::take(&mut p.custom) {
            let schemas = self.catalog.version(&c.kube_version)?;
            let av = c.node.get_str("apiVersion").unwrap_or_default().to_string();
            let kind = c.node.get_str("kind").unwrap_or_default().to_string();
            let crd = p
                .crds
                .get(&av, &kind, &c.env)
                .or_else(|| extra.get(&av, &kind, &c.env));
            let issues: Vec<(check::Issue, Severity)> = match crd {
                Some(crd) => match &crd.schema {
                    Some(s) => check::check(&c.node, s, &schemas, true)
                        .into_iter()
                        .map(|i| (i, Severity::Error))
                        .collect(),
                    None => Vec::new(),
                },
                None => {
                    let sev = if self.strict {
                        Severity::Error
                    } else {
                        Severity::Warning
                    };
                    let issue = check::Issue {
                        at: Vec::new(),
                        missing: None,
                        rule: Rule::NoSchema,
                        message: format!("no schema for {av} {kind}"),
                    };
                    vec![(issue, sev)]
                }
            };
            p.findings.extend(
                issues
                    .into_iter()
                    .map(|(i, sev)| finding(&c.env, &c.app, &c.node, c.source.as_deref(), i, sev)),
            );
        }
        let mut all = p.findings;
        all.sort_by(|a, b| {
            (
                &a.env,
                &a.app,
                &a.kind,
                &a.namespace,
                &a.name,
                &a.path,
                &a.message,
            )
                .cmp(&(
                    &b.env,
                    &b.app,
                    &b.kind,
                    &b.namespace,
                    &b.name,
                    &b.path,
                    &b.message,
                ))
        });
        Ok(all)
    }
}

fn finding(
    env: &str,
    app: &str,
    node: &Node,
    source: Option<&str>,
    i: check::Issue,
    severity: Severity,
) -> Finding {
    let get = |path: &[&str]| {
        node.get_path(path)
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Finding {
        env: env.to_string(),
        app: app.to_string(),
        api_version: get(&["apiVersion"]),
        kind: get(&["kind"]),
        namespace: get(&["metadata", "namespace"]),
        name: get(&["metadata", "name"]),
        path: path_text(&i.at, i.missing.as_deref()),
        at: i.at,
        rule: i.rule,
        severity,
        message: i.message,
        file: source.map(str::to_string),
        line: None,
    }
}
