//! The promotion graph the environment files declare with `promotesTo`:
//! every name must be an environment, and following the links must never
//! come back (a release would promote forever). Also checks that the
//! environments a `promotion.after` gate names exist. It only validates;
//! what a promotion along a link does lives in `promote/`.

use super::{Environment, Error};

/// Refuses a `promotesTo` or `promotion.after` that names no environment,
/// and a `promotesTo` cycle, at the file and line of the link.
pub fn check(envs: &[Environment]) -> Result<(), Error> {
    let index = |name: &str| envs.iter().position(|e| e.name == name);
    for e in envs {
        for t in &e.promotes_to {
            if index(t).is_none() {
                return Err(unknown(e, e.promotes_to_line, "promotesTo", t, envs));
            }
            if t == &e.name {
                return Err(Error::Config {
                    path: e.file.clone(),
                    line: e.promotes_to_line,
                    message: format!("promotesTo: `{t}` promotes into itself"),
                });
            }
        }
        for (t, line) in &e.promotion.after {
            if index(t).is_none() {
                return Err(unknown(e, *line, "promotion.after", t, envs));
            }
        }
    }
    // Depth-first search; a link to an environment still on the stack
    // closes a cycle, reported at that link (the environment files are read
    // in name order, so the report is the same on every run).
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; envs.len()];
    let mut stack: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        envs: &[Environment],
        mark: &mut [Mark],
        stack: &mut Vec<usize>,
    ) -> Result<(), Error> {
        mark[i] = Mark::Open;
        stack.push(i);
        for t in &envs[i].promotes_to {
            let Some(j) = envs.iter().position(|e| &e.name == t) else {
                continue;
            };
            match mark[j] {
                Mark::Done => {}
                Mark::New => visit(j, envs, mark, stack)?,
                Mark::Open => {
                    let start = stack.iter().position(|&k| k == j).unwrap_or(0);
                    let mut path: Vec<&str> = stack[start..]
                        .iter()
                        .map(|&k| envs[k].name.as_str())
                        .collect();
                    path.push(&envs[j].name);
                    return Err(Error::Config {
                        path: envs[i].file.clone(),
                        line: envs[i].promotes_to_line,
                        message: format!("promotesTo makes a cycle: {}", path.join(" → ")),
                    });
                }
            }
        }
        stack.pop();
        mark[i] = Mark::Done;
        Ok(())
    }
    for i in 0..envs.len() {
        if mark[i] == Mark::New {
            visit(i, envs, &mut mark, &mut stack)?;
        }
    }
    Ok(())
}

fn unknown(e: &Environment, line: u32, key: &str, name: &str, envs: &[Environment]) -> Error {
    let known: Vec<&str> = envs.iter().map(|e| e.name.as_str()).collect();
    Error::Config {
        path: e.file.clone(),
        line,
        message: format!(
            "{key}: no environment named `{name}` (environments: {})",
            known.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    fn load(files: &[(&str, &str)]) -> Result<Vec<super::Environment>, super::Error> {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let envs = dir.path().join("environments");
        std::fs::create_dir_all(&envs).unwrap_or_else(|e| panic!("{e}"));
        for (name, body) in files {
            std::fs::write(
                envs.join(format!("{name}.yaml")),
                format!("name: {name}\n{body}apps: []\n"),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        super::super::load_environments(dir.path())
    }

    fn message(e: super::Error) -> String {
        let text = e.to_string();
        text.rsplit_once("environments/")
            .map_or(text.clone(), |(_, m)| m.to_string())
    }

    #[test]
    fn fan_out_loads() {
        let envs = load(&[
            ("staging", "promotesTo: [canary, prod-eu, prod-us]\n"),
            ("canary", "wave: 1\n"),
            ("prod-eu", "wave: 2\npromotion: {after: [canary]}\n"),
            ("prod-us", "wave: 2\n"),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(envs.len(), 4);
    }

    #[test]
    fn a_cycle_is_refused_at_the_link_that_closes_it() {
        let e = load(&[
            ("dev", "promotesTo: staging\n"),
            ("prod", "promotesTo: [dev]\n"),
            ("staging", "promotesTo: prod\n"),
        ])
        .unwrap_err();
        assert_eq!(
            message(e),
            "prod.yaml:2: promotesTo makes a cycle: dev → staging → prod → dev"
        );
        let e = load(&[("dev", "promotesTo: dev\n")]).unwrap_err();
        assert_eq!(
            message(e),
            "dev.yaml:2: promotesTo: `dev` promotes into itself"
        );
    }

    #[test]
    fn an_unknown_environment_is_refused_at_its_line() {
        let e = load(&[("dev", "promotesTo: [staging, prod]\n"), ("staging", "")]).unwrap_err();
        assert_eq!(
            message(e),
            "dev.yaml:2: promotesTo: no environment named `prod` (environments: dev, staging)"
        );
        let e = load(&[("dev", "promotion:\n  after:\n  - canary\n")]).unwrap_err();
        assert_eq!(
            message(e),
            "dev.yaml:4: promotion.after: no environment named `canary` (environments: dev)"
        );
    }
}
