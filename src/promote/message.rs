//! Commit messages of source edits (promotion, set-image, set-value,
//! rollback): a minijinja subject template, a body listing every pin old →
//! new per app in a fixed form that `history` reads back, and the trailers.

use super::plan::Item;
use super::Error;

/// The default subject of a promotion commit.
pub const DEFAULT_TEMPLATE: &str = "promote {{ from }} → {{ to }}: {{ summary }}";

/// How a missing value is written in bodies.
pub const NONE: &str = "(none)";

/// A value shortened for a subject line: digests to `sha256:ab12…`.
pub fn short(v: &str) -> String {
    match v.split_once(':') {
        Some((algo, hex)) if algo.starts_with("sha") && hex.len() > 12 => {
            format!("{algo}:{}…", &hex[..4])
        }
        _ => v.to_string(),
    }
}

/// `web 1.4.2 → 1.5.0, api sha256:ab12… → sha256:cd34…`.
pub fn summary(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| {
            format!(
                "{} {} → {}",
                i.app,
                short(i.old.as_deref().unwrap_or(NONE)),
                short(i.new.as_deref().unwrap_or(NONE))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The body lines: `- app pin: old → new`.
pub fn body(items: &[Item]) -> String {
    items
        .iter()
        .map(|i| {
            format!(
                "- {} {}: {} → {}\n",
                i.app,
                i.pin,
                i.old.as_deref().unwrap_or(NONE),
                i.new.as_deref().unwrap_or(NONE)
            )
        })
        .collect()
}

/// One pin change read back from a body line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinChange {
    /// The app.
    pub app: String,
    /// The pin.
    pub pin: String,
    /// Before (None: not set).
    pub old: Option<String>,
    /// After (None: removed).
    pub new: Option<String>,
}

/// The pin changes listed in a commit message.
pub fn parse_body(message: &str) -> Vec<PinChange> {
    message
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("- ")?;
            let (app, rest) = rest.split_once(' ')?;
            let (pin, rest) = rest.rsplit_once(": ").filter(|(_, r)| r.contains(" → "))?;
            let (old, new) = rest.split_once(" → ")?;
            Some(PinChange {
                app: app.to_string(),
                pin: pin.to_string(),
                old: (old != NONE).then(|| old.to_string()),
                new: (new != NONE).then(|| new.to_string()),
            })
        })
        .collect()
}

/// Subject from `template`, then the body, then the trailers.
pub fn render(
    template: &str,
    ctx: minijinja::Value,
    items: &[Item],
    trailers: &[(&str, String)],
) -> Result<String, Error> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let subject = env
        .render_str(template, ctx)
        .map_err(|e| Error::Template(e.to_string()))?;
    let mut msg = format!("{}\n\n{}", subject.trim_end(), body(items));
    msg.push('\n');
    for (k, v) in trailers {
        msg.push_str(&format!("{k}: {v}\n"));
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_back() {
        let line =
            "- api ghcr.io/acme/api:digest: (none) → sha256:cd34\n- web image.tag: 1.0 → 1.1\n";
        let c = parse_body(line);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].pin, "ghcr.io/acme/api:digest");
        assert_eq!(c[0].old, None);
        assert_eq!(c[1].new.as_deref(), Some("1.1"));
        assert_eq!(short("sha256:4f3c2b1a0e9d8c7b6a5f"), "sha256:4f3c…");
    }
}
