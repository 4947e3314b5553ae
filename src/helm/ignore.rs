//! `.helmignore`, with helm's own rules (`pkg/ignore`'s `Rules`), which are
//! not gitignore's and not `.Files.Glob`'s:
//! - each line is trimmed; blank lines and `#` comments are skipped; a
//!   line holding `**` is refused ("double-star (**) syntax is not
//!   supported"), so is one Go's `filepath.Match` calls malformed;
//! - `!` negates, a trailing `/` makes the rule apply to directories only;
//! - a rule starting with `/` or holding a `/` matches the whole path
//!   relative to the chart, any other only the base name, with
//!   `filepath.Match` (no braces);
//! - rules are tried in order and the first that decides wins: a plain
//!   rule that matches ignores the file; a negated rule ignores every path
//!   it does NOT match (a directory-only one, every file) and lets a match
//!   go on to the next rule. So `!README.md` ignores `Chart.yaml` too, and
//!   helm then fails with "Chart.yaml file is missing".
//!
//! helm adds `templates/.?*` after the file's rules (`AddDefaults`).

use super::path_match::{valid_pattern, Pattern};

/// Where a rule's pattern is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Against {
    /// The path relative to the chart (the rule has a `/`).
    Path,
    /// The base name only.
    Base,
}

/// One parsed rule (`pattern`).
#[derive(Clone, Debug)]
struct Rule {
    glob: Pattern,
    against: Against,
    negate: bool,
    must_dir: bool,
}

impl Rule {
    fn matches(&self, path: &str) -> bool {
        let name = match self.against {
            Against::Path => path,
            Against::Base => path.rsplit('/').next().unwrap_or(path),
        };
        self.glob.matches(name)
    }
}

/// A chart's ignore rules.
#[derive(Clone, Debug, Default)]
pub(super) struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// `ignore.Parse` of a `.helmignore` text; the error is helm's message.
    pub(super) fn parse(text: &str) -> Result<Rules, String> {
        let mut out = Rules::default();
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            out.add(line)?;
        }
        Ok(out)
    }

    /// `AddDefaults`: files under `templates/` whose name starts with `.`.
    pub(super) fn with_defaults(mut self) -> Rules {
        // A constant, valid rule.
        let _ = self.add("templates/.?*");
        self
    }

    /// `parseRule`.
    fn add(&mut self, rule: &str) -> Result<(), String> {
        let rule = rule.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err("double-star (**) syntax is not supported".into());
        }
        if !valid_pattern(rule) {
            return Err("syntax error in pattern".into());
        }
        let (negate, rule) = match rule.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, rule),
        };
        let (must_dir, rule) = match rule.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, rule),
        };
        let (glob, against) = match rule.strip_prefix('/') {
            Some(rest) => (rest, Against::Path),
            None if rule.contains('/') => (rule, Against::Path),
            None => (rule, Against::Base),
        };
        self.rules.push(Rule {
            glob: Pattern::new(glob),
            against,
            negate,
            must_dir,
        });
        Ok(())
    }

    /// `Rules.Ignore` for `path` (relative to the chart, `/`-separated).
    pub(super) fn ignore(&self, path: &str, is_dir: bool) -> bool {
        if path.is_empty() || path == "." || path == "./" {
            return false;
        }
        for r in &self.rules {
            if r.negate {
                if (r.must_dir && !is_dir) || !r.matches(path) {
                    return true;
                }
                continue;
            }
            if r.must_dir && !is_dir {
                continue;
            }
            if r.matches(path) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Rules;

    fn rules(text: &str) -> Rules {
        Rules::parse(text)
            .unwrap_or_else(|e| panic!("{e}"))
            .with_defaults()
    }

    #[test]
    fn a_negation_ignores_what_it_does_not_match() {
        let r = rules("*.md\n!README.md\n");
        assert!(r.ignore("NOTES.md", false));
        // The first rule decides: *.md matches README.md.
        assert!(r.ignore("README.md", false));
        assert!(r.ignore("Chart.yaml", false));
        let r = rules("!docs/\n");
        assert!(r.ignore("Chart.yaml", false));
        assert!(!r.ignore("docs", true));
    }

    #[test]
    fn slashes_choose_path_or_base_matching() {
        let r = rules("/docs/guide.md\nb.yaml\ntemplates/x*\ndir/\n");
        assert!(r.ignore("docs/guide.md", false));
        assert!(!r.ignore("other/docs/guide.md", false));
        assert!(r.ignore("templates/sub/b.yaml", false));
        assert!(r.ignore("templates/xa.yaml", false));
        assert!(!r.ignore("sub/templates/xa.yaml", false));
        assert!(r.ignore("a/dir", true));
        assert!(!r.ignore("a/dir", false));
        assert!(r.ignore("templates/.hidden", false));
        assert!(!r.ignore(".", true));
    }

    #[test]
    fn blank_lines_comments_and_spaces() {
        let r = rules(" #c\r\n  NOTES.md  \r\n\n");
        assert!(r.ignore("NOTES.md", false));
        assert!(!r.ignore("#c", false));
    }

    #[test]
    fn bad_rules_are_refused_with_helms_message() {
        let err = |t: &str| Rules::parse(t).err();
        assert_eq!(
            err("**/x").as_deref(),
            Some("double-star (**) syntax is not supported")
        );
        assert_eq!(err("[").as_deref(), Some("syntax error in pattern"));
        assert_eq!(err("é[").as_deref(), Some("syntax error in pattern"));
        assert!(err("é*\n!ü/\n/ä").is_none());
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,40}", path in "[a-zé/.]{0,20}", dir: bool) {
            if let Ok(r) = Rules::parse(&text) {
                let _ = r.with_defaults().ignore(&path, dir);
            }
        }

        #[test]
        fn a_plain_base_rule_ignores_exactly_its_name(name in "[a-z]{1,8}", other in "[a-z]{1,8}") {
            let r = rules(&name);
            let nested = format!("x/{name}");
            prop_assert!(r.ignore(&nested, false));
            prop_assert_eq!(r.ignore(&other, false), other == name);
        }
    }
}
