//! Every command block of README.md and docs/ that shows output is run on a
//! copy of the demo and its output compared, so no excerpt goes stale.
//!
//! A block that shows output is fenced as `console` (trycmd's convention):
//!
//! ````text
//! ```console
//! $ hydrate diff staging production --brief
//! ? 1
//! staging → production
//! ...
//! 27 resources changed (105 fields), 5 added[..]
//! ```
//! ````
//!
//! `$ ` starts a command (`hydrate …` or `git …`, split as a shell would
//! split words in quotes); an optional `? N` line right after it is the exit
//! code it must give (default 0); the lines up to the next `$ ` are what it
//! prints: stdout, then stderr. A line `...` stands for any number of lines,
//! `[..]` for any text within a line; `[ROOT]` is the demo copy's path.
//! Trailing spaces are not compared. Any other fenced block whose first line
//! starts with `$ ` is an error: output shown must be checked.
//!
//! Each Markdown file gets one fresh copy of the demo (`environments/`,
//! `testdata/apps/`, `.gitignore`) committed on `main` in a directory named
//! `demo`, and runs its blocks in order in it, so a page can tell a story
//! (set an image, promote it, read the history). Author and time are pinned
//! (`HYDRATE_AUTHOR`, `HYDRATE_TIMESTAMP`, `GIT_*_DATE`); commit ids still
//! change with the demo's content, so pages elide them with `[..]`.

use std::path::{Path, PathBuf};

use crate::support::{copy_tree, repo, GitHome, CACHE_KEY};

/// The demo's fixed clock: 2026-01-01T00:00:00Z.
const TIMESTAMP: &str = "1767225600";

/// One command of a `console` block and what it must print.
struct Step {
    line: usize,
    command: String,
    code: i32,
    expected: Vec<String>,
}

/// One `console` block: its first line and its commands.
struct Block {
    line: usize,
    steps: Vec<Step>,
}

#[test]
fn every_command_block_prints_what_the_docs_show() {
    let mut failures = Vec::new();
    let (mut blocks, mut commands, mut files) = (0, 0, 0);
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(repo()).unwrap().display().to_string();
        let parsed = match console_blocks(&text) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{rel}:{e}"));
                continue;
            }
        };
        if parsed.is_empty() {
            continue;
        }
        files += 1;
        blocks += parsed.len();
        let sandbox = Sandbox::new();
        for block in &parsed {
            for step in &block.steps {
                commands += 1;
                if let Err(e) = sandbox.check(step) {
                    failures.push(format!(
                        "{rel}:{} (block at line {}): $ {}\n{e}",
                        step.line, block.line, step.command
                    ));
                }
            }
        }
    }
    println!("doc commands: {blocks} command blocks, {commands} commands, in {files} files");
    assert!(
        failures.is_empty(),
        "{} documented command(s) differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(blocks > 0, "no console block found in README.md or docs/");
}

/// README.md and every `.md` under docs/, sorted.
fn markdown_files() -> Vec<PathBuf> {
    let mut out = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = walk(&repo().join("docs"));
    docs.sort();
    out.extend(docs);
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
    out
}

/// The `console` blocks of a Markdown text, or `line: reason` for a block
/// that shows a command outside one.
fn console_blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - trimmed.len();
        let body: Vec<(usize, &str)> = lines
            .by_ref()
            .take_while(|(_, l)| l.trim_start() != "```")
            .map(|(i, l)| (i, l.get(indent..).unwrap_or(l.trim_start())))
            .collect();
        if info.trim() == "console" {
            blocks.push(parse_block(n, &body)?);
        } else if body.first().is_some_and(|(_, l)| l.starts_with("$ ")) {
            return Err(format!(
                "{n}: a block showing a command and its output must be fenced as `console` (it is then checked)"
            ));
        }
    }
    Ok(blocks)
}

fn parse_block(line: usize, body: &[(usize, &str)]) -> Result<Block, String> {
    let mut steps: Vec<Step> = Vec::new();
    for &(n, l) in body {
        if let Some(cmd) = l.strip_prefix("$ ") {
            steps.push(Step {
                line: n,
                command: cmd.trim().to_string(),
                code: 0,
                expected: Vec::new(),
            });
            continue;
        }
        let Some(step) = steps.last_mut() else {
            return Err(format!("{n}: a console block starts with `$ COMMAND`"));
        };
        match l.strip_prefix("? ") {
            Some(code) if step.expected.is_empty() => {
                step.code = code
                    .trim()
                    .parse()
                    .map_err(|_| format!("{n}: `? N` takes an exit code"))?;
            }
            _ => step.expected.push(l.trim_end().to_string()),
        }
    }
    Ok(Block { line, steps })
}

/// A committed copy of the demo and a git home for the commands.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    git: GitHome,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("demo");
        copy_tree(&repo().join("environments"), &root.join("environments"));
        copy_tree(&repo().join("testdata/apps"), &root.join("testdata/apps"));
        std::fs::copy(repo().join(".gitignore"), root.join(".gitignore")).unwrap();
        let git = GitHome::new(dir.path());
        let sandbox = Sandbox {
            _dir: dir,
            root,
            git,
        };
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &["commit", "-qm", "demo"],
        ] {
            let out = sandbox.run(&["git"], args).unwrap();
            assert!(out.0 == 0, "git {args:?}: {}", out.1);
        }
        sandbox
    }

    /// Runs `program args…` in the demo copy: (exit code, stdout + stderr).
    fn run(&self, program: &[&str], args: &[&str]) -> Result<(i32, String), String> {
        let date = format!("@{TIMESTAMP} +0000");
        let mut cmd = match program {
            ["git"] => self.git.command("git"),
            ["hydrate"] => {
                let mut c = self.git.command(env!("CARGO_BIN_EXE_hydrate"));
                c.env("HYDRATE_CACHE_KEY", CACHE_KEY);
                c
            }
            _ => {
                return Err(format!(
                    "only `hydrate` and `git` run here, not {program:?}"
                ))
            }
        };
        let out = cmd
            .args(args)
            .current_dir(&self.root)
            .env("HYDRATE_AUTHOR", "Dev <dev@example.com>")
            .env("HYDRATE_TIMESTAMP", TIMESTAMP)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("NO_COLOR", "1")
            .output()
            .map_err(|e| format!("cannot run {program:?}: {e}"))?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok((out.status.code().unwrap_or(-1), text))
    }

    /// Runs one step and compares its exit code and output.
    fn check(&self, step: &Step) -> Result<(), String> {
        let words = split_words(&step.command)?;
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let Some((program, args)) = words.split_first() else {
            return Err("empty command".into());
        };
        let (code, text) = self.run(&[program], args)?;
        let root = self.root.display().to_string();
        let actual: Vec<String> = text
            .replace(&root, "[ROOT]")
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect();
        let expected: Vec<&str> = trim_blank_end(&step.expected);
        let actual_ref: Vec<&str> = trim_blank_end(&actual);
        if code == step.code && lines_match(&expected, &actual_ref) {
            return Ok(());
        }
        Err(format!(
            "exit code {code} (documented: {}); it printed:\n{}\n--- the docs show:\n{}",
            step.code,
            actual_ref.join("\n"),
            expected.join("\n")
        ))
    }
}

fn trim_blank_end(lines: &[String]) -> Vec<&str> {
    let mut v: Vec<&str> = lines.iter().map(String::as_str).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Splits a command line into words: spaces separate, single and double
/// quotes group (no escapes, no expansion).
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in `{line}`"));
    }
    words.extend(word);
    Ok(words)
}

/// Whether `actual` matches `expected`, where an expected line `...`
/// stands for any number of lines.
fn lines_match(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|i| lines_match(rest, &actual[i..])),
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| line_matches(e, a) && lines_match(rest, more)),
    }
}

/// Whether one line matches, where `[..]` stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[test]
fn the_matcher_elides_lines_and_text() {
    assert!(lines_match(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(lines_match(&["a", "...", "d"], &["a", "d"]));
    assert!(!lines_match(&["a", "d"], &["a", "b", "d"]));
    assert!(line_matches("commit [..] done", "commit 1a2b done"));
    assert!(line_matches("[..]x[..]x", "axbx"));
    assert!(!line_matches("ab[..]ba", "aba"));
    assert!(!line_matches("a", "ab"));
    assert_eq!(
        split_words(r#"hydrate set-image dev "a b" 'c'"#).unwrap(),
        ["hydrate", "set-image", "dev", "a b", "c"]
    );
}
