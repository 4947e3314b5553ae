//! What a command that edits pins and commits prints afterwards
//! (`set-image`, `set-value`, `rollback`, and promote's notes): the
//! edits, the commit, and what a killed run's recovery did.

use std::io::Write;

use super::error::{CommandError, CommandResult, Outcome};
use super::out::{self, errln};
use crate::promote::{self, SetReport};

/// What a killed run's recovery did, and what this run could not finish
/// after its commit: on stderr, as warnings.
pub(super) fn print_notes(recovered: &[String], outcome: Option<&promote::Outcome>) {
    for n in recovered {
        errln!("note: {n}");
    }
    for n in outcome.iter().flat_map(|o| &o.remaining) {
        errln!("warning: {n}");
    }
}

/// What was changed and committed. The commit is made before anything is
/// printed: an error printing says that it stands.
pub(super) fn print_report(r: &SetReport, what: &str) -> CommandResult {
    print_notes(&r.recovered, r.outcome.as_ref());
    let committed = r.outcome.as_ref().and_then(|o| o.commit.as_ref());
    write_report(&mut out::stdout(), r, what).map_err(|e| match committed {
        Some(c) => CommandError::from(e).hint(format!(
            "{what}: committed {c} before the error; the commit stands"
        )),
        None => e.into(),
    })?;
    Ok(Outcome::Done)
}

fn write_report(out: &mut impl Write, r: &SetReport, what: &str) -> std::io::Result<()> {
    if let (true, Some(c)) = (
        r.items.is_empty(),
        r.outcome.as_ref().and_then(|o| o.commit.as_ref()),
    ) {
        return writeln!(
            out,
            "{what}: committed {c} (a killed run made it; this run finished it)"
        );
    }
    if r.items.is_empty() {
        return writeln!(out, "{what}: nothing to change");
    }
    for it in &r.items {
        writeln!(
            out,
            "  {} {}: {} → {}",
            it.app,
            it.pin,
            it.old.as_deref().unwrap_or("(none)"),
            it.new.as_deref().unwrap_or("(none)")
        )?;
    }
    if let Some(o) = &r.outcome {
        match &o.commit {
            Some(c) => writeln!(out, "{what}: committed {c}")?,
            None => writeln!(out, "{what}: files edited, nothing committed")?,
        }
    }
    Ok(())
}
