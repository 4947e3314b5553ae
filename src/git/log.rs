//! Reading history: every commit reachable from HEAD with its trailers
//! (`Key: value` lines of the last paragraph), for `hydrate history`,
//! `pins` and `rollback`, including the commits merges bring in (a
//! `--no-ff` merge of a promotion branch), each with the commit on HEAD's
//! first-parent line that brought it there. It decides nothing about what
//! the trailers mean.

use super::{ctx, Error, Repo};

/// One commit of the log.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// Full sha.
    pub sha: String,
    /// `Name <email>`.
    pub author: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
    /// First line of the message.
    pub subject: String,
    /// The whole message.
    pub message: String,
    /// The trailers, in order.
    pub trailers: Vec<(String, String)>,
    /// The commit on HEAD's first-parent line that brought this one into
    /// the branch: itself, or the merge whose second side holds it.
    pub reached_by: String,
    /// When `reached_by` was committed, seconds since the epoch.
    pub reached_at: i64,
    /// The first parent of `reached_by`: the branch just before this
    /// commit reached it (None for a root commit).
    pub before: Option<String>,
}

impl LogEntry {
    /// The first value of trailer `key`.
    pub fn trailer(&self, key: &str) -> Option<&str> {
        self.trailers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The trailers of a commit message: the `Key: value` lines of its last
/// paragraph. As `git interpret-trailers` reads it, the paragraph is a
/// trailer block when every line is a trailer, or when at least a quarter
/// are (a squash merge's message ends with the squashed commit's trailers
/// and `Co-authored-by:` lines a forge adds, among `* subject` lines).
pub fn trailers(message: &str) -> Vec<(String, String)> {
    let Some(last) = message.trim_end().rsplit("\n\n").next() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut lines = 0;
    for line in last.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        let line = line.trim_start_matches(['*', ' ']);
        if let Some((k, v)) = line.split_once(": ") {
            if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                out.push((k.to_string(), v.trim().to_string()));
            }
        }
    }
    if out.len() * 4 < lines {
        return Vec::new();
    }
    out
}

impl Repo {
    /// Every commit reachable from HEAD (at most `limit`), merges' second
    /// sides included: ordered by when each reached the branch (its
    /// `reached_by` commit on the first-parent line, newest first), then by
    /// commit time, newest first.
    pub fn log(&self, limit: usize) -> Result<Vec<LogEntry>, Error> {
        let Some(head) = self.head_id()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut id = Some(head);
        while let Some(c) = id {
            if out.len() >= limit {
                break;
            }
            let commit = self
                .repo
                .find_commit(c)
                .map_err(ctx(format!("find commit {c}")))?;
            let before = commit.parent_id(0).ok();
            let reached_at = commit.time().seconds();
            let mut brought = vec![c];
            if commit.parent_count() > 1 {
                let mut walk = self.repo.revwalk().map_err(ctx("walk history"))?;
                walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)
                    .map_err(ctx("walk history"))?;
                for p in commit.parent_ids().skip(1) {
                    walk.push(p).map_err(ctx(format!("walk from {p}")))?;
                }
                if let Some(b) = before {
                    walk.hide(b).map_err(ctx(format!("walk from {b}")))?;
                }
                for o in walk {
                    brought.push(o.map_err(ctx("walk history"))?);
                }
            }
            let mut group = Vec::new();
            for b in brought {
                group.push(self.entry(b, c, reached_at, before)?);
            }
            group[1..].sort_by_key(|e| std::cmp::Reverse(e.time));
            out.extend(group);
            id = before;
        }
        out.truncate(limit);
        Ok(out)
    }

    /// Commit `id` as a log entry, on its own first-parent line.
    pub fn commit_entry(&self, id: git2::Oid) -> Result<LogEntry, Error> {
        let c = self
            .repo
            .find_commit(id)
            .map_err(ctx(format!("find commit {id}")))?;
        self.entry(id, id, c.time().seconds(), c.parent_id(0).ok())
    }

    /// The newest commit on `tip`'s first-parent line (`tip` included)
    /// that added, changed or deleted `path` (content or mode); `None` when
    /// no commit there ever held it. Where a shallow clone's history ends,
    /// its oldest commit is taken for one that holds the path.
    pub fn last_change(&self, tip: git2::Oid, path: &str) -> Result<Option<git2::Oid>, Error> {
        let at = |c: &git2::Commit<'_>| -> Result<Option<(git2::Oid, i32)>, Error> {
            let tree = c
                .tree()
                .map_err(ctx(format!("read the tree of {}", c.id())))?;
            match tree.get_path(std::path::Path::new(path)) {
                Ok(e) => Ok(Some((e.id(), e.filemode()))),
                Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
                Err(e) => Err(ctx(format!("look up {path}"))(e)),
            }
        };
        let mut commit = self
            .repo
            .find_commit(tip)
            .map_err(ctx(format!("find commit {tip}")))?;
        let here = at(&commit)?;
        loop {
            let Ok(parent) = commit.parent(0) else {
                return Ok(here.map(|_| commit.id()));
            };
            if at(&parent)? != here {
                return Ok(Some(commit.id()));
            }
            commit = parent;
        }
    }

    fn entry(
        &self,
        id: git2::Oid,
        reached_by: git2::Oid,
        reached_at: i64,
        before: Option<git2::Oid>,
    ) -> Result<LogEntry, Error> {
        let c = self
            .repo
            .find_commit(id)
            .map_err(ctx(format!("find commit {id}")))?;
        let message = c.message().unwrap_or_default().to_string();
        let a = c.author();
        Ok(LogEntry {
            sha: id.to_string(),
            author: format!(
                "{} <{}>",
                a.name().unwrap_or_default(),
                a.email().unwrap_or_default()
            ),
            time: c.time().seconds(),
            subject: message.lines().next().unwrap_or_default().to_string(),
            trailers: trailers(&message),
            message,
            reached_by: reached_by.to_string(),
            reached_at,
            before: before.map(|b| b.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn trailers_are_the_last_paragraph() {
        let t = super::trailers("subject\n\nbody: not one\nmore\n\nA-B: 1\nC: two words\n");
        assert_eq!(
            t,
            [("A-B".into(), "1".into()), ("C".into(), "two words".into())]
        );
        assert!(super::trailers("subject\n\nplain text\n").is_empty());
        // A squash merge's body: the squashed commits, then a forge's line.
        let squash = "promote (#12)\n\n* promote staging\n\nHydrate-Promotion: ab12\nHydrate-Environment: production\n\nCo-authored-by: A <a@x>\n";
        assert_eq!(
            super::trailers(squash),
            [("Co-authored-by".into(), "A <a@x>".into())]
        );
        let kept = "promote (#12)\n\n* promote staging\n* fix\nHydrate-Promotion: ab12\nHydrate-Environment: production\n";
        assert_eq!(super::trailers(kept).len(), 2);
    }
}
