//! The self-check of explained chains (issue 32, item 5): for every scalar
//! of every rendered object, the last step's source line holds the value
//! (after the step's documented transformation: a name prefix or suffix
//! taken off, a generator's hash suffix taken off, a template's values put
//! together), or the step names the transformer, generator or template
//! that made it. Run by tests over the demo, the golden fixtures and the
//! conformance corpora; counts what it checked per corpus.

use std::path::{Path, PathBuf};

use super::{FieldOrigin, ResourceOrigins, Step};
use crate::env::ChartApp;

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Fields checked.
    pub fields: usize,
    /// Whose chain ends at a line holding the value.
    pub located: usize,
    /// Whose last step names what made the value (a transformer, a
    /// generator, a template action that read no values).
    pub synthesised: usize,
    /// The steps named for the synthesised fields, with their counts.
    pub named: std::collections::BTreeMap<String, usize>,
    /// Apps or fixtures that did not render (expected errors), by name.
    pub not_rendered: Vec<String>,
    /// `where Kind/name path: why` of each field that fails.
    pub failures: Vec<String>,
}

impl Checked {
    /// Counts `resources`' fields, naming failures after `what`.
    fn add(&mut self, what: &str, resources: &[ResourceOrigins]) {
        for r in resources {
            for f in &r.fields {
                self.fields += 1;
                match verdict(f) {
                    Ok(Verdict::Located) => self.located += 1,
                    Ok(Verdict::Synthesised) => {
                        self.synthesised += 1;
                        let by = f.chain.first().map(|s| s.by.clone()).unwrap_or_default();
                        *self.named.entry(by).or_default() += 1;
                    }
                    Err(why) => self
                        .failures
                        .push(format!("{what} {} {}: {why}", r.resource, f.path)),
                }
            }
        }
    }

    /// One line: `N fields (L located, S named their transformer or template)`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} fields ({} located, {} named their transformer or template",
            self.fields, self.located, self.synthesised
        );
        if !self.not_rendered.is_empty() {
            s.push_str(&format!(
                "; {} cases not rendered, as recorded",
                self.not_rendered.len()
            ));
        }
        s.push(')');
        if !self.named.is_empty() {
            let named: Vec<String> = self
                .named
                .iter()
                .map(|(by, n)| format!("{by} {n}"))
                .collect();
            s.push_str(&format!("; named: {}", named.join(", ")));
        }
        s
    }
}

/// Checks every field of every app of every environment of `root`.
#[cfg(test)]
pub fn check_all(root: &Path) -> Result<Checked, super::Error> {
    let envs = crate::env::load_environments(root)?;
    let mut c = Checked::default();
    for e in &envs {
        for a in &e.apps {
            let x = super::explain_in(root, &envs, &e.name, &a.name, &super::Selection::default())?;
            c.add(&format!("{}/{}", e.name, a.name), &x.resources);
        }
    }
    Ok(c)
}

/// Checks every kustomization directory of `dirs` (relative to `root`).
/// One that does not build is counted as not rendered.
pub fn check_kustomizations(root: &Path, dirs: &[PathBuf]) -> Checked {
    let mut c = Checked::default();
    for d in dirs {
        let name = d.display().to_string();
        match super::kustomize::explain(root, d) {
            Ok(rs) => {
                let rs: Vec<_> = rs.into_iter().map(|(r, _)| r).collect();
                c.add(&name, &rs);
            }
            Err(_) => c.not_rendered.push(name),
        }
    }
    c
}

/// Checks every chart directory of `charts` (relative to `root`), rendered
/// with its own defaults.
#[cfg(test)]
pub fn check_charts(root: &Path, charts: &[PathBuf]) -> Checked {
    let apps: Vec<ChartApp> = charts
        .iter()
        .map(|chart| ChartApp {
            chart: chart.clone(),
            release_name: "rel".into(),
            ..Default::default()
        })
        .collect();
    check_charts_with(root, &apps)
}

/// Checks every chart app of `apps` (paths relative to `root`). One that
/// does not render is counted as not rendered.
pub fn check_charts_with(root: &Path, apps: &[ChartApp]) -> Checked {
    let mut c = Checked::default();
    for app in apps {
        let name = app.chart.display().to_string();
        match super::chart::explain(root, app) {
            Ok(rs) => {
                let rs: Vec<_> = rs.into_iter().map(|(r, _)| r).collect();
                c.add(&name, &rs);
            }
            Err(_) => c.not_rendered.push(name),
        }
    }
    c
}

/// How a field's chain accounts for its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// A line of a file holds it.
    Located,
    /// A named step made it.
    Synthesised,
}

/// Whether `f`'s chain accounts for its value.
fn verdict(f: &FieldOrigin) -> Result<Verdict, String> {
    if f.chain.is_empty() {
        return Err("no chain".into());
    }
    accounts(&f.chain, &f.value)
}

/// Whether `chain` (last step first) accounts for `value`.
fn accounts(chain: &[Step], value: &str) -> Result<Verdict, String> {
    let Some(last) = chain.first() else {
        return Err(format!("no step left for `{value}`"));
    };
    let rest = chain.get(1..).unwrap_or_default();
    if last.at.as_ref().is_some_and(|p| holds(p, value)) {
        return Ok(Verdict::Located);
    }
    let line = |p: &Option<super::Place>| p.as_ref().map(|p| p.text.clone()).unwrap_or_default();
    let first_line = value.lines().next().unwrap_or_default();
    match last.by.as_str() {
        // A file read as is, and the builtin transformers that copy a
        // value written in the kustomization: the line must hold it.
        "resource"
        | "ReplicaCountTransformer"
        | "LabelTransformer"
        | "AnnotationsTransformer"
        | "NamespaceTransformer"
        | "values" => {
            if last.config.as_ref().is_some_and(|p| holds(p, value)) {
                return Ok(Verdict::Located);
            }
            Err(format!(
                "{}: its line `{}` does not hold `{first_line}`",
                last.by,
                line(&last.at)
            ))
        }
        // A patch: the patch's line holds what it wrote; a value it made
        // without writing it (JSON 6902 `copy` from a missing key: null)
        // has no line and is named by the patch.
        // A replacement: its source field's line holds what it copied; a
        // source no file wrote (a generated name, a namespace set) has none.
        "PatchTransformer"
        | "PatchStrategicMergeTransformer"
        | "PatchJson6902Transformer"
        | "ReplacementTransformer" => match &last.at {
            None => Ok(Verdict::Synthesised),
            Some(p) => Err(format!(
                "{}: its line `{}` does not hold `{first_line}`",
                last.by, p.text
            )),
        },
        // `images:`: the entry's line holds the part it set (its digest,
        // tag or name), the rest is the image before.
        "ImageTagTransformer" => {
            let set = last.at.as_ref().and_then(|p| line_value(&p.text));
            match set {
                Some(v) if !v.is_empty() && value.contains(v.as_str()) => Ok(Verdict::Located),
                _ => Err(format!(
                    "ImageTagTransformer: its line `{}` sets no part of `{value}`",
                    line(&last.at)
                )),
            }
        }
        // namePrefix/nameSuffix: the configured text, then the name before.
        "PrefixTransformer" | "SuffixTransformer" => {
            let affix =
                config_value(last).ok_or_else(|| format!("{}: no configuration", last.by))?;
            let before = match last.by.as_str() {
                "PrefixTransformer" => value.strip_prefix(affix.as_str()),
                _ => value.strip_suffix(affix.as_str()),
            };
            match before {
                Some(b) if !rest.is_empty() => accounts(rest, b),
                Some(_) => Ok(Verdict::Synthesised),
                None => Err(format!("{}: `{value}` lacks `{affix}`", last.by)),
            }
        }
        // addHashToNames: `-` and ten characters after the generated name.
        "generator hash suffix" => match value.rsplit_once('-') {
            Some((b, h)) if h.chars().count() == 10 && !rest.is_empty() => accounts(rest, b),
            _ => Err(format!("generator hash suffix: `{value}` has none")),
        },
        // A template action: its line holds the value, or the values it
        // read (the steps after it) each hold theirs at their lines and
        // the value is made of them; an action that read none (a helper's
        // output, a builtin object) names its line.
        "template" => {
            let values: Vec<&Step> = rest.iter().filter(|s| s.by == "values").collect();
            if values.is_empty() {
                return match last.at {
                    Some(_) => Ok(Verdict::Synthesised),
                    None => Err("template: no line".into()),
                };
            }
            let mut used = false;
            for v in &values {
                if !values_hold(v) {
                    return Err(format!(
                        "values {}: its line `{}` does not hold `{}`",
                        v.detail.as_deref().unwrap_or_default(),
                        line(&v.at),
                        v.value
                    ));
                }
                used |= !v.value.is_empty() && value.contains(v.value.as_str());
            }
            match used {
                true => Ok(Verdict::Located),
                false => Ok(Verdict::Synthesised),
            }
        }
        // Made by a named step with no line of its own: a generator, a
        // name reference, the build's own labels and annotations, a
        // template's literal text, vars, plugins.
        by if !by.is_empty() => Ok(Verdict::Synthesised),
        _ => Err("unnamed step".into()),
    }
}

/// Whether place `p`'s line holds `value` as written there: the value's
/// first line (a block scalar is placed at its `|`/`>` header, as go-yaml's
/// line says), or, for a value in an inline patch, the patch.
fn holds(p: &super::Place, value: &str) -> bool {
    let first_line = value.lines().next().unwrap_or_default().trim();
    let block = || {
        let header = p.text.rsplit(' ').next().unwrap_or_default();
        header.starts_with('|') || header.starts_with('>')
    };
    // A double-quoted scalar holds its escapes (`"a\tb"`).
    let escaped = || {
        let mut e = String::new();
        crate::yaml::write_json_string(value, false, &mut e);
        let e = e.strip_prefix('"').unwrap_or(&e);
        p.text.contains(e.strip_suffix('"').unwrap_or(e))
    };
    // A quoted scalar folds YAML 1.1's other line breaks into spaces.
    let folded = || {
        let t: String = p
            .text
            .chars()
            .map(|c| match c {
                '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
                c => c,
            })
            .collect();
        t.contains(first_line)
    };
    p.text.contains(first_line)
        || folded()
        || p.embedded_line.is_some()
        || (value.contains('\n') && block())
        || escaped()
}

/// Whether a `values` step's line holds what it supplied: its value, or,
/// for a mapping or list read whole (`<mapping>`), the key naming it.
fn values_hold(s: &Step) -> bool {
    let Some(at) = &s.at else { return true };
    let whole = s.value.starts_with('<') && s.value.ends_with('>');
    match whole {
        false => holds(at, &s.value),
        true => {
            let path = s.detail.as_deref().unwrap_or_default();
            let path = path.split(' ').next().unwrap_or_default();
            let key = path.rsplit('.').next().unwrap_or_default();
            !key.is_empty() && at.text.contains(key)
        }
    }
}

/// The value a step's configuration line sets (`namePrefix: prod-`).
fn config_value(s: &Step) -> Option<String> {
    line_value(&s.config.as_ref()?.text)
}

/// The value of a `key: value` line, unquoted.
fn line_value(text: &str) -> Option<String> {
    let (_, v) = text.split_once(':')?;
    let v = v.trim();
    Some(v.trim_matches(|c| c == '"' || c == '\'').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// The directories of `testdata/<suite>/*/<leaf>`, relative to the repo.
    fn cases(suite: &str, leaf: &str) -> Vec<PathBuf> {
        let dir = repo().join("testdata").join(suite);
        let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| {
                        Path::new("testdata")
                            .join(suite)
                            .join(e.file_name())
                            .join(leaf)
                    })
                    .filter(|p| repo().join(p).is_dir())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    #[allow(clippy::disallowed_macros)] // the count is the test's report
    fn report(corpus: &str, c: &Checked) {
        eprintln!("explain check {corpus}: {}", c.summary());
        assert!(c.failures.is_empty(), "{corpus}: {:#?}", c.failures);
    }

    #[test]
    fn every_demo_field_is_explained() {
        let c = check_all(&repo()).unwrap_or_else(|e| panic!("{e}"));
        assert!(c.fields > 0);
        report("demo", &c);
    }

    #[test]
    fn every_golden_kustomize_field_is_explained() {
        let mut dirs = cases("kustomize", "input");
        dirs.extend(cases("helmcharts", "input"));
        let c = check_kustomizations(&repo(), &dirs);
        assert!(c.fields > 0);
        report("goldens (kustomize, helmcharts)", &c);
    }

    #[test]
    fn every_golden_chart_field_is_explained() {
        let c = check_charts(&repo(), &cases("helm", "chart"));
        assert!(c.fields > 0);
        report("goldens (helm)", &c);
    }

    #[test]
    fn an_unlocated_value_fails_the_check() {
        let place = |text: &str| super::super::Place {
            file: "k.yaml".into(),
            line: 1,
            text: text.into(),
            embedded_line: None,
        };
        let step = |by: &str, at: Option<super::super::Place>| Step {
            by: by.into(),
            at,
            ..Default::default()
        };
        let f = |value: &str, chain| FieldOrigin {
            path: "x".into(),
            value: value.into(),
            chain,
        };
        assert!(verdict(&f("3", vec![step("resource", Some(place("replicas: 2")))])).is_err());
        let prefixed = vec![
            Step {
                config: Some(place("namePrefix: prod-")),
                ..step("PrefixTransformer", None)
            },
            step("resource", Some(place("name: api"))),
        ];
        assert_eq!(
            verdict(&f("prod-api", prefixed.clone())),
            Ok(Verdict::Located)
        );
        assert!(verdict(&f("prod-web", prefixed)).is_err());
    }
}
