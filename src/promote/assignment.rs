//! A `set-value` argument, `PATH=VALUE`: a dotted value path in the
//! path grammar of `yaml::edit` (no empty segments: `image..tag` is not
//! read as `image.tag`) and a value that stays one scalar. The value is
//! written as a YAML string, recorded on one line of the commit message,
//! and rendered by the chart's templates, so a value YAML would read as
//! more than that one scalar is refused: a line break (the next line could
//! start another document or a forged trailer), another control
//! character, or a document marker (`---`, `...`).

use crate::yaml::edit::{is_yaml_break, try_parse_path, PathError};

/// A parsed `set-value` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The dotted path, as given (checked).
    pub path: String,
    /// The value.
    pub value: String,
}

/// Why a value is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValueProblem {
    /// `\n`, `\r`, NEL, LS, PS.
    #[error("it contains a line break (U+{:04X}): YAML reads the next line as more of the document", u32::from(*.0))]
    LineBreak(char),
    /// Another control character.
    #[error("it contains the control character U+{:04X}", u32::from(*.0))]
    Control(char),
    /// `---` or `...` (alone or before a space): a document marker where a
    /// template writes it at the start of a line.
    #[error("`{0}` starts a new YAML document at the start of a line")]
    DocumentMarker(&'static str),
}

/// Why an argument is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AssignmentError {
    /// No `=`.
    #[error("`{}`: expected PATH=VALUE, as image.tag=2.4.0", .0.escape_debug())]
    NoEquals(String),
    /// PATH is not a path.
    #[error("`{}`: PATH `{}`: {error}", .text.escape_debug(), .path.escape_debug())]
    Path {
        /// The argument.
        text: String,
        /// The path.
        path: String,
        /// Why.
        error: PathError,
    },
    /// VALUE would not stay one scalar.
    #[error("`{}`: VALUE: {problem}", .text.escape_debug())]
    Value {
        /// The argument.
        text: String,
        /// Why.
        problem: ValueProblem,
    },
}

/// The reason `value` would not stay one scalar, if any.
pub fn value_problem(value: &str) -> Option<ValueProblem> {
    if let Some(c) = value.chars().find(|c| is_yaml_break(*c)) {
        return Some(ValueProblem::LineBreak(c));
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Some(ValueProblem::Control(c));
    }
    // go-yaml scannerc.go: `---` or `...` at column 0 followed by a blank
    // (or the end) is a document indicator.
    ["---", "..."].into_iter().find_map(|marker| {
        let rest = value.strip_prefix(marker)?;
        (rest.is_empty() || rest.starts_with([' ', '\t']))
            .then_some(ValueProblem::DocumentMarker(marker))
    })
}

impl Assignment {
    /// Parses and checks `PATH=VALUE` (split at the first `=`).
    pub fn parse(text: &str) -> Result<Assignment, AssignmentError> {
        let (path, value) = text
            .split_once('=')
            .ok_or_else(|| AssignmentError::NoEquals(text.to_string()))?;
        try_parse_path(path).map_err(|error| AssignmentError::Path {
            text: text.to_string(),
            path: path.to_string(),
            error,
        })?;
        if let Some(problem) = value_problem(value) {
            return Err(AssignmentError::Value {
                text: text.to_string(),
                problem,
            });
        }
        Ok(Assignment {
            path: path.to_string(),
            value: value.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn paths_and_values_are_checked() {
        let ok = Assignment::parse("image.tag=2.4.0").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (ok.path.as_str(), ok.value.as_str()),
            ("image.tag", "2.4.0")
        );
        let ok = Assignment::parse("a.b=c=d").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.value, "c=d");
        assert!(Assignment::parse("env[0].value=--x").is_ok());
        assert!(Assignment::parse("image.tag=").is_ok());
        assert_eq!(
            Assignment::parse("image..tag=1").map_err(|e| e.to_string()),
            Err("`image..tag=1`: PATH `image..tag`: segment 2 is empty (a path is KEY.KEY…, as `image.tag`; no leading, trailing or doubled `.`)".into())
        );
        assert!(Assignment::parse(".image.tag=1").is_err());
        assert!(matches!(
            Assignment::parse("image.tag"),
            Err(AssignmentError::NoEquals(_))
        ));
        let value = |t: &str| match Assignment::parse(t) {
            Err(AssignmentError::Value { problem, .. }) => problem,
            other => panic!("{t:?}: {other:?}"),
        };
        assert_eq!(
            value("a=1\n---\nkind: Secret"),
            ValueProblem::LineBreak('\n')
        );
        assert_eq!(value("a=1\r"), ValueProblem::LineBreak('\r'));
        assert_eq!(value("a=1\u{2028}"), ValueProblem::LineBreak('\u{2028}'));
        assert_eq!(value("a=1\t2"), ValueProblem::Control('\t'));
        assert_eq!(value("a=---"), ValueProblem::DocumentMarker("---"));
        assert_eq!(value("a=... x"), ValueProblem::DocumentMarker("..."));
        assert_eq!(
            Assignment::parse("a=1\n---").map_err(|e| e.to_string()),
            Err("`a=1\\n---`: VALUE: it contains a line break (U+000A): YAML reads the next line as more of the document".into())
        );
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused(text in "\\PC{0,30}|[a.=\\[\\]0-9\n-]{0,20}") {
            if let Ok(a) = Assignment::parse(&text) {
                prop_assert_eq!(format!("{}={}", a.path, a.value), text);
                prop_assert!(!a.value.contains('\n'));
            }
        }
    }
}
