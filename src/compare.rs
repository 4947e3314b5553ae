//! The render-and-compare step behind `hydrate diff`: loads environments
//! (from the working tree, or from a git revision exported into a
//! temporary directory, never checked out: only the files its renders can
//! read, see `git::Export` and `env::reach`), renders them with
//! `env::render_all` or reads their committed output, and hands the
//! resources to `diff/`. Unless told not to, it validates both sides too
//! (`validate/`, each with its environment's Kubernetes version and CRDs),
//! so the diff can say what the change makes invalid and what it fixes.
//! It writes nothing outside its temporary directory and never touches
//! the working tree, the index or HEAD.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diff::{self, Comparison, Mode, Rules, Settings, Side};
use crate::env::{self, Environment, Output, Selection};
use crate::git::{Export, Repo};
use crate::k8s::{Body, Object};
use crate::validate::{self, AppObjects, Validator};

/// What to compare and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Repository root (holds `environments/`).
    pub root: PathBuf,
    /// `FROM TO`: two environments (unless `since`).
    pub envs: Option<(String, String)>,
    /// `--since REF`: each environment at REF against the working tree.
    pub since: Option<String>,
    /// `--env`: only these environments (with `since`).
    pub only_envs: Vec<String>,
    /// `--app`: only these apps.
    pub apps: Vec<String>,
    /// `--rendered`: read the committed output instead of rendering.
    pub rendered: bool,
    /// `--rendered-from PREFIX`: read every environment's output from the
    /// branch `<PREFIX><branch>` (e.g. `origin/` reads
    /// `refs/remotes/origin/env/dev`), whatever its configured output kind.
    pub rendered_from: Option<String>,
    /// `--ignore` rules.
    pub ignore: Vec<String>,
    /// `--ignore-profile helm`.
    pub helm_profile: bool,
    /// `--show-secrets`.
    pub show_secrets: bool,
    /// Validate both sides (not `--no-validate`).
    pub validate: bool,
    /// Answer renders of the working tree from the render cache in
    /// `<root>/.hydrate/cache`, its entries authenticated under this secret
    /// (`None`: no cache, as with `--no-cache`).
    pub cache: Option<env::cache::Secret>,
}

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Environment files are invalid.
    #[error(transparent)]
    Env(#[from] env::Error),
    /// Some renders failed.
    #[error("{} render(s) failed:\n{}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Renders(Vec<env::Error>),
    /// A rule or a document is unusable.
    #[error(transparent)]
    Diff(#[from] diff::Error),
    /// Git failed.
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    /// An environment branch could not be read (it diverged from its
    /// remote-tracking copy).
    #[error(transparent)]
    Output(#[from] crate::output::Error),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The request does not make sense.
    #[error("{0}")]
    Usage(String),
    /// A side could not be validated (a `kubeVersion` without schemas, a
    /// bad `crds:` file).
    #[error(transparent)]
    Validate(#[from] validate::Error),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs the comparisons the options ask for.
pub fn run(opts: &Options) -> Result<Vec<Comparison>, Error> {
    let mut cli_rules = Rules::default();
    for spec in &opts.ignore {
        cli_rules.add_command_line(spec)?;
    }
    if let Some(rev) = &opts.since {
        return since(opts, rev, cli_rules);
    }
    let Some((from, to)) = &opts.envs else {
        return Err(Error::Usage(
            "name two environments (FROM TO) or use --since REF".into(),
        ));
    };
    let envs = env::load_environments(&opts.root)?;
    let find = |name: &str| {
        envs.iter()
            .find(|e| e.name == name)
            .ok_or_else(|| Error::Usage(format!("no environment named `{name}`")))
    };
    let (fe, te) = (find(from)?, find(to)?);
    check_apps(&[fe, te], &opts.apps)?;
    let mut rules = Rules::from_environment(fe)?;
    rules.extend(Rules::from_environment(te)?);
    rules.extend(cli_rules);
    let settings = settings(opts, Mode::Environments, rules);
    let (a, b) = if opts.rendered || opts.rendered_from.is_some() {
        let repo = Repo::discover(&opts.root).ok();
        let [a, b] = [fe, te].map(|e| {
            let side = Committed {
                root: &opts.root,
                at: None,
                repo: repo.as_ref(),
                from: opts.rendered_from.as_deref(),
                env: e,
            }
            .side(&opts.apps, &e.name)?;
            with_findings(opts, &opts.root, e, side)
        });
        (a?, b?)
    } else {
        let mut sides = render(opts, &[(&opts.root, fe), (&opts.root, te)])?;
        let b = sides.pop().unwrap_or_default();
        let a = sides.pop().unwrap_or_default();
        (label(a, from), label(b, to))
    };
    let mut c = diff::compare(&a, &b, &settings);
    if !opts.rendered {
        locate(&mut c, (&opts.root, &envs), (&opts.root, &envs));
    }
    Ok(vec![c])
}

/// Names the files and lines of the findings a comparison introduces (in
/// the `to` side's sources) and fixes (in the `from` side's): only those,
/// as locating one costs a traced rebuild of its app.
fn locate(c: &mut Comparison, from: (&Path, &[Environment]), to: (&Path, &[Environment])) {
    validate::locate(to.0, to.1, &mut c.validity.introduced);
    validate::locate(from.0, from.1, &mut c.validity.fixed);
}

/// The validation findings of one side's apps (`None` unless asked for):
/// each object against its environment's Kubernetes version, custom
/// resources against the CRDs the side renders and the environment's
/// `crds:` files.
fn findings(
    opts: &Options,
    root: &Path,
    e: &Environment,
    apps: &[(&str, &[Object<Body>])],
) -> Result<Option<Vec<validate::Finding>>, Error> {
    if !opts.validate {
        return Ok(None);
    }
    let kube_version = validate::run::kube_version(e);
    let objects: Vec<AppObjects> = apps
        .iter()
        .map(|(app, objects)| AppObjects {
            env: &e.name,
            app,
            kube_version,
            objects,
        })
        .collect();
    let extra = validate::run::crd_files(root, std::slice::from_ref(e), &Selection::default())?;
    Ok(Some(Validator::new(false).all(&objects, &extra)?))
}

fn settings(opts: &Options, mode: Mode, rules: Rules) -> Settings {
    Settings {
        mode,
        rules,
        helm_profile: opts.helm_profile,
        show_secrets: opts.show_secrets,
    }
}

fn label(mut s: Side, name: &str) -> Side {
    s.label = name.to_string();
    s
}

fn check_apps(envs: &[&Environment], apps: &[String]) -> Result<(), Error> {
    for wanted in apps {
        if !envs
            .iter()
            .any(|e| e.apps.iter().any(|a| &a.name == wanted))
        {
            return Err(Error::Usage(format!(
                "no app named `{wanted}` in the environments compared"
            )));
        }
    }
    Ok(())
}

/// Renders each (root, environment) in one parallel batch; one side each,
/// validated unless `--no-validate`.
fn render(opts: &Options, envs: &[(&Path, &Environment)]) -> Result<Vec<Side>, Error> {
    let mut jobs = Vec::new();
    let mut counts = Vec::new();
    for (root, e) in envs {
        let sel = Selection {
            envs: vec![e.name.clone()],
            apps: opts.apps.clone(),
            shard: None,
        };
        let js = env::plan(root, std::slice::from_ref(*e), &sel);
        counts.push(js.len());
        jobs.extend(js);
    }
    // The cache holds renders of this repository's working tree; a
    // revision exported for --since is rendered without it. Hits carry
    // whole documents: every object is compared (and validated).
    let cache = envs
        .iter()
        .all(|(root, _)| *root == opts.root.as_path())
        .then(|| opts.cache.clone())
        .flatten()
        .and_then(|secret| env::Cache::open(&opts.root, secret))
        .map(|c| c.with_findings(Default::default()));
    let rendered = env::render_all_cached(&jobs, cache.as_ref(), &|| {}).map_err(Error::Renders)?;
    let resources: Vec<Vec<diff::Resource>> = rendered
        .par_iter()
        .map(diff::from_rendered)
        .collect::<Result<_, _>>()?;
    let mut it = rendered.iter().zip(resources);
    let mut sides = Vec::new();
    for ((root, e), n) in envs.iter().zip(counts) {
        let mut side = Side {
            label: e.name.clone(),
            ..Side::default()
        };
        let mut objects: Vec<(&str, &[Object<Body>])> = Vec::new();
        for (r, res) in it.by_ref().take(n) {
            side.apps.push(r.app.clone());
            side.resources.extend(res);
            objects.push((&r.app, &r.objects));
        }
        side.findings = findings(opts, root, e, &objects)?;
        sides.push(side);
    }
    Ok(sides)
}

/// Where the committed output of one environment is read.
struct Committed<'a> {
    /// The repository root the environment's paths are relative to (for
    /// `--since`, REF's files exported to a temporary directory).
    root: &'a Path,
    /// With `--since`: the revision `root` holds, named in messages instead
    /// of the temporary directory (paths are shown relative to the
    /// repository, never under a temporary directory).
    at: Option<&'a str>,
    repo: Option<&'a Repo>,
    /// `--rendered-from`: the ref prefix every environment's branch is
    /// read under.
    from: Option<&'a str>,
    env: &'a Environment,
}

impl Committed<'_> {
    /// The environment's committed output: its directory, its branch's tip
    /// (the newer of the local branch and its remote-tracking copy, as
    /// `render` builds on), or with `from`, `<from><branch>`.
    fn side(&self, apps: &[String], label: &str) -> Result<Side, Error> {
        let e = self.env;
        let files = match (&e.output, self.from) {
            (_, Some(prefix)) => {
                let branch = match &e.output {
                    Output::Branch(b) => b.clone(),
                    // What `render --to branch` writes.
                    Output::Dir(_) => format!("env/{}", e.name),
                };
                self.read_prefixed(prefix, &branch, apps)?
            }
            (Output::Branch(b), None) => self.read_branch(b, apps)?,
            (Output::Dir(dir), None) => self.read_dir(dir)?,
        };
        side_from_files(&files, apps, label, &e.name)
    }

    fn read_dir(&self, dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        let e = self.env;
        let base = self.root.join(dir);
        let shown = |p: &Path| {
            let rel = p.strip_prefix(self.root).unwrap_or(p).display();
            match self.at {
                Some(rev) => format!("{rel} (at {rev})"),
                None => rel.to_string(),
            }
        };
        if !base.is_dir() {
            return Err(Error::Usage(format!(
                "{}: no committed output for `{}` (`hydrate render --env {}` writes it{}; \
                 where CI writes branches with `render --to branch`, read them with \
                 `--rendered-from origin/`)",
                shown(&base),
                e.name,
                e.name,
                match self.at {
                    None => "",
                    Some(_) => "; the revision must have it committed",
                }
            )));
        }
        let mut files = BTreeMap::new();
        for entry in walkdir::WalkDir::new(&base).sort_by_file_name() {
            let entry = entry.map_err(|err| {
                let at = err.path().map(shown).unwrap_or_else(|| shown(&base));
                let why = err
                    .io_error()
                    .map_or_else(|| "cannot be read".to_string(), ToString::to_string);
                Error::Usage(format!("{at}: {why}"))
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry.path().strip_prefix(&base).unwrap_or(entry.path());
            let rel = rel.to_string_lossy().replace('\\', "/");
            let bytes = std::fs::read(entry.path()).map_err(|source| Error::Io {
                path: PathBuf::from(shown(entry.path())),
                source,
            })?;
            files.insert(rel, bytes);
        }
        Ok(files)
    }

    fn repo(&self) -> Result<&Repo, Error> {
        self.repo.ok_or_else(|| {
            Error::Usage(format!(
                "environment `{}`: reading a branch needs a git repository",
                self.env.name
            ))
        })
    }

    /// Branch output: the tip `render` would build on.
    fn read_branch(
        &self,
        branch: &str,
        apps: &[String],
    ) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        let repo = self.repo()?;
        let b = crate::output::Branch::locate(repo, branch, None)?;
        let tip = crate::output::branch_tip(repo, &b)?.ok_or_else(|| {
            let mut refs = vec![b.local_ref()];
            refs.extend(b.remote.as_ref().map(|r| r.tracking.clone()));
            Error::Usage(format!(
                "no committed output for `{}`: branch {branch} does not exist here ({} not \
                 found); `hydrate render --env {}` creates it, or `git fetch` brings the \
                 one CI pushed",
                self.env.name,
                refs.join(", "),
                self.env.name
            ))
        })?;
        Ok(repo.files_where(tip, &|p| manifest_app(p, apps).is_some())?)
    }

    /// `--rendered-from PREFIX`: `<PREFIX><branch>`, resolved as git
    /// resolves a short ref name (git's `ref_rev_parse_rules`: as given,
    /// then under `refs/`, `refs/tags/`, `refs/heads/`, `refs/remotes/`),
    /// so `origin/` reads `refs/remotes/origin/env/dev`.
    fn read_prefixed(
        &self,
        prefix: &str,
        branch: &str,
        apps: &[String],
    ) -> Result<BTreeMap<String, Vec<u8>>, Error> {
        let repo = self.repo()?;
        let name = format!("{prefix}{branch}");
        let candidates: Vec<String> = match name.starts_with("refs/") {
            true => vec![name.clone()],
            false => ["refs/", "refs/tags/", "refs/heads/", "refs/remotes/"]
                .iter()
                .map(|p| format!("{p}{name}"))
                .collect(),
        };
        for c in &candidates {
            if let Some(tip) = repo.ref_target(c)? {
                return Ok(repo.files_where(tip, &|p| manifest_app(p, apps).is_some())?);
            }
        }
        let remote = prefix
            .strip_prefix("refs/remotes/")
            .unwrap_or(prefix)
            .trim_end_matches('/');
        let fetch = match repo.remote_names()?.iter().any(|n| n == remote) {
            true => format!("`git fetch {remote}` brings it once CI pushed it"),
            false => format!("`{prefix}` names no remote of this repository"),
        };
        Err(Error::Usage(format!(
            "no committed output for `{}`: {name} does not exist ({} not found); \
             `hydrate render --to branch --env {} --push` writes and pushes it, and {fetch}",
            self.env.name,
            candidates.last().map_or(name.as_str(), String::as_str),
            self.env.name
        )))
    }
}

/// A committed side's objects validated as a render's would be; their
/// findings are not located (the sources may have moved on since).
fn with_findings(
    opts: &Options,
    root: &Path,
    e: &Environment,
    mut side: Side,
) -> Result<Side, Error> {
    let objects: Vec<(String, Vec<Object<Body>>)> = side
        .apps
        .iter()
        .map(|app| {
            let of_app = side.resources.iter().filter(|r| &r.app == app);
            let objects = of_app
                .map(|r| Object::new(r.node.clone(), String::new(), None).into())
                .collect();
            (app.clone(), objects)
        })
        .collect();
    let objects: Vec<(&str, &[Object<Body>])> = objects
        .iter()
        .map(|(a, o)| (a.as_str(), o.as_slice()))
        .collect();
    side.findings = findings(opts, root, e, &objects)?;
    Ok(side)
}

/// The app of an output file that holds manifests (`<app>/….yaml`, the
/// app selected), or `None`.
fn manifest_app<'a>(path: &'a str, apps: &[String]) -> Option<&'a str> {
    let (app, file) = path.split_once('/')?;
    let yaml = file.ends_with(".yaml") || file.ends_with(".yml");
    let wanted = apps.is_empty() || apps.iter().any(|a| a == app);
    (yaml && wanted && !app.starts_with('.')).then_some(app)
}

fn side_from_files(
    files: &BTreeMap<String, Vec<u8>>,
    apps: &[String],
    label: &str,
    env_name: &str,
) -> Result<Side, Error> {
    let mut side = Side {
        label: label.to_string(),
        ..Side::default()
    };
    let mut wanted = Vec::new();
    for (path, bytes) in files {
        let Some(app) = manifest_app(path, apps) else {
            continue;
        };
        if !side.apps.iter().any(|a| a == app) {
            side.apps.push(app.to_string());
        }
        wanted.push((app, path, bytes));
    }
    let parsed: Vec<Vec<diff::Resource>> = wanted
        .par_iter()
        .map(|(app, path, bytes)| {
            let text = String::from_utf8_lossy(bytes);
            diff::from_manifest(app, &text, &format!("{env_name}: {path}"))
        })
        .collect::<Result<_, _>>()?;
    side.resources = parsed.into_iter().flatten().collect();
    Ok(side)
}

/// REF's files where its renders (and with `--rendered`, its committed
/// output directories) read them, exported to a temporary directory
/// (removed when dropped), with REF's environments. The working tree, the
/// index and HEAD are not touched.
struct Past {
    _export: Export,
    root: PathBuf,
    envs: Vec<Environment>,
}

fn export(repo: &Repo, id: git2::Oid, root: &Path, rendered: bool) -> Result<Past, Error> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Usage("--since needs a repository with a working tree".into()))?;
    let canon = |p: &Path| std::fs::canonicalize(p).map_err(io(p));
    let rel = canon(root)?
        .strip_prefix(canon(&workdir)?)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let export = repo.export(id, &env::reach::may_defer)?;
    let old_root = export.dir().join(rel);
    let fill = |p: &Path| export.fill(repo, p);
    fill(&old_root.join("environments"))?;
    let envs = if old_root.join("environments").is_dir() {
        env::load_environments(&old_root)?
    } else {
        Vec::new()
    };
    env::reach::inputs(&old_root, &envs, &mut |p| fill(p))?;
    if rendered {
        for e in &envs {
            if let Output::Dir(d) = &e.output {
                fill(&old_root.join(d))?;
            }
        }
    }
    Ok(Past {
        _export: export,
        root: old_root,
        envs,
    })
}

/// `--since REF`: every environment at REF against the working tree.
fn since(opts: &Options, rev: &str, cli_rules: Rules) -> Result<Vec<Comparison>, Error> {
    let repo = Repo::discover(&opts.root)?;
    let id = repo.resolve(rev)?;
    let past = export(&repo, id, &opts.root, opts.rendered)?;
    let (old_root, old_envs) = (&past.root, &past.envs);
    let new_envs = env::load_environments(&opts.root)?;
    let mut names: Vec<&str> = old_envs
        .iter()
        .chain(&new_envs)
        .map(|e| e.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for wanted in &opts.only_envs {
        if !names.contains(&wanted.as_str()) {
            return Err(Error::Usage(format!("no environment named `{wanted}`")));
        }
    }
    names.retain(|n| opts.only_envs.is_empty() || opts.only_envs.iter().any(|w| w == n));
    let all: Vec<&Environment> = old_envs.iter().chain(&new_envs).collect();
    if !opts.apps.is_empty() {
        check_apps(&all, &opts.apps)?;
    }
    let mut batch: Vec<(&Path, &Environment)> = Vec::new();
    for name in &names {
        if let Some(e) = old_envs.iter().find(|e| e.name == *name) {
            if !opts.rendered {
                batch.push((old_root, e));
            }
        }
        if let Some(e) = new_envs.iter().find(|e| e.name == *name) {
            batch.push((&opts.root, e));
        }
    }
    let mut sides = render(opts, &batch)?.into_iter();
    let mut out = Vec::new();
    for name in names {
        let old = old_envs.iter().find(|e| e.name == name);
        let new = new_envs.iter().find(|e| e.name == name);
        let before = format!("{name}@{rev}");
        let a = match (old, opts.rendered) {
            (Some(e), true) => {
                let side = Committed {
                    root: old_root,
                    at: Some(rev),
                    repo: Some(&repo),
                    from: opts.rendered_from.as_deref(),
                    env: e,
                }
                .side(&opts.apps, &before)?;
                with_findings(opts, old_root, e, side)?
            }
            (Some(_), false) => label(sides.next().unwrap_or_default(), &before),
            (None, _) => label(Side::default(), &before),
        };
        let b = match new {
            Some(_) => sides.next().unwrap_or_default(),
            None => label(Side::default(), name),
        };
        let mut rules = match new.or(old) {
            Some(e) => Rules::from_environment(e)?,
            None => Rules::default(),
        };
        rules.extend(cli_rules.clone());
        let mut c = diff::compare(&a, &b, &settings(opts, Mode::Revisions, rules));
        if !opts.rendered {
            locate(&mut c, (old_root, old_envs), (&opts.root, &new_envs));
        }
        out.push(c);
    }
    Ok(out)
}
