//! The pins board behind `hydrate pins`: one row per app, one column per
//! environment in promotion order, each cell the version the app runs
//! there, how long it has been there (from the commit trailers) and
//! whether the environment that promotes into it has something newer;
//! with the repository, the source commit, the generation time and the
//! last change into each environment. Printed as a text table, JSON,
//! markdown or one static HTML page with no external assets.
//!
//! It reads; it never edits a file or a ref.

mod cells;
mod html;
mod text;

use std::path::Path;

use super::history::{every_change, HistoryEntry, Kind};
use super::pin::{self, Pin};
use super::{gates, ops, plan, Error};
use crate::env::{self, Environment, PinDecl};

pub(crate) use cells::Version;

/// One pin across environments (the JSON form lists every pin).
#[derive(Clone, Debug)]
pub struct BoardRow {
    /// The app.
    pub app: String,
    /// The pin.
    pub pin: String,
    /// Its value per environment (None: not set or app absent).
    pub values: Vec<Option<String>>,
    /// Per environment: whether a promotion into it would change the pin.
    pub awaits: Vec<bool>,
}

/// The repository the board is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repository {
    /// Its name: the last component of `origin`'s URL, else the directory's.
    pub name: String,
    /// `origin`'s URL, when there is one.
    pub url: Option<String>,
}

/// A recorded change into an environment, read from its commit's trailers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// What made it.
    pub kind: Kind,
    /// The commit that made it.
    pub sha: String,
    /// When it reached the branch (the merge's time for a merged branch).
    pub time: i64,
    /// The environment it was promoted from (promotions only).
    pub from: Option<String>,
    /// The merge commit that brought it into the branch, when one did.
    pub merged_by: Option<String>,
}

impl Change {
    fn of(e: &HistoryEntry) -> Change {
        Change {
            kind: e.kind,
            sha: e.sha.clone(),
            time: e.reached_at,
            from: e.promoted_from().map(str::to_string),
            merged_by: (e.reached_by != e.sha).then(|| e.reached_by.clone()),
        }
    }
}

/// One environment's column.
#[derive(Clone, Debug)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// The environments that promote into it (`promotesTo`).
    pub from: Vec<String>,
    /// The newest recorded change of any kind.
    pub last_change: Option<Change>,
    /// The newest promotion.
    pub last_promotion: Option<Change>,
    /// The environments it promotes into (`promotesTo`), as listed.
    pub to: Vec<String>,
    /// Its `wave:`, among the targets of one source.
    pub wave: Option<u32>,
    /// Its gates and their state at the board's time: `soak 24h`,
    /// `freeze until Mon 08:00 CET`, `requires qa`, `after canary`, `wave 2`.
    pub gates: Vec<Gate>,
}

/// One gate of an environment's `promotion:` (or its wave).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gate {
    /// Its kind: `soak`, `freeze`, `requires`, `after` or `wave` (the
    /// `Hydrate-Forced` name).
    pub kind: &'static str,
    /// What it asks: `soak 24h`, `freeze Fri 16:00 – Mon 08:00 Europe/Berlin`.
    pub text: String,
    /// Whether it holds everything at the board's time (a closed freeze):
    /// until when (`Mon 08:00 CET`).
    pub closed: Option<String>,
    /// The apps it holds at the board's time, each `(app, why and when it
    /// opens)`: `(web, soak: 23 h left)`. Empty and not closed: open.
    pub holds: Vec<(String, String)>,
}

impl Gate {
    /// `open`, `held` (some apps) or `closed` (a freeze, everything).
    pub fn state(&self) -> &'static str {
        match (&self.closed, self.holds.is_empty()) {
            (Some(_), _) => "closed",
            (None, false) => "held",
            (None, true) => "open",
        }
    }
}

/// What the environment promoting into a cell's has for the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incoming {
    /// That environment.
    pub from: String,
    /// Its versions of the app.
    pub versions: Vec<Version>,
    /// Why a promotion would hold it back (a `block:` policy, a
    /// downgrade); None: `hydrate promote` would bring it.
    pub held: Option<String>,
}

/// One app in one environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The versions it runs: one per image or declared pin.
    pub versions: Vec<Version>,
    /// When the newest recorded change that set those versions reached
    /// the branch (None: no trailer records it).
    pub since: Option<i64>,
    /// What the environments promoting into this one have that differs.
    pub incoming: Vec<Incoming>,
}

/// One app across environments.
#[derive(Clone, Debug)]
pub struct AppRow {
    /// The app.
    pub app: String,
    /// Per column (None: the environment has no such app).
    pub cells: Vec<Option<Cell>>,
}

/// The board.
#[derive(Clone, Debug)]
pub struct Board {
    /// The repository (None outside a git repository with no directory name).
    pub repository: Option<Repository>,
    /// HEAD's commit, when there is one.
    pub commit: Option<String>,
    /// When the board was made, seconds since the epoch.
    pub generated: i64,
    /// The environments, in promotion order (or as asked for).
    pub columns: Vec<Column>,
    /// The shown environments by depth in the promotion graph: `[[dev],
    /// [staging], [canary, prod-eu, prod-us]]`.
    pub layers: Vec<Vec<String>>,
    /// The apps, by name.
    pub apps: Vec<AppRow>,
    /// Every pin, by app and pin.
    pub rows: Vec<BoardRow>,
}

/// Builds the board for `only` environments, in that order (all, in
/// promotion order, when empty); `now` is the generation time and the
/// clock ages are measured against.
pub fn board(root: &Path, only: &[String], now: i64) -> Result<Board, Error> {
    let all = env::load_environments(root)?;
    for o in only {
        if !all.iter().any(|e| &e.name == o) {
            return Err(Error::Usage(format!("no environment named `{o}`")));
        }
    }
    let shown = order(&all, only);
    let per_env = all_pins(root, &all)?;
    // No repository (or no commit yet): a board without history.
    let history = every_change(root).unwrap_or_default();
    let promotions = promotions(root, &all, &per_env, &history, now);
    let inputs = Inputs {
        history,
        grid: cells::Grid::new(root, &all, &per_env),
        promotions,
        all: &all,
        per_env: &per_env,
    };
    let mut names: Vec<&str> = shown
        .iter()
        .flat_map(|&i| all[i].apps.iter().map(|a| a.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let apps = names
        .into_iter()
        .map(|app| AppRow {
            app: app.to_string(),
            cells: shown.iter().map(|&i| inputs.cell(i, app)).collect(),
        })
        .collect();
    let columns = shown.iter().map(|&i| inputs.column(i, now)).collect();
    let (repository, commit) = repository(root);
    let is_shown = |name: &str| shown.iter().any(|&i| all[i].name == name);
    Ok(Board {
        repository,
        commit,
        generated: now,
        columns,
        layers: super::route::layers(&all, &is_shown),
        apps,
        rows: inputs.pin_rows(&shown),
    })
}

/// What a promotion along one `promotesTo` link would do, as `hydrate
/// promote` plans it: the items it would change and what the policies
/// hold back.
struct Promotion {
    from: usize,
    to: usize,
    items: Vec<plan::Item>,
    refusals: Vec<plan::Refusal>,
}

/// Every `promotesTo` link's promotion, with the verdicts of the target's
/// gates at `now`.
fn promotions(
    root: &Path,
    all: &[Environment],
    per_env: &[Vec<Pin>],
    history: &[HistoryEntry],
    now: i64,
) -> Vec<Promotion> {
    let repo = crate::git::Repo::discover(root).ok();
    let notes = |sha: &str| -> Vec<String> {
        let (Some(repo), Ok(id)) = (&repo, git2::Oid::from_str(sha)) else {
            return Vec::new();
        };
        match repo.note(gates::APPROVALS_REF, id) {
            Ok(Some(bytes)) => gates::approvals_in(&String::from_utf8_lossy(&bytes)),
            _ => Vec::new(),
        }
    };
    let mut out = Vec::new();
    let links = all.iter().enumerate().flat_map(|(from, e)| {
        e.promotes_to
            .iter()
            .filter_map(move |t| Some((from, all.iter().position(|x| &x.name == t)?)))
    });
    for (from, to) in links.filter(|(f, t)| f != t) {
        let target = ops::target_in(root, &all[to]);
        let mut p = plan::compute(&per_env[from], &per_env[to], &[], &target);
        plan::check_policies(&mut p, &all[to].promotion.block);
        let others: Vec<(&Environment, Vec<Pin>)> = gates::waits_for(all, &all[from], &all[to])
            .into_iter()
            .filter_map(|e| {
                let i = all.iter().position(|x| x.name == e.name)?;
                Some((e, per_env[i].clone()))
            })
            .collect();
        gates::check(
            &mut p,
            &gates::Inputs {
                from: &all[from],
                to: &all[to],
                from_pins: &per_env[from],
                history,
                notes: &notes,
                others: &others,
                fresh: &[],
                now,
            },
        );
        p.hold();
        out.push(Promotion {
            from,
            to,
            items: p.items,
            refusals: p.refusals,
        });
    }
    out
}

/// What the board is made from.
struct Inputs<'a> {
    all: &'a [Environment],
    per_env: &'a [Vec<Pin>],
    history: Vec<HistoryEntry>,
    grid: cells::Grid,
    promotions: Vec<Promotion>,
}

impl Inputs<'_> {
    /// The cell of `app` in environment `i`.
    fn cell(&self, i: usize, app: &str) -> Option<Cell> {
        let versions = self.grid.versions(i, app)?;
        let mut incoming = Vec::new();
        for p in self.promotions.iter().filter(|p| p.to == i) {
            let moves = p.items.iter().any(|it| it.app == app);
            let held = p.refusals.iter().find(|r| r.app() == app);
            if !moves && held.is_none() {
                continue;
            }
            incoming.push(Incoming {
                from: self.all[p.from].name.clone(),
                versions: self.grid.versions(p.from, app).unwrap_or_default(),
                held: if moves {
                    None
                } else {
                    held.map(plan::Refusal::reason)
                },
            });
        }
        Some(Cell {
            versions,
            since: self.since(i, app),
            incoming,
        })
    }

    /// When the app's pins in environment `i` got their current values:
    /// the newest recorded change, among each pin's latest, that set it to
    /// what it is now (a pin whose latest recorded change set something
    /// else was edited by hand since, and tells nothing).
    fn since(&self, i: usize, app: &str) -> Option<i64> {
        let env = &self.all[i].name;
        super::history::brought(&self.history, env, &self.per_env[i], app).map(|e| e.reached_at)
    }

    fn column(&self, i: usize, now: i64) -> Column {
        let name = &self.all[i].name;
        let mine = || self.history.iter().filter(|e| &e.env == name);
        Column {
            name: name.clone(),
            from: self
                .promotions
                .iter()
                .filter(|p| p.to == i)
                .map(|p| self.all[p.from].name.clone())
                .collect(),
            last_change: mine().next().map(Change::of),
            last_promotion: mine().find(|e| e.kind == Kind::Promotion).map(Change::of),
            to: self.all[i].promotes_to.clone(),
            wave: self.all[i].wave,
            gates: self.gates(i, now),
        }
    }

    /// Environment `i`'s gates, each with the apps it holds on the
    /// `promotesTo` links into `i` at `now`.
    fn gates(&self, i: usize, now: i64) -> Vec<Gate> {
        let mut gates = gates_of(&self.all[i], now);
        for p in self.promotions.iter().filter(|p| p.to == i) {
            for r in &p.refusals {
                let plan::Refusal::Gate { app, gate, why } = r else {
                    continue;
                };
                // `requires: qa …` belongs to `requires qa`, `after:
                // canary …` to `after canary`; the other kinds come once.
                let mine = gates.iter_mut().find(|g| {
                    g.kind == *gate
                        && match g.text.split_once(' ') {
                            Some((k, name)) if k == "requires" || k == "after" => {
                                why.starts_with(&format!("{k}: {name} "))
                            }
                            _ => true,
                        }
                });
                if let Some(g) = mine {
                    let held = (app.clone(), why.clone());
                    if g.closed.is_none() && !g.holds.contains(&held) {
                        g.holds.push(held);
                    }
                }
            }
        }
        gates
    }

    /// Every pin of the shown environments, by app and pin, with what a
    /// promotion into each would change.
    fn pin_rows(&self, shown: &[usize]) -> Vec<BoardRow> {
        let mut keys: Vec<(&str, &str)> = shown
            .iter()
            .flat_map(|&i| {
                self.per_env[i]
                    .iter()
                    .map(|p| (p.app.as_str(), p.name.as_str()))
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let value = |i: usize, app: &str, pin: &str| {
            self.per_env[i]
                .iter()
                .find(|p| p.app == app && p.name == pin)
                .and_then(|p| p.value.clone())
        };
        let awaits = |i: usize, app: &str, pin: &str| {
            self.promotions
                .iter()
                .filter(|p| p.to == i)
                .any(|p| p.items.iter().any(|it| it.app == app && it.pin == pin))
        };
        keys.into_iter()
            .map(|(app, pin)| BoardRow {
                app: app.to_string(),
                pin: pin.to_string(),
                values: shown.iter().map(|&i| value(i, app, pin)).collect(),
                awaits: shown.iter().map(|&i| awaits(i, app, pin)).collect(),
            })
            .collect()
    }
}

/// The environments to show, as indices into `all`: `only` in its order,
/// else every one in promotion order. Promotion order follows
/// `promotesTo`: an environment comes after every one that promotes into
/// it, and right after the one it is promoted from when it can (so each
/// chain reads left to right); ties and cycles keep file order.
fn order(all: &[Environment], only: &[String]) -> Vec<usize> {
    if !only.is_empty() {
        let mut out: Vec<usize> = Vec::new();
        for o in only {
            if let Some(i) = all.iter().position(|e| &e.name == o) {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        return out;
    }
    let targets = |i: usize| -> Vec<usize> {
        all[i]
            .promotes_to
            .iter()
            .filter_map(|to| all.iter().position(|e| &e.name == to))
            .filter(|&t| t != i)
            .collect()
    };
    let mut waiting: Vec<usize> = vec![0; all.len()];
    for i in 0..all.len() {
        for t in targets(i) {
            waiting[t] += 1;
        }
    }
    let mut out: Vec<usize> = Vec::new();
    let mut last: Option<usize> = None;
    while out.len() < all.len() {
        let free = |i: &usize| !out.contains(i) && waiting[*i] == 0;
        let next = last
            .and_then(|l| targets(l).into_iter().find(free))
            .or_else(|| (0..all.len()).find(free))
            // A cycle: break it in file order.
            .or_else(|| (0..all.len()).find(|i| !out.contains(i)));
        let Some(n) = next else { break };
        for t in targets(n) {
            waiting[t] = waiting[t].saturating_sub(1);
        }
        out.push(n);
        last = Some(n);
    }
    out
}

/// The gates of `e` and, for a freeze, whether it is closed at `now`.
fn gates_of(e: &Environment, now: i64) -> Vec<Gate> {
    let p = &e.promotion;
    let open = |kind: &'static str, text: String| Gate {
        kind,
        text,
        closed: None,
        holds: Vec::new(),
    };
    let mut out = Vec::new();
    if let Some(w) = e.wave {
        out.push(open("wave", format!("wave {w}")));
    }
    if let Some(s) = p.soak {
        out.push(open(
            "soak",
            format!("soak {}", gates::left(i64::try_from(s).unwrap_or(i64::MAX))),
        ));
    }
    for f in &p.freeze {
        out.push(Gate {
            closed: f.until(now).map(|t| f.describe(t)),
            ..open("freeze", format!("freeze {}", f.text))
        });
    }
    for r in &p.requires {
        out.push(open("requires", format!("requires {r}")));
    }
    for (a, _) in &p.after {
        out.push(open("after", format!("after {a}")));
    }
    out
}

/// Every environment's pins, each app's declared pins read in all of them.
fn all_pins(root: &Path, all: &[Environment]) -> Result<Vec<Vec<Pin>>, Error> {
    let decls = |app: &str| -> Vec<PinDecl> {
        let mut out: Vec<PinDecl> = Vec::new();
        for a in all.iter().flat_map(|e| &e.apps).filter(|a| a.name == app) {
            for d in &a.pins {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
        }
        out
    };
    all.iter().map(|e| pin::env_pins(root, e, &decls)).collect()
}

/// The repository's name and URL, and HEAD's commit.
fn repository(root: &Path) -> (Option<Repository>, Option<String>) {
    let dir_name = |p: &Path| {
        std::fs::canonicalize(p)
            .ok()?
            .file_name()?
            .to_str()
            .map(str::to_string)
    };
    let Ok(repo) = crate::git::Repo::discover(root) else {
        let name = dir_name(root).map(|name| Repository { name, url: None });
        return (name, None);
    };
    let url = repo.remote_url("origin").ok().flatten();
    let name = url
        .as_deref()
        .and_then(crate::git::remote::repository_name)
        .or_else(|| dir_name(&repo.workdir()?))
        .or_else(|| dir_name(root));
    let commit = repo.head_commit().ok().flatten().map(|c| c.sha);
    (name.map(|name| Repository { name, url }), commit)
}

/// How long ago `then` was, seen at `now`: `now`, `5 min`, `3 h`,
/// `1 day`, `12 days`, `4 months`, `2 years`.
pub fn age(then: i64, now: i64) -> String {
    let s = now.saturating_sub(then).max(0);
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit}")
        } else {
            format!("{n} {unit}s")
        }
    };
    match s {
        0..60 => "now".into(),
        60..3_600 => format!("{} min", s / 60),
        3_600..86_400 => format!("{} h", s / 3_600),
        86_400..5_184_000 => plural(s / 86_400, "day"),
        5_184_000..63_072_000 => plural(s / 2_592_000, "month"),
        _ => plural(s / 31_536_000, "year"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_people_say_them() {
        let day = 86_400;
        assert_eq!(age(100, 100), "now");
        assert_eq!(age(0, 59), "now");
        assert_eq!(age(0, 300), "5 min");
        assert_eq!(age(0, 3 * 3_600 + 5), "3 h");
        assert_eq!(age(0, day), "1 day");
        assert_eq!(age(0, 3 * day), "3 days");
        assert_eq!(age(0, 90 * day), "3 months");
        assert_eq!(age(0, 800 * day), "2 years");
        // A clock behind the commit says `now`, never a negative age.
        assert_eq!(age(100, 0), "now");
    }

    fn envs(spec: &[(&str, Option<&str>)]) -> Vec<Environment> {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let envs = dir.path().join("environments");
        std::fs::create_dir_all(&envs).unwrap_or_else(|e| panic!("{e}"));
        for (name, to) in spec {
            let to = to.map_or(String::new(), |t| format!("promotesTo: {t}\n"));
            let text = format!("name: {name}\n{to}apps: []\n");
            std::fs::write(envs.join(format!("{name}.yaml")), text)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        env::load_environments(dir.path()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn names(all: &[Environment], only: &[&str]) -> Vec<String> {
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        order(all, &only)
            .into_iter()
            .map(|i| all[i].name.clone())
            .collect()
    }

    #[test]
    fn environments_come_in_promotion_order() {
        let all = envs(&[
            ("dev", Some("staging")),
            ("production", None),
            ("staging", Some("production")),
        ]);
        assert_eq!(names(&all, &[]), ["dev", "staging", "production"]);
        assert_eq!(
            names(&all, &["dev", "staging", "production"]),
            ["dev", "staging", "production"]
        );
        assert_eq!(names(&all, &["production", "dev"]), ["production", "dev"]);
        let regions = envs(&[
            ("prod-eu", None),
            ("prod-us", None),
            ("qa-eu", Some("staging-eu")),
            ("staging-eu", Some("prod-eu")),
            ("staging-us", Some("prod-us")),
        ]);
        assert_eq!(
            names(&regions, &[]),
            ["qa-eu", "staging-eu", "prod-eu", "staging-us", "prod-us"]
        );
        let fan = envs(&[
            ("prod-eu", None),
            ("prod-us", None),
            ("staging", Some("[prod-eu, prod-us]")),
        ]);
        assert_eq!(names(&fan, &[]), ["staging", "prod-eu", "prod-us"]);
    }
}
