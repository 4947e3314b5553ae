//! Commit messages of source edits (promotion, set-image, set-value,
//! rollback): a minijinja subject template, a body listing every pin old →
//! new per app in a fixed form that `history` reads back, and the trailers.

use super::copy::Copy;
use super::pin::Place;
use super::plan::Item;
use super::Error;

/// The default subject of a promotion commit.
pub const DEFAULT_TEMPLATE: &str = "promote {{ from }} → {{ to }}: {{ summary }}";

/// How a missing value is written in bodies.
pub const NONE: &str = "(none)";

/// The longest subject a commit gets (git's and the forges' convention).
pub const SUBJECT_MAX: usize = 72;

/// A value shortened for a subject line or the board: a digest to its
/// first 12 hex characters (`sha256:4f3c2b1a0e9d`), as `docker images`
/// shows image ids.
pub fn short(v: &str) -> String {
    match v.split_once(':') {
        Some((algo, hex)) if algo.starts_with("sha") && hex.chars().count() > 12 => {
            format!("{algo}:{}", hex.chars().take(12).collect::<String>())
        }
        _ => v.to_string(),
    }
}

/// The items of each app, in order.
fn by_app(items: &[Item]) -> Vec<(&str, Vec<&Item>)> {
    let mut out: Vec<(&str, Vec<&Item>)> = Vec::new();
    for it in items {
        match out.iter_mut().find(|(a, _)| *a == it.app) {
            Some((_, v)) => v.push(it),
            None => out.push((&it.app, vec![it])),
        }
    }
    out
}

/// The image and field of an `images:` pin.
fn image_field(it: &Item) -> Option<(&str, &str)> {
    match &it.target.place {
        Place::Image { image, field, .. } => Some((image, field)),
        _ => None,
    }
}

/// What an app's part of a subject says: the version it gets, from a tag
/// pin first (`newTag`, a value path ending in `tag`), else its first pin,
/// as the reference that will run when the same image also gets a digest
/// (`2.8.1@sha256:9a1b2c3d4e5f`: kustomize writes both, the digest is what
/// is pulled); `(pins removed)` when a rollback only removes pins.
fn headline(app: &str, items: &[&Item]) -> String {
    let is_tag = |it: &Item| match image_field(it) {
        Some((_, field)) => field == "newTag",
        None => it.pin.ends_with("tag") || it.pin.ends_with("Tag"),
    };
    let set: Vec<&&Item> = items.iter().filter(|i| i.new.is_some()).collect();
    let Some(pick) = set.iter().find(|i| is_tag(i)).or(set.first()) else {
        return format!("{app} (pins removed)");
    };
    let mut value = pick.new.as_deref().unwrap_or_default();
    // A container image field (a pin kustomize's trace found in a patch):
    // the version is its digest when it has one, else its tag.
    if pick.pin.ends_with(".image") {
        if let Some(v) = super::traced::digest_of_reference(value)
            .or_else(|| super::traced::tag_of_reference(value))
        {
            value = v;
        }
    }
    let digest = image_field(pick).and_then(|(image, field)| {
        (field == "newTag").then(|| {
            set.iter()
                .find(|i| image_field(i) == Some((image, "digest")))
                .and_then(|i| i.new.as_deref())
        })?
    });
    match digest {
        Some(d) => format!("{app} {}@{}", short(value), short(d)),
        None => format!("{app} {}", short(value)),
    }
}

/// `status 2.3.1, web 1.4.3, +3 more`: as many apps as fit in `budget`
/// characters, the shortest first so the most fit, listed in app order
/// (at least one, cut with `…` if even that one is too long).
/// An app whose only change is a copied file is named by it
/// (`checkout settings.yml`).
pub fn summary(items: &[Item], copies: &[Copy], budget: usize) -> String {
    let mut heads: Vec<(String, String)> = by_app(items)
        .iter()
        .map(|(a, its)| (a.to_string(), headline(a, its)))
        .collect();
    for c in copies {
        if !heads.iter().any(|(a, _)| *a == c.app) {
            heads.push((c.app.clone(), format!("{} {}", c.app, c.name)));
        }
    }
    heads.sort();
    let heads: Vec<String> = heads.into_iter().map(|(_, h)| h).collect();
    let line = |chosen: &[usize]| {
        let mut parts: Vec<&str> = chosen.iter().map(|&i| heads[i].as_str()).collect();
        let more = heads.len() - chosen.len();
        let tail = format!("+{more} more");
        if more > 0 {
            parts.push(&tail);
        }
        parts.join(", ")
    };
    let mut by_length: Vec<usize> = (0..heads.len()).collect();
    by_length.sort_by_key(|&i| heads[i].chars().count());
    let mut chosen: Vec<usize> = Vec::new();
    for i in by_length {
        let mut next = chosen.clone();
        next.push(i);
        next.sort_unstable();
        if line(&next).chars().count() <= budget {
            chosen = next;
        }
    }
    if !chosen.is_empty() || heads.is_empty() {
        return line(&chosen);
    }
    let more = if heads.len() > 1 {
        format!(", +{} more", heads.len() - 1)
    } else {
        String::new()
    };
    let room = budget.saturating_sub(more.chars().count() + 1);
    format!("{}…{more}", heads[0].chars().take(room).collect::<String>())
}

/// The body: one line per app with every pin old → new, values in full.
pub fn body(items: &[Item]) -> String {
    by_app(items)
        .iter()
        .map(|(app, its)| {
            let pins: Vec<String> = its
                .iter()
                .map(|i| {
                    format!(
                        "{} {} → {}",
                        i.pin,
                        i.old_text(),
                        i.new.as_deref().unwrap_or(NONE)
                    )
                })
                .collect();
            format!("- {app}: {}\n", pins.join(", "))
        })
        .collect()
}

/// The trailer that records one pin change, read back by `history`.
pub const PIN_TRAILER: &str = "Hydrate-Pin";

fn pin_trailer(i: &Item) -> String {
    format!(
        "{} {}: {} → {}",
        i.app,
        i.pin,
        i.old.as_deref().unwrap_or(NONE),
        i.new.as_deref().unwrap_or(NONE)
    )
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

/// One `app pin: old → new` (a `Hydrate-Pin` trailer's value).
pub fn parse_change(text: &str) -> Option<PinChange> {
    let (app, rest) = text.split_once(' ')?;
    let (pin, rest) = rest.rsplit_once(": ").filter(|(_, r)| r.contains(" → "))?;
    let (old, new) = rest.split_once(" → ")?;
    Some(PinChange {
        app: app.to_string(),
        pin: pin.to_string(),
        old: (old != NONE).then(|| old.to_string()),
        new: (new != NONE).then(|| new.to_string()),
    })
}

/// The pin changes a commit records: its `Hydrate-Pin` trailers, or, for
/// commits made before those existed, the `- app pin: old → new` lines of
/// the body.
pub fn changes(message: &str, trailers: &[(String, String)]) -> Vec<PinChange> {
    let from_trailers: Vec<PinChange> = trailers
        .iter()
        .filter(|(k, _)| k == PIN_TRAILER)
        .filter_map(|(_, v)| parse_change(v))
        .collect();
    if !from_trailers.is_empty() {
        return from_trailers;
    }
    message
        .lines()
        .filter_map(|l| parse_change(l.strip_prefix("- ")?))
        .collect()
}

/// Subject from `template` (given the summary, fitted so the subject
/// stays within [`SUBJECT_MAX`] characters), then the body, then the
/// trailers and one `Hydrate-Pin` trailer per pin.
pub fn render(
    template: &str,
    ctx: impl Fn(&str) -> minijinja::Value,
    items: &[Item],
    trailers: &[(&str, String)],
) -> Result<String, Error> {
    render_with_copies(template, ctx, items, &[], trailers)
}

/// [`render`] for a promotion that also copies files whole: each copy is
/// named in the subject as its app's change when the app has no pin, and
/// listed in the body with its diff; a `Hydrate-Copy` trailer records it.
pub fn render_with_copies(
    template: &str,
    ctx: impl Fn(&str) -> minijinja::Value,
    items: &[Item],
    copies: &[Copy],
    trailers: &[(&str, String)],
) -> Result<String, Error> {
    let part = Part {
        env: None,
        items,
        copies,
    };
    compose(template, ctx, &[part], trailers)
}

/// One environment's share of a commit into several at once (`promote
/// --together`).
pub struct Part<'a> {
    /// The environment; None in a commit into one environment, whose
    /// lines and trailers name no environment (as they always have).
    pub env: Option<&'a str>,
    /// Its pins.
    pub items: &'a [Item],
    /// Its copied files.
    pub copies: &'a [Copy],
}

/// [`render_with_copies`] for a commit into several environments: every
/// body line and every `Hydrate-Pin` / `Hydrate-Copy` trailer names its
/// environment as `ENV/APP` (`Hydrate-Pin: prod-eu/web example/web:newTag:
/// 1.0.0 → 1.1.0`), which [`changes_in`] reads back per environment. The
/// caller puts one `Hydrate-Environment` trailer per environment in
/// `trailers`.
pub fn render_together(
    template: &str,
    ctx: impl Fn(&str) -> minijinja::Value,
    parts: &[Part],
    trailers: &[(&str, String)],
) -> Result<String, Error> {
    compose(template, ctx, parts, trailers)
}

/// `web`, or `prod-eu/web` in a commit into several environments.
fn app_of(env: Option<&str>, app: &str) -> String {
    match env {
        Some(e) => format!("{e}/{app}"),
        None => app.to_string(),
    }
}

fn compose(
    template: &str,
    ctx: impl Fn(&str) -> minijinja::Value,
    parts: &[Part],
    trailers: &[(&str, String)],
) -> Result<String, Error> {
    let env = crate::output::template_env();
    let subject = |summary: &str| {
        env.render_str(template, ctx(summary))
            .map_err(|e| Error::Template(e.to_string()))
    };
    let frame = subject("")?.chars().count();
    let items: Vec<Item> = parts.iter().flat_map(|p| p.items).cloned().collect();
    let copies: Vec<Copy> = parts.iter().flat_map(|p| p.copies).cloned().collect();
    let fitted = summary(&items, &copies, SUBJECT_MAX.saturating_sub(frame).max(12));
    let mut msg = format!("{}\n\n", subject(&fitted)?.trim_end());
    for p in parts {
        for line in body(p.items).lines() {
            // `- app: …` → `- prod-eu/app: …`
            match (p.env, line.strip_prefix("- ")) {
                (Some(e), Some(rest)) => msg.push_str(&format!("- {e}/{rest}\n")),
                _ => msg.push_str(&format!("{line}\n")),
            }
        }
    }
    for p in parts {
        for c in p.copies {
            let app = app_of(p.env, &c.app);
            if c.from == c.to {
                // A rollback: the file as it was.
                msg.push_str(&format!("- {app}: {} restored\n", c.name));
            } else {
                msg.push_str(&format!(
                    "- {app}: {} copied from {}\n",
                    c.name,
                    c.from.display()
                ));
            }
            for line in super::copy::diff(c).lines() {
                msg.push_str(&format!("    {line}\n"));
            }
        }
    }
    msg.push('\n');
    for (k, v) in trailers {
        msg.push_str(&format!("{k}: {v}\n"));
    }
    for p in parts {
        for i in p.items {
            let mut t = pin_trailer(i);
            if let Some(e) = p.env {
                t = format!("{e}/{t}");
            }
            msg.push_str(&format!("{PIN_TRAILER}: {t}\n"));
        }
    }
    for p in parts {
        for c in p.copies {
            msg.push_str(&format!(
                "{COPY_TRAILER}: {} {} {} → {}\n",
                app_of(p.env, &c.app),
                c.name,
                c.from.display(),
                c.to.display()
            ));
        }
    }
    Ok(msg)
}

/// The changes of a commit that belong to `env`: all of them when the
/// commit names one environment, else those its lines and trailers name
/// as `ENV/APP` (see [`render_together`]), with the prefix taken off.
pub fn changes_in(env: &str, several: bool, all: &[PinChange]) -> Vec<PinChange> {
    if !several {
        return all.to_vec();
    }
    let prefix = format!("{env}/");
    all.iter()
        .filter_map(|c| {
            let app = c.app.strip_prefix(&prefix)?;
            Some(PinChange {
                app: app.to_string(),
                ..c.clone()
            })
        })
        .collect()
}

/// The trailer that records a whole-file copy.
pub const COPY_TRAILER: &str = "Hydrate-Copy";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_bodies_read_back() {
        let line =
            "- api ghcr.io/acme/api:digest: (none) → sha256:cd34\n- web image.tag: 1.0 → 1.1\n";
        let c = changes(line, &[]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].pin, "ghcr.io/acme/api:digest");
        assert_eq!(c[0].old, None);
        assert_eq!(c[1].new.as_deref(), Some("1.1"));
        assert_eq!(short("sha256:4f3c2b1a0e9d8c7b6a5f"), "sha256:4f3c2b1a0e9d");
        assert_eq!(short("sha256:aéééééééééééééééé"), "sha256:aééééééééééé");
    }

    fn item(app: &str, pin: &str, old: Option<&str>, new: &str) -> Item {
        let place = match pin.rsplit_once(':') {
            Some((image, field)) => Place::Image {
                file: "k.yaml".into(),
                image: image.into(),
                field: field.into(),
            },
            None => Place::Value {
                file: "x".into(),
                doc: 0,
                path: Vec::new(),
                resolver: crate::yaml::Resolver::V3,
            },
        };
        Item {
            app: app.into(),
            pin: pin.into(),
            old: old.map(str::to_string),
            new: Some(new.into()),
            target: super::super::pin::Pin {
                app: app.into(),
                name: pin.into(),
                value: None,
                place,
            },
            runs_now: None,
        }
    }

    #[test]
    fn subjects_fit_in_72_characters_and_name_each_app_once() {
        let digest = "sha256:9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
        let items = vec![
            item(
                "api",
                "ghcr.io/acme-shop/api:digest",
                Some("sha256:4f3c"),
                digest,
            ),
            item("api", "ghcr.io/acme-shop/api:newTag", None, "2.8.1"),
            item("status", "image.tag", Some("2.3.0"), "2.3.1"),
            item(
                "web",
                "ghcr.io/acme-shop/web:newTag",
                Some("1.4.2"),
                "1.4.3",
            ),
            item("worker", "ghcr.io/acme-shop/worker:newTag", None, "0.9.4"),
        ];
        let ctx =
            |s: &str| minijinja::context! { from => "staging", to => "production", summary => s };
        let msg = render(DEFAULT_TEMPLATE, ctx, &items, &[]).unwrap_or_else(|e| panic!("{e}"));
        let subject = msg.lines().next().unwrap_or_default();
        assert!(subject.chars().count() <= SUBJECT_MAX, "{subject}");
        assert_eq!(
            subject,
            "promote staging → production: status 2.3.1, web 1.4.3, +2 more"
        );
        assert!(msg.contains(&format!("- api: ghcr.io/acme-shop/api:digest sha256:4f3c → {digest}, ghcr.io/acme-shop/api:newTag (none) → 2.8.1\n")), "{msg}");
        let trailers = crate::git::trailers(&msg);
        let back = changes(&msg, &trailers);
        assert_eq!(back.len(), 5);
        assert_eq!(back[0].new.as_deref(), Some(digest));
    }
}
