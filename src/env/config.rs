//! Environment definitions: `environments/<env>.yaml`, decoded strictly
//! (an unknown key is an error naming the file and line).

use std::path::{Path, PathBuf};

use super::confine::ConfigPath;
use super::guard::Secrets;
use super::Error;
use crate::yaml::fields::{self, Field, Keys, Strict};
use crate::yaml::{Node, Value};

/// One environment.
#[derive(Clone, Debug)]
pub struct Environment {
    /// `name`.
    pub name: String,
    /// `promotesTo`: the next environments in the promotion graph (one
    /// name, or a list: a release fans out to each).
    pub promotes_to: Vec<String>,
    /// 1-based line of `promotesTo` (0 when unset), for graph errors.
    pub promotes_to_line: u32,
    /// `wave`: among the targets of one source, this one is promoted only
    /// once every target of a lower wave carries the version.
    pub wave: Option<u32>,
    /// Where its rendered output goes.
    pub output: Output,
    /// Whether `output` was configured (not defaulted).
    pub output_configured: bool,
    /// File layout of each app.
    pub layout: Layout,
    /// Commit message template (minijinja) for branch output.
    pub commit_message: Option<String>,
    /// `repoURL`: the source repository's URL written to
    /// `hydrator.metadata` (default: the `origin` remote's URL).
    pub repo_url: Option<String>,
    /// `readme`: a `README.md` in each app directory of branch output.
    pub readme: Option<Readme>,
    /// App discovery rules.
    pub discover: Vec<Discover>,
    /// Its apps, in file order.
    pub apps: Vec<App>,
    /// 1-based line of `apps:` (of `name:` when there is none).
    pub apps_line: u32,
    /// What is suspicious but not wrong (an environment without apps, a
    /// discover glob that finds nothing), filled by
    /// [`super::load_environments`].
    pub warnings: Vec<crate::warning::Warning>,
    /// `promotion:`: policies for promotions into this environment.
    pub promotion: super::promotion::Promotion,
    /// `diff:`: how `hydrate diff` compares this environment.
    pub diff: DiffConfig,
    /// `secrets:`: what a rendered plain `Secret` does (unset: refused on
    /// branch output, allowed in a directory).
    pub secrets: Option<Secrets>,
    /// `strict: true`: non-deterministic output is an error.
    pub strict: bool,
    /// `validate: true`: `render` checks every rendered object against its
    /// Kubernetes schema (and the repository's CRDs) and refuses to write
    /// invalid output.
    pub validate: bool,
    /// `kubeVersion: "1.31"`: the Kubernetes version whose schemas and
    /// removed APIs `validate` checks against (unset: the documented
    /// default).
    pub kube_version: Option<String>,
    /// `crds:`: CustomResourceDefinition files whose schemas validate
    /// custom resources (besides the CRDs rendered anywhere in the
    /// repository), relative to the repository root.
    pub crds: Vec<PathBuf>,
    /// `allowOutside: true`: the paths of this file may leave the
    /// repository root.
    pub allow_outside: bool,
    /// `warnings: {ignore: [KIND, ...]}`: warning kinds not printed for
    /// this environment's renders.
    pub ignore_warnings: Vec<crate::warning::WarningKind>,
    /// Every path the file names, with its key and line, for
    /// [`super::confine`].
    pub paths: Vec<ConfigPath>,
    /// Line of `output.dir`/`output.branch` (of `name` when defaulted).
    pub output_line: u32,
    /// Line of `commitMessage` (0 when unset).
    pub commit_message_line: u32,
    /// The file it came from.
    pub file: PathBuf,
}

/// `readme:` of an environment file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readme {
    /// `true`: Argo CD's README (how to render the path again).
    Default,
    /// A minijinja template, relative to the root hydrate renders.
    Template(PathBuf),
}

/// `diff:` of an environment file: differences to ignore, and differences
/// that are supposed to exist. Expressions are kept as written, with their
/// line, so `diff/` can compile them and name the line when one is not
/// supported.
#[derive(Clone, Debug, Default)]
pub struct DiffConfig {
    /// `ignoreDifferences`: paths removed from both sides before comparing
    /// (Argo CD's shape).
    pub ignore_differences: Vec<DiffRule>,
    /// `expected`: paths whose differences are reported on their own and do
    /// not count as drift.
    pub expected: Vec<DiffRule>,
}

/// One `ignoreDifferences` or `expected` entry (Argo CD's
/// `ResourceIgnoreDifferences`, plus `app` and `secret`).
#[derive(Clone, Debug, Default)]
pub struct DiffRule {
    /// Only resources of this app.
    pub app: Option<String>,
    /// API group (`""` for the core group; any when absent).
    pub group: Option<String>,
    /// Kind (any when absent).
    pub kind: Option<String>,
    /// Name (any when absent).
    pub name: Option<String>,
    /// Namespace (any when absent).
    pub namespace: Option<String>,
    /// `jsonPointers`, each with its line.
    pub json_pointers: Vec<(String, u32)>,
    /// `jqPathExpressions`, each with its line.
    pub jq_path_expressions: Vec<(String, u32)>,
    /// `secret: true`: mask `data`/`stringData` of matching resources as
    /// Secrets are masked.
    pub secret: bool,
    /// Line of the entry.
    pub line: u32,
}

/// Where an environment's rendered output goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// A directory (relative to the repository root).
    Dir(PathBuf),
    /// A branch of the repository (`env/staging`), committed with git2.
    Branch(String),
}

/// How an app's output is laid out in files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One `<app>/manifest.yaml` holding every resource.
    #[default]
    Manifest,
    /// One file per resource: `<app>/<kind>-<name>.yaml`.
    Resources,
}

/// An app discovery rule: every directory matching `pattern` (with `{env}`
/// replaced by the environment name) is an app named by what the first `*`
/// matched.
#[derive(Clone, Debug)]
pub struct Discover {
    /// The glob, relative to the repository root.
    pub pattern: String,
    /// Globs of directories (relative to the repository root, `{env}`
    /// replaced; `*` stays within one component, `**` crosses them) that
    /// the rule skips.
    pub exclude: Vec<String>,
    /// 1-based line of the rule in its file.
    pub line: u32,
}

/// A discover `exclude:` glob: `*` within one path component, `**` across.
pub fn discover_glob(glob: &str) -> Result<globset::GlobMatcher, globset::Error> {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
}

/// One app of an environment.
#[derive(Clone, Debug)]
pub struct App {
    /// `name`: also its output subdirectory.
    pub name: String,
    /// How it renders.
    pub source: Source,
    /// `pins:`: declared pins (helm value paths, file pins).
    pub pins: Vec<super::promotion::PinDecl>,
    /// `promotion:`: how promotion treats this app (files copied whole).
    pub promotion: super::promotion::AppPromotion,
}

/// How an app renders.
#[derive(Clone, Debug)]
pub enum Source {
    /// `kustomize: DIR` (relative to the repository root).
    Kustomize(PathBuf),
    /// `helm: {...}`: a chart rendered as `helm template` renders it.
    Helm(Box<ChartApp>),
}

impl Source {
    /// Feeds every field of the source to `h`, each prefixed with its
    /// length, for the render cache's keys, its paths relative to the
    /// repository root `root` (a job's are joined to the root as the
    /// command line spelled it: `--root .` and `--root /repo` are one
    /// repository, and one cache). A kustomization is its directory's
    /// bytes; a chart is its `Debug` text, which names every field.
    /// Formatting each directory with `Debug` (escaping it character by
    /// character) was a twentieth of a settled run at 10,000 apps.
    pub fn key_into(&self, root: &Path, h: &mut sha2::Sha256) {
        use sha2::Digest;
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        let under = |p: &Path| p.strip_prefix(root).unwrap_or(p).to_path_buf();
        match self {
            Source::Kustomize(dir) => {
                field(b"kustomize");
                field(under(dir).as_os_str().as_encoded_bytes());
            }
            Source::Helm(chart) => {
                field(b"helm");
                let mut chart = chart.clone();
                chart.chart = under(&chart.chart);
                for f in &mut chart.value_files {
                    *f = under(f);
                }
                field(format!("{chart:?}").as_bytes());
            }
        }
    }
}

/// An app that is a Helm chart (the fields follow Argo CD's
/// `source.helm`, with the chart path alongside).
#[derive(Clone, Debug, Default)]
pub struct ChartApp {
    /// `chart`: a chart directory or `.tgz` (relative to the repository root).
    pub chart: PathBuf,
    /// `releaseName` (default: the app's name).
    pub release_name: String,
    /// `namespace`: `.Release.Namespace` (default `default`).
    pub namespace: String,
    /// `valueFiles`, applied in order (relative to the repository root).
    pub value_files: Vec<PathBuf>,
    /// `values`: inline values, applied after the files.
    pub values: Option<Node>,
    /// `set`: `key=value` pairs as `--set` takes them, applied last.
    pub set: Vec<String>,
    /// `skipCrds`: leave out the chart's `crds/` (included by default, as
    /// Argo CD does).
    pub skip_crds: bool,
    /// `skipTests`: leave out test hooks.
    pub skip_tests: bool,
    /// `skipHooks`: leave out every hook.
    pub skip_hooks: bool,
    /// `kubeVersion`: `.Capabilities.KubeVersion`.
    pub kube_version: Option<String>,
    /// `apiVersions`: extra `.Capabilities.APIVersions`.
    pub api_versions: Vec<String>,
    /// `helmVersion`: which helm's output to reproduce (3, the default, or 4).
    pub helm_version: crate::helm::HelmVersion,
}

impl Environment {
    /// Reads `environments/<env>.yaml`.
    pub fn load(file: &Path) -> Result<Environment, Error> {
        let src = std::fs::read_to_string(file).map_err(|source| Error::Read {
            path: file.to_path_buf(),
            source,
        })?;
        Environment::decode(file, super::document::one_document(file, &src)?)
    }

    /// The environment of file `file` parsed into `docs` (as
    /// [`Environment::load`], for a caller that parsed it already).
    pub fn from_documents(file: &Path, docs: Vec<Node>) -> Result<Environment, Error> {
        Environment::decode(file, super::document::only_document(file, docs)?)
    }

    /// The environment document `root` of `file`.
    fn decode(file: &Path, root: Node) -> Result<Environment, Error> {
        let d = Decoder {
            file,
            paths: Default::default(),
        };
        let mut env = Environment {
            name: String::new(),
            promotes_to: Vec::new(),
            promotes_to_line: 0,
            wave: None,
            output: Output::Dir(PathBuf::new()),
            output_configured: false,
            layout: Layout::Manifest,
            commit_message: None,
            repo_url: None,
            readme: None,
            discover: Vec::new(),
            apps: Vec::new(),
            apps_line: root.pos.line,
            warnings: Vec::new(),
            promotion: Default::default(),
            diff: DiffConfig::default(),
            secrets: None,
            strict: false,
            validate: false,
            kube_version: None,
            crds: Vec::new(),
            allow_outside: false,
            ignore_warnings: Vec::new(),
            paths: Vec::new(),
            output_line: 0,
            commit_message_line: 0,
            file: file.to_path_buf(),
        };
        d.fields(
            &root,
            &mut env,
            &[
                ("name", |d, v, e| {
                    e.name = d.string(v)?;
                    if e.output_line == 0 {
                        e.output_line = v.pos.line;
                    }
                    Ok(())
                }),
                ("promotesTo", |d, v, e| {
                    e.promotes_to = match v.as_seq() {
                        Some(_) => d.strings(v)?,
                        None => vec![d.string(v)?],
                    };
                    e.promotes_to_line = v.pos.line;
                    for (i, t) in e.promotes_to.iter().enumerate() {
                        if e.promotes_to[..i].contains(t) {
                            return Err(d.err(v, format!("promotesTo names `{t}` twice")));
                        }
                    }
                    Ok(())
                }),
                ("wave", |d, v, e| {
                    let text = d.string(v)?;
                    e.wave = Some(text.parse().map_err(|_| {
                        d.err(v, format!("wave `{text}`: expected a whole number (1, 2, …)"))
                    })?);
                    Ok(())
                }),
                ("output", |d, v, e| {
                    let (output, layout) = d.output(v)?;
                    e.output_configured = output.is_some();
                    if let Some(line) = v
                        .as_map()
                        .and_then(|m| m.iter().find(|(k, _)| matches!(k.key_text(), Some("dir" | "branch"))))
                        .map(|(_, x)| x.pos.line)
                    {
                        e.output_line = line;
                    }
                    e.output = output.unwrap_or(Output::Dir(PathBuf::new()));
                    e.layout = layout;
                    Ok(())
                }),
                ("commitMessage", |d, v, e| {
                    let t = d.string(v)?;
                    if t.trim().is_empty() {
                        return Err(d.err(
                            v,
                            "`commitMessage` is empty; leave it out for the default message",
                        ));
                    }
                    e.commit_message = Some(t);
                    e.commit_message_line = v.pos.line;
                    Ok(())
                }),
                ("secrets", |d, v, e| {
                    let text = d.string(v)?;
                    e.secrets = Some(Secrets::parse(&text).ok_or_else(|| {
                        d.err(v, format!("unknown secrets policy `{text}` (expected `allow`, `refuse` or `mask`)"))
                    })?);
                    Ok(())
                }),
                ("strict", |d, v, e| {
                    e.strict = d.bool(v)?;
                    Ok(())
                }),
                ("validate", |d, v, e| {
                    e.validate = d.bool(v)?;
                    Ok(())
                }),
                ("kubeVersion", |d, v, e| {
                    let text = d.string(v)?;
                    if !is_kube_version(&text) {
                        return Err(d.err(
                            v,
                            format!("kubeVersion `{text}` is not a Kubernetes version like \"1.31\""),
                        ));
                    }
                    e.kube_version = Some(text);
                    Ok(())
                }),
                ("crds", |d, v, e| {
                    e.crds = d
                        .seq(v)?
                        .iter()
                        .map(|x| d.path("crds", x))
                        .collect::<Result<_, _>>()?;
                    Ok(())
                }),
                ("allowOutside", |d, v, e| {
                    e.allow_outside = d.bool(v)?;
                    Ok(())
                }),
                ("warnings", |d, v, e| {
                    d.fields(
                        v,
                        &mut e.ignore_warnings,
                        &[("ignore", |d, v, kinds| {
                            for k in d.seq(v)? {
                                kinds.push(d.warning_kind(k)?);
                            }
                            Ok(())
                        })],
                    )
                }),
                ("repoURL", |d, v, e| {
                    e.repo_url = Some(d.string(v)?);
                    Ok(())
                }),
                ("readme", |d, v, e| {
                    e.readme = match v.as_scalar().map(|s| s.text.as_str()) {
                        Some("true") => Some(Readme::Default),
                        Some("false") => None,
                        _ => Some(Readme::Template(d.path("readme", v)?)),
                    };
                    Ok(())
                }),
                ("promotion", |d, v, e| {
                    e.promotion = super::promotion::decode_promotion(d.file, v)?;
                    Ok(())
                }),
                ("diff", |d, v, e| {
                    e.diff = d.diff(v)?;
                    Ok(())
                }),
                ("discover", |d, v, e| {
                    e.discover = d
                        .seq(v)?
                        .iter()
                        .map(|x| d.discover(x))
                        .collect::<Result<_, _>>()?;
                    Ok(())
                }),
                ("apps", |d, v, e| {
                    e.apps_line = v.pos.line;
                    // A set, not a scan of the apps so far: 12,000 apps
                    // were 72 million compares an environment file.
                    let mut listed: std::collections::HashSet<String> =
                        e.apps.iter().map(|x| x.name.clone()).collect();
                    for a in d.seq(v)? {
                        let app = d.app(a)?;
                        if !listed.insert(app.name.clone()) {
                            return Err(d.err(a, format!("app `{}` is listed twice", app.name)));
                        }
                        e.apps.push(app);
                    }
                    Ok(())
                }),
            ],
        )?;
        if env.name.is_empty() {
            return Err(d.err(&root, "missing required key `name`"));
        }
        if !is_valid_name(&env.name) {
            return Err(d.err(&root, format!("invalid environment name `{}`", env.name)));
        }
        if !env.output_configured {
            env.output = Output::Dir(Path::new("rendered").join(&env.name));
        }
        if let Output::Branch(b) = &env.output {
            if let Some(why) = super::branch_name::problem(b) {
                return Err(Error::Config {
                    path: file.to_path_buf(),
                    line: env.output_line,
                    message: format!(
                        "environment `{}`: invalid branch `{}`: {why}",
                        env.name,
                        b.escape_debug()
                    ),
                });
            }
        }
        env.paths = d.paths.into_inner();
        Ok(env)
    }
}

/// `1.31` or `v1.31.2`: a major and a minor number, an optional patch.
fn is_kube_version(text: &str) -> bool {
    let v = text.strip_prefix('v').unwrap_or(text);
    let parts: Vec<&str> = v.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Environment and app names become path components and branch names.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

struct Decoder<'a> {
    file: &'a Path,
    /// Paths named so far, for [`super::confine`].
    paths: std::cell::RefCell<Vec<ConfigPath>>,
}

impl Strict for Decoder<'_> {
    type Error = Error;

    fn keys(&self) -> Keys {
        Keys::Exact
    }

    fn unknown(&self, key: &Node, name: &str, known: &[&str]) -> Result<(), Error> {
        Err(self.err(
            key,
            format!(
                "unknown key `{name}` (expected one of: {})",
                known.join(", ")
            ),
        ))
    }
}

impl Decoder<'_> {
    fn err(&self, at: &Node, message: impl Into<String>) -> Error {
        Error::Config {
            path: self.file.to_path_buf(),
            line: at.pos.line,
            message: message.into(),
        }
    }

    /// Decodes a mapping strictly through `table` (see [`yaml::fields`]).
    fn fields<T>(&self, n: &Node, target: &mut T, table: &[Field<Self, T>]) -> Result<(), Error> {
        if !matches!(n.value, Value::Map(_)) {
            return Err(self.err(n, format!("expected a mapping, found a {}", n.kind_name())));
        }
        fields::decode(self, n, target, table)
    }

    fn string(&self, n: &Node) -> Result<String, Error> {
        match n.as_scalar() {
            Some(s) if !n.is_null() => Ok(s.text.clone()),
            _ => Err(self.err(n, format!("expected a string, found a {}", n.kind_name()))),
        }
    }

    /// A path (a string), remembered with its key and line.
    fn path(&self, key: &'static str, n: &Node) -> Result<PathBuf, Error> {
        let path = PathBuf::from(self.string(n)?);
        self.paths.borrow_mut().push(ConfigPath {
            key,
            path: path.clone(),
            line: n.pos.line,
        });
        Ok(path)
    }

    /// A warning kind's name (`deprecation`, ...; `kustomize-deprecated`
    /// is another name for `deprecation`).
    fn warning_kind(&self, n: &Node) -> Result<crate::warning::WarningKind, Error> {
        use crate::warning::WarningKind;
        let name = self.string(n)?;
        let kind = match name.as_str() {
            "kustomize-deprecated" => Some(WarningKind::Deprecation),
            other => WarningKind::from_name(other),
        };
        kind.ok_or_else(|| {
            self.err(
                n,
                format!(
                    "unknown warning kind `{name}` (expected one of: {})",
                    WarningKind::ALL.map(WarningKind::as_str).join(", ")
                ),
            )
        })
    }

    fn seq<'n>(&self, n: &'n Node) -> Result<&'n [Node], Error> {
        n.as_seq()
            .map(Vec::as_slice)
            .ok_or_else(|| self.err(n, format!("expected a list, found a {}", n.kind_name())))
    }

    fn output(&self, n: &Node) -> Result<(Option<Output>, Layout), Error> {
        let mut out = (None, Layout::Manifest);
        self.fields(
            n,
            &mut out,
            &[
                ("dir", |d, v, (out, _)| {
                    let dir = d.path("output.dir", v)?;
                    d.only_one_output(v, out, Output::Dir(dir))
                }),
                ("branch", |d, v, (out, _)| {
                    let s = d.string(v)?;
                    d.only_one_output(v, out, Output::Branch(s))
                }),
                ("layout", |d, v, (_, layout)| {
                    *layout = match d.string(v)?.as_str() {
                        "manifest" => Layout::Manifest,
                        "resources" => Layout::Resources,
                        other => {
                            return Err(d.err(
                                v,
                                format!(
                                    "unknown layout `{other}` (expected `manifest` or `resources`)"
                                ),
                            ))
                        }
                    };
                    Ok(())
                }),
            ],
        )?;
        Ok(out)
    }

    fn only_one_output(&self, v: &Node, out: &mut Option<Output>, o: Output) -> Result<(), Error> {
        if out.is_some() {
            return Err(self.err(v, "output takes either `dir` or `branch`, not both"));
        }
        *out = Some(o);
        Ok(())
    }

    fn discover(&self, n: &Node) -> Result<Discover, Error> {
        let mut rule: (Option<String>, Vec<String>) = (None, Vec::new());
        self.fields(
            n,
            &mut rule,
            &[
                ("kustomize", |d, v, r| {
                    r.0 = Some(d.string(v)?);
                    Ok(())
                }),
                ("exclude", |d, v, r| {
                    r.1 = d.strings(v)?;
                    for g in &r.1 {
                        if let Err(e) = discover_glob(g) {
                            return Err(d.err(v, format!("discover exclude `{g}`: {e}")));
                        }
                    }
                    Ok(())
                }),
            ],
        )?;
        let (pattern, exclude) = rule;
        let pattern = pattern.ok_or_else(|| self.err(n, "a discover rule needs `kustomize`"))?;
        self.paths.borrow_mut().push(ConfigPath {
            key: "discover",
            path: PathBuf::from(&pattern),
            line: n.pos.line,
        });
        if !pattern.contains('*') {
            return Err(self.err(
                n,
                format!("discover pattern `{pattern}` has no `*` to name apps by"),
            ));
        }
        Ok(Discover {
            pattern,
            exclude,
            line: n.pos.line,
        })
    }

    fn app(&self, n: &Node) -> Result<App, Error> {
        let mut app = (None, None, (Vec::new(), Default::default()));
        self.fields(
            n,
            &mut app,
            &[
                ("name", |d, v, (name, _, _)| {
                    *name = Some(d.string(v)?);
                    Ok(())
                }),
                ("kustomize", |d, v, (_, source, _)| {
                    let dir = d.path("kustomize", v)?;
                    d.only_one_source(v, source, Source::Kustomize(dir))
                }),
                ("helm", |d, v, (_, source, _)| {
                    let chart = Box::new(d.chart_app(v)?);
                    d.only_one_source(v, source, Source::Helm(chart))
                }),
                ("pins", |d, v, (_, _, (pins, _))| {
                    *pins = super::promotion::decode_pins(d.file, v)?;
                    Ok(())
                }),
                ("promotion", |d, v, (_, _, (_, promotion))| {
                    *promotion = super::promotion::decode_app_promotion(d.file, v)?;
                    Ok(())
                }),
            ],
        )?;
        let (name, source, (pins, promotion)) = app;
        let name = name.ok_or_else(|| self.err(n, "an app needs `name`"))?;
        if !is_valid_name(&name) {
            return Err(self.err(n, format!("invalid app name `{name}`")));
        }
        let mut source = source
            .ok_or_else(|| self.err(n, format!("app `{name}` needs `kustomize` or `helm`")))?;
        if let Source::Helm(c) = &mut source {
            if c.release_name.is_empty() {
                c.release_name.clone_from(&name);
            }
        }
        self.pin_files(n, &source);
        Ok(App {
            name,
            source,
            pins,
            promotion,
        })
    }

    /// Remembers each file pin's `file` (its `{dir}` the app's directory,
    /// as `promote` reads it) for [`super::confine`].
    fn pin_files(&self, app: &Node, source: &Source) {
        let dir = match source {
            Source::Kustomize(dir) => dir,
            Source::Helm(c) => &c.chart,
        };
        let items = app.get("pins").and_then(Node::as_seq);
        for f in items.into_iter().flatten().filter_map(|i| i.get("file")) {
            if let Some(text) = f.as_scalar().map(|s| &s.text) {
                self.paths.borrow_mut().push(ConfigPath {
                    key: "pins.file",
                    path: PathBuf::from(text.replace("{dir}", &dir.to_string_lossy())),
                    line: f.pos.line,
                });
            }
        }
    }

    fn only_one_source(&self, v: &Node, s: &mut Option<Source>, new: Source) -> Result<(), Error> {
        if s.is_some() {
            return Err(self.err(v, "an app takes either `kustomize` or `helm`, not both"));
        }
        *s = Some(new);
        Ok(())
    }

    fn diff(&self, n: &Node) -> Result<DiffConfig, Error> {
        let mut c = DiffConfig::default();
        self.fields(
            n,
            &mut c,
            &[
                ("ignoreDifferences", |d, v, c| {
                    c.ignore_differences = d.diff_rules(v)?;
                    Ok(())
                }),
                ("expected", |d, v, c| {
                    c.expected = d.diff_rules(v)?;
                    Ok(())
                }),
            ],
        )?;
        Ok(c)
    }

    fn diff_rules(&self, v: &Node) -> Result<Vec<DiffRule>, Error> {
        self.seq(v)?.iter().map(|r| self.diff_rule(r)).collect()
    }

    /// A list of strings, each with its line (for errors about one entry).
    fn located(&self, v: &Node) -> Result<Vec<(String, u32)>, Error> {
        self.seq(v)?
            .iter()
            .map(|x| Ok((self.string(x)?, x.pos.line)))
            .collect()
    }

    fn diff_rule(&self, n: &Node) -> Result<DiffRule, Error> {
        let mut r = DiffRule {
            line: n.pos.line,
            ..DiffRule::default()
        };
        self.fields(
            n,
            &mut r,
            &[
                ("app", |d, v, r| {
                    r.app = Some(d.string(v)?);
                    Ok(())
                }),
                ("group", |_, v, r| {
                    r.group = Some(v.as_str().unwrap_or_default().to_string());
                    Ok(())
                }),
                ("kind", |d, v, r| {
                    r.kind = Some(d.string(v)?);
                    Ok(())
                }),
                ("name", |d, v, r| {
                    r.name = Some(d.string(v)?);
                    Ok(())
                }),
                ("namespace", |d, v, r| {
                    r.namespace = Some(d.string(v)?);
                    Ok(())
                }),
                ("jsonPointers", |d, v, r| {
                    r.json_pointers = d.located(v)?;
                    Ok(())
                }),
                ("jqPathExpressions", |d, v, r| {
                    r.jq_path_expressions = d.located(v)?;
                    Ok(())
                }),
                ("secret", |d, v, r| {
                    r.secret = d.bool(v)?;
                    Ok(())
                }),
            ],
        )?;
        Ok(r)
    }

    fn strings(&self, n: &Node) -> Result<Vec<String>, Error> {
        self.seq(n)?.iter().map(|x| self.string(x)).collect()
    }

    fn bool(&self, n: &Node) -> Result<bool, Error> {
        match n.as_scalar().map(|s| s.text.as_str()) {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(self.err(n, "expected true or false")),
        }
    }

    fn chart_app(&self, n: &Node) -> Result<ChartApp, Error> {
        let mut c = ChartApp::default();
        self.fields(
            n,
            &mut c,
            &[
                ("chart", |d, v, c| {
                    c.chart = d.path("chart", v)?;
                    Ok(())
                }),
                ("releaseName", |d, v, c| {
                    c.release_name = d.string(v)?;
                    Ok(())
                }),
                ("release", |d, v, c| {
                    c.release_name = d.string(v)?;
                    Ok(())
                }),
                ("namespace", |d, v, c| {
                    c.namespace = d.string(v)?;
                    Ok(())
                }),
                ("valueFiles", |d, v, c| {
                    c.value_files = d
                        .seq(v)?
                        .iter()
                        .map(|x| d.path("valueFiles", x))
                        .collect::<Result<_, _>>()?;
                    Ok(())
                }),
                // A list of files (the design sketch's form) or inline values (Argo
                // CD's `valuesObject`).
                ("values", |d, v, c| {
                    if v.as_seq().is_some() {
                        for x in d.seq(v)? {
                            c.value_files.push(d.path("values", x)?);
                        }
                    } else if v.as_map().is_some() {
                        c.values = Some(v.clone());
                    } else {
                        return Err(d.err(v, "`values` must be a mapping or a list of files"));
                    }
                    Ok(())
                }),
                ("set", |d, v, c| {
                    c.set = d.strings(v)?;
                    Ok(())
                }),
                ("skipCrds", |d, v, c| {
                    c.skip_crds = d.bool(v)?;
                    Ok(())
                }),
                ("skipTests", |d, v, c| {
                    c.skip_tests = d.bool(v)?;
                    Ok(())
                }),
                ("skipHooks", |d, v, c| {
                    c.skip_hooks = d.bool(v)?;
                    Ok(())
                }),
                ("kubeVersion", |d, v, c| {
                    c.kube_version = Some(d.string(v)?);
                    Ok(())
                }),
                ("apiVersions", |d, v, c| {
                    c.api_versions = d.strings(v)?;
                    Ok(())
                }),
                ("helmVersion", |d, v, c| {
                    c.helm_version = crate::helm::HelmVersion::parse(&d.string(v)?)
                        .map_err(|e| d.err(v, e.to_string()))?;
                    Ok(())
                }),
            ],
        )?;
        if c.chart.as_os_str().is_empty() {
            return Err(self.err(n, "a helm app needs `chart`"));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(src: &str) -> Result<Environment, Error> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("dev.yaml");
        std::fs::write(&f, src).unwrap();
        Environment::load(&f)
    }

    #[test]
    fn decodes_and_defaults() {
        let e =
            load("name: dev\npromotesTo: staging\napps:\n- name: web\n  kustomize: apps/web/dev\n")
                .unwrap();
        assert_eq!(e.output, Output::Dir(PathBuf::from("rendered/dev")));
        assert_eq!(e.apps[0].name, "web");
        assert_eq!(e.promotes_to, ["staging"]);
        let e = load("name: staging\npromotesTo: [prod-eu, prod-us]\nwave: 2\n").unwrap();
        assert_eq!(e.promotes_to, ["prod-eu", "prod-us"]);
        assert_eq!((e.promotes_to_line, e.wave), (2, Some(2)));
        let err = load("name: s\npromotesTo: [a, a]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dev.yaml:2: promotesTo names `a` twice"),
            "{err}"
        );
        assert!(load("name: s\nwave: first\n").is_err());
    }

    #[test]
    fn branch_output_layout_and_discovery() {
        let e = load(
            "name: prod\noutput: {branch: env/prod, layout: resources}\ndiscover:\n- kustomize: apps/*/overlays/{env}\n",
        )
        .unwrap();
        assert_eq!(e.output, Output::Branch("env/prod".into()));
        assert_eq!(e.layout, Layout::Resources);
        assert_eq!(e.discover[0].pattern, "apps/*/overlays/{env}");
        assert!(load("name: x\noutput: {dir: a, branch: b}\n").is_err());
        assert!(load("name: x\noutput: {layout: flat}\n").is_err());
        assert!(load("name: ../x\n").is_err());
    }

    #[test]
    fn chart_apps() {
        let e = load(
            "name: dev\napps:\n- name: cache\n  helm:\n    chart: charts/cache\n    valueFiles: [v/dev.yaml]\n    values: {replicas: 2}\n    skipCrds: true\n",
        )
        .unwrap();
        let Source::Helm(c) = &e.apps[0].source else {
            panic!("not a chart app");
        };
        assert_eq!(c.release_name, "cache");
        assert_eq!(c.value_files, [PathBuf::from("v/dev.yaml")]);
        assert!(c.skip_crds && c.values.is_some());
        assert_eq!(c.helm_version, crate::helm::HelmVersion::V3);
        let e =
            load("name: dev\napps:\n- name: x\n  helm: {chart: c, helmVersion: \"4\"}\n").unwrap();
        assert!(
            matches!(&e.apps[0].source, Source::Helm(c) if c.helm_version == crate::helm::HelmVersion::V4)
        );
        assert!(
            load("name: dev\napps:\n- name: x\n  helm: {chart: c, helmVersion: \"2\"}\n").is_err()
        );
        let err = load("name: dev\napps:\n- name: x\n  helm: {chart: c, skipCrds: maybe}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("dev.yaml:4"), "{err}");
        assert!(load("name: dev\napps:\n- name: x\n  helm: {}\n").is_err());
        let e = load("name: dev\napps:\n- name: x\n  helm: {chart: c, release: r, values: [a.yaml, b.yaml]}\n").unwrap();
        assert!(
            matches!(&e.apps[0].source, Source::Helm(c) if c.release_name == "r" && c.value_files.len() == 2)
        );
        assert!(load("name: dev\napps:\n- name: x\n  kustomize: a\n  helm: {chart: c}\n").is_err());
    }

    #[test]
    fn diff_rules_keep_their_lines() {
        let e = load("name: dev\ndiff:\n  ignoreDifferences:\n  - kind: Deployment\n    jsonPointers:\n    - /spec/replicas\n  expected:\n  - group: apps\n    jqPathExpressions: [.spec.replicas]\n").unwrap();
        let r = &e.diff.ignore_differences[0];
        assert_eq!(r.kind.as_deref(), Some("Deployment"));
        assert_eq!(r.json_pointers, [("/spec/replicas".to_string(), 6)]);
        assert_eq!(e.diff.expected[0].jq_path_expressions[0].1, 9);
        let err = load("name: dev\ndiff:\n  expected:\n  - jqPaths: [.a]\n").unwrap_err();
        assert!(err.to_string().contains("dev.yaml:4"), "{err}");
    }

    #[test]
    fn unknown_keys_name_the_line() {
        let e = load("name: dev\napps:\n- name: web\n  kustomise: x\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("dev.yaml:4"), "{msg}");
        assert!(msg.contains("unknown key `kustomise`"), "{msg}");
    }

    #[test]
    fn a_source_keys_by_every_field() {
        use sha2::Digest;
        let key = |s: &Source| {
            let mut h = sha2::Sha256::new();
            s.key_into(Path::new("/repo"), &mut h);
            h.finalize()
        };
        let chart = |release: &str| {
            Source::Helm(Box::new(ChartApp {
                release_name: release.into(),
                ..Default::default()
            }))
        };
        let sources = [
            Source::Kustomize("apps/web".into()),
            Source::Kustomize("apps/web2".into()),
            Source::Kustomize("".into()),
            chart("web"),
            chart("web2"),
        ];
        for (i, a) in sources.iter().enumerate() {
            for (j, b) in sources.iter().enumerate() {
                assert_eq!(key(a) == key(b), i == j, "{a:?} / {b:?}");
            }
        }
        assert_eq!(key(&chart("web")), key(&chart("web")));
        // Joined to the root however it was spelled: one key.
        let web = Source::Kustomize("apps/web".into());
        for root in ["/repo", "./x/../repo", "repo"] {
            let mut h = sha2::Sha256::new();
            Source::Kustomize(Path::new(root).join("apps/web")).key_into(Path::new(root), &mut h);
            assert_eq!(h.finalize(), key(&web), "{root}");
        }
        let mut values = ChartApp {
            chart: "charts/web".into(),
            value_files: vec!["envs/dev.yaml".into()],
            ..Default::default()
        };
        let relative = key(&Source::Helm(Box::new(values.clone())));
        values.chart = Path::new("/elsewhere").join(&values.chart);
        values.value_files = vec![Path::new("/elsewhere/envs/dev.yaml").into()];
        let mut h = sha2::Sha256::new();
        Source::Helm(Box::new(values)).key_into(Path::new("/elsewhere"), &mut h);
        assert_eq!(h.finalize(), relative);
    }
}
