//! App discovery: expand a glob such as `apps/*/overlays/{env}` into
//! (app name, directory) pairs. Only `*` and `?` within one path component
//! are supported; the app is named by what the first `*` matched.

use std::path::{Path, PathBuf};

/// Expands `pattern` (relative to `root`, `{env}` already replaced) into
/// directories holding a kustomization, named by the first `*` component.
/// One walk (walkdir, symlinks followed with loop detection) as deep as the
/// pattern, descending only into directories that match its component at
/// that depth; hidden directories match only a literal component.
pub fn expand(root: &Path, pattern: &str) -> Vec<(String, PathBuf)> {
    let parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() {
        return Vec::new();
    }
    let component_matches = |e: &walkdir::DirEntry| {
        let Some(part) = e.depth().checked_sub(1).and_then(|i| parts.get(i)) else {
            return true;
        };
        let name = e.file_name().to_str().unwrap_or_default();
        e.file_type().is_dir()
            && if part.contains(['*', '?']) {
                !name.starts_with('.') && matches(part, name)
            } else {
                name == *part
            }
    };
    let mut out: Vec<(String, PathBuf)> = walkdir::WalkDir::new(root)
        .follow_links(true)
        .max_depth(parts.len())
        .into_iter()
        // Not min_depth: walkdir would not pass the shallower entries
        // through the filter, and every component must match.
        .filter_entry(component_matches)
        .filter_map(Result::ok)
        .filter(|e| e.depth() == parts.len())
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?.to_path_buf();
            let named = parts.iter().position(|p| p.contains('*'))?;
            let name = rel.iter().nth(named)?.to_str()?.to_string();
            Some((name, rel))
        })
        .collect();
    out.retain(|(_, dir)| {
        crate::kustomize::FILE_NAMES
            .iter()
            .any(|f| root.join(dir).join(f).is_file())
    });
    out.sort();
    out
}

/// Shell-style match of one path component: `*` any run, `?` one char.
pub(super) fn matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_components() {
        assert!(matches("*", "web"));
        assert!(matches("svc-*", "svc-api"));
        assert!(!matches("svc-*", "web"));
        assert!(matches("a?c", "abc"));
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
