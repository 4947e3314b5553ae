//! Git notes read and written the way branches are: the notes ref is a
//! commit whose tree maps an annotated commit's sha to a blob, built in
//! memory and moved only by compare-and-swap. It decides nothing about what
//! a note says.

use std::collections::BTreeMap;

use git2::Oid;

use super::{Error, Identity, Repo};

/// How many times a notes update is retried after another writer moved the ref.
const ATTEMPTS: u32 = 8;

/// Where `git notes` may keep the note of `target` in a notes tree: flat
/// (`<sha>`) or with one level of fan-out (`ab/<38 hex>`), as notes.c reads.
fn note_paths(target: Oid) -> [String; 2] {
    let hex = target.to_string();
    let (dir, rest) = hex.split_at(2);
    [hex.clone(), format!("{dir}/{rest}")]
}

impl Repo {
    /// The note on `target` in `notes_ref`, if any.
    pub fn note(&self, notes_ref: &str, target: Oid) -> Result<Option<Vec<u8>>, Error> {
        let Some(notes) = self.ref_target(notes_ref)? else {
            return Ok(None);
        };
        for path in note_paths(target) {
            if let Some(bytes) = self.file_at(notes, &path)? {
                return Ok(Some(bytes));
            }
        }
        Ok(None)
    }

    /// Sets the note on `target` in `notes_ref` to `content` (replacing any
    /// other), committing on the notes ref by compare-and-swap and
    /// retrying when another writer moved it. Returns whether it changed.
    pub fn set_note(
        &self,
        notes_ref: &str,
        target: Oid,
        content: &[u8],
        who: &Identity,
    ) -> Result<bool, Error> {
        let [flat, fanout] = note_paths(target);
        let mut last = None;
        for attempt in 0..ATTEMPTS {
            let old = self.ref_target(notes_ref)?;
            if let Some(o) = old {
                if self.file_at(o, &flat)?.as_deref() == Some(content)
                    && self.file_at(o, &fanout)?.is_none()
                {
                    return Ok(false);
                }
            }
            let edits = BTreeMap::from([
                (fanout.clone(), None),
                (flat.clone(), Some(content.to_vec())),
            ]);
            let tree = self.build_tree(old, &edits)?;
            // git notes' own message for a note it adds.
            let commit = self.commit(tree, old, "Notes added by 'hydrate'\n", who)?;
            match self.update_ref(notes_ref, commit, old, "hydrate: note") {
                Ok(()) => return Ok(true),
                Err(e @ Error::Conflict { .. }) => {
                    last = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(
                        20 * u64::from(attempt + 1),
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(Error::Conflict {
            refname: notes_ref.to_string(),
            expected: "its tip".into(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_set_replaced_and_kept_when_equal() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let who = Identity {
            name: "t".into(),
            email: "t@example.com".into(),
            time: 1,
        };
        let edits = BTreeMap::from([("a".to_string(), Some(b"a".to_vec()))]);
        let tree = repo.build_tree(None, &edits).unwrap();
        let c = repo.commit(tree, None, "a", &who).unwrap();
        let r = "refs/notes/test";
        assert_eq!(repo.note(r, c).unwrap(), None);
        assert!(repo.set_note(r, c, b"one", &who).unwrap());
        assert_eq!(repo.note(r, c).unwrap().as_deref(), Some(&b"one"[..]));
        let first = repo.ref_target(r).unwrap();
        assert!(!repo.set_note(r, c, b"one", &who).unwrap());
        assert_eq!(repo.ref_target(r).unwrap(), first, "no new notes commit");
        assert!(repo.set_note(r, c, b"two", &who).unwrap());
        assert_eq!(repo.note(r, c).unwrap().as_deref(), Some(&b"two"[..]));
        assert_eq!(
            repo.parent_of(repo.ref_target(r).unwrap().unwrap())
                .unwrap(),
            first
        );
    }
}
