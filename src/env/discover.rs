//! App discovery: expand a glob such as `apps/*/overlays/{env}` into
//! (app name, directory) pairs. Only `*` and `?` within one path component
//! are supported (matched by `globset`); the app is named by what the first
//! `*` matched.

use std::path::{Path, PathBuf};

/// Expands `pattern` (relative to `root`, `{env}` already replaced) into
/// directories holding a kustomization, named by the first `*` component.
pub fn expand(root: &Path, pattern: &str) -> Vec<(String, PathBuf)> {
    let parts: Vec<&str> = components(pattern);
    let Some(named) = parts.iter().position(|p| p.contains('*')) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = glob_dirs(root, pattern)
        .into_iter()
        .filter_map(|rel| Some((rel.iter().nth(named)?.to_str()?.to_string(), rel)))
        .filter(|(_, dir)| {
            crate::kustomize::FILE_NAMES
                .iter()
                .any(|f| root.join(dir).join(f).is_file())
        })
        .collect();
    out.sort();
    out
}

/// The components of a pattern, without empty ones and `.`.
fn components(pattern: &str) -> Vec<&str> {
    pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect()
}

/// The directories under `root` (relative, sorted) that `pattern` matches
/// component by component: `*` (any run) and `?` (one character) within
/// one component, everything else literal; hidden directories match only
/// a literal component. One walk (walkdir, symlinks followed with loop
/// detection) as deep as the pattern, descending only into directories
/// that match its component at that depth. `discover:` and `hydrate
/// init`'s Argo CD git generators both expand their globs here.
pub fn glob_dirs(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let Pattern(parts) = Pattern::new(pattern);
    if parts.is_empty() {
        return Vec::new();
    }
    let component_matches = |e: &walkdir::DirEntry| {
        let Some(part) = e.depth().checked_sub(1).and_then(|i| parts.get(i)) else {
            return true;
        };
        let name = e.file_name().to_str().unwrap_or_default();
        e.file_type().is_dir() && part.matches(name)
    };
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .follow_links(true)
        .max_depth(parts.len())
        .into_iter()
        // Not min_depth: walkdir would not pass the shallower entries
        // through the filter, and every component must match.
        .filter_entry(component_matches)
        .filter_map(Result::ok)
        .filter(|e| e.depth() == parts.len())
        .filter_map(|e| Some(e.path().strip_prefix(root).ok()?.to_path_buf()))
        .collect();
    out.sort();
    out
}

/// A pattern as [`glob_dirs`] matches it, component by component, for
/// walking a tree that is not on disk (promotion's lazy snapshot writes
/// the kustomizations a `discover:` glob finds through it).
pub struct Pattern(Vec<Component>);

impl Pattern {
    /// `pattern` (relative, `{env}` already replaced).
    pub fn new(pattern: &str) -> Pattern {
        Pattern(components(pattern).into_iter().map(Component::of).collect())
    }

    /// How many directories deep it matches.
    pub fn depth(&self) -> usize {
        self.0.len()
    }

    /// Whether `name` is a directory name the `i`-th component matches.
    pub fn matches(&self, i: usize, name: &str) -> bool {
        self.0.get(i).is_some_and(|c| c.matches(name))
    }
}

/// One component of a pattern.
enum Component {
    /// No `*` or `?`: the name itself.
    Literal(String),
    /// A glob, through `globset` (`None`: it cannot be built, matches
    /// nothing).
    Glob(Option<globset::GlobMatcher>),
}

impl Component {
    fn of(part: &str) -> Component {
        if !part.contains(['*', '?']) {
            return Component::Literal(part.to_string());
        }
        // Only `*` and `?` are special: every other character is escaped,
        // and a run of `*` is one `*` (globset's `**` means whole paths).
        let mut glob = String::new();
        for c in part.chars() {
            match c {
                '*' if glob.ends_with('*') => {}
                '*' | '?' => glob.push(c),
                _ => glob.push_str(&globset::escape(c.encode_utf8(&mut [0; 4]))),
            }
        }
        let matcher = globset::GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher());
        Component::Glob(matcher)
    }

    fn matches(&self, name: &str) -> bool {
        match self {
            Component::Literal(l) => l == name,
            Component::Glob(g) => {
                !name.starts_with('.') && g.as_ref().is_some_and(|g| g.is_match(name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_components() {
        let matches = |p: &str, name: &str| Component::of(p).matches(name);
        assert!(matches("*", "web"));
        assert!(matches("svc-*", "svc-api"));
        assert!(!matches("svc-*", "web"));
        assert!(matches("a?c", "abc"));
        assert!(matches("a**", "abc"));
        // Only `*` and `?` are special.
        assert!(matches("[a]*", "[a]b"));
        assert!(!matches("[a]*", "ab"));
        assert!(!matches("*", ".git"));
        assert!(matches(".git", ".git"));
    }

    #[test]
    fn expands_to_named_apps() {
        let d = tempfile::tempdir().unwrap();
        for app in ["web", "api", "empty"] {
            std::fs::create_dir_all(d.path().join(format!("apps/{app}/overlays/dev"))).unwrap();
        }
        for app in ["web", "api"] {
            std::fs::write(
                d.path()
                    .join(format!("apps/{app}/overlays/dev/kustomization.yaml")),
                "resources: []\n",
            )
            .unwrap();
        }
        let found = expand(d.path(), "apps/*/overlays/dev");
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["api", "web"]);
        assert_eq!(found[0].1, PathBuf::from("apps/api/overlays/dev"));
    }

    #[test]
    fn every_component_must_match_and_loops_end() {
        let d = tempfile::tempdir().unwrap();
        for dir in [
            "apps/web/overlays/dev",
            "apps/web/other/dev",
            "apps/.git/overlays/dev",
        ] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
            std::fs::write(d.path().join(dir).join("kustomization.yaml"), "{}\n").unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.path().join("apps"), d.path().join("apps/web/loop")).unwrap();
        let found = expand(d.path(), "apps/*/overlays/dev");
        assert_eq!(
            found,
            [("web".to_string(), PathBuf::from("apps/web/overlays/dev"))]
        );
        assert!(expand(d.path(), "apps/*/*/*/*/*/*").is_empty());
    }
}
