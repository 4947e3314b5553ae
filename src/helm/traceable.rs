//! helm 4's layout of a template execution error (`reformatExecErrorMsg`
//! and `TraceableError` in helm v4's `pkg/engine/engine.go`): each error of
//! the chain Go's `errors.Unwrap` walks becomes a block of its location,
//! the `executing "NAME" at <...>:` line and the message, indented.
//!
//! Go keeps the chain as wrapped error values; hydrate's executor keeps
//! only the flat message, so the chain is rebuilt from it with the one
//! rule that makes Go wrap: text/template's `evalCall` reports a failing
//! function as `error calling NAME: %w`, so the wrapped error is the rest
//! of the message. Any link helm cannot parse (a function's own error such
//! as `invalid semantic version`, `tpl`'s `error during tpl function
//! execution ...`) makes helm keep the flat message; so does `None` here.

/// One link as helm parses it (`TraceableError`).
#[derive(Debug, PartialEq, Eq)]
struct Traceable<'a> {
    location: &'a str,
    executed: Option<(&'a str, &'a str)>,
    message: &'a str,
}

impl Traceable<'_> {
    /// `TraceableError.String`.
    fn write(&self, out: &mut String) {
        if !self.location.is_empty() {
            out.push_str(self.location);
            out.push_str("\n  ");
        }
        if let Some((name, at)) = self.executed {
            out.push_str(&format!("executing \"{name}\" at <{at}>:\n    "));
        }
        if !self.message.is_empty() {
            out.push_str(self.message);
            out.push('\n');
        }
    }
}

/// helm's `parseTemplateExecErrorString`: the link, and the error it wraps
/// (the text after `error calling NAME: `), if any.
fn parse(s: &str) -> Option<(Traceable<'_>, Option<&str>)> {
    let rest = s.strip_prefix("template: ")?;
    // `parseTemplateNoTemplateError`: text/template's own lookup failure.
    if rest.starts_with("no template ") {
        let t = Traceable {
            location: "",
            executed: None,
            message: s,
        };
        return Some((t, None));
    }
    if let Some(parsed) = parse_executing(rest) {
        return Some(parsed);
    }
    // `parseTemplateSimpleErrorString`: `NAME: MESSAGE`, split at the last
    // `": "` so a `line:col` stays whole.
    let (location, message) = rest.rsplit_once(": ")?;
    let t = Traceable {
        location,
        executed: None,
        message: cut_chained(message),
    };
    Some((t, None))
}

/// helm's `parseTemplateExecutingAtErrorType`:
/// `LOCATION: executing "NAME" at <CONTEXT>: MESSAGE`.
fn parse_executing(rest: &str) -> Option<(Traceable<'_>, Option<&str>)> {
    let (location, after) = rest.split_once(": executing ")?;
    let after = after.strip_prefix('"')?;
    let (name, after) = after.split_once('"')?;
    let after = after.strip_prefix(" at <")?;
    let (at, message) = after.split_once(">: ")?;
    let wrapped = message
        .strip_prefix("error calling ")
        .and_then(|m| m.split_once(": "))
        .map(|(_, inner)| inner);
    let t = Traceable {
        location,
        executed: Some((name, at)),
        message: cut_chained(message),
    };
    Some((t, wrapped))
}

/// The message up to a chained ` template:` error (helm trims it; the
/// chained error is the next link).
fn cut_chained(message: &str) -> &str {
    message
        .split_once(" template:")
        .map_or(message, |(head, _)| head)
}

/// helm 4's multi-line message for the flat execution error `msg`, or
/// `None` where helm 4 keeps `msg` as it is.
pub(super) fn layout(msg: &str) -> Option<String> {
    let mut links: Vec<Traceable<'_>> = Vec::new();
    let mut current = Some(msg);
    while let Some(s) = current {
        let (t, wrapped) = parse(s)?;
        if links.last() != Some(&t) {
            links.push(t);
        }
        current = wrapped;
    }
    let mut out = String::new();
    for t in &links {
        t.write(&mut out);
    }
    Some(out.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn an_include_chain_is_laid_out_per_link() {
        let msg = "template: c/templates/a.yaml:6:12: executing \"c/templates/a.yaml\" at <include \"x\" .>: error calling include: template: c/templates/_h.tpl:1:57: executing \"x\" at <.b.d>: nil pointer evaluating interface {}.d";
        assert_eq!(
            layout(msg).as_deref(),
            Some(
                "c/templates/a.yaml:6:12\n  executing \"c/templates/a.yaml\" at <include \"x\" .>:\n    error calling include:\nc/templates/_h.tpl:1:57\n  executing \"x\" at <.b.d>:\n    nil pointer evaluating interface {}.d"
            )
        );
    }

    #[test]
    fn a_missing_template_ends_the_chain_unindented() {
        let msg = "template: t:1:3: executing \"t\" at <include \"nope\" .>: error calling include: template: no template \"nope\" associated with template \"gotpl\"";
        assert_eq!(
            layout(msg).as_deref(),
            Some("t:1:3\n  executing \"t\" at <include \"nope\" .>:\n    error calling include:\ntemplate: no template \"nope\" associated with template \"gotpl\"")
        );
    }

    #[test]
    fn a_function_error_keeps_the_flat_message() {
        let msg = "template: t:1:3: executing \"t\" at <semverCompare \"1\" \"x\">: error calling semverCompare: invalid semantic version";
        assert_eq!(layout(msg), None);
    }

    #[test]
    fn a_message_without_the_template_prefix_is_kept() {
        assert_eq!(layout("rendering failed"), None);
        assert_eq!(layout("template: é"), None);
    }

    #[test]
    fn multibyte_text_never_panics() {
        for msg in [
            "template: é: executing \"é",
            "template: é: executing \"é\" at <é>: error calling é",
            "template: ééé: é",
        ] {
            let _ = layout(msg);
        }
    }
}
