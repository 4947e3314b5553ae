//! `hydrate promote FROM [TO]`: parse arguments, call `promote::promote`,
//! print the plan and what was done.

use std::io::Write;
use std::path::PathBuf;

use super::error::{CommandError, CommandResult, Outcome};
use super::out;
use crate::promote::{self, PromoteOptions, PromoteReport};

#[derive(clap::Args)]
pub struct Args {
    /// The environment promoted from (with --plan: the app to show, all when left out).
    #[arg(required_unless_present = "plan")]
    from: Option<String>,
    /// The environment promoted into (default: every environment in FROM's
    /// promotesTo, one commit each, in wave order).
    to: Option<String>,
    /// Instead of promoting: per app, the path its newest version takes
    /// through the promotion graph, where it is and what holds each step.
    #[arg(long, conflicts_with_all = ["to", "dry_run", "branch", "describe", "render", "force", "all_or_nothing"])]
    plan: bool,
    /// Output format of --plan.
    #[arg(long, value_enum, default_value = "text", requires = "plan")]
    output: PlanFormat,
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Only these apps (repeatable; narrows what the policy allows).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// Promote even what the policies and gates refuse (blocked pins,
    /// downgrades, soak, freeze, approvals, after, waves); a gate forced is
    /// recorded as `Hydrate-Forced: <gate>` in the commit.
    #[arg(long)]
    force: bool,
    /// Refuse the whole promotion when a policy holds anything back
    /// (default: promote the rest and list what is held).
    #[arg(long, conflicts_with = "force")]
    all_or_nothing: bool,
    /// Print the plan and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Commit to a new branch (default `promote/<FROM>-to-<TO>/<id>`), leaving HEAD, index and working tree alone.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    branch: Option<String>,
    /// Write a markdown description (pins table, rendered changes) for the
    /// merge request. `{env}` in FILE is replaced by the target: with
    /// several targets, one file each (`--describe 'mr/{env}.md'`); with
    /// --together, one file for all, `{env}` replaced by the targets
    /// joined with `+`. Without `{env}`, one file, every target's
    /// description in it.
    #[arg(long, value_name = "FILE")]
    describe: Option<String>,
    /// With several targets: one commit for every target that is not held
    /// (held targets are listed and left out), instead of one per target.
    #[arg(long, conflicts_with_all = ["to", "plan"])]
    together: bool,
    /// Also write TO's rendered output (directory or env branch).
    #[arg(long)]
    render: bool,
}

#[derive(Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
enum PlanFormat {
    Text,
    Json,
    Markdown,
}

fn plan_lines(r: &PromoteReport) -> String {
    let mut out = format!("promotion {} → {} ({}):\n", r.from, r.to, r.id);
    for it in &r.plan.items {
        out.push_str(&format!(
            "  {} {}: {} → {}\n",
            it.app,
            it.pin,
            it.old_text(),
            it.new.as_deref().unwrap_or("(none)")
        ));
    }
    for c in &r.plan.copies {
        out.push_str(&format!(
            "  {} {}: copied from {}\n",
            c.app,
            c.to.display(),
            c.from.display()
        ));
        for line in promote::copy_diff(c).lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    for n in &r.plan.not_copied {
        out.push_str(&format!(
            "  not copied: {} exists only in {} ({}); hydrate does not create files\n",
            n.from.display(),
            r.from,
            n.to.display()
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("  {n}\n"));
    }
    if !r.plan.holds_any() {
        for f in &r.plan.refusals {
            out.push_str(&format!("  refused: {f}\n"));
        }
    }
    let mut held: Vec<String> = Vec::new();
    for f in &r.plan.refusals {
        let what = match f.holds() {
            Some(pin) => format!("{}/{pin}", f.app()),
            None => f.app().to_string(),
        };
        let line = format!("held: {what} ({})", f.reason());
        if r.plan.holds_any() && !held.contains(&line) {
            held.push(line);
        }
    }
    for h in held {
        out.push_str(&format!("  {h}\n"));
    }
    out
}

/// Where `--describe TEMPLATE` writes the description of `target`.
fn described_at(template: &str, target: &str) -> PathBuf {
    PathBuf::from(template.replace("{env}", target))
}

fn write_description(path: &std::path::Path, text: &str) -> Result<(), CommandError> {
    std::fs::write(path, text)
        .map_err(|e| CommandError::runtime(format!("{}: {e}", path.display())))
}

/// `` · `file:line` `` of the line of TO that sets a pin (after the
/// promotion: the line a render of TO explains the field by), or only the
/// file when the line is not written yet.
fn set_at(root: &std::path::Path, pin: &promote::Pin) -> String {
    let file = pin.place.file().display();
    match pin.place.line(root) {
        Some(line) => format!(" · `{file}:{line}`"),
        None => format!(" · `{file}`"),
    }
}

/// The merge request description: the pins and the rendered changes.
fn description(root: &std::path::Path, r: &PromoteReport) -> String {
    let mut out = format!(
        "## Promote {} → {}\n\nPromotion `{}`.\n\n",
        r.from, r.to, r.id
    );
    out.push_str(&pins_table(root, r));
    if let Some(o) = &r.outcome {
        out.push_str(&rendered_changes(o, None));
        out.push_str(&files(o));
    }
    out
}

fn files(o: &promote::Outcome) -> String {
    let mut out = String::from("\n### Files\n\n");
    for f in &o.files {
        out.push_str(&format!("- `{}`\n", f.display()));
    }
    out
}

/// The pins table of one target and the diffs of its copied files.
fn pins_table(root: &std::path::Path, r: &PromoteReport) -> String {
    let mut out = format!("| app | pin | {} | {} |\n|---|---|---|---|\n", r.to, r.from);
    for it in &r.plan.items {
        out.push_str(&format!(
            "| {} | `{}`{} | `{}` | `{}` |\n",
            it.app,
            it.pin,
            set_at(root, &it.target),
            it.old_text(),
            it.new.as_deref().unwrap_or("(none)")
        ));
    }
    for c in &r.plan.copies {
        out.push_str(&format!(
            "| {} | `{}` (whole file) | | copied from `{}` |\n",
            c.app,
            c.to.display(),
            c.from.display()
        ));
    }
    for c in &r.plan.copies {
        out.push_str(&format!(
            "\n<details><summary>{}</summary>\n\n```diff\n{}```\n</details>\n",
            c.to.display(),
            promote::copy_diff(c)
        ));
    }
    out
}

/// The resources that render differently and the files written: of
/// `env`'s apps only when given (a section of a together description).
fn rendered_changes(o: &promote::Outcome, env: Option<&str>) -> String {
    let mut out = String::from("\n### Rendered changes\n\n");
    for ((e, app), res) in &o.changed_resources {
        if env.is_some_and(|x| x != e) {
            continue;
        }
        let name = match env {
            Some(_) => app.clone(),
            None if o.changed_resources.keys().any(|(x, _)| x != e) => format!("{e}/{app}"),
            None => app.clone(),
        };
        if res.is_empty() {
            out.push_str(&format!("- **{name}**: no rendered change\n"));
        } else {
            out.push_str(&format!("- **{name}**: {}\n", res.join(", ")));
        }
    }
    out
}

/// The description of a together commit: one section per target, then
/// the files of the one commit.
fn together_description(root: &std::path::Path, t: &promote::Together) -> String {
    let names: Vec<&str> = t.promoted().map(|p| p.to.as_str()).collect();
    let mut out = format!(
        "## Promote {} → {}\n\nPromotion `{}`: one commit for {}.\n",
        t.from,
        names.join(", "),
        t.id,
        names.join(", ")
    );
    for p in t.promoted() {
        out.push_str(&format!("\n### {}\n\n", p.to));
        out.push_str(&pins_table(root, p));
        if let Some(o) = &t.outcome {
            out.push_str(&rendered_changes(o, Some(&p.to)).replace("### ", "#### "));
        }
    }
    for p in t
        .parts
        .iter()
        .filter(|p| p.plan.is_empty() && p.plan.holds_any())
    {
        out.push_str(&format!("\n### {} (held, not in this commit)\n\n", p.to));
        for line in held_lines(p) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if let Some(o) = &t.outcome {
        out.push_str(&files(o));
    }
    out
}

/// `held: web (soak: 5 h 12 min left)`, once per app and reason.
fn held_lines(r: &PromoteReport) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for f in &r.plan.refusals {
        let line = format!("held: {} ({})", f.app(), f.reason());
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    seen
}

pub fn run(args: Args) -> CommandResult {
    if args.plan {
        let now = super::render::now(&args.root)?;
        let routes = promote::routes(&args.root, args.from.as_deref(), now)?;
        let mut out = out::stdout();
        match args.output {
            PlanFormat::Text => write!(out, "{}", promote::routes_text(&routes, now))?,
            PlanFormat::Json => writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&promote::routes_json(&routes))?
            )?,
            PlanFormat::Markdown => write!(out, "{}", promote::routes_markdown(&routes, now))?,
        }
        return Ok(Outcome::Done);
    }
    let from = args
        .from
        .clone()
        .ok_or_else(|| CommandError::usage("name the environment to promote from"))?;
    let opts = PromoteOptions {
        root: args.root.clone(),
        from,
        to: args.to,
        apps: args.apps,
        force: args.force,
        all_or_nothing: args.all_or_nothing,
        dry_run: args.dry_run,
        branch: args.branch.clone().map(|b| (!b.is_empty()).then_some(b)),
        describe: args.describe.is_some(),
        render: args.render,
        identity: super::render::identity(&args.root)?,
        now: super::render::now(&args.root)?,
        fresh: Vec::new(),
    };
    // Several targets: one promotion each, or one for all with
    // --together (an error loading the environments is left to the
    // promotion itself to report).
    if opts.to.is_none() && promote::targets(&opts.root, &opts.from).is_ok_and(|t| t.len() > 1) {
        if args.together {
            return run_together(args.describe.as_deref(), &opts);
        }
        return run_each(args.describe.as_deref(), &opts);
    }
    let r = promote::promote(&opts)?;
    super::commit_report::print_notes(&r.recovered, r.outcome.as_ref());
    let mut out = out::stdout();
    if r.plan.is_empty() && !r.plan.holds_any() {
        writeln!(
            out,
            "{} already has {}'s pins; nothing to promote",
            r.to, r.from
        )?;
        for n in &r.notes {
            writeln!(out, "  {n}")?;
        }
        return Ok(Outcome::Done);
    }
    if opts.dry_run {
        write!(out, "{}", plan_lines(&r))?;
        writeln!(out, "dry run: nothing changed")?;
        // As the promotion itself would: a finding when everything is held.
        return Ok(Outcome::finding_if(r.plan.is_empty()));
    }
    // The promotion is committed: what is left to do may fail, and the
    // error then says that the commit stands.
    let committed = r.outcome.as_ref().and_then(|o| o.commit.clone());
    let stands = |e: CommandError| match &committed {
        Some(c) => e.hint(format!(
            "promote: committed {c} before the error; the commit stands"
        )),
        None => e,
    };
    if let Some(template) = &args.describe {
        write_description(&described_at(template, &r.to), &description(&opts.root, &r))
            .map_err(stands)?;
    }
    print_done(&mut out, &r).map_err(|e| stands(e.into()))?;
    Ok(Outcome::Done)
}

/// `hydrate promote FROM` into each of FROM's targets: every target's plan
/// and commit, what is held where; a finding when nothing was promoted and
/// something was held.
fn run_each(describe: Option<&str>, opts: &PromoteOptions) -> CommandResult {
    let mut out = out::stdout();
    let (mut promoted, mut held) = (0, 0);
    let mut described = String::new();
    let mut failed = None;
    for (to, r) in promote::promote_each(opts)? {
        let r = match r {
            Ok(r) => r,
            Err(promote::Error::Held(refusals)) => {
                held += 1;
                writeln!(out, "promotion {} → {to}: nothing promoted", opts.from)?;
                let mut seen: Vec<String> = Vec::new();
                for f in &refusals {
                    let line = format!("  held: {} ({})", f.app(), f.reason());
                    if !seen.contains(&line) {
                        writeln!(out, "{line}")?;
                        seen.push(line);
                    }
                }
                continue;
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        };
        super::commit_report::print_notes(&r.recovered, r.outcome.as_ref());
        if r.plan.is_empty() && !r.plan.holds_any() {
            writeln!(
                out,
                "{to} already has {}'s pins; nothing to promote",
                r.from
            )?;
            continue;
        }
        held += usize::from(r.plan.holds_any());
        promoted += usize::from(!r.plan.is_empty());
        if opts.dry_run {
            write!(out, "{}", plan_lines(&r))?;
            continue;
        }
        print_done(&mut out, &r)?;
        match describe {
            // One file per target.
            Some(t) if t.contains("{env}") => {
                write_description(&described_at(t, &to), &description(&opts.root, &r))?;
            }
            _ => described.push_str(&description(&opts.root, &r)),
        }
    }
    if opts.dry_run {
        writeln!(out, "dry run: nothing changed")?;
    }
    if let (Some(path), false) = (describe, described.is_empty()) {
        write_description(std::path::Path::new(path), &described)?;
    }
    if let Some(e) = failed {
        let e: CommandError = e.into();
        return Err(match promoted {
            0 => e,
            n => e.hint(format!(
                "promote: {n} target(s) were promoted before the error; their commits stand"
            )),
        });
    }
    Ok(Outcome::finding_if(promoted == 0 && held > 0))
}

/// `hydrate promote FROM --together`: every target's plan, what is held
/// where, and the one commit; a finding when nothing was promoted and
/// something was held.
fn run_together(describe: Option<&str>, opts: &PromoteOptions) -> CommandResult {
    let t = promote::promote_together(opts)?;
    super::commit_report::print_notes(&t.recovered, t.outcome.as_ref());
    let mut out = out::stdout();
    for r in &t.parts {
        if r.plan.is_empty() && !r.plan.holds_any() {
            writeln!(
                out,
                "{} already has {}'s pins; nothing to promote",
                r.to, r.from
            )?;
        } else if r.plan.is_empty() {
            writeln!(out, "promotion {} → {}: nothing promoted", r.from, r.to)?;
            for line in held_lines(r) {
                writeln!(out, "  {line}")?;
            }
        } else {
            write!(out, "{}", plan_lines(r))?;
        }
    }
    if opts.dry_run {
        writeln!(out, "dry run: nothing changed")?;
        return Ok(Outcome::finding_if(
            t.promoted().count() == 0 && t.holds_any(),
        ));
    }
    let Some(o) = &t.outcome else {
        return Ok(Outcome::finding_if(t.holds_any()));
    };
    let names: Vec<&str> = t.promoted().map(|p| p.to.as_str()).collect();
    let commit = o.commit.as_deref().unwrap_or("none");
    let files: Vec<String> = o.files.iter().map(|f| f.display().to_string()).collect();
    let on = t
        .branch
        .as_deref()
        .map_or(String::new(), |b| format!(" on branch {b}"));
    writeln!(
        out,
        "committed {commit}{on}: promotion {} into {} ({})",
        t.id,
        names.join(", "),
        files.join(", ")
    )?;
    print_rendered(&mut out, &t.rendered)?;
    if let Some(template) = describe {
        let path = described_at(template, &names.join("+"));
        write_description(&path, &together_description(&opts.root, &t)).map_err(|e| {
            e.hint(format!(
                "promote: committed {commit} before the error; the commit stands"
            ))
        })?;
    }
    Ok(Outcome::Done)
}

/// The plan and what was done: the commit, and the environments rendered.
fn print_done(out: &mut impl Write, r: &PromoteReport) -> std::io::Result<()> {
    write!(out, "{}", plan_lines(r))?;
    if let Some(o) = &r.outcome {
        let files: Vec<String> = o.files.iter().map(|f| f.display().to_string()).collect();
        let commit = o.commit.as_deref().unwrap_or("none");
        match &r.branch {
            Some(b) => writeln!(
                out,
                "committed {commit} on branch {b} ({})",
                files.join(", ")
            )?,
            None => writeln!(out, "committed {commit} ({})", files.join(", "))?,
        }
    }
    print_rendered(out, &r.rendered)
}

/// A line per environment `--render` wrote after the promotion.
fn print_rendered(
    out: &mut impl Write,
    rendered: &[crate::render::EnvReport],
) -> std::io::Result<()> {
    for e in rendered {
        let commit = e
            .commit
            .as_deref()
            .map_or(String::new(), |c| format!(", commit {c}"));
        writeln!(
            out,
            "{}: rendered -> {}: {} files changed{commit}",
            e.env,
            e.target,
            e.changed_files.len()
        )?;
    }
    Ok(())
}
