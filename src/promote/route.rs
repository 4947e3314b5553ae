//! `hydrate promote --plan [APP]`: per app, the path its newest version
//! takes through the promotion graph (dev → staging → prod-eu, prod-us),
//! the environments that carry it already, and what holds each step that
//! has not happened: a gate, a policy, the step before it, or nothing (the
//! next `hydrate promote` takes it). Each step is planned as `hydrate
//! promote --dry-run FROM TO` plans it, so the two never disagree. It
//! reads; it never edits a file or a ref.

use std::path::Path;

use super::board::{self, Board};
use super::ops::{self, PromoteOptions};
use super::plan::Refusal;
use super::Error;
use crate::env::{self, Environment};

/// One app's route.
#[derive(Clone, Debug)]
pub struct Route {
    /// The app.
    pub app: String,
    /// Its newest version: what the first environment of the graph that has
    /// it runs.
    pub newest: String,
    /// The environments with the app, by depth in the graph: `[[dev],
    /// [staging], [prod-eu, prod-us]]`.
    pub layers: Vec<Vec<String>>,
    /// Each environment with the app: its version, since when, whether it
    /// is the newest.
    pub stops: Vec<Stop>,
    /// Each `promotesTo` link between environments with the app.
    pub steps: Vec<Step>,
}

/// The app in one environment.
#[derive(Clone, Debug)]
pub struct Stop {
    /// The environment.
    pub env: String,
    /// Its version.
    pub version: String,
    /// When the change that set it reached the branch.
    pub since: Option<i64>,
    /// Whether it carries the newest version.
    pub newest: bool,
}

/// One link of the route.
#[derive(Clone, Debug)]
pub struct Step {
    /// FROM.
    pub from: String,
    /// TO.
    pub to: String,
    /// What holds it.
    pub state: State,
}

/// What holds a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// TO carries the newest version.
    Done,
    /// FROM does not carry it yet.
    Waits,
    /// Nothing: the next promotion takes it.
    Ready,
    /// Gates and policies, each `(kind, why)`: kind `gate` or `policy`.
    Held(Vec<(&'static str, String)>),
}

impl State {
    fn word(&self) -> &'static str {
        match self {
            State::Done => "done",
            State::Waits => "waits",
            State::Ready => "ready",
            State::Held(_) => "held",
        }
    }

    fn text(&self, from: &str) -> String {
        match self {
            State::Done => "done".into(),
            State::Waits => format!("waits for {from}"),
            State::Ready => "ready: nothing holds it".into(),
            State::Held(why) => format!(
                "held by {}",
                why.iter()
                    .map(|(k, w)| format!("{k} {w}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }
    }
}

/// Every app's route (only `app`'s, when given), at `now`.
pub fn routes(root: &Path, app: Option<&str>, now: i64) -> Result<Vec<Route>, Error> {
    let envs = env::load_environments(root)?;
    if let Some(a) = app {
        if !envs.iter().flat_map(|e| &e.apps).any(|x| x.name == a) {
            return Err(Error::Usage(format!("no app `{a}` in any environment")));
        }
    }
    let b = board::board(root, &[], now)?;
    let identity = crate::git::Identity {
        name: "hydrate".into(),
        email: "hydrate@localhost".into(),
        time: now,
    };
    // Every link planned once, for all apps, as a dry run.
    let mut links = Vec::new();
    for from in &envs {
        for to in &from.promotes_to {
            let o = PromoteOptions {
                root: root.to_path_buf(),
                from: from.name.clone(),
                to: Some(to.clone()),
                apps: Vec::new(),
                force: false,
                all_or_nothing: false,
                dry_run: true,
                branch: None,
                describe: false,
                render: false,
                identity: identity.clone(),
                now,
                fresh: Vec::new(),
            };
            links.push((from.name.clone(), to.clone(), ops::promote(&o)?));
        }
    }
    let mut out = Vec::new();
    for row in b.apps.iter().filter(|r| app.is_none_or(|a| a == r.app)) {
        let version = |i: usize| {
            row.cells[i].as_ref().map(|c| {
                c.versions
                    .iter()
                    .map(board::Version::short)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        let Some(first) = (0..b.columns.len()).find(|&i| version(i).is_some()) else {
            continue;
        };
        let newest = version(first).unwrap_or_default();
        let has = |e: &str| column(&b, e).is_some_and(|i| row.cells[i].is_some());
        let stops: Vec<Stop> = (0..b.columns.len())
            .filter_map(|i| {
                let cell = row.cells[i].as_ref()?;
                let v = version(i)?;
                Some(Stop {
                    env: b.columns[i].name.clone(),
                    newest: v == newest,
                    version: v,
                    since: cell.since,
                })
            })
            .collect();
        let carries = |e: &str| stops.iter().any(|s| s.env == e && s.newest);
        let mut steps = Vec::new();
        for (from, to, r) in links.iter().filter(|(f, t, _)| has(f) && has(t)) {
            let moves = r.plan.items.iter().any(|i| i.app == row.app)
                || r.plan.copies.iter().any(|c| c.app == row.app);
            let why: Vec<(&'static str, String)> = r
                .plan
                .refusals
                .iter()
                .filter(|f| f.app() == row.app)
                .map(|f| match f {
                    Refusal::Gate { .. } => ("gate", f.reason()),
                    _ => ("policy", f.reason()),
                })
                .collect();
            let state = if carries(to) && !moves {
                State::Done
            } else if !carries(from) {
                State::Waits
            } else if !why.is_empty() {
                State::Held(why)
            } else {
                State::Ready
            };
            steps.push(Step {
                from: from.clone(),
                to: to.clone(),
                state,
            });
        }
        out.push(Route {
            app: row.app.clone(),
            newest,
            layers: layers(&envs, &|e| has(e)),
            stops,
            steps,
        });
    }
    Ok(out)
}

fn column(b: &Board, env: &str) -> Option<usize> {
    b.columns.iter().position(|c| c.name == env)
}

/// The environments `keep` accepts, by their longest distance from an
/// environment nothing promotes into.
pub(super) fn layers(envs: &[Environment], keep: &dyn Fn(&str) -> bool) -> Vec<Vec<String>> {
    let mut depth: Vec<usize> = vec![0; envs.len()];
    // The graph has no cycle (env::load_environments refuses them): the
    // depths settle within as many rounds as there are environments.
    for _ in 0..envs.len() {
        for (i, e) in envs.iter().enumerate() {
            for t in &e.promotes_to {
                if let Some(j) = envs.iter().position(|x| &x.name == t) {
                    depth[j] = depth[j].max(depth[i] + 1);
                }
            }
        }
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for d in 0..=depth.iter().copied().max().unwrap_or(0) {
        let layer: Vec<String> = envs
            .iter()
            .enumerate()
            .filter(|(i, e)| depth[*i] == d && keep(&e.name))
            .map(|(_, e)| e.name.clone())
            .collect();
        if !layer.is_empty() {
            out.push(layer);
        }
    }
    out
}

fn path(r: &Route) -> String {
    r.layers
        .iter()
        .map(|l| l.join(", "))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// The routes as text.
pub fn text(routes: &[Route], now: i64) -> String {
    let mut out = String::new();
    for r in routes {
        out.push_str(&format!("{} {}: {}\n", r.app, r.newest, path(r)));
        let width = r.stops.iter().map(|s| s.env.len()).max().unwrap_or(0);
        for s in &r.stops {
            let since = s
                .since
                .map_or(String::new(), |t| format!(" for {}", board::age(t, now)));
            let mark = if s.newest { "✓" } else { " " };
            out.push_str(&format!(
                "  {mark} {:width$}  {}{since}\n",
                s.env, s.version
            ));
        }
        for st in &r.steps {
            out.push_str(&format!(
                "  {} → {}: {}\n",
                st.from,
                st.to,
                st.state.text(&st.from)
            ));
        }
    }
    if routes.is_empty() {
        out.push_str("no apps\n");
    }
    out
}

/// The routes as markdown.
pub fn markdown(routes: &[Route], now: i64) -> String {
    let mut out = String::from("## Promotion plan\n");
    for r in routes {
        out.push_str(&format!(
            "\n### {} `{}`\n\n{}\n\n| environment | version | since | newest |\n|---|---|---|---|\n",
            r.app,
            r.newest,
            path(r)
        ));
        for s in &r.stops {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} |\n",
                s.env,
                s.version,
                s.since.map_or("-".into(), |t| board::age(t, now)),
                if s.newest { "yes" } else { "no" }
            ));
        }
        out.push_str("\n| step | state |\n|---|---|\n");
        for st in &r.steps {
            out.push_str(&format!(
                "| {} → {} | {} |\n",
                st.from,
                st.to,
                st.state.text(&st.from)
            ));
        }
    }
    out
}

/// The routes as JSON.
pub fn json(routes: &[Route]) -> serde_json::Value {
    let routes: Vec<serde_json::Value> = routes
        .iter()
        .map(|r| {
            serde_json::json!({
                "app": r.app,
                "newest": r.newest,
                "path": r.layers,
                "environments": r.stops.iter().map(|s| serde_json::json!({
                    "name": s.env, "version": s.version, "since": s.since, "newest": s.newest,
                })).collect::<Vec<_>>(),
                "steps": r.steps.iter().map(|st| serde_json::json!({
                    "from": st.from,
                    "to": st.to,
                    "state": st.state.word(),
                    "holds": match &st.state {
                        State::Held(why) => why.iter().map(|(k, w)| serde_json::json!({"kind": k, "why": w})).collect(),
                        _ => Vec::new(),
                    },
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "apps": routes })
}
