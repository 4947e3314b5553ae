//! Fetch, push and ls-remote through the `git` binary on PATH. hydrate's
//! git2 is built without network transports on purpose: URLs, SSH keys,
//! tokens and credential helpers stay with the user's git, configured as for
//! any other git command in that repository. This module only runs the
//! commands and reads their machine-readable output; what to push and what
//! to do when a push is rejected is decided in `output/`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use git2::Oid;

use super::{Error, Identity};

/// What the remote did with one pushed ref.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushOutcome {
    /// The ref was created or moved.
    Updated,
    /// The ref already pointed there (`[up to date]`).
    UpToDate,
    /// Someone else moved the ref first: fetch, rebuild on their tip and
    /// push again. `git push` says "[rejected] (fetch first)" or
    /// "(non-fast-forward)", or a lost ref lock on the receiving side.
    Behind(String),
    /// The remote refused the ref for another reason (a protected branch, a
    /// hook, missing permission); trying again will not help. The reason as
    /// git gives it (`pre-receive hook declined`).
    Refused(String),
}

/// What `git push` reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushReply {
    /// What happened to each destination ref.
    pub refs: BTreeMap<String, PushOutcome>,
    /// What the remote itself said (its hooks' output): the `remote: `
    /// lines of git's stderr, without that prefix.
    pub remote: Vec<String>,
}

fn run(git_dir: &Path, what: &str, args: &[&str]) -> Result<Output, Error> {
    git(git_dir)
        .args(args)
        .output()
        .map_err(|e| Error::Command {
            what: what.to_string(),
            detail: format!("cannot run git (is it on PATH?): {e}"),
        })
}

fn git(git_dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir")
        .arg(git_dir)
        // A CI job must fail, not hang, when git would ask for a password.
        .env("GIT_TERMINAL_PROMPT", "0");
    cmd
}

fn failure(what: &str, out: &Output) -> Error {
    let stderr = String::from_utf8_lossy(&out.stderr);
    Error::Command {
        what: what.to_string(),
        detail: stderr.trim().to_string(),
    }
}

/// Which of `refs` (full names, `refs/heads/…`) exist on `remote`, and
/// where they point (`git ls-remote`).
pub fn ls_remote(
    git_dir: &Path,
    remote: &str,
    refs: &[String],
) -> Result<BTreeMap<String, Oid>, Error> {
    let what = format!("ls-remote {remote}");
    let mut args = vec!["ls-remote", remote];
    args.extend(refs.iter().map(String::as_str));
    let out = run(git_dir, &what, &args)?;
    if !out.status.success() {
        return Err(failure(&what, &out));
    }
    let mut found = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((sha, name)) = line.split_once('\t') else {
            continue;
        };
        // ls-remote patterns match any ref ending in the pattern; keep exact names.
        if refs.iter().any(|r| r == name) {
            if let Ok(id) = Oid::from_str(sha) {
                found.insert(name.to_string(), id);
            }
        }
    }
    Ok(found)
}

/// `git fetch --no-tags REMOTE REFSPEC...` (refspecs like
/// `+refs/heads/env/dev:refs/remotes/origin/env/dev`).
pub fn fetch(git_dir: &Path, remote: &str, refspecs: &[String]) -> Result<(), Error> {
    if refspecs.is_empty() {
        return Ok(());
    }
    let what = format!("fetch {remote}");
    let mut args = vec![
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        remote,
    ];
    args.extend(refspecs.iter().map(String::as_str));
    let out = run(git_dir, &what, &args)?;
    if !out.status.success() {
        return Err(failure(&what, &out));
    }
    Ok(())
}

/// `git push --porcelain REMOTE SRC:DST...` without force: the remote moves
/// a ref only if the new commit descends from its tip. Returns what
/// happened to each destination ref, and what the remote said.
pub fn push(
    git_dir: &Path,
    remote: &str,
    refspecs: &[(String, String)],
) -> Result<PushReply, Error> {
    let what = format!("push {remote}");
    let specs: Vec<String> = refspecs.iter().map(|(s, d)| format!("{s}:{d}")).collect();
    let mut args = vec!["push", "--porcelain", remote];
    args.extend(specs.iter().map(String::as_str));
    let out = run(git_dir, &what, &args)?;
    let refs = parse_porcelain(&String::from_utf8_lossy(&out.stdout));
    let all_reported = refspecs.iter().all(|(_, d)| refs.contains_key(d));
    if !all_reported {
        // Nothing reached the per-ref stage: no such remote, no access, …
        return Err(failure(&what, &out));
    }
    Ok(PushReply {
        refs,
        remote: remote_lines(&String::from_utf8_lossy(&out.stderr)),
    })
}

/// The remote's messages in `git push`'s stderr. sideband.c prefixes each
/// line the remote sent (ended by `\n` or `\r`) with `remote: ` and pads it
/// with spaces (or `ESC[K` on a terminal) to overwrite progress; the
/// padding is dropped, and control characters the remote sent become
/// U+FFFD so that printing a line cannot drive the terminal.
fn remote_lines(stderr: &str) -> Vec<String> {
    stderr
        .split(['\n', '\r'])
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(|l| {
            let l = l.strip_prefix(' ').unwrap_or(l);
            let l = l.strip_suffix("\u{1b}[K").unwrap_or(l).trim_end();
            l.chars()
                .map(|c| match c {
                    '\t' => c,
                    c if c.is_control() => '\u{fffd}',
                    c => c,
                })
                .collect()
        })
        .collect()
}

/// Fetches `notes` (a `refs/notes/…` ref) from `remote` and merges it into
/// the local one (`git notes merge -s cat_sort_uniq`: both sides' notes on a
/// commit are kept, sorted, without duplicate lines), committing as `who`.
pub fn merge_notes(git_dir: &Path, remote: &str, notes: &str, who: &Identity) -> Result<(), Error> {
    let short = notes.strip_prefix("refs/notes/").unwrap_or(notes);
    // `git notes merge` reads its argument below refs/notes/.
    let fetched = format!("refs/notes/remotes/{remote}/{short}");
    fetch(git_dir, remote, &[format!("+{notes}:{fetched}")])?;
    let what = format!("notes merge {fetched}");
    let date = format!("@{} +0000", who.time);
    let out = git(git_dir)
        .args([
            "notes",
            "--ref",
            notes,
            "merge",
            "-q",
            "-s",
            "cat_sort_uniq",
            &fetched,
        ])
        .env("GIT_AUTHOR_NAME", &who.name)
        .env("GIT_AUTHOR_EMAIL", &who.email)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_NAME", &who.name)
        .env("GIT_COMMITTER_EMAIL", &who.email)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .map_err(|e| Error::Command {
            what: what.clone(),
            detail: format!("cannot run git (is it on PATH?): {e}"),
        })?;
    if !out.status.success() {
        return Err(failure(&what, &out));
    }
    Ok(())
}

/// A repository's name from a remote URL: its last path component without
/// `.git` (`git@github.com:acme/shop.git`, `https://host/acme/shop/` and
/// `/srv/git/shop.git` and `host:shop/.git` all give `shop`), the
/// "humanish" name `git clone` gives the directory it creates (dir.c:
/// git_url_basename). None when the URL has no such component.
pub fn repository_name(url: &str) -> Option<String> {
    let path = url.trim_end_matches(['/', '\\']);
    let path = path.strip_suffix("/.git").unwrap_or(path);
    let last = path.rsplit(['/', ':', '\\']).next()?;
    let name = last.strip_suffix(".git").unwrap_or(last);
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_string())
}

/// Reads `git push --porcelain` lines: `FLAG \t SRC:DST \t SUMMARY (REASON)`.
/// builtin/push.c and transport.c print `!` for a rejected ref, with
/// "[rejected]" when the remote tip is not an ancestor and "[remote
/// rejected]" when the receiving side refused it.
fn parse_porcelain(stdout: &str) -> BTreeMap<String, PushOutcome> {
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(flag), Some(spec), summary) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Some((_, dst)) = spec.rsplit_once(':') else {
            continue;
        };
        let summary = summary.unwrap_or_default().to_string();
        let outcome = match flag {
            "!" if summary.starts_with("[rejected]") => PushOutcome::Behind(summary),
            // receive-pack lost the race for the ref lock to another push.
            "!" if ["cannot lock ref", "failed to update ref", "but expected"]
                .iter()
                .any(|s| summary.contains(s)) =>
            {
                PushOutcome::Behind(summary)
            }
            "!" => PushOutcome::Refused(reason(&summary).to_string()),
            "=" => PushOutcome::UpToDate,
            _ => PushOutcome::Updated,
        };
        out.insert(dst.to_string(), outcome);
    }
    out
}

/// The reason in a summary `[remote rejected] (REASON)` (transport.c
/// print_ref_status), else the whole summary.
fn reason(summary: &str) -> &str {
    summary
        .split_once("] (")
        .and_then(|(_, r)| r.strip_suffix(')'))
        .unwrap_or(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_lines_become_outcomes() {
        let text = "To file:///tmp/remote.git\n\
            =\trefs/heads/env/dev:refs/heads/env/dev\t[up to date]\n\
            *\trefs/heads/env/new:refs/heads/env/new\t[new branch]\n\
            !\trefs/heads/env/staging:refs/heads/env/staging\t[rejected] (fetch first)\n\
            !\trefs/heads/env/prod:refs/heads/env/prod\t[remote rejected] (protected branch hook declined)\n\
            !\trefs/heads/env/x:refs/heads/env/x\t[remote rejected] (cannot lock ref 'refs/heads/env/x': is at 1 but expected 2)\n\
            Done\n";
        let o = parse_porcelain(text);
        assert_eq!(o["refs/heads/env/dev"], PushOutcome::UpToDate);
        assert_eq!(o["refs/heads/env/new"], PushOutcome::Updated);
        assert!(matches!(
            o["refs/heads/env/staging"],
            PushOutcome::Behind(_)
        ));
        assert_eq!(
            o["refs/heads/env/prod"],
            PushOutcome::Refused("protected branch hook declined".into())
        );
        assert!(matches!(o["refs/heads/env/x"], PushOutcome::Behind(_)));
        assert_eq!(o.len(), 5);
    }

    #[test]
    fn repository_names_are_the_last_url_component() {
        for url in [
            "git@github.com:acme/shop.git",
            "https://github.com/acme/shop",
            "https://github.com/acme/shop.git/",
            "ssh://git@host:22/srv/shop.git",
            "/srv/git/shop.git",
            "host.xz:shop/.git",
            "shop",
        ] {
            assert_eq!(repository_name(url).as_deref(), Some("shop"), "{url}");
        }
        assert_eq!(repository_name("https://host/"), Some("host".into()));
        assert_eq!(repository_name(".git"), None);
        assert_eq!(repository_name(""), None);
    }

    #[test]
    fn remote_lines_lose_prefix_and_padding_and_control_characters() {
        let stderr = "remote: production is frozen        \n\
            remote: \u{1b}[31mred\u{1b}[K\n\
            remote: 50% done\rremote: 100% done        \n\
            remote: \n\
            To file:///tmp/remote.git\n\
            error: failed to push some refs to 'file:///tmp/remote.git'\n";
        assert_eq!(
            remote_lines(stderr),
            [
                "production is frozen",
                "\u{fffd}[31mred",
                "50% done",
                "100% done",
                ""
            ]
        );
    }
}
