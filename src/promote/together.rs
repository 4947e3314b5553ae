//! `hydrate promote FROM --together`: every target of FROM in one commit.
//! Each target is planned as `hydrate promote FROM TO` plans it, all from
//! the same snapshot of HEAD and under the same transaction; the targets
//! that are not held go into one commit, which names each with its own
//! `Hydrate-Environment` trailer and its pins as `ENV/APP` (read back per
//! environment by `history`). Held targets are reported and left out.
//!
//! Waves still order the targets: a wave-2 target needs its wave-1
//! siblings to carry the version before the run starts, so a together
//! commit holds the lowest wave that is ready, and the next run takes the
//! next wave.

use super::apply::{self, Mode, Outcome, Request};
use super::copy::Copy;
use super::ops::{self, PromoteOptions, PromoteReport};
use super::plan::{self, Item, Refusal};
use super::snapshot::Scope;
use super::{message, Error};
use crate::env;
use crate::git::Repo;

/// What `promote --together` did.
#[derive(Debug)]
pub struct Together {
    /// FROM.
    pub from: String,
    /// The id of the promotion (of every target it promotes).
    pub id: String,
    /// Every target's plan, in wave order (outcome None: the commit is
    /// shared, see `outcome`).
    pub parts: Vec<PromoteReport>,
    /// The one commit (None: dry run or nothing to promote).
    pub outcome: Option<Outcome>,
    /// The branch created.
    pub branch: Option<String>,
    /// The commit message.
    pub message: String,
    /// The targets' output written with `--render`.
    pub rendered: Vec<crate::render::EnvReport>,
    /// What was done to finish or undo a hydrate run killed earlier.
    pub recovered: Vec<String>,
}

impl Together {
    /// The targets the commit promotes into.
    pub fn promoted(&self) -> impl Iterator<Item = &PromoteReport> {
        self.parts.iter().filter(|p| !p.plan.is_empty())
    }

    /// Whether a gate or policy holds anything back.
    pub fn holds_any(&self) -> bool {
        self.parts.iter().any(|p| p.plan.holds_any())
    }
}

/// `hydrate promote FROM --together`: the targets that are not held, in
/// one commit (or on one branch).
pub fn promote_together(o: &PromoteOptions) -> Result<Together, Error> {
    let repo = Repo::discover(&o.root)?;
    let op = format!(
        "promote {} --together {:?} {} {}",
        o.from, o.apps, o.force, o.all_or_nothing
    );
    let commits = !o.dry_run && o.branch.is_none();
    let scope = Scope::apps(&o.apps);
    let (tx, snap) = ops::start(&repo, &o.root, commits.then_some(op.as_str()), &scope)?;
    let sha = snap.commit().to_string();
    let envs = env::load_environments(snap.root())?;
    let mut fresh = o.fresh.clone();
    let mut parts = Vec::new();
    for t in ops::targets(snap.root(), &o.from)? {
        let mut one = o.clone();
        one.to = Some(t.clone());
        one.fresh.clone_from(&fresh);
        let r = ops::plan_promotion(&one, snap.root(), &sha)?;
        // Later waves see this target as not carrying the version yet.
        let apps = r.plan.items.iter().map(|i| &i.app);
        for app in apps.chain(r.plan.copies.iter().map(|c| &c.app)) {
            let key = (t.clone(), app.clone());
            if !fresh.contains(&key) {
                fresh.push(key);
            }
        }
        parts.push(r);
    }
    let going: Vec<&PromoteReport> = parts.iter().filter(|p| !p.plan.is_empty()).collect();
    let names: Vec<&str> = going.iter().map(|p| p.to.as_str()).collect();
    let items: Vec<Item> = going.iter().flat_map(|p| p.plan.items.clone()).collect();
    let copies: Vec<Copy> = going.iter().flat_map(|p| p.plan.copies.clone()).collect();
    let id = plan::id(&o.from, &names.join("+"), &items, &copies);
    // One subject for all: the targets' own template when they agree on
    // one, else the default.
    let templates: Vec<Option<&str>> = going
        .iter()
        .filter_map(|p| envs.iter().find(|e| e.name == p.to))
        .map(|e| e.promotion.commit_message.as_deref())
        .collect();
    let template = match templates.first() {
        Some(Some(t)) if templates.iter().all(|x| *x == Some(*t)) => t,
        _ => message::DEFAULT_TEMPLATE,
    };
    let to = names.join(", ");
    let ctx = |summary: &str| {
        minijinja::context! {
            from => &o.from, to => &to, id => &id, summary => summary,
            source => minijinja::context! { sha => &sha },
        }
    };
    let mut trailers = vec![
        ("Hydrate-Promoted-From", format!("{}@{sha}", o.from)),
        ("Hydrate-Promotion", id.clone()),
    ];
    for n in &names {
        trailers.push(("Hydrate-Environment", n.to_string()));
    }
    if o.force {
        for r in going.iter().flat_map(|p| &p.plan.refusals) {
            if let Refusal::Gate { gate, .. } = r {
                let t = ("Hydrate-Forced", gate.to_string());
                if !trailers.contains(&t) {
                    trailers.push(t);
                }
            }
        }
    }
    let shares: Vec<message::Part> = going
        .iter()
        .map(|p| message::Part {
            // Into one environment, the commit reads as any promotion.
            env: (going.len() > 1).then_some(p.to.as_str()),
            items: &p.plan.items,
            copies: &p.plan.copies,
        })
        .collect();
    let msg = message::render_together(template, ctx, &shares, &trailers)?;
    let mut out = Together {
        from: o.from.clone(),
        id: id.clone(),
        outcome: None,
        branch: None,
        message: msg,
        rendered: Vec::new(),
        recovered: ops::recovered(&tx),
        parts: Vec::new(),
    };
    let refusals: Vec<Refusal> = parts.iter().flat_map(|p| p.plan.refusals.clone()).collect();
    if !o.dry_run && !refusals.is_empty() && !o.force && o.all_or_nothing {
        return Err(Error::Refused(refusals));
    }
    if o.dry_run || going.is_empty() {
        out.parts = parts;
        return Ok(out);
    }
    let mode = match &o.branch {
        Some(name) => {
            let b = name
                .clone()
                .unwrap_or_else(|| format!("promote/{}-to-{}/{id}", o.from, names.join("+")));
            out.branch = Some(b.clone());
            Mode::Branch(b)
        }
        None => Mode::Commit,
    };
    let targets = going
        .iter()
        .map(|p| apply::Target {
            env: &p.to,
            items: &p.plan.items,
            copies: &p.plan.copies,
        })
        .collect();
    let mut clean = Vec::new();
    for f in going.iter().flat_map(|p| &p.sources) {
        if !clean.contains(f) {
            clean.push(f.clone());
        }
    }
    out.outcome = Some(apply::execute(Request {
        repo: &repo,
        snapshot: &snap,
        tx,
        targets,
        clean: &clean,
        message: out.message.clone(),
        mode,
        identity: o.identity.clone(),
        describe: o.describe,
    })?);
    if o.render && o.branch.is_none() {
        let opts = crate::render::Options {
            root: o.root.clone(),
            selection: env::Selection {
                envs: names.iter().map(|n| n.to_string()).collect(),
                ..Default::default()
            },
            identity: Some(o.identity.clone()),
            trailers: vec![("Hydrate-Promotion".into(), id.clone())],
            ..Default::default()
        };
        out.rendered = crate::render::run(&opts, &|_| {})?;
    }
    out.parts = parts;
    Ok(out)
}
