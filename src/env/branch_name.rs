//! Branch names from environment files, checked when the file is read:
//! git's ref-name rules (`git check-ref-format`, refs.c
//! `check_refname_component`) applied to `refs/heads/<name>`, plus what
//! `git branch` refuses (`HEAD`, a leading `-`) and a name that would nest
//! under `refs/heads/` (`refs/heads/x` is written as `x`). It knows names
//! only; which branch is checked out is decided where the repository is
//! opened.

/// Why `name` cannot be an environment branch, or `None` when it can.
pub fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a branch name cannot be empty".into());
    }
    if name == "HEAD" || name == "@" {
        return Some(format!("`{name}` is not a branch name git allows"));
    }
    if name.starts_with("refs/") {
        return Some(format!(
            "write the branch without `refs/...`: hydrate writes `refs/heads/<branch>`, so \
             this would become `refs/heads/{name}`"
        ));
    }
    if name.starts_with('-') {
        return Some("a branch name cannot start with `-`".into());
    }
    if let Some(c) = name.chars().find(|c| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    }) {
        return Some(format!("a branch name cannot contain {}", shown(c)));
    }
    for bad in ["..", "@{", "//"] {
        if name.contains(bad) {
            return Some(format!("a branch name cannot contain `{bad}`"));
        }
    }
    if name.starts_with('/') || name.ends_with('/') {
        return Some("a branch name cannot start or end with `/`".into());
    }
    if name.ends_with('.') {
        return Some("a branch name cannot end with `.`".into());
    }
    for part in name.split('/') {
        if part.starts_with('.') {
            return Some(format!(
                "a part of a branch name cannot start with `.` (`{part}`)"
            ));
        }
        if part.ends_with(".lock") {
            return Some(format!(
                "a part of a branch name cannot end with `.lock` (`{part}`)"
            ));
        }
    }
    None
}

fn shown(c: char) -> String {
    if c.is_ascii_control() {
        format!("the control character U+{:04X}", u32::from(c))
    } else {
        format!("`{c}`")
    }
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn git_ref_name_rules() {
        for ok in ["env/prod", "env/prod-next", "a.b/c_d", "release@1", "ü"] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "HEAD",
            "@",
            "refs/heads/x",
            "-x",
            "x.lock",
            "a/b.lock/c",
            "x~1",
            "x^",
            "x:y",
            "x?",
            "x*",
            "x[",
            "a\\b",
            "x y",
            "x\u{7f}",
            "x\ty",
            "x/",
            "/x",
            "a//b",
            "a/.b",
            ".a",
            "a..b",
            "a@{1}",
            "x.",
        ] {
            assert!(problem(bad).is_some(), "{bad:?} accepted");
        }
    }
}
