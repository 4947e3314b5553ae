//! `hydrate diff`: two environments, or each environment against a git
//! revision, resource by resource and field by field. Exit codes as
//! diff(1): 0 no differences, 1 differences, 2 trouble.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::ValueEnum;

use super::error::{CommandError, CommandResult, Outcome};
use super::out;

use crate::compare;
use crate::diff::{self, Style, Summary};

#[derive(clap::Args)]
pub struct Args {
    /// The environment to compare from (e.g. staging).
    from: Option<String>,
    /// The environment to compare to (e.g. production).
    to: Option<String>,
    /// Compare each environment at this revision with the working tree
    /// (a merge-request preview); REF is read from git, never checked out.
    #[arg(long, value_name = "REF")]
    since: Option<String>,
    /// With --since: only these environments (repeatable).
    #[arg(long = "env")]
    envs: Vec<String>,
    /// Only these apps (repeatable).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// Read the committed output instead of rendering: each environment's
    /// directory, or its branch (the newer of the local branch and its
    /// remote-tracking copy).
    #[arg(long)]
    rendered: bool,
    /// Read every environment's output from the branch `<REF-PREFIX><branch>`
    /// (its configured branch, else `env/<name>` as `render --to branch`
    /// writes): `origin/` reads `refs/remotes/origin/env/dev` after a
    /// `git fetch`. Implies --rendered.
    #[arg(long, value_name = "REF-PREFIX")]
    rendered_from: Option<String>,
    /// Ignore a path everywhere, or in one kind (and name):
    /// `/spec/replicas`, `Deployment=.spec.replicas`, `Deployment/web=/spec/replicas`.
    #[arg(long, value_name = "[KIND[/NAME]=]PATH")]
    ignore: Vec<String>,
    /// A built-in ignore set; `helm` drops chart/version labels and checksum/* annotations.
    #[arg(long, value_enum)]
    ignore_profile: Option<Profile>,
    /// Print Secret values instead of `<sha256:…, N bytes>`.
    #[arg(long)]
    show_secrets: bool,
    /// One line per resource.
    #[arg(long)]
    brief: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    output: Format,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    color: Color,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Do not validate the two sides (by default the diff ends with what
    /// the change makes invalid and what it fixes, as `hydrate validate`
    /// reports it).
    #[arg(long)]
    no_validate: bool,
    /// After the diff: each changed field's origin on both sides, the
    /// files and lines that set it (`hydrate explain`'s chains); with
    /// `--output markdown`, each changed field's line ends with the
    /// `file:line` that set it on its side.
    #[arg(long)]
    explain: bool,
    /// Render everything, neither reading nor writing the render cache
    /// (`.hydrate/cache`).
    #[arg(long)]
    no_cache: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Profile {
    Helm,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Human,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Color {
    Auto,
    Always,
    Never,
}

pub fn run(args: Args) -> CommandResult {
    let envs =
        match (&args.since, args.from, args.to) {
            (None, Some(a), Some(b)) => Some((a, b)),
            (Some(_), None, None) => None,
            (None, _, _) => return usage("name two environments, FROM and TO, or use --since REF"),
            (Some(_), _, _) => return usage(
                "--since compares each environment with itself; name no environments (use --env)",
            ),
        };
    if args.since.is_none() && !args.envs.is_empty() {
        return usage("--env goes with --since; name the environments as FROM TO");
    }
    // The origins are text (or markdown suffixes); appended to JSON they
    // would make it unreadable, so the pair is refused before any work.
    if args.explain && matches!(args.output, Format::Json) {
        return usage(
            "--explain prints origins as text or markdown; for JSON, run \
             `hydrate explain ENV APP KIND/NAME FIELD --output json` per field",
        );
    }
    let root = args.root.clone();
    let opts = compare::Options {
        root: args.root,
        envs,
        since: args.since,
        only_envs: args.envs,
        apps: args.apps,
        rendered: args.rendered || args.rendered_from.is_some(),
        rendered_from: args.rendered_from,
        ignore: args.ignore,
        helm_profile: args.ignore_profile.is_some(),
        show_secrets: args.show_secrets,
        validate: !args.no_validate,
        cache: super::render::cache_secret(args.no_cache, true)?,
    };
    let comparisons = compare::run(&opts)?;
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let style = Style { color };
    let text = match (args.output, args.brief) {
        (Format::Json, _) => serde_json::to_string_pretty(&diff::to_json(&comparisons))? + "\n",
        (Format::Markdown, _) if args.explain => {
            let sources = crate::explain::field_sources(&root, &comparisons)
                .map_err(super::explain::error)?;
            diff::to_markdown_with(&comparisons, &sources)
        }
        (Format::Markdown, _) => diff::to_markdown(&comparisons),
        (Format::Human, true) => diff::to_brief(&comparisons, style),
        (Format::Human, false) => diff::to_human(&comparisons, style),
    };
    out::stdout().write_all(text.as_bytes())?;
    if args.explain && !matches!(args.output, Format::Markdown) {
        let origins =
            crate::explain::diff_origins(&root, &comparisons).map_err(super::explain::error)?;
        if !origins.is_empty() {
            out::stdout().write_all(format!("\nOrigins:\n{origins}").as_bytes())?;
        }
    }
    Ok(Outcome::finding_if(
        Summary::of(&comparisons).has_differences(),
    ))
}

fn usage(message: &str) -> CommandResult {
    Err(CommandError::usage(message))
}
