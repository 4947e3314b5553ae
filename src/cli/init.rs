//! `hydrate init`: scan the repository, print what was found, write
//! `environments/*.yaml` (or with `--dry-run` only print them).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{CommandError, CommandResult, Outcome};
use super::out;
use crate::init::{self, Proposal};

#[derive(clap::Args)]
pub struct Args {
    /// The repository root to scan (environments/ is written there).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Print the files it would write; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Replace the files of an existing environments/ (a diff is printed
    /// first; other files there are left alone).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> CommandResult {
    let proposal = init::scan(&args.root)?;
    let mut out = out::stdout();
    print_summary(&mut out, &proposal)?;
    let plan = init::plan(&args.root, &proposal, args.force || args.dry_run)?;
    if args.dry_run {
        for c in &plan.changes {
            writeln!(out, "\n# {} (not written: --dry-run)", c.path.display())?;
            match &c.old {
                Some(_) => write!(out, "{}", c.diff())?,
                None => write!(out, "{}", c.new)?,
            }
        }
        return Ok(Outcome::Done);
    }
    for c in plan.changes.iter().filter(|c| c.old.is_some()) {
        write!(out, "{}", c.diff())?;
    }
    init::write(&args.root, &plan)?;
    print_written(&mut out, &args.root, &plan).map_err(|e| {
        CommandError::from(e).hint("init: the environment files were written before the error")
    })?;
    Ok(Outcome::Done)
}

/// What `init` wrote, and what to run next.
fn print_written(out: &mut impl Write, root: &Path, plan: &init::Plan) -> std::io::Result<()> {
    writeln!(out)?;
    for c in &plan.changes {
        let verb = match &c.old {
            None => "wrote",
            Some(old) if *old == c.new => "unchanged",
            Some(_) => "replaced",
        };
        writeln!(out, "{verb} {}", c.path.display())?;
    }
    for k in &plan.kept {
        let what = match k.what {
            init::KeptKind::Environment => "a hydrate environment file init does not propose",
            init::KeptKind::OtherYaml => {
                "not a hydrate environment file (no name:, apps:, discover: or promotesTo:); \
                 hydrate does not read it"
            }
            init::KeptKind::Directory => {
                "a directory; hydrate reads only the files at the top of environments/"
            }
            init::KeptKind::Other => "not YAML; hydrate does not read it",
        };
        writeln!(out, "left alone {} ({what})", k.path.display())?;
    }
    let root = if root == Path::new(".") {
        String::new()
    } else {
        format!(" --root {}", root.display())
    };
    writeln!(
        out,
        "\nNext: hydrate list{root}   (what each environment renders)"
    )?;
    writeln!(
        out,
        "      hydrate render{root} (writes rendered/<env>/<app>/manifest.yaml)"
    )
}

fn print_summary(out: &mut impl Write, p: &Proposal) -> std::io::Result<()> {
    let apps: usize = p
        .environments
        .iter()
        .map(|e| e.listed.len() + e.discovered.len())
        .sum();
    writeln!(
        out,
        "Found {} environment(s), {apps} app(s):",
        p.environments.len()
    )?;
    for e in &p.environments {
        let names: Vec<&str> = e
            .discovered
            .iter()
            .chain(&e.listed)
            .map(|f| f.app.as_str())
            .collect();
        let promotes = e
            .promotes_to
            .as_deref()
            .map(|n| format!(" -> promotes to {n}"))
            .unwrap_or_default();
        writeln!(out, "  {}: {}{promotes}", e.name, names.join(", "))?;
        for g in &e.discover {
            writeln!(out, "    discover: {g}")?;
        }
    }
    if let Some(r) = &p.root_app {
        let from = match &r.from {
            init::RootAppSource::Origin(url) => format!("the repository (origin {url})"),
            init::RootAppSource::Directory => {
                "the directory (no `origin` remote names the repository)".to_string()
            }
        };
        writeln!(
            out,
            "The app at the root is `{}`, named after {from}",
            r.name
        )?;
    }
    let per_source = p.apps_per_source();
    if !per_source.is_empty() {
        writeln!(out, "Apps per source:")?;
        for (kind, n) in per_source {
            writeln!(out, "  {kind}: {n}")?;
        }
    }
    if !p.unclassified.is_empty() {
        writeln!(out, "Not classified ({}):", p.unclassified.len())?;
        for u in &p.unclassified {
            writeln!(out, "  {}: {}", u.path.display(), u.reason)?;
        }
    }
    Ok(())
}
