//! `hydrate approve ENV --as ROLE`: records that ROLE approved the changes
//! that brought ENV's current pins, as a `Hydrate-Approved-By: ROLE <email>`
//! line in the git note `refs/notes/hydrate-approvals` on each such commit
//! (the `requires:` gate of a promotion out of ENV reads it). The note is
//! written through `git/` (a commit on the notes ref moved by
//! compare-and-swap); `--push` sends it, merging the remote's notes first
//! when someone else pushed theirs.

use std::path::Path;

use super::gates::{approvals_in, APPROVALS_REF};
use super::history::{brought, every_change, APPROVED_BY};
use super::{ops, pin, Error};
use crate::env;
use crate::git::remote::{self, PushOutcome};
use crate::git::{Identity, Repo};

/// One commit approved.
#[derive(Clone, Debug)]
pub struct Approval {
    /// The app whose pins it brought.
    pub app: String,
    /// The commit.
    pub sha: String,
    /// False when the role had approved it already.
    pub added: bool,
}

/// Approves, as `role`, the change that brought each app's pins (of
/// `apps`, all when empty) into `env`.
pub fn approve(
    root: &Path,
    env_name: &str,
    role: &str,
    apps: &[String],
    who: &Identity,
) -> Result<Vec<Approval>, Error> {
    if role.is_empty() || role.contains(char::is_whitespace) {
        return Err(Error::Usage(format!("role `{role}`: one word, as `qa`")));
    }
    let envs = env::load_environments(root)?;
    let e = envs
        .iter()
        .find(|e| e.name == env_name)
        .ok_or_else(|| Error::Usage(format!("no environment named `{env_name}`")))?;
    for a in apps {
        if !e.apps.iter().any(|x| &x.name == a) {
            return Err(Error::Usage(format!("no app `{a}` in `{env_name}`")));
        }
    }
    let repo = Repo::discover(root)?;
    let history = every_change(root)?;
    let all: Vec<&env::Environment> = envs.iter().collect();
    let extra = |app: &str| ops::decls(&all, app);
    let env_pins = pin::env_pins(root, e, &extra)?;
    let mut out = Vec::new();
    for app in e
        .apps
        .iter()
        .filter(|a| apps.is_empty() || apps.contains(&a.name))
    {
        let Some(change) = brought(&history, env_name, &env_pins, &app.name) else {
            if apps.is_empty() {
                continue;
            }
            return Err(Error::Usage(format!(
                "no recorded change brought {}'s pins into {env_name}: nothing to approve",
                app.name
            )));
        };
        let id = git2::Oid::from_str(&change.sha).map_err(|e| Error::Pin(e.to_string()))?;
        let old = repo.note(APPROVALS_REF, id)?.unwrap_or_default();
        let old = String::from_utf8_lossy(&old).into_owned();
        let done = approvals_in(&old)
            .iter()
            .any(|a| a.split_whitespace().next() == Some(role));
        if !done {
            let mut text = old.trim_end().to_string();
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{APPROVED_BY}: {role} <{}>\n", who.email));
            repo.set_note(APPROVALS_REF, id, text.as_bytes(), who)?;
        }
        out.push(Approval {
            app: app.name.clone(),
            sha: change.sha.clone(),
            added: !done,
        });
    }
    if out.is_empty() {
        return Err(Error::Usage(format!(
            "no recorded change brought any pins into {env_name}: nothing to approve"
        )));
    }
    Ok(out)
}

/// Pushes the approvals to `remote`, merging the remote's notes first when
/// someone else pushed theirs (a few rounds at most).
pub fn push(root: &Path, remote_name: &str, who: &Identity) -> Result<(), Error> {
    let repo = Repo::discover(root)?;
    let spec = vec![(APPROVALS_REF.to_string(), APPROVALS_REF.to_string())];
    for _ in 0..4 {
        let reply = remote::push(repo.git_dir(), remote_name, &spec)?;
        match reply.refs.get(APPROVALS_REF) {
            Some(PushOutcome::Updated | PushOutcome::UpToDate) => return Ok(()),
            Some(PushOutcome::Behind(_)) => {
                remote::merge_notes(repo.git_dir(), remote_name, APPROVALS_REF, who)?
            }
            Some(PushOutcome::Refused(why)) => {
                return Err(Error::Usage(format!(
                    "{remote_name} refused {APPROVALS_REF}: {why}"
                )))
            }
            None => break,
        }
    }
    Err(Error::Usage(format!(
        "could not push {APPROVALS_REF} to {remote_name}; the approval is recorded locally"
    )))
}
