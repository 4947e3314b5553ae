//! Reading history: HEAD's first-parent log with each commit's trailers
//! (`Key: value` lines of the last paragraph), for `hydrate history`,
//! `pins` and `rollback`. It decides nothing about what they mean.

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
/// paragraph, when every line there has that form.
pub fn trailers(message: &str) -> Vec<(String, String)> {
    let Some(last) = message.trim_end().rsplit("\n\n").next() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in last.lines() {
        match line.split_once(": ") {
            Some((k, v))
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') =>
            {
                out.push((k.to_string(), v.trim().to_string()));
            }
            _ => return Vec::new(),
        }
    }
    out
}

impl Repo {
    /// HEAD's first-parent history, newest first (at most `limit` commits).
    pub fn log(&self, limit: usize) -> Result<Vec<LogEntry>, Error> {
        let Some(mut id) = self.head_id()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        while out.len() < limit {
            let c = self
                .repo
                .find_commit(id)
                .map_err(ctx(format!("find commit {id}")))?;
            let message = c.message().unwrap_or_default().to_string();
            let a = c.author();
            out.push(LogEntry {
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
            });
            match c.parent_id(0) {
                Ok(p) => id = p,
                Err(_) => break,
            }
        }
        Ok(out)
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
    }
}
