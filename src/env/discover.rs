//! App discovery: expand a glob such as `apps/*/overlays/{env}` into
//! (app name, directory) pairs. Only `*` and `?` within one path component
//! are supported; the app is named by what the first `*` matched.

use std::path::{Path, PathBuf};

/// Expands `pattern` (relative to `root`, `{env}` already replaced) into
/// directories holding a kustomization, named by the first `*` component.
pub fn expand(root: &Path, pattern: &str) -> Vec<(String, PathBuf)> {
    let parts: Vec<&str> = pattern
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let mut out = Vec::new();
    walk(root, PathBuf::new(), &parts, None, &mut out);
    out.retain(|(_, dir)| {
        crate::kustomize::FILE_NAMES
            .iter()
            .any(|f| root.join(dir).join(f).is_file())
    });
    out.sort();
    out
}

fn walk(
    root: &Path,
    rel: PathBuf,
    parts: &[&str],
    name: Option<String>,
    out: &mut Vec<(String, PathBuf)>,
) {
    let Some((first, rest)) = parts.split_first() else {
        if let Some(n) = name {
            out.push((n, rel));
        }
        return;
    };
    if !first.contains(['*', '?']) {
        let next = rel.join(first);
        if root.join(&next).is_dir() {
            walk(root, next, rest, name, out);
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.') && matches(first, n))
        .collect();
    names.sort();
    for n in names {
        let app = name
            .clone()
            .or_else(|| first.contains('*').then(|| n.clone()));
        walk(root, rel.join(&n), rest, app, out);
    }
}

/// Shell-style match of one path component: `*` any run, `?` one char.
fn matches(pattern: &str, text: &str) -> bool {
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
}
