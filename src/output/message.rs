//! Commit messages (a minijinja template plus hydrate's trailers), the
//! `hydrator.metadata` files gitops-promoter and Argo CD read (at the root
//! and in each app directory), and the note body on hydrated commits. It
//! writes nothing; `branch` places these.

use std::collections::BTreeSet;

use super::Error;
use crate::git::SourceCommit;

/// The default commit message template.
pub const DEFAULT_TEMPLATE: &str = "\
{{ env }}: render {{ source.short_sha }}{% if changed_apps %} ({{ changed_apps[:5] | join(\", \") }}{% if changed_apps | length > 5 %} and {{ changed_apps | length - 5 }} more{% endif %}){% endif %}

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

/// The one minijinja environment every user template (commit messages,
/// READMEs, promotion messages) renders in: an undefined variable is an
/// error naming it, not an empty string.
pub fn template_env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env
}

/// Renders `template` and appends the trailers `Hydrate-Source`,
/// `Hydrate-Environment` and `Hydrate-Version`.
pub fn commit_message(template: &str, c: &MessageContext) -> Result<String, Error> {
    let env = template_env();
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
    if body.trim().is_empty() {
        // The trailers would become the subject.
        return Err(Error::Template(
            "the message is empty; a commit needs a subject line".into(),
        ));
    }
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

/// Argo CD's `HydratorCommitMetadata` (util/hydrator/hydrator.go), the
/// content of a `hydrator.metadata` file. Empty fields are left out, as Go's
/// `omitempty` does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `repoURL`: where the dry source lives.
    pub repo_url: Option<String>,
    /// `drySha`: the source commit rendered.
    pub dry_sha: String,
    /// `commands`: how to render this path again.
    pub commands: Vec<String>,
    /// `author`: the source commit's author, `Name <email>`.
    pub author: String,
    /// `date`: the source commit's date, RFC 3339.
    pub date: String,
    /// `subject`: the first line of the source commit's message.
    pub subject: String,
    /// `body`: the rest, without the `Argocd-reference-commit-*` trailers
    /// that became `references`.
    pub body: String,
    /// `references`: the code commit named by those trailers.
    pub references: Vec<Reference>,
}

/// Argo CD's `CommitMetadata` (a `RevisionReference`'s `commit`), read from
/// `Argocd-reference-commit-*` trailers of the source commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reference {
    /// `author` (`Argocd-reference-commit-author`).
    pub author: String,
    /// `date` (`Argocd-reference-commit-date`).
    pub date: String,
    /// `subject` (`Argocd-reference-commit-subject`).
    pub subject: String,
    /// `body` (`Argocd-reference-commit-body`, a JSON string in the trailer).
    pub body: String,
    /// `sha` (`Argocd-reference-commit-sha`, 5 to 40 hex digits).
    pub sha: String,
    /// `repoURL` (`Argocd-reference-commit-repourl`).
    pub repo_url: String,
}

impl Metadata {
    /// The root-level metadata of a hydrated commit rendered from `source`
    /// (Argo CD's `GetCommitMetadata`): the message is split into subject
    /// and body, and known reference trailers with valid values move from
    /// the body to `references`.
    pub fn of_source(source: &SourceCommit, repo_url: Option<&str>) -> Metadata {
        let (body, reference) = split_references(&source.body);
        Metadata {
            repo_url: repo_url.map(str::to_string),
            dry_sha: source.sha.clone(),
            commands: Vec::new(),
            author: source.author.clone(),
            date: rfc3339(source.time),
            subject: source.subject.clone(),
            body,
            references: reference.into_iter().collect(),
        }
    }

    /// The file's bytes as Argo CD's commit server writes them: a Go
    /// `json.Encoder` with two-space indent and HTML escaping off, fields in
    /// struct order, a trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut fields = vec![];
        let mut opt = |k: &'static str, v: &str| {
            if !v.is_empty() {
                fields.push((k, Json::Str(v.to_string())));
            }
        };
        opt("repoURL", self.repo_url.as_deref().unwrap_or(""));
        opt("drySha", &self.dry_sha);
        if !self.commands.is_empty() {
            let c = self.commands.iter().map(|c| Json::Str(c.clone())).collect();
            fields.push(("commands", Json::Arr(c)));
        }
        let mut opt = |k: &'static str, v: &str| {
            if !v.is_empty() {
                fields.push((k, Json::Str(v.to_string())));
            }
        };
        opt("author", &self.author);
        opt("date", &self.date);
        opt("subject", &self.subject);
        opt("body", &self.body);
        if !self.references.is_empty() {
            let refs = self.references.iter().map(Reference::json).collect();
            fields.push(("references", Json::Arr(refs)));
        }
        let mut out = String::new();
        Json::Obj(fields).write(0, &mut out);
        out.push('\n');
        out.into_bytes()
    }
}

impl Reference {
    fn json(&self) -> Json {
        let fields = [
            ("author", &self.author),
            ("date", &self.date),
            ("subject", &self.subject),
            ("body", &self.body),
            ("sha", &self.sha),
            ("repoURL", &self.repo_url),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, Json::Str(v.clone())))
        .collect();
        Json::Obj(vec![("commit", Json::Obj(fields))])
    }
}

/// A JSON value whose object keys keep their order (serde_json's map sorts
/// them without its `preserve_order` feature; Go writes struct order).
enum Json {
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// Go's `MarshalIndent(v, "", "  ")` layout; an empty array or object
    /// never reaches here (`omitempty`).
    fn write(&self, level: usize, out: &mut String) {
        let pad = |n: usize| "  ".repeat(n);
        match self {
            Json::Str(s) => out.push_str(&go_string(s)),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(level + 1));
                    item.write(level + 1, out);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(level));
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    out.push_str(&format!("{}{}: ", pad(level + 1), go_string(k)));
                    v.write(level + 1, out);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                out.push_str(&pad(level));
                out.push('}');
            }
        }
    }
}

/// A JSON string as Go's encoder writes it with HTML escaping off: like
/// serde_json, except that U+2028 and U+2029 are escaped too
/// (encoding/json encode.go appendString).
fn go_string(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_default()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Argo CD's `git.GetReferences`: `Argocd-reference-commit-*` trailers in
/// the last paragraph of `body` with valid values become one reference and
/// leave the body; other lines stay.
fn split_references(body: &str) -> (String, Option<Reference>) {
    let (head, last) = match body.trim_end().rsplit_once("\n\n") {
        Some((h, l)) => (Some(h), l),
        None => (None, body.trim_end()),
    };
    let mut r = Reference::default();
    let mut found = false;
    let mut kept = Vec::new();
    for line in last.lines() {
        let taken = line.split_once(':').is_some_and(|(k, v)| {
            let v = v.trim();
            let key = k.trim().to_ascii_lowercase();
            let Some(field) = key.strip_prefix("argocd-reference-commit-") else {
                return false;
            };
            let slot = match field {
                "author" if v.contains('<') && v.ends_with('>') => &mut r.author,
                "date" if !v.is_empty() => &mut r.date,
                "subject" if !v.is_empty() => &mut r.subject,
                "repourl" if v.contains("://") || v.contains('@') => &mut r.repo_url,
                "sha"
                    if (5..=40).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_hexdigit()) =>
                {
                    &mut r.sha
                }
                "body" => match serde_json::from_str::<String>(v) {
                    Ok(b) => {
                        r.body = b;
                        return true;
                    }
                    Err(_) => return false,
                },
                _ => return false,
            };
            *slot = v.to_string();
            true
        });
        found |= taken;
        if !taken {
            kept.push(line);
        }
    }
    if !found {
        return (body.to_string(), None);
    }
    let rest = kept.join("\n");
    let body = match (head, rest.trim().is_empty()) {
        (Some(h), true) => h.to_string(),
        (Some(h), false) => format!("{h}\n\n{rest}"),
        (None, _) => rest,
    };
    (body, Some(r))
}

/// Argo CD's README template (commitserver/commit/hydratorhelper.go
/// `manifestHydrationReadmeTemplate`) in minijinja.
pub const DEFAULT_README: &str = "# Manifest Hydration

To hydrate the manifests in this repository, run the following commands:

```shell
git clone {{ repoURL }}
# cd into the cloned directory
git checkout {{ drySha }}
{% for command in commands %}{{ command }}
{% endfor %}```
";

/// `.gitattributes` as Argo CD writes it next to READMEs.
pub const GITATTRIBUTES: &str =
    "**/README.md linguist-generated=true\n**/hydrator.metadata linguist-generated=true";

/// Renders a per-path README from `template` (minijinja) with the path's
/// metadata: `repoURL`, `drySha`, `commands`, `author`, `date`, `subject`,
/// `body`, plus `env` and `app`.
pub fn readme(template: &str, m: &Metadata, env: &str, app: &str) -> Result<Vec<u8>, Error> {
    let jinja = template_env();
    let ctx = minijinja::context! {
        repoURL => m.repo_url.as_deref().unwrap_or(""),
        drySha => &m.dry_sha,
        commands => &m.commands,
        author => &m.author,
        date => &m.date,
        subject => &m.subject,
        body => &m.body,
        env => env,
        app => app,
    };
    jinja
        .render_str(template, ctx)
        .map(String::into_bytes)
        .map_err(|e| Error::Template(format!("README: {e}")))
}

/// The note gitops-promoter and Argo CD read from `refs/notes/hydrator.metadata`
/// (Argo CD's `CommitNote`, marshalled compactly): `{"drySha":"<sha>"}`,
/// with the newline `git notes add -m` (how Argo CD adds it) ends a note with.
pub fn note(dry_sha: &str) -> Vec<u8> {
    format!("{{\"drySha\":{}}}\n", go_string(dry_sha)).into_bytes()
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
    fn default_subject_names_five_apps_then_counts() {
        let changed: BTreeSet<String> = (0..3000).map(|i| format!("app{i:04}")).collect();
        let c = MessageContext {
            env: "prod",
            branch: "env/prod",
            source: &source(),
            apps: &[],
            changed_apps: &changed,
            trailers: &[],
        };
        let m = commit_message(DEFAULT_TEMPLATE, &c).unwrap();
        let subject = m.lines().next().unwrap_or_default();
        assert_eq!(
            subject,
            "prod: render 0123456789ab (app0000, app0001, app0002, app0003, app0004 and 2995 more)"
        );
        let blank = commit_message("{% if false %}x{% endif %}  \n", &c).unwrap_err();
        assert!(blank.to_string().contains("empty"), "{blank}");
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
    fn metadata_is_go_json_in_struct_order_with_references_out_of_the_body() {
        let mut s = source();
        s.body = "Why.\n\nSigned-off-by: A <a@x>\nArgocd-reference-commit-sha: abc123\n\
                  Argocd-reference-commit-body: \"line\\nmore <b>\"\n\
                  Argocd-reference-commit-sha: nothex"
            .into();
        let mut m = Metadata::of_source(&s, Some("https://example.com/r.git"));
        m.commands = vec!["hydrate render".into()];
        let text = String::from_utf8(m.to_bytes()).unwrap();
        assert_eq!(
            text,
            r#"{
  "repoURL": "https://example.com/r.git",
  "drySha": "0123456789abcdef0123456789abcdef01234567",
  "commands": [
    "hydrate render"
  ],
  "author": "Dev <dev@example.com>",
  "date": "2023-11-14T22:13:20Z",
  "subject": "Bump web",
  "body": "Why.\n\nSigned-off-by: A <a@x>\nArgocd-reference-commit-sha: nothex",
  "references": [
    {
      "commit": {
        "body": "line\nmore <b>",
        "sha": "abc123"
      }
    }
  ]
}
"#
        );
        let plain = Metadata::of_source(&source(), None).to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&plain).unwrap();
        assert!(v.get("repoURL").is_none() && v.get("body").is_none());
        assert_eq!(note("ab\u{2028}"), b"{\"drySha\":\"ab\\u2028\"}\n");
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
