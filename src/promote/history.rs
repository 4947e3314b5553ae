//! History of an environment's pins, read back from commit trailers:
//! promotions (`Hydrate-Promotion`), set-image/set-value and rollbacks into
//! it, newest first.

use std::path::Path;

use super::message::{changes, changes_in, PinChange};
use super::Error;
use crate::git::Repo;

/// What kind of change a commit made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `hydrate promote`.
    Promotion,
    /// `hydrate set-image`.
    SetImage,
    /// `hydrate set-value`.
    SetValue,
    /// `hydrate rollback`.
    Rollback,
}

impl Kind {
    /// Its name in output.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Promotion => "promotion",
            Kind::SetImage => "set-image",
            Kind::SetValue => "set-value",
            Kind::Rollback => "rollback",
        }
    }
}

/// One recorded change into an environment.
#[derive(Clone, Debug)]
pub struct HistoryEntry {
    /// The environment it changed.
    pub env: String,
    /// The commit.
    pub sha: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// `Name <email>`.
    pub author: String,
    /// What made it.
    pub kind: Kind,
    /// `FROM@sha` for promotions, the spec for set-image, the commit for rollbacks.
    pub from: String,
    /// The promotion id, if one.
    pub promotion: Option<String>,
    /// The pins changed.
    pub changes: Vec<PinChange>,
    /// The commit that brought it into the branch (itself, or a merge).
    pub reached_by: String,
    /// When `reached_by` was committed, seconds since the epoch: when the
    /// change arrived in the branch.
    pub reached_at: i64,
    /// The branch just before that commit: where a rollback of this change
    /// goes back to (None: it was the first commit).
    pub before: Option<String>,
    /// Its `Hydrate-Approved-By` trailers (`qa <alice@example.com>`).
    pub approved_by: Vec<String>,
    /// The other environments the same commit changed (`promote
    /// --together`), in the order its trailers name them.
    pub together: Vec<String>,
}

impl HistoryEntry {
    /// The environment a promotion came from (`Hydrate-Promoted-From:
    /// FROM@sha`); None for other kinds.
    pub fn promoted_from(&self) -> Option<&str> {
        if self.kind != Kind::Promotion {
            return None;
        }
        Some(
            self.from
                .rsplit_once('@')
                .map_or(self.from.as_str(), |(e, _)| e),
        )
    }
}

/// The trailer (and note line) that records an approval: `Hydrate-Approved-By: qa <alice@example.com>`.
pub const APPROVED_BY: &str = "Hydrate-Approved-By";

/// The change that brought `app`'s current pins into `env`: among each
/// pin's newest recorded change, those that set it to what it is now (a
/// pin whose newest recorded change set something else was edited by hand
/// since, and tells nothing), the last to reach the branch. None: no
/// recorded change did.
pub fn brought<'h>(
    history: &'h [HistoryEntry],
    env: &str,
    pins: &[super::Pin],
    app: &str,
) -> Option<&'h HistoryEntry> {
    pins.iter()
        .filter(|p| p.app == app && p.value.is_some())
        .filter_map(|p| {
            let (e, c) = history.iter().filter(|e| e.env == env).find_map(|e| {
                let c = e.changes.iter().find(|c| c.app == app && c.pin == p.name)?;
                Some((e, c))
            })?;
            (c.new == p.value).then_some(e)
        })
        .max_by_key(|e| e.reached_at)
}

/// Every recorded change into `env` reachable from HEAD (merged branches
/// included), the last to reach the branch first.
pub fn history(root: &Path, env: &str) -> Result<Vec<HistoryEntry>, Error> {
    // An unknown name is a mistake, not an environment with no history.
    if !crate::env::load_environments(root)?
        .iter()
        .any(|e| e.name == env)
    {
        return Err(Error::Usage(format!("no environment named `{env}`")));
    }
    let mut all = every_change(root)?;
    all.retain(|e| e.env == env);
    Ok(all)
}

/// Every recorded change into any environment reachable from HEAD, the
/// last to reach the branch first: one walk of the log for all of them.
pub fn every_change(root: &Path) -> Result<Vec<HistoryEntry>, Error> {
    let repo = Repo::discover(root)?;
    let mut out = Vec::new();
    for c in repo.log(100_000)? {
        // One `Hydrate-Environment` trailer per environment the commit
        // changed: several for `promote --together`, each an entry of its
        // own with its own pins.
        let envs: Vec<&str> = c
            .trailers
            .iter()
            .filter(|(k, _)| k == "Hydrate-Environment")
            .map(|(_, v)| v.as_str())
            .collect();
        if envs.is_empty() {
            continue;
        }
        let kinds = [
            ("Hydrate-Promoted-From", Kind::Promotion),
            ("Hydrate-Set-Image", Kind::SetImage),
            ("Hydrate-Set-Value", Kind::SetValue),
            ("Hydrate-Rollback-Of", Kind::Rollback),
        ];
        let Some((from, kind)) = kinds
            .iter()
            .find_map(|(k, kind)| Some((c.trailer(k)?.to_string(), *kind)))
        else {
            continue;
        };
        let all = changes(&c.message, &c.trailers);
        let approved_by: Vec<String> = c
            .trailers
            .iter()
            .filter(|(k, _)| k == APPROVED_BY)
            .map(|(_, v)| v.clone())
            .collect();
        for env in &envs {
            out.push(HistoryEntry {
                env: env.to_string(),
                sha: c.sha.clone(),
                time: c.time,
                author: c.author.clone(),
                kind,
                from: from.clone(),
                promotion: c.trailer("Hydrate-Promotion").map(str::to_string),
                changes: changes_in(env, envs.len() > 1, &all),
                reached_by: c.reached_by.clone(),
                reached_at: c.reached_at,
                before: c.before.clone(),
                approved_by: approved_by.clone(),
                together: envs
                    .iter()
                    .filter(|e| *e != env)
                    .map(|e| e.to_string())
                    .collect(),
            });
        }
    }
    Ok(out)
}
