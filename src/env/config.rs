//! Environment definitions: `environments/<env>.yaml`, decoded strictly
//! (an unknown key is an error naming the file and line).

use std::path::{Path, PathBuf};

use super::Error;
use crate::yaml::{self, Node, Resolver, Value};

/// One environment.
#[derive(Clone, Debug)]
pub struct Environment {
    /// `name`.
    pub name: String,
    /// `promotesTo`: the next environment in the promotion chain.
    pub promotes_to: Option<String>,
    /// Where its rendered output goes.
    pub output: Output,
    /// Whether `output` was configured (not defaulted).
    pub output_configured: bool,
    /// File layout of each app.
    pub layout: Layout,
    /// Commit message template (minijinja) for branch output.
    pub commit_message: Option<String>,
    /// App discovery rules.
    pub discover: Vec<Discover>,
    /// Its apps, in file order.
    pub apps: Vec<App>,
    /// The file it came from.
    pub file: PathBuf,
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
}

/// One app of an environment.
#[derive(Clone, Debug)]
pub struct App {
    /// `name`: also its output subdirectory.
    pub name: String,
    /// How it renders.
    pub source: Source,
}

/// How an app renders.
#[derive(Clone, Debug)]
pub enum Source {
    /// `kustomize: DIR` (relative to the repository root).
    Kustomize(PathBuf),
}

impl Environment {
    /// Reads `environments/<env>.yaml`.
    pub fn load(file: &Path) -> Result<Environment, Error> {
        let src = std::fs::read_to_string(file).map_err(|source| Error::Read {
            path: file.to_path_buf(),
            source,
        })?;
        let root = yaml::parse_one(&src, Resolver::V3).map_err(|e| match e {
            yaml::Error::Syntax { line, problem, .. } => Error::Config {
                path: file.to_path_buf(),
                line,
                message: problem,
            },
            other => Error::Config {
                path: file.to_path_buf(),
                line: 0,
                message: other.to_string(),
            },
        })?;
        let d = Decoder { file };
        let mut env = Environment {
            name: String::new(),
            promotes_to: None,
            output: Output::Dir(PathBuf::new()),
            output_configured: false,
            layout: Layout::Manifest,
            commit_message: None,
            discover: Vec::new(),
            apps: Vec::new(),
            file: file.to_path_buf(),
        };
        let mut output = None;
        let known = [
            "name",
            "promotesTo",
            "output",
            "commitMessage",
            "discover",
            "apps",
        ];
        d.fields(&root, &known, |k, v| {
            match k {
                "name" => env.name = d.string(v)?,
                "promotesTo" => env.promotes_to = Some(d.string(v)?),
                "output" => {
                    let (o, layout) = d.output(v)?;
                    output = o;
                    env.layout = layout;
                }
                "commitMessage" => env.commit_message = Some(d.string(v)?),
                "discover" => {
                    env.discover = d
                        .seq(v)?
                        .iter()
                        .map(|x| d.discover(x))
                        .collect::<Result<_, _>>()?
                }
                _ => {
                    env.apps = d
                        .seq(v)?
                        .iter()
                        .map(|a| d.app(a))
                        .collect::<Result<_, _>>()?
                }
            }
            Ok(())
        })?;
        if env.name.is_empty() {
            return Err(d.err(&root, "missing required key `name`"));
        }
        if !is_valid_name(&env.name) {
            return Err(d.err(&root, format!("invalid environment name `{}`", env.name)));
        }
        env.output_configured = output.is_some();
        env.output = output.unwrap_or_else(|| Output::Dir(Path::new("rendered").join(&env.name)));
        let mut seen = std::collections::HashSet::new();
        for app in &env.apps {
            if !seen.insert(&app.name) {
                return Err(d.err(&root, format!("app `{}` is listed twice", app.name)));
            }
        }
        Ok(env)
    }
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
}

impl Decoder<'_> {
    fn err(&self, at: &Node, message: impl Into<String>) -> Error {
        Error::Config {
            path: self.file.to_path_buf(),
            line: at.pos.line,
            message: message.into(),
        }
    }

    fn fields(
        &self,
        n: &Node,
        known: &[&str],
        mut f: impl FnMut(&str, &Node) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Value::Map(entries) = &n.value else {
            return Err(self.err(n, format!("expected a mapping, found a {}", n.kind_name())));
        };
        for (k, v) in entries {
            let key = k.key_text().unwrap_or_default();
            if !known.contains(&key) {
                return Err(self.err(
                    k,
                    format!(
                        "unknown key `{key}` (expected one of: {})",
                        known.join(", ")
                    ),
                ));
            }
            f(key, v)?;
        }
        Ok(())
    }

    fn string(&self, n: &Node) -> Result<String, Error> {
        match n.as_scalar() {
            Some(s) if !n.is_null() => Ok(s.text.clone()),
            _ => Err(self.err(n, format!("expected a string, found a {}", n.kind_name()))),
        }
    }

    fn seq<'n>(&self, n: &'n Node) -> Result<&'n [Node], Error> {
        n.as_seq()
            .map(Vec::as_slice)
            .ok_or_else(|| self.err(n, format!("expected a list, found a {}", n.kind_name())))
    }

    fn output(&self, n: &Node) -> Result<(Option<Output>, Layout), Error> {
        let (mut out, mut layout) = (None, Layout::Manifest);
        self.fields(n, &["dir", "branch", "layout"], |k, v| {
            let s = self.string(v)?;
            match k {
                "dir" | "branch" if out.is_some() => {
                    return Err(self.err(v, "output takes either `dir` or `branch`, not both"))
                }
                "dir" => out = Some(Output::Dir(PathBuf::from(s))),
                "branch" => {
                    if s.is_empty() || s.starts_with('-') || s.contains("..") || s.contains(' ') {
                        return Err(self.err(v, format!("invalid branch name `{s}`")));
                    }
                    out = Some(Output::Branch(s));
                }
                _ => {
                    layout = match s.as_str() {
                        "manifest" => Layout::Manifest,
                        "resources" => Layout::Resources,
                        other => {
                            return Err(self.err(
                                v,
                                format!(
                                    "unknown layout `{other}` (expected `manifest` or `resources`)"
                                ),
                            ))
                        }
                    }
                }
            }
            Ok(())
        })?;
        Ok((out, layout))
    }

    fn discover(&self, n: &Node) -> Result<Discover, Error> {
        let mut pattern = None;
        self.fields(n, &["kustomize"], |_, v| {
            pattern = Some(self.string(v)?);
            Ok(())
        })?;
        let pattern = pattern.ok_or_else(|| self.err(n, "a discover rule needs `kustomize`"))?;
        if !pattern.contains('*') {
            return Err(self.err(
                n,
                format!("discover pattern `{pattern}` has no `*` to name apps by"),
            ));
        }
        Ok(Discover { pattern })
    }

    fn app(&self, n: &Node) -> Result<App, Error> {
        let (mut name, mut source) = (None, None);
        self.fields(n, &["name", "kustomize"], |k, v| {
            match k {
                "name" => name = Some(self.string(v)?),
                _ => source = Some(Source::Kustomize(PathBuf::from(self.string(v)?))),
            }
            Ok(())
        })?;
        let name = name.ok_or_else(|| self.err(n, "an app needs `name`"))?;
        if !is_valid_name(&name) {
            return Err(self.err(n, format!("invalid app name `{name}`")));
        }
        let source =
            source.ok_or_else(|| self.err(n, format!("app `{name}` needs `kustomize`")))?;
        Ok(App { name, source })
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
        assert_eq!(e.promotes_to.as_deref(), Some("staging"));
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
    fn unknown_keys_name_the_line() {
        let e = load("name: dev\napps:\n- name: web\n  kustomise: x\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("dev.yaml:4"), "{msg}");
        assert!(msg.contains("unknown key `kustomise`"), "{msg}");
    }
}
