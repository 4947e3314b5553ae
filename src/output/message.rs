//! Commit messages (a minijinja template plus hydrate's trailers) and the
//! `hydrator.metadata` file gitops-promoter reads from each app directory.

use std::collections::BTreeSet;

use super::Error;
use crate::git::SourceCommit;

/// The default commit message template.
pub const DEFAULT_TEMPLATE: &str = "\
{{ env }}: render {{ source.short_sha }}{% if changed_apps %} ({{ changed_apps | join(\", \") }}){% endif %}

Rendered from {{ source.sha }}: {{ source.subject }}";

/// What a commit message template can use.
pub struct MessageContext<'a> {
    /// Environment name.
    pub env: &'a str,
    /// Branch written.
    pub branch: &'a str,
    /// The source commit.
    pub source: &'a SourceCommit,
    /// Every app of the environment rendered this run.
    pub apps: &'a [String],
    /// Apps whose files changed.
    pub changed_apps: &'a BTreeSet<String>,
    /// Extra trailers, after hydrate's own (`Hydrate-Promotion`).
    pub trailers: &'a [(String, String)],
}

/// Renders `template` and appends the trailers `Hydrate-Source`,
/// `Hydrate-Environment` and `Hydrate-Version`.
pub fn commit_message(template: &str, c: &MessageContext) -> Result<String, Error> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let short: String = c.source.sha.chars().take(12).collect();
    let ctx = minijinja::context! {
        env => c.env,
        branch => c.branch,
        version => env!("CARGO_PKG_VERSION"),
        apps => c.apps,
        changed_apps => c.changed_apps.iter().collect::<Vec<_>>(),
        source => minijinja::context! {
            sha => &c.source.sha,
            short_sha => short,
            subject => &c.source.subject,
            body => &c.source.body,
            author => &c.source.author,
        },
    };
    let body = env
        .render_str(template, ctx)
        .map_err(|e| Error::Template(e.to_string()))?;
    let mut msg = format!(
        "{}\n\nHydrate-Source: {}\nHydrate-Environment: {}\nHydrate-Version: {}\n",
        body.trim_end(),
        c.source.sha,
        c.env,
        env!("CARGO_PKG_VERSION")
    );
    for (k, v) in c.trailers {
        msg.push_str(&format!("{k}: {v}\n"));
    }
    Ok(msg)
}

/// gitops-promoter's `hydrator.metadata`: which dry commit this output came from.
pub fn hydrator_metadata(source: &SourceCommit) -> Vec<u8> {
    let v = serde_json::json!({
        "drySha": source.sha,
        "author": source.author,
        "date": rfc3339(source.time),
        "subject": source.subject,
        "body": source.body,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (UTC), without a clock.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> SourceCommit {
        SourceCommit {
            sha: "0123456789abcdef0123456789abcdef01234567".into(),
            subject: "Bump web".into(),
            body: String::new(),
            author: "Dev <dev@example.com>".into(),
            time: 1_700_000_000,
        }
    }

    #[test]
    fn default_message_has_trailers() {
        let changed: BTreeSet<String> = ["web".to_string()].into();
        let m = commit_message(
            DEFAULT_TEMPLATE,
            &MessageContext {
                env: "staging",
                branch: "env/staging",
                source: &source(),
                apps: &["web".into(), "api".into()],
                changed_apps: &changed,
                trailers: &[],
            },
        )
        .unwrap();
        assert!(
            m.starts_with("staging: render 0123456789ab (web)\n\nRendered from 0123"),
            "{m}"
        );
        assert!(m.ends_with(&format!(
            "\n\nHydrate-Source: 0123456789abcdef0123456789abcdef01234567\nHydrate-Environment: staging\nHydrate-Version: {}\n",
            env!("CARGO_PKG_VERSION")
        )));
    }

    #[test]
    fn bad_template_is_an_error() {
        let changed = BTreeSet::new();
        let c = MessageContext {
            env: "e",
            branch: "b",
            source: &source(),
            apps: &[],
            changed_apps: &changed,
            trailers: &[],
        };
        assert!(commit_message("{{ nope.x }}", &c).is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
