//! The self-check of explained chains: for every scalar of every rendered
//! object, the last step's source line holds the value, or the step names
//! the transformer or template that made it. Run over the demo by a test;
//! counts what it checked.

use std::path::Path;

use super::{explain_in, FieldOrigin, Selection};

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Fields checked.
    pub fields: usize,
    /// Whose last step's line holds the value.
    pub located: usize,
    /// Whose last step names what made the value (a transformer, a
    /// template action) without a line holding it.
    pub synthesised: usize,
    /// `env/app Kind/name path: why` of each field that fails.
    pub failures: Vec<String>,
}

/// Checks every field of every app of every environment of `root`.
pub fn check_all(root: &Path) -> Result<Checked, super::Error> {
    let envs = crate::env::load_environments(root)?;
    let mut c = Checked::default();
    for e in &envs {
        for a in &e.apps {
            let x = explain_in(root, &envs, &e.name, &a.name, &Selection::default())?;
            for r in &x.resources {
                for f in &r.fields {
                    c.fields += 1;
                    match verdict(f) {
                        Ok(true) => c.located += 1,
                        Ok(false) => c.synthesised += 1,
                        Err(why) => c.failures.push(format!(
                            "{}/{} {} {}: {why}",
                            e.name, a.name, r.resource, f.path
                        )),
                    }
                }
            }
        }
    }
    Ok(c)
}

/// Ok(true): located; Ok(false): a named step made it; Err: neither.
fn verdict(f: &FieldOrigin) -> Result<bool, String> {
    let Some(last) = f.chain.first() else {
        return Err("no chain".into());
    };
    let first_line = f.value.lines().next().unwrap_or_default().trim();
    // A block scalar is placed at its `|`/`>` header, as go-yaml's line
    // says: its text starts on the next line.
    let block = |t: &str| {
        let header = t.rsplit(' ').next().unwrap_or_default();
        header.starts_with('|') || header.starts_with('>')
    };
    let holds = last.at.as_ref().is_some_and(|p| {
        p.text.contains(first_line)
            || p.embedded_line.is_some()
            || (f.value.contains('\n') && block(&p.text))
    });
    match (holds, last.by.as_str()) {
        (true, _) => Ok(true),
        // A file read as is must hold the value.
        (false, "resource") => Err(format!(
            "its line `{}` does not hold `{first_line}`",
            last.at
                .as_ref()
                .map(|p| p.text.as_str())
                .unwrap_or_default()
        )),
        (false, _) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_macros)] // the count is the test's report
    fn every_demo_field_is_explained() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let c = check_all(root).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "explain check: {} fields ({} located, {} named their transformer or template)",
            c.fields, c.located, c.synthesised
        );
        assert!(c.fields > 0);
        assert!(c.failures.is_empty(), "{:#?}", c.failures);
    }
}
