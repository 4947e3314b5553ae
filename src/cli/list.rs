//! `hydrate list` (`hydrate apps`): what the environment files resolve to,
//! discover globs expanded: environments, apps, sources and outputs, as a
//! table or JSON.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{CommandError, CommandResult, Outcome};
use super::out::{self, errln};
use crate::env::{self, Environment, Layout, Output, Source};

use super::render::Format;

#[derive(clap::Args)]
pub struct Args {
    /// The repository root (holds `environments/`).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Only these environments (repeatable).
    #[arg(long = "env")]
    envs: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    output: Format,
}

pub fn run(args: Args) -> CommandResult {
    let mut envs = env::load_environments(&args.root)?;
    if let Some(missing) = args
        .envs
        .iter()
        .find(|w| !envs.iter().any(|e| &e.name == *w))
    {
        return Err(CommandError::usage(format!(
            "no environment named `{missing}`"
        )));
    }
    if !args.envs.is_empty() {
        envs.retain(|e| args.envs.contains(&e.name));
    }
    print_config_warnings(&envs);
    let mut out = out::stdout();
    match args.output {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&to_json(&envs))?)?,
        Format::Text => print_table(&mut out, &envs)?,
    }
    Ok(Outcome::Done)
}

/// Each environment file's warnings (no apps, a glob that finds nothing) on
/// stderr.
pub(super) fn print_config_warnings(envs: &[Environment]) {
    for w in envs.iter().flat_map(|e| &e.warnings) {
        errln!("warning[{}]: {w}", w.kind.as_str());
    }
}

fn slash(p: &Path) -> String {
    let parts: Vec<String> = p.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    parts.join("/")
}

fn source_text(s: &Source) -> String {
    match s {
        Source::Kustomize(dir) => format!("kustomize {}", slash(dir)),
        Source::Helm(c) => {
            let mut t = format!("helm {}", slash(&c.chart));
            let values: Vec<String> = c.value_files.iter().map(|v| slash(v)).collect();
            if !values.is_empty() {
                t.push_str(&format!(" -f {}", values.join(",")));
            }
            t.push_str(&format!(" (release {}", c.release_name));
            if !c.namespace.is_empty() {
                t.push_str(&format!(", namespace {}", c.namespace));
            }
            t.push(')');
            t
        }
    }
}

/// Where an app's manifests go: `DIR/<app>/` or `branch:<name> <app>/`.
fn output_text(e: &Environment, app: &str) -> String {
    let within = match e.layout {
        Layout::Manifest => format!("{app}/manifest.yaml"),
        Layout::Resources => format!("{app}/"),
    };
    match &e.output {
        Output::Dir(d) => format!("{}/{within}", slash(d)),
        Output::Branch(b) => format!("branch:{b} {within}"),
    }
}

fn print_table(out: &mut impl Write, envs: &[Environment]) -> std::io::Result<()> {
    let mut rows = vec![[
        "ENV".to_string(),
        "APP".to_string(),
        "SOURCE".to_string(),
        "OUTPUT".to_string(),
    ]];
    for e in envs {
        if e.apps.is_empty() {
            rows.push([
                e.name.clone(),
                "-".into(),
                "(no apps)".into(),
                String::new(),
            ]);
        }
        for a in &e.apps {
            rows.push([
                e.name.clone(),
                a.name.clone(),
                source_text(&a.source),
                output_text(e, &a.name),
            ]);
        }
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2)];
    for r in &rows {
        let line = format!(
            "{:w0$}  {:w1$}  {:w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn to_json(envs: &[Environment]) -> serde_json::Value {
    let envs: Vec<serde_json::Value> = envs
        .iter()
        .map(|e| {
            let apps: Vec<serde_json::Value> = e
                .apps
                .iter()
                .map(|a| {
                    let source = match &a.source {
                        Source::Kustomize(d) => serde_json::json!({ "kustomize": slash(d) }),
                        Source::Helm(c) => serde_json::json!({ "helm": {
                            "chart": slash(&c.chart),
                            "releaseName": c.release_name,
                            "namespace": c.namespace,
                            "valueFiles": c.value_files.iter().map(|v| slash(v)).collect::<Vec<_>>(),
                        }}),
                    };
                    serde_json::json!({
                        "name": a.name,
                        "source": source,
                        "output": output_text(e, &a.name),
                    })
                })
                .collect();
            let output = match &e.output {
                Output::Dir(d) => serde_json::json!({ "dir": slash(d) }),
                Output::Branch(b) => serde_json::json!({ "branch": b }),
            };
            serde_json::json!({
                "name": e.name,
                "promotesTo": match e.promotes_to.as_slice() {
                    [] => serde_json::Value::Null,
                    [one] => serde_json::json!(one),
                    many => serde_json::json!(many),
                },
                "output": output,
                "apps": apps,
                "warnings": e.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "environments": envs })
}
