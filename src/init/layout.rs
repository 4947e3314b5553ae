//! Repository layouts: kustomize overlays (`<app>/overlays/<env>`,
//! `overlays/<env>` next to `base/`, `<env>/<app>`, `<app>/<env>` as in
//! Flux's `apps/<env>`) and charts with per-environment values files; and
//! for each environment, a `discover:` glob wherever one finds exactly the
//! apps of its shape.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::tree::Tree;
use super::{base_name, is_usual_env, EnvProposal, Found, Origin, RootName, Unclassified};
use crate::env::{is_valid_name, ChartApp, Source};

/// Directory names that hold one overlay per environment.
const MARKERS: &[&str] = &["overlays", "envs", "environments", "variants"];
/// Directory names of kustomizations that are shared, not deployed.
const BASES: &[&str] = &["base", "bases", "common", "components"];

/// A kustomization directory split into prefix, middle and leaf.
struct Pair {
    dir: PathBuf,
    prefix: PathBuf,
    mid: String,
    leaf: String,
}

/// The apps of the kustomize layouts: every kustomization no other one
/// uses and no Argo CD or Flux object claimed. An overlay at the root
/// (`overlays/<env>`, `<env>` next to `base/`) is named after the
/// repository (`root_name`).
pub fn overlays(
    root: &Path,
    t: &Tree,
    claimed: &BTreeSet<PathBuf>,
    known: &BTreeSet<String>,
    root_name: &RootName,
    unclassified: &mut Vec<Unclassified>,
) -> Vec<Found> {
    let used = t.referenced();
    let mut out = Vec::new();
    let mut groups: BTreeMap<PathBuf, Vec<Pair>> = BTreeMap::new();
    let is_env = |n: &str| known.contains(n) || is_usual_env(n);
    for dir in t.kustomizations.keys() {
        if used.contains(dir.as_path()) || claimed.contains(dir) {
            continue;
        }
        let c: Vec<String> = dir
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let n = c.len();
        let leave = |reason: &str, out: &mut Vec<Unclassified>| {
            out.push(Unclassified {
                path: dir.clone(),
                reason: reason.to_string(),
            })
        };
        if c.iter().any(|l| BASES.contains(&l.as_str())) {
            leave("a base no overlay uses", unclassified);
            continue;
        }
        if n >= 2 && MARKERS.contains(&c[n - 2].as_str()) {
            // <prefix>/<app>/overlays/<env>, or overlays/<env> at the root.
            let (app, glob) = match n {
                2 => (root_name.app(), None),
                _ => {
                    let prefix: PathBuf = c[..n - 3].iter().collect();
                    let glob = prefix.join("*").join(&c[n - 2]).join("{env}");
                    (Some(c[n - 3].clone()), Some(glob.display().to_string()))
                }
            };
            match app {
                Some(app) => out.push(found(&c[n - 1], &app, dir, glob)),
                None => leave("cannot name the app of this overlay", unclassified),
            }
            continue;
        }
        match n {
            0 => leave(
                "the repository root is a kustomization: no environment in its path",
                unclassified,
            ),
            1 if is_env(&c[0]) && root.join("base").is_dir() => match root_name.app() {
                Some(app) => out.push(found(&c[0], &app, dir, None)),
                None => leave("cannot name the app of this overlay", unclassified),
            },
            1 => leave(
                "a top-level kustomization: no environment and app in its path",
                unclassified,
            ),
            _ => groups
                .entry(c[..n - 2].iter().collect())
                .or_default()
                .push(Pair {
                    dir: dir.clone(),
                    prefix: c[..n - 2].iter().collect(),
                    mid: c[n - 2].clone(),
                    leaf: c[n - 1].clone(),
                }),
        }
    }
    for pairs in groups.values() {
        orient(pairs, &is_env, &mut out, unclassified);
    }
    out
}

/// Decides for a group of `<prefix>/<mid>/<leaf>` kustomizations which side
/// is the environment: the side with usual environment names, else the
/// side whose names several apps share. An environment that is neither
/// usual nor shared by two apps is left unclassified.
fn orient(
    pairs: &[Pair],
    is_env: &dyn Fn(&str) -> bool,
    out: &mut Vec<Found>,
    unclassified: &mut Vec<Unclassified>,
) {
    let known_leaf = pairs.iter().filter(|p| is_env(&p.leaf)).count();
    let known_mid = pairs.iter().filter(|p| is_env(&p.mid)).count();
    let shared = |side: fn(&Pair) -> &str, other: fn(&Pair) -> &str| {
        let mut m: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for p in pairs {
            m.entry(side(p)).or_default().insert(other(p));
        }
        m.values().filter(|s| s.len() > 1).count()
    };
    let (shared_leaf, shared_mid) = (shared(pair_leaf, pair_mid), shared(pair_mid, pair_leaf));
    let leaf_is_env = match (known_leaf.cmp(&known_mid), shared_leaf.cmp(&shared_mid)) {
        (std::cmp::Ordering::Greater, _) => Some(true),
        (std::cmp::Ordering::Less, _) => Some(false),
        (_, std::cmp::Ordering::Greater) => Some(true),
        (_, std::cmp::Ordering::Less) => Some(false),
        _ => None,
    };
    for p in pairs {
        let Some(leaf_is_env) = leaf_is_env else {
            unclassified.push(Unclassified {
                path: p.dir.clone(),
                reason: format!(
                    "cannot tell which of `{}` and `{}` is the environment",
                    p.mid, p.leaf
                ),
            });
            continue;
        };
        let (env, app, glob) = if leaf_is_env {
            (&p.leaf, &p.mid, p.prefix.join("*").join("{env}"))
        } else {
            (&p.mid, &p.leaf, p.prefix.join("{env}").join("*"))
        };
        let env_side = if leaf_is_env { pair_leaf } else { pair_mid };
        let sharing = pairs.iter().filter(|q| env_side(q) == env).count();
        let envs: BTreeSet<&str> = pairs.iter().map(env_side).collect();
        // One directory holding several apps is a grouping (platform/*),
        // not an environment, unless it has an environment's name.
        let why = match (is_env(env), sharing, envs.len()) {
            (true, ..) => None,
            (false, 0 | 1, _) => Some("no other app shares it"),
            (false, _, 0 | 1) => Some("it would be the only environment of this layout"),
            _ => None,
        };
        if let Some(why) = why {
            unclassified.push(Unclassified {
                path: p.dir.clone(),
                reason: format!("`{env}` is not a usual environment name and {why}"),
            });
            continue;
        }
        out.push(found(env, app, &p.dir, Some(glob.display().to_string())));
    }
}

fn pair_leaf(p: &Pair) -> &str {
    &p.leaf
}

fn pair_mid(p: &Pair) -> &str {
    &p.mid
}

fn found(env: &str, app: &str, dir: &Path, glob: Option<String>) -> Found {
    Found {
        env: env.to_string(),
        app: app.to_string(),
        source: Source::Kustomize(dir.to_path_buf()),
        origin: Origin::Overlay { glob },
    }
}

/// Chart directories with a values file per environment: `values-<env>.yaml`,
/// `values/<env>.yaml` or `<env>/values.yaml`, in the chart or, for a chart
/// directory named `chart` or `helm`, in the app directory around it.
pub fn charts(
    root: &Path,
    t: &Tree,
    claimed: &BTreeSet<PathBuf>,
    root_name: &RootName,
    unclassified: &mut Vec<Unclassified>,
) -> Vec<Found> {
    let mut out = Vec::new();
    for chart in &t.charts {
        if claimed.contains(chart) {
            continue;
        }
        // kustomize's helmCharts inflate charts under <kustomization>/charts.
        let parent = chart.parent().unwrap_or(Path::new(""));
        if parent.file_name().is_some_and(|n| n == "charts")
            && t.kustomizations
                .contains_key(parent.parent().unwrap_or(Path::new("")))
        {
            continue;
        }
        let wrapper = chart
            .file_name()
            .is_some_and(|n| n == "chart" || n == "helm");
        let app_dir = if wrapper { parent } else { chart.as_path() };
        let mut dirs = vec![chart.as_path()];
        if wrapper {
            dirs.push(app_dir);
        }
        let values = env_values(root, &dirs);
        if values.is_empty() {
            unclassified.push(Unclassified {
                path: chart.clone(),
                reason: "a chart without per-environment values (values-<env>.yaml, \
                         values/<env>.yaml or <env>/values.yaml)"
                    .into(),
            });
            continue;
        }
        // A chart at the root (or in `chart/` there) is named after the repository.
        let name = if app_dir.as_os_str().is_empty() {
            root_name.app()
        } else {
            base_name(root, app_dir)
        };
        let Some(app) = name.filter(|a| is_valid_name(a)) else {
            unclassified.push(Unclassified {
                path: chart.clone(),
                reason: "cannot name the app of this chart".into(),
            });
            continue;
        };
        for (env, file) in values {
            out.push(Found {
                env,
                app: app.clone(),
                source: Source::Helm(Box::new(ChartApp {
                    chart: chart.clone(),
                    value_files: vec![file],
                    ..ChartApp::default()
                })),
                origin: Origin::Chart,
            });
        }
    }
    out
}

/// Environment → its values file, the first of the three shapes found.
fn env_values(root: &Path, dirs: &[&Path]) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut add = |env: &str, file: PathBuf| {
        if is_valid_name(env) && env != "values" && root.join(&file).is_file() {
            out.entry(env.to_string()).or_insert(file);
        }
    };
    for dir in dirs {
        for entry in read_dir_sorted(&root.join(dir)) {
            let (name, is_dir) = entry;
            let stem = name
                .strip_suffix(".yaml")
                .or_else(|| name.strip_suffix(".yml"));
            if let Some(env) = stem.and_then(|s| s.strip_prefix("values-")) {
                add(env, dir.join(&name));
            } else if is_dir && name == "values" {
                for (f, _) in read_dir_sorted(&root.join(dir).join("values")) {
                    if let Some(env) = f.strip_suffix(".yaml").or_else(|| f.strip_suffix(".yml")) {
                        add(env, dir.join("values").join(&f));
                    }
                }
            } else if is_dir
                && !matches!(name.as_str(), "templates" | "charts" | "crds")
                && !root.join(dir).join(&name).join("Chart.yaml").is_file()
            {
                add(&name, dir.join(&name).join("values.yaml"));
            }
        }
    }
    out
}

/// `(name, is_dir)` of a directory's entries, sorted; hidden ones left out.
fn read_dir_sorted(dir: &Path) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            (!name.starts_with('.')).then(|| (name, e.path().is_dir()))
        })
        .collect();
    v.sort();
    v
}

/// An environment's apps as `discover:` globs where a glob finds exactly
/// the apps of its shape (same names, same directories), the rest listed.
pub fn choose_globs(root: &Path, name: String, apps: Vec<Found>) -> EnvProposal {
    let mut by_glob: BTreeMap<String, Vec<&Found>> = BTreeMap::new();
    for f in &apps {
        if let Origin::Overlay { glob: Some(g) } = &f.origin {
            by_glob.entry(g.clone()).or_default().push(f);
        }
    }
    let mut globs = Vec::new();
    for (glob, members) in by_glob {
        let pattern = glob.replace("{env}", &name);
        let finds: BTreeSet<(String, PathBuf)> = crate::env::discover_apps(root, &pattern)
            .into_iter()
            .collect();
        let ours: BTreeSet<(String, PathBuf)> = members
            .iter()
            .map(|f| (f.app.clone(), f.path().to_path_buf()))
            .collect();
        // A glob with no `*` before `{env}`... names apps by its first `*`.
        if finds == ours && glob.contains('*') {
            globs.push(glob);
        }
    }
    let (discovered, listed): (Vec<Found>, Vec<Found>) = apps
        .into_iter()
        .partition(|f| matches!(&f.origin, Origin::Overlay { glob: Some(g) } if globs.contains(g)));
    EnvProposal {
        name,
        promotes_to: None,
        discover: globs,
        listed,
        discovered,
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan;
    use std::path::Path;

    /// A repository with a kustomization in each of `dirs` (`resources` as
    /// given after `=`), and `files`.
    fn repo(dirs: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for spec in dirs {
            let (dir, res) = spec.split_once('=').unwrap_or((spec, ""));
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
            let body = if res.is_empty() {
                "resources: []\n".to_string()
            } else {
                format!("resources:\n- {res}\n")
            };
            std::fs::write(d.path().join(dir).join("kustomization.yaml"), body).unwrap();
        }
        d
    }

    fn apps(root: &Path) -> Vec<String> {
        let p = scan(root).unwrap();
        let mut out = Vec::new();
        for e in &p.environments {
            for f in e.discovered.iter().chain(&e.listed) {
                out.push(format!("{}/{} {}", e.name, f.app, f.path().display()));
            }
            for g in &e.discover {
                out.push(format!("{} discover {g}", e.name));
            }
        }
        out.extend(
            p.unclassified
                .iter()
                .map(|u| format!("? {} {}", u.path.display(), u.reason)),
        );
        out
    }

    #[test]
    fn env_then_app_directories() {
        let d = repo(&["dev/web", "dev/api", "prod/web", "prod/api"]);
        assert_eq!(
            apps(d.path()),
            [
                "dev/api dev/api",
                "dev/web dev/web",
                "dev discover {env}/*",
                "prod/api prod/api",
                "prod/web prod/web",
                "prod discover {env}/*",
            ]
        );
    }

    #[test]
    fn overlays_next_to_a_base_name_the_app_after_the_repository() {
        use super::super::{RootApp, RootAppSource};
        let d = repo(&[
            "xyz/base",
            "xyz/overlays/dev=../../base",
            "xyz/overlays/prod=../../base",
        ]);
        // `git clone … xyz`: no origin yet, so the directory names it.
        let root = d.path().join("xyz");
        assert_eq!(
            apps(&root),
            ["dev/xyz overlays/dev", "prod/xyz overlays/prod"]
        );
        let p = scan(&root).unwrap();
        let directory = RootApp {
            name: "xyz".into(),
            from: RootAppSource::Directory,
        };
        assert_eq!(p.root_app, Some(directory));
        // With an origin, the repository's name wherever it is cloned.
        let url = "https://github.com/acme/shop-config.git";
        let git = git2::Repository::init(&root).unwrap();
        git.remote("origin", url).unwrap();
        assert_eq!(
            apps(&root),
            [
                "dev/shop-config overlays/dev",
                "prod/shop-config overlays/prod"
            ]
        );
        let origin = RootApp {
            name: "shop-config".into(),
            from: RootAppSource::Origin(url.into()),
        };
        assert_eq!(scan(&root).unwrap().root_app, Some(origin));
        // A scan of a directory inside the repository names it after that directory.
        assert_eq!(scan(&root.join("overlays")).unwrap().root_app, None);
    }

    #[test]
    fn unshared_unusual_names_are_left_unclassified() {
        let d = repo(&[
            "teams/alpha/web",
            "tools",
            "base/x",
            "lib/base",
            "platform/dns",
            "platform/certs",
        ]);
        let got = apps(d.path());
        assert!(
            got.iter().any(|l| l.starts_with("? tools a top-level")),
            "{got:?}"
        );
        assert!(
            got.iter().any(|l| l.starts_with("? lib/base a base")),
            "{got:?}"
        );
        assert!(
            got.iter()
                .any(|l| l.starts_with("? teams/alpha/web cannot tell which")),
            "{got:?}"
        );
        assert!(
            got.iter().any(|l| l
                == "? platform/dns `platform` is not a usual environment name and it would be \
                    the only environment of this layout"),
            "{got:?}"
        );
        assert!(scan(d.path()).unwrap().environments.is_empty());
    }

    #[test]
    fn a_glob_that_would_find_more_lists_the_apps() {
        // apps/web/overlays/dev is a base of dev-eu, not an app: the glob
        // apps/*/overlays/{env} would find it in dev, so dev lists api.
        let d = repo(&[
            "apps/web/overlays/dev",
            "apps/web/overlays/dev-eu=../dev",
            "apps/api/overlays/dev",
            "apps/api/overlays/dev-eu",
        ]);
        let p = scan(d.path()).unwrap();
        let [dev, dev_eu] = &p.environments[..] else {
            panic!("{p:?}")
        };
        assert!(dev.discover.is_empty());
        assert_eq!(dev.listed.len(), 1);
        assert_eq!(dev.listed[0].app, "api");
        assert_eq!(dev_eu.discover, ["apps/*/overlays/{env}"]);
        assert_eq!(dev_eu.discovered.len(), 2);
    }
}
