//! `hydrate render`: render every app of every environment and write the
//! results (directories or environment branches), all or nothing; with
//! `--keep-going`, the apps that render, keeping the failed apps' previous
//! output.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Outcome};
use super::out::{self, errln};

use crate::env::cache::secret;
use crate::env::Selection;
use crate::git::Identity;
use crate::output::PushResult;
use crate::render::{self, EnvReport, OutputKind};
use crate::warning::WarningKind;

#[derive(clap::Args)]
pub struct Args {
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Only these environments (repeatable).
    #[arg(long = "env")]
    envs: Vec<String>,
    /// Only these apps (repeatable).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// Only the i-th of n shards of the (env, app) pairs, e.g. `2/4`.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
    /// Write every environment to directories or to branches, whatever is configured.
    #[arg(long, value_enum)]
    to: Option<ToArg>,
    /// Write branches to `<branch>-next` (gitops-promoter's proposed branch).
    #[arg(long)]
    next: bool,
    /// Compare with the committed output and write nothing; exit 1 when stale.
    #[arg(long, conflicts_with = "push")]
    check: bool,
    /// The pre-commit hook's check: `--check` for directories committed
    /// with the sources (exit 1 naming the command that fixes them); for
    /// branches and gitignored directories, which CI writes, only that
    /// every environment renders.
    #[arg(long, conflicts_with_all = ["push", "to", "next"])]
    pre_commit: bool,
    /// Push the environment branches with `git` after committing; a push
    /// another job beat is rebuilt on the new remote tip and tried again.
    /// Exit 1 when the remote rejects any.
    #[arg(long)]
    push: bool,
    /// The remote environment branches build on and are pushed to
    /// (default: the branch's upstream, else `origin`).
    #[arg(long, value_name = "NAME")]
    remote: Option<String>,
    /// Render everything, neither reading nor writing the render cache
    /// (`.hydrate/cache`).
    #[arg(long)]
    no_cache: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
    /// Refuse non-deterministic output (`now`, `rand*`, `uuidv4`, `genCA`,
    /// `metadata.generateName`, ...) in every environment.
    #[arg(long)]
    strict: bool,
    /// Print no warnings (errors and the summary still print).
    #[arg(short, long)]
    quiet: bool,
    /// Check every rendered object against its Kubernetes version's schemas
    /// and the repository's CRDs (as `validate: true` does for one
    /// environment); an invalid object is reported and nothing is written
    /// (exit 1).
    #[arg(long)]
    validate: bool,
    /// Write the apps that render and keep the previous output of those
    /// that fail (a directory's files as they were, a branch's tree in the
    /// new commit); the failures are reported at the end, exit 1. Without
    /// it, one failure writes nothing (exit 2).
    #[arg(long)]
    keep_going: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ToArg {
    Dir,
    Branch,
}

/// `text` or `json`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let (i, n) = s.split_once('/').ok_or("expected i/n, e.g. 1/4")?;
    let i: u32 = i.trim().parse().map_err(|_| "i must be a number")?;
    let n: u32 = n.trim().parse().map_err(|_| "n must be a number")?;
    crate::render::check_shard(i, n)?;
    Ok((i, n))
}

/// Author and time for commits: `HYDRATE_AUTHOR` ("Name <email>") and
/// `HYDRATE_TIMESTAMP` (Unix seconds, not negative) pin them, e.g. in
/// tests; otherwise the repository's user.name/user.email and the current
/// time. A set variable that does not parse is an error, never ignored.
pub(super) fn identity(root: &std::path::Path) -> Result<Identity, CommandError> {
    let (mut name, mut email) = ("hydrate".to_string(), "hydrate@localhost".to_string());
    if let Some((n, e)) = crate::git::Repo::discover(root)
        .ok()
        .and_then(|r| r.configured_identity())
    {
        (name, email) = (n, e);
    }
    if let Some(a) = std::env::var_os("HYDRATE_AUTHOR") {
        (name, email) = parse_author(&a.to_string_lossy()).ok_or_else(|| {
            CommandError::usage(format!(
                "HYDRATE_AUTHOR={:?}: expected `Name <email>`, e.g. `CI Bot <ci@example.com>`",
                a
            ))
        })?;
    }
    let time = match std::env::var_os("HYDRATE_TIMESTAMP") {
        Some(t) => {
            let t = t.to_string_lossy();
            t.trim().parse::<u32>().map(i64::from).map_err(|_| {
                CommandError::usage(format!(
                    "HYDRATE_TIMESTAMP={t:?}: expected Unix seconds (a whole number from 0 \
                     to 4294967295), e.g. 1700000000"
                ))
            })?
        }
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    };
    Ok(Identity { name, email, time })
}

/// The clock promotion gates and the board read: `HYDRATE_NOW` (RFC 3339,
/// as `2026-12-04T18:00:00Z`, or Unix seconds), else the commit time
/// `identity` gives (`HYDRATE_TIMESTAMP` or the current time). A set
/// variable that does not parse is an error.
pub(super) fn now(root: &std::path::Path) -> Result<i64, CommandError> {
    let Some(v) = std::env::var_os("HYDRATE_NOW") else {
        return Ok(identity(root)?.time);
    };
    let v = v.to_string_lossy();
    let t = v.trim();
    t.parse::<i64>()
        .ok()
        .or_else(|| {
            chrono::DateTime::parse_from_rfc3339(t)
                .ok()
                .map(|d| d.timestamp())
        })
        .ok_or_else(|| {
            CommandError::usage(format!(
                "HYDRATE_NOW={v:?}: expected RFC 3339 (2026-12-04T18:00:00Z) or Unix seconds"
            ))
        })
}

/// `Name <email>`: a non-empty name, then one `<...>` holding an `@`, last.
fn parse_author(a: &str) -> Option<(String, String)> {
    let (n, rest) = a.split_once('<')?;
    let e = rest.trim_end().strip_suffix('>')?;
    let (n, e) = (n.trim(), e.trim());
    let bad = |s: &str| s.contains(['<', '>', '\n', '\0']);
    (!n.is_empty() && e.contains('@') && !bad(n) && !bad(e)).then(|| (n.into(), e.into()))
}

pub fn run(args: Args) -> CommandResult {
    // Environment-file warnings (no apps, a glob that finds nothing); an
    // error here is reported by the render itself.
    let loaded = crate::env::load(&args.root);
    if let (Ok(crate::env::Loaded { envs, .. }), false) = (&loaded, args.quiet) {
        super::list::print_config_warnings(envs);
    }
    // `warnings: {ignore: [...]}` per environment.
    let ignored: BTreeMap<String, Vec<WarningKind>> = match &loaded {
        Ok(crate::env::Loaded { envs, .. }) => envs
            .iter()
            .map(|e| (e.name.clone(), e.ignore_warnings.clone()))
            .collect(),
        Err(_) => BTreeMap::new(),
    };
    // With --pre-commit: the environments whose output CI writes.
    let ci_written: BTreeSet<String> = match (&loaded, args.pre_commit) {
        (Ok(crate::env::Loaded { envs, .. }), true) => envs
            .iter()
            .filter(|e| !render::committed_output(&args.root, e))
            .map(|e| e.name.clone())
            .collect(),
        _ => BTreeSet::new(),
    };
    let cache = cache_secret(args.no_cache, args.quiet).map_err(|e| fail(args.output, e))?;
    let opts = render::Options {
        root: args.root.clone(),
        selection: Selection {
            envs: args.envs,
            apps: args.apps,
            shard: args.shard,
        },
        to: args.to.map(|t| match t {
            ToArg::Dir => OutputKind::Dir,
            ToArg::Branch => OutputKind::Branch,
        }),
        next: args.next,
        check: args.check || args.pre_commit,
        identity: Some(identity(&args.root).map_err(|e| fail(args.output, e))?),
        push: args.push,
        remote: args.remote,
        trailers: Vec::new(),
        strict: args.strict,
        validate: args.validate,
        keep_going: args.keep_going,
        cache,
    };
    let bar = progress_bar();
    let progress = |n: usize| advance(bar.as_ref(), n);
    let result = loaded
        .map_err(render::Error::from)
        .and_then(|envs| render::run_loaded(&opts, envs, &progress));
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let reports = match result {
        Ok(r) => r,
        Err(e) => {
            if let (render::Error::Renders(errors), false) = (&e, args.quiet) {
                // Warnings met before a build failed (kustomize prints them first).
                for w in errors.iter().flat_map(crate::env::Error::warnings) {
                    errln!("warning[{}]: {w}", w.warning.kind.as_str());
                }
            }
            return Err(fail(args.output, e.into()));
        }
    };
    if !args.quiet {
        print_warnings(&args.root, &reports, &ignored);
    }
    for r in &reports {
        for n in &r.notices {
            errln!("warning: {}: {n}", r.env);
        }
    }
    let mut reports = reports;
    for r in reports.iter_mut().filter(|r| ci_written.contains(&r.env)) {
        r.check = None;
    }
    let stale: Vec<&EnvReport> = reports
        .iter()
        .filter(|r| r.check.as_ref().is_some_and(|c| !c.is_clean()) || r.push_rejected())
        .collect();
    let mut out = out::stdout();
    match args.output {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&to_json(&reports))?)?,
        Format::Text => print_text(&mut out, &reports, &ci_written)?,
    }
    if args.pre_commit {
        print_hook_notes(&reports, &stale, &ci_written);
    }
    let failed = print_failures(&reports);
    Ok(Outcome::finding_if(!stale.is_empty() || failed))
}

/// A progress bar on stderr when it is a terminal.
pub(super) fn progress_bar() -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} rendering {pos}/{len} {wide_bar}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    })
}

/// A render run's progress: `n > 0` sets the number of renders, `0` is
/// one more done.
pub(super) fn advance(bar: Option<&indicatif::ProgressBar>, n: usize) {
    if let Some(b) = bar {
        if n > 0 {
            b.set_length(n as u64);
        } else {
            b.inc(1);
        }
    }
}

/// The render cache's secret (None: `--no-cache`, or the cache is off,
/// said on stderr); a `HYDRATE_CACHE_KEY` that cannot be a key is a usage
/// error.
pub(super) fn cache_secret(
    no_cache: bool,
    quiet: bool,
) -> Result<Option<secret::Secret>, CommandError> {
    if no_cache {
        return Ok(None);
    }
    match secret::resolve(&secret::Source::from_env()) {
        Ok(Ok(key)) => Ok(Some(key)),
        Ok(Err(_)) if quiet => Ok(None),
        Ok(Err(off)) => {
            errln!("warning[{}]: {off}", off.kind.as_str());
            Ok(None)
        }
        Err(e) => Err(CommandError::usage(e.to_string())),
    }
}

/// A failed run: with `--output json`, `{"environments": [], "errors":
/// [...]}` on stdout too, so a machine reading stdout learns why (the
/// error itself is reported on stderr, as for every command).
fn fail(format: Format, e: CommandError) -> CommandError {
    if format == Format::Json {
        let v = serde_json::json!({ "environments": [], "errors": e.messages() });
        let text = serde_json::to_string_pretty(&v).unwrap_or_default();
        // The run failed already; a stdout that fails too adds nothing.
        let _ = writeln!(out::stdout(), "{text}");
    }
    e
}

/// Each distinct warning (kind and message) once: where it was met (a
/// path relative to the root, and how many other places), and the apps it
/// concerns. A deprecated field in every overlay of a repository would
/// otherwise print one line per overlay and environment. Kinds an
/// environment's `warnings.ignore` names are left out.
fn print_warnings(
    root: &Path,
    reports: &[EnvReport],
    ignored: &BTreeMap<String, Vec<WarningKind>>,
) {
    type Seen = (BTreeSet<String>, Vec<String>);
    let mut by_warning: BTreeMap<(WarningKind, &str), Seen> = BTreeMap::new();
    let full_root = root.canonicalize().ok();
    for w in reports.iter().flat_map(|r| &r.warnings) {
        if ignored
            .get(&w.env)
            .is_some_and(|k| k.contains(&w.warning.kind))
        {
            continue;
        }
        let (places, apps) = by_warning
            .entry((w.warning.kind, w.warning.message.as_str()))
            .or_default();
        if let Some(file) = &w.warning.file {
            let rel = [Some(root), full_root.as_deref()]
                .into_iter()
                .flatten()
                .find_map(|r| file.strip_prefix(r).ok())
                .unwrap_or(file);
            let line = w.warning.line.map(|l| format!(":{l}")).unwrap_or_default();
            places.insert(format!("{}{line}", rel.display()));
        }
        let app = format!("{}/{}", w.env, w.app);
        if !apps.contains(&app) {
            apps.push(app);
        }
    }
    for ((kind, message), (places, apps)) in by_warning {
        let place = match places.iter().next() {
            Some(first) => format!("{first}: "),
            None => String::new(),
        };
        let others = match places.len() {
            0 | 1 => String::new(),
            2 => " (and 1 more file)".to_string(),
            n => format!(" (and {} more files)", n - 1),
        };
        let shown: Vec<&str> = apps.iter().take(3).map(String::as_str).collect();
        let more = match apps.len().saturating_sub(shown.len()) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        errln!(
            "warning[{}]: {place}{message}{others}\n  in {} app(s): {}{more}",
            kind.as_str(),
            apps.len(),
            shown.join(", ")
        );
    }
}

/// `--keep-going`'s last words: every app that failed, with its error, and
/// that its previous output was kept. Whether any failed.
fn print_failures(reports: &[EnvReport]) -> bool {
    let failed: Vec<(&str, &render::FailedApp)> = reports
        .iter()
        .flat_map(|r| r.failed.iter().map(move |f| (r.target.as_str(), f)))
        .collect();
    if failed.is_empty() {
        return false;
    }
    errln!(
        "{} app(s) failed to render; their previous output was kept:",
        failed.len()
    );
    for (target, f) in &failed {
        errln!(
            "error: {}\n  {}'s previous output in {target} is kept",
            f.error,
            f.app
        );
    }
    true
}

/// `--pre-commit`'s last words: the command that brings stale directories
/// up to date, and once, which outputs CI writes.
fn print_hook_notes(reports: &[EnvReport], stale: &[&EnvReport], ci_written: &BTreeSet<String>) {
    if !stale.is_empty() {
        let compared = reports.len() - ci_written.len().min(reports.len());
        let envs: Vec<String> = match stale.len() == compared {
            true => Vec::new(),
            false => stale.iter().map(|r| format!(" --env {}", r.env)).collect(),
        };
        let dirs: Vec<&str> = stale.iter().map(|r| r.target.as_str()).collect();
        errln!(
            "rendered output is stale; to fix: hydrate render{} && git add {}",
            envs.concat(),
            dirs.join(" ")
        );
    }
    let by_ci: Vec<&str> = reports
        .iter()
        .filter(|r| ci_written.contains(&r.env))
        .map(|r| r.env.as_str())
        .collect();
    if !by_ci.is_empty() {
        errln!(
            "note: CI writes the output of {} (branches or gitignored directories); \
             this check only proves they render",
            by_ci.join(", ")
        );
    }
}

fn print_text(
    out: &mut impl Write,
    reports: &[EnvReport],
    ci_written: &BTreeSet<String>,
) -> std::io::Result<()> {
    for r in reports {
        let state = match (&r.check, &r.commit) {
            _ if ci_written.contains(&r.env) => "renders (CI writes this output)".to_string(),
            (Some(c), _) if c.is_clean() => "up to date".to_string(),
            (Some(c), _) => format!(
                "STALE: {} missing, {} stale, {} extra",
                c.missing.len(),
                c.stale.len(),
                c.extra.len()
            ),
            (None, Some(commit)) => format!(
                "{} files changed, commit {}",
                r.changed_files.len(),
                &commit[..12.min(commit.len())]
            ),
            (None, None) if r.changed_files.is_empty() => "unchanged".to_string(),
            (None, None) => format!("{} files changed", r.changed_files.len()),
        };
        let pushed = match &r.push {
            Some(p) => match &p.result {
                PushResult::Pushed => format!(", pushed to {}", p.remote),
                PushResult::Unchanged => format!(", already on {}", p.remote),
                PushResult::Rejected(why) => format!(", REJECTED by {} ({})", p.remote, why.reason),
            },
            None => String::new(),
        };
        let failed = match r.failed.len() {
            0 => String::new(),
            n => format!(", {n} app(s) FAILED (previous output kept)"),
        };
        writeln!(
            out,
            "{}: {} apps, {} resources, {} bytes -> {}: {state}{pushed}{failed}",
            r.env, r.apps, r.resources, r.bytes, r.target
        )?;
        if let Some(PushResult::Rejected(why)) = r.push.as_ref().map(|p| &p.result) {
            for line in &why.remote {
                writeln!(out, "  remote: {line}")?;
            }
        }
        if let Some(c) = &r.check {
            for (what, files) in [
                ("missing", &c.missing),
                ("stale", &c.stale),
                ("extra", &c.extra),
            ] {
                for f in files {
                    writeln!(out, "  {what}: {f}")?;
                }
            }
        }
    }
    Ok(())
}

/// `{"to", "status": "pushed"|"unchanged"|"rejected", "reason", "remote"}`:
/// `remote` holds the remote's own lines about a rejected branch.
fn push_json(p: &render::EnvPush) -> serde_json::Value {
    let (status, reason, remote) = match &p.result {
        PushResult::Pushed => ("pushed", None, &[][..]),
        PushResult::Unchanged => ("unchanged", None, &[][..]),
        PushResult::Rejected(why) => ("rejected", Some(&why.reason), &why.remote[..]),
    };
    serde_json::json!({ "to": p.remote, "status": status, "reason": reason, "remote": remote })
}

fn to_json(reports: &[EnvReport]) -> serde_json::Value {
    let envs: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            serde_json::json!({
                "env": r.env,
                "target": r.target,
                "apps": r.apps,
                "resources": r.resources,
                "bytes": r.bytes,
                "changedFiles": r.changed_files,
                "written": r.written,
                "notices": r.notices,
                "commit": r.commit,
                "pushed": r.pushed,
                "push": r.push.as_ref().map(push_json),
                "failed": r.failed.iter().map(|f| serde_json::json!({
                    "app": f.app,
                    "error": f.error,
                })).collect::<Vec<_>>(),
                "check": r.check.as_ref().map(|c| serde_json::json!({
                    "upToDate": c.is_clean(),
                    "missing": c.missing,
                    "stale": c.stale,
                    "extra": c.extra,
                })),
                "warnings": r.warnings.iter().map(|w| serde_json::json!({
                    "app": w.app,
                    "kind": w.warning.kind.as_str(),
                    "message": w.warning.message,
                    "file": w.warning.file.as_ref().map(|f| f.display().to_string()),
                    "line": w.warning.line,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "environments": envs })
}
