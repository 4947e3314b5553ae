//! The promotion plan: every pin of FROM whose value differs in TO, the
//! policy verdicts on it (`block:` globs, the downgrade guard) and the
//! plan's id, a hash of what it changes.

use sha2::{Digest, Sha256};

use super::copy::{Copy, NotCopied};
use super::pin::Pin;

/// One pin to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The app.
    pub app: String,
    /// The pin's name.
    pub pin: String,
    /// TO's value now (None: not set).
    pub old: Option<String>,
    /// The value to write (None: remove the pin, as a rollback to before
    /// it existed does).
    pub new: Option<String>,
    /// Where it is written in TO.
    pub target: Pin,
    /// Where `old` is None, what TO runs now and where that is set:
    /// `0.9.3 (base)` (the image's tag rendered from a file TO shares).
    pub runs_now: Option<String>,
}

impl Item {
    /// TO's value as a reviewer reads it: the pin's value, else what TO
    /// runs now, else `(none)`.
    pub fn old_text(&self) -> &str {
        self.old
            .as_deref()
            .or(self.runs_now.as_deref())
            .unwrap_or(super::message::NONE)
    }
}

/// Why a plan item may not be promoted without `--force`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A `block:` glob matches `app` (pin None: the whole app) or
    /// `app/pin`.
    Blocked {
        /// The app.
        app: String,
        /// The pin, when the glob named one (`api/*:digest`).
        pin: Option<String>,
        /// The glob.
        glob: String,
    },
    /// TO's version is higher than FROM's.
    Downgrade {
        /// The app.
        app: String,
        /// The pin.
        pin: String,
        /// TO's value.
        to: String,
        /// FROM's value.
        from: String,
    },
    /// A gate of TO's `promotion:` (or the wave order) holds the app.
    Gate {
        /// The app.
        app: String,
        /// `soak`, `freeze`, `requires`, `after` or `wave`.
        gate: &'static str,
        /// Why, and when it opens: `soak: 5 h 12 min left`.
        why: String,
    },
    /// TO has a pin FROM lacks.
    Missing {
        /// The app.
        app: String,
        /// The pin.
        pin: String,
        /// TO's value.
        to: String,
    },
}

impl Refusal {
    /// The app it concerns.
    pub fn app(&self) -> &str {
        match self {
            Refusal::Blocked { app, .. }
            | Refusal::Downgrade { app, .. }
            | Refusal::Gate { app, .. }
            | Refusal::Missing { app, .. } => app,
        }
    }

    /// What it holds back: one pin, or (None) every pin of the app. A
    /// downgrade or a pin FROM lacks holds the whole app, so an app never
    /// gets half of another environment's versions.
    pub fn holds(&self) -> Option<&str> {
        match self {
            Refusal::Blocked { pin, .. } => pin.as_deref(),
            _ => None,
        }
    }

    /// Why, in a few words: `policy \`redis\``, `downgrade`, ….
    pub fn reason(&self) -> String {
        match self {
            Refusal::Blocked { glob, .. } => format!("policy `{glob}`"),
            Refusal::Downgrade { pin, to, .. } => format!("{pin}: {to} is newer in the target"),
            Refusal::Missing { pin, .. } => format!("{pin}: set in the target only"),
            Refusal::Gate { why, .. } => why.clone(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Blocked { app, pin, glob } => match pin {
                Some(p) => write!(f, "{app}/{p} is blocked by the policy `{glob}`"),
                None => write!(f, "{app} is blocked by the policy `{glob}`"),
            },
            Refusal::Downgrade { app, pin, to, from } => write!(
                f,
                "{app}/{pin}: the target has {to}, newer than {from} (a hotfix?); promoting would downgrade it"
            ),
            Refusal::Gate { app, why, .. } => write!(f, "{app} is held by the gate {why}"),
            Refusal::Missing { app, pin, to } => write!(
                f,
                "{app}/{pin}: the target pins {to} but the source has no such pin"
            ),
        }
    }
}

/// A computed plan.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Pins to change, in app and pin order.
    pub items: Vec<Item>,
    /// What the policies refuse.
    pub refusals: Vec<Refusal>,
    /// The items the refusals hold back (after [`Plan::hold`]).
    pub held: Vec<Item>,
    /// Files to copy whole (`promotion.copy`).
    pub copies: Vec<Copy>,
    /// The copies the refusals hold back (after [`Plan::hold`]).
    pub held_copies: Vec<Copy>,
    /// Files a copy glob matched in FROM that TO lacks (not created).
    pub not_copied: Vec<NotCopied>,
}

impl Plan {
    /// Moves every item and copy a refusal holds back to `held` and
    /// `held_copies`: partial promotion, everything else goes ahead.
    pub fn hold(&mut self) {
        let refusals = &self.refusals;
        let holds = |app: &str, what: &str| {
            refusals
                .iter()
                .any(|r| r.app() == app && r.holds().is_none_or(|p| p == what))
        };
        let (held, kept): (Vec<Item>, Vec<Item>) =
            self.items.drain(..).partition(|it| holds(&it.app, &it.pin));
        self.items = kept;
        self.held = held;
        let (held, kept): (Vec<Copy>, Vec<Copy>) =
            self.copies.drain(..).partition(|c| holds(&c.app, &c.name));
        self.copies = kept;
        self.held_copies = held;
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.copies.is_empty()
    }

    /// Whether anything is held back.
    pub fn holds_any(&self) -> bool {
        !self.held.is_empty() || !self.held_copies.is_empty()
    }
}

/// Compares FROM's pins with TO's. `target_of` finds where TO would write
/// a pin it does not have yet (None: TO's app cannot take it).
pub fn compute(
    from: &[Pin],
    to: &[Pin],
    apps: &[String],
    target_of: &dyn Fn(&Pin) -> Option<Pin>,
) -> Plan {
    let mut plan = Plan::default();
    let wanted = |app: &str| apps.is_empty() || apps.iter().any(|a| a == app);
    for f in from.iter().filter(|p| wanted(&p.app)) {
        let Some(new) = &f.value else { continue };
        // A value TO renders from a file it shares is not TO's to change.
        let t = to
            .iter()
            .find(|t| t.app == f.app && t.name == f.name && t.place.is_editable());
        let target = match t {
            Some(t) => t.clone(),
            None => match target_of(f) {
                Some(t) => t,
                None => continue,
            },
        };
        if target.value.as_deref() == Some(new.as_str()) {
            continue;
        }
        plan.items.push(Item {
            app: f.app.clone(),
            pin: f.name.clone(),
            old: target.value.clone(),
            new: Some(new.clone()),
            target,
            runs_now: None,
        });
    }
    for t in to
        .iter()
        .filter(|p| wanted(&p.app) && p.place.is_editable())
    {
        let Some(v) = &t.value else { continue };
        let in_from = from
            .iter()
            .any(|f| f.app == t.app && f.name == t.name && f.value.is_some());
        // Only for apps FROM has at all: a TO-only app is not promoted.
        if !in_from && from.iter().any(|f| f.app == t.app) {
            plan.refusals.push(Refusal::Missing {
                app: t.app.clone(),
                pin: t.name.clone(),
                to: v.clone(),
            });
        }
    }
    plan.items
        .sort_by(|a, b| (&a.app, &a.pin).cmp(&(&b.app, &b.pin)));
    plan
}

/// A rollback's items: every pin of ENV as it was (`past`) that differs
/// now, written back, and every pin set now that was not set then,
/// removed. Apps that did not exist then are left as they are.
pub fn restore(
    past: &[Pin],
    now: &[Pin],
    past_apps: &[&str],
    target_of: &dyn Fn(&Pin) -> Option<Pin>,
) -> Plan {
    let mut plan = compute(past, now, &[], target_of);
    for t in now.iter().filter(|t| t.place.is_editable()) {
        let Some(v) = &t.value else { continue };
        let was = past
            .iter()
            .any(|p| p.app == t.app && p.name == t.name && p.value.is_some());
        if !was && past_apps.contains(&t.app.as_str()) {
            plan.items.push(Item {
                app: t.app.clone(),
                pin: t.name.clone(),
                old: Some(v.clone()),
                new: None,
                target: t.clone(),
                runs_now: None,
            });
        }
    }
    plan.refusals.clear();
    plan.items
        .sort_by(|a, b| (&a.app, &a.pin).cmp(&(&b.app, &b.pin)));
    plan
}

/// Adds the policy verdicts: `block` globs and the downgrade guard.
pub fn check_policies(plan: &mut Plan, block: &[String]) {
    for c in &plan.copies {
        let id = format!("{}/{}", c.app, c.name);
        let r = match block.iter().find(|g| glob(g, &c.app)) {
            Some(g) => Refusal::Blocked {
                app: c.app.clone(),
                pin: None,
                glob: g.clone(),
            },
            None => match block.iter().find(|g| glob(g, &id)) {
                Some(g) => Refusal::Blocked {
                    app: c.app.clone(),
                    pin: Some(c.name.clone()),
                    glob: g.clone(),
                },
                None => continue,
            },
        };
        if !plan.refusals.contains(&r) {
            plan.refusals.push(r);
        }
    }
    for it in &plan.items {
        let id = format!("{}/{}", it.app, it.pin);
        if let Some(g) = block.iter().find(|g| glob(g, &it.app)) {
            let r = Refusal::Blocked {
                app: it.app.clone(),
                pin: None,
                glob: g.clone(),
            };
            if !plan.refusals.contains(&r) {
                plan.refusals.push(r);
            }
        } else if let Some(g) = block.iter().find(|g| glob(g, &id)) {
            plan.refusals.push(Refusal::Blocked {
                app: it.app.clone(),
                pin: Some(it.pin.clone()),
                glob: g.clone(),
            });
        }
        if let (Some(old), Some(new)) = (&it.old, &it.new) {
            if let (Some(o), Some(n)) = (version_of(old), version_of(new)) {
                if compare(&o, &n) == std::cmp::Ordering::Greater {
                    plan.refusals.push(Refusal::Downgrade {
                        app: it.app.clone(),
                        pin: it.pin.clone(),
                        to: old.clone(),
                        from: new.clone(),
                    });
                }
            }
        }
    }
}

/// The plan's id: the first 12 hex digits of a SHA-256 over what it changes.
pub fn id(from: &str, to: &str, items: &[Item], copies: &[Copy]) -> String {
    let mut h = Sha256::new();
    h.update(format!("{from}\n{to}\n"));
    for c in copies {
        h.update(format!("{}\t{}\t", c.app, c.name));
        h.update(Sha256::digest(c.new.as_bytes()));
        h.update("\n");
    }
    for it in items {
        h.update(format!(
            "{}\t{}\t{}\t{}\n",
            it.app,
            it.pin,
            it.old.as_deref().unwrap_or(""),
            it.new.as_deref().unwrap_or("")
        ));
    }
    h.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A glob where `*` matches any run of characters (`/` included) and
/// nothing else is special: through `globset` (the crate's one glob
/// implementation for its own patterns), with every other character
/// escaped and runs of `*` folded into one.
pub fn glob(pattern: &str, text: &str) -> bool {
    let escaped: Vec<String> = pattern.split('*').map(globset::escape).collect();
    let mut glob = escaped.join("*");
    while glob.contains("**") {
        glob = glob.replace("**", "*");
    }
    globset::GlobBuilder::new(&glob)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

/// A semantic version, parsed and ordered as helm's sprig parses and
/// orders one (Masterminds semver, `gotmpl`): the crate's one semver.
pub type Version = crate::gotmpl::golib::Version;

/// The semver in a value: a tag (`v1.4.2`, `7.2.4-alpine`) or the end of a
/// versioned path (`charts/podinfo-6.5.0`). None when there is none.
pub fn version_of(value: &str) -> Option<Version> {
    let last = value.rsplit('/').next().unwrap_or(value);
    let candidates =
        std::iter::once(last).chain(last.match_indices('-').map(|(i, _)| &last[i + 1..]));
    for c in candidates {
        if let Some(v) = parse_version(c.strip_prefix('v').unwrap_or(c)) {
            return Some(v);
        }
    }
    None
}

/// A version of the shape promotion looks for (two or three numbers, then
/// an optional pre-release and build), parsed by [`Version::parse`].
fn parse_version(s: &str) -> Option<Version> {
    let core = s.split(['-', '+']).next().unwrap_or(s);
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !(2..=3).contains(&parts.len()) || !parts.iter().all(numeric) {
        return None;
    }
    Version::parse(s).ok()
}

/// Semver precedence: numbers, then a release above its pre-releases.
pub fn compare(a: &Version, b: &Version) -> std::cmp::Ordering {
    a.compare(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    fn v(s: &str) -> Version {
        version_of(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn semver_order_and_extraction() {
        assert_eq!(compare(&v("1.10.0"), &v("1.9.3")), Ordering::Greater);
        assert_eq!(compare(&v("v2.4.0-rc.1"), &v("2.4.0")), Ordering::Less);
        assert_eq!(
            compare(&v("charts/podinfo-6.5.0"), &v("charts/podinfo-6.4.1")),
            Ordering::Greater
        );
        assert_eq!(
            compare(&v("7.2.4-alpine"), &v("7.2.4-alpine")),
            Ordering::Equal
        );
        assert!(version_of("sha256:ab12").is_none());
        assert!(version_of("latest").is_none());
    }

    #[test]
    fn globs() {
        assert!(glob("api", "api"));
        assert!(glob("api/*", "api/ghcr.io/x:newTag"));
        assert!(glob("*:digest", "api/ghcr.io/x:digest"));
        assert!(!glob("api", "api2"));
        // Only `*` is special; `**` is `*`.
        assert!(glob("a?[b]{c}*", "a?[b]{c}/d"));
        assert!(!glob("a?", "ab"));
        assert!(glob("api/**", "api/x/y"));
        assert!(glob("é*é", "été"));
    }
}
