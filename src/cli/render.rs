//! `hydrate render`: render every app of every environment and write the
//! results, all or nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::env::{self, Output, Selection};
use crate::output::{write_file_atomic, Change};

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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let envs = env::load_environments(&args.root)?;
    let sel = Selection {
        envs: args.envs,
        apps: args.apps,
    };
    for wanted in &sel.envs {
        if !envs.iter().any(|e| &e.name == wanted) {
            anyhow::bail!(
                "no environment named `{wanted}` in {}",
                args.root.join("environments").display()
            );
        }
    }
    let jobs = env::plan(&args.root, &envs, &sel);
    let rendered = match env::render_all(&jobs) {
        Ok(r) => r,
        Err(errors) => {
            for e in &errors {
                eprintln!("Error: {e}");
            }
            eprintln!(
                "{} of {} renders failed; nothing was written",
                errors.len(),
                jobs.len()
            );
            return Ok(ExitCode::from(1));
        }
    };
    // Every render succeeded: now write, environment by environment.
    let mut summary: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for r in &rendered {
        for w in &r.warnings {
            eprintln!("{}/{}: {w}", r.env, r.app);
        }
        let Some(e) = envs.iter().find(|e| e.name == r.env) else {
            continue;
        };
        let Output::Dir(dir) = &e.output;
        let path = args.root.join(dir).join(&r.app).join("manifest.yaml");
        let change = write_file_atomic(&path, r.yaml.as_bytes())?;
        let s = summary.entry(&r.env).or_default();
        s.0 += 1;
        s.1 += r.resources;
        s.2 += r.yaml.len();
        if change != Change::Unchanged {
            s.3 += 1;
        }
    }
    for (env, (apps, resources, bytes, changed)) in summary {
        let state = if changed == 0 {
            "unchanged".to_string()
        } else {
            format!("{changed} changed")
        };
        println!("{env}: {apps} apps, {resources} resources, {bytes} bytes, {state}");
    }
    Ok(ExitCode::SUCCESS)
}
