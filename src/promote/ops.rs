//! The operations: promote FROM → TO, set-image, set-value and rollback.
//! Each computes a list of pin edits, checks policies where they apply,
//! builds the commit message and hands the edits to `apply`.

use std::path::{Path, PathBuf};

use super::apply::{self, Mode, Outcome, Request};
use super::assignment::Assignment;
use super::copy;
use super::image_spec::{Field, ImageSpec};
use super::pin::{self, Pin, Place};
use super::plan::{self, Item, Plan};
use super::snapshot::{Scope, Snapshot};
use super::traced::Tracer;
use super::{gates, history, message, Error};
use crate::env::{self, Environment, PinDecl, Source};
use crate::git::{Identity, Repo, Transaction};

/// What `hydrate promote` was asked.
#[derive(Clone, Debug)]
pub struct PromoteOptions {
    /// Repository root.
    pub root: PathBuf,
    /// The environment promoted from.
    pub from: String,
    /// The environment promoted into (default: FROM's `promotesTo`).
    pub to: Option<String>,
    /// Only these apps.
    pub apps: Vec<String>,
    /// Override the policies.
    pub force: bool,
    /// Refuse the whole promotion when a policy holds anything back
    /// (default: promote the rest and report what is held).
    pub all_or_nothing: bool,
    /// Print the plan, change nothing.
    pub dry_run: bool,
    /// Commit to a new branch (`Some(None)`: the default name).
    pub branch: Option<Option<String>>,
    /// Compute the rendered resource changes for a description.
    pub describe: bool,
    /// Also write TO's rendered output.
    pub render: bool,
    /// Commit author.
    pub identity: Identity,
    /// The clock the gates read, Unix seconds (injected: the library reads
    /// no clock).
    pub now: i64,
    /// (environment, app) pairs promoted earlier in this run, which do not
    /// count as carrying a version for `after:` gates and waves.
    pub fresh: Vec<(String, String)>,
}

/// What a promotion did.
#[derive(Debug)]
pub struct PromoteReport {
    /// FROM.
    pub from: String,
    /// TO.
    pub to: String,
    /// The plan's id.
    pub id: String,
    /// The plan (with policy verdicts).
    pub plan: Plan,
    /// What applying did (None: dry run or nothing to do).
    pub outcome: Option<Outcome>,
    /// The branch created.
    pub branch: Option<String>,
    /// The commit message used.
    pub message: String,
    /// TO's output written with `--render`.
    pub rendered: Vec<crate::render::EnvReport>,
    /// FROM's files the promoted values are read from (relative to the root).
    pub sources: Vec<PathBuf>,
    /// What a reviewer should know that the plan does not show: apps with
    /// no pins, and where their version is set.
    pub notes: Vec<String>,
    /// What was done to finish or undo a hydrate run killed earlier.
    pub recovered: Vec<String>,
}

/// For each app of TO (of `apps`, when given) that FROM also has and that
/// has no pin in TO: a note saying so and where its version is set.
fn unpinned_notes(
    tracer: &Tracer,
    from: &Environment,
    to: &Environment,
    to_pins: &[Pin],
    apps: &[String],
    in_plan: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    let in_from: std::collections::HashSet<&str> =
        from.apps.iter().map(|a| a.name.as_str()).collect();
    for app in &to.apps {
        let wanted = apps.is_empty() || apps.contains(&app.name);
        let in_from = in_from.contains(app.name.as_str());
        let pinned = in_plan(&app.name)
            || to_pins
                .iter()
                .any(|p| p.app == app.name && p.place.is_editable());
        if !wanted || !in_from || pinned || !app.promotion.copy.is_empty() {
            continue;
        }
        let set = match tracer.app(&to.name, &app.name) {
            Ok(Some(t)) => t
                .images
                .iter()
                .filter_map(|f| f.set_at.as_ref())
                .map(|a| a.display())
                .fold(Vec::<String>::new(), |mut v, a| {
                    if !v.contains(&a) {
                        v.push(a);
                    }
                    v
                }),
            _ => Vec::new(),
        };
        let note = match (&app.source, set.is_empty()) {
            (Source::Helm(_), _) => format!(
                "no pins for {}: a chart app's pins are declared (`pins: [image.tag]`)",
                app.name
            ),
            (Source::Kustomize(_), true) => format!(
                "no pins for {}: its render has no container image kustomize traced",
                app.name
            ),
            (Source::Kustomize(_), false) => format!(
                "no pins for {}: its image is set by {}, which {} shares with other environments; \
                 set it in {}'s own files (a patch, an images: entry) or add promotion.copy",
                app.name,
                set.join(", "),
                to.name,
                to.name
            ),
        };
        notes.push(note);
    }
    notes
}

fn find<'a>(envs: &'a [Environment], name: &str) -> Result<&'a Environment, Error> {
    envs.iter()
        .find(|e| e.name == name)
        .ok_or_else(|| Error::Usage(format!("no environment named `{name}`")))
}

/// Declared pins of `app` in any of `envs` (so both sides read the same paths).
pub(super) fn decls(envs: &[&Environment], app: &str) -> Vec<PinDecl> {
    let mut out: Vec<PinDecl> = Vec::new();
    for e in envs {
        for a in e.apps.iter().filter(|a| a.name == app) {
            for d in &a.pins {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
        }
    }
    out
}

/// Where TO would take a pin it lacks: a missing `images:` entry or field.
pub(super) fn target_in<'a>(
    root: &'a Path,
    to: &'a Environment,
) -> impl Fn(&Pin) -> Option<Pin> + 'a {
    move |p: &Pin| {
        let app = to.apps.iter().find(|a| a.name == p.app)?;
        match &p.place {
            Place::Image { .. } => pin::missing_image_pin(root, app, &p.name),
            _ => None,
        }
    }
}

/// The transaction (when this run commits on the current branch) and the
/// snapshot of HEAD that every read of a source-editing command uses,
/// holding what `scope` names.
pub(super) fn start<'r>(
    repo: &'r Repo,
    root: &Path,
    operation: Option<&str>,
    scope: &Scope,
) -> Result<(Option<Transaction<'r>>, Snapshot), Error> {
    let tx = match operation {
        Some(op) => Some(repo.begin(op)?),
        None => None,
    };
    let head = match &tx {
        Some(t) => t.head(),
        None => repo.head_id()?,
    }
    .ok_or_else(|| {
        Error::Usage("HEAD has no commit yet: hydrate reads the committed sources".into())
    })?;
    let snap = Snapshot::of(repo, root, head, scope)?;
    Ok((tx, snap))
}

pub(super) fn recovered(tx: &Option<Transaction>) -> Vec<String> {
    tx.as_ref()
        .map(|t| t.recovered().to_vec())
        .unwrap_or_default()
}

/// Plans a promotion on the sources under `root` (HEAD's, exported) at
/// commit `sha`: the pins that differ, the policies' verdicts, the id and
/// the commit message.
pub(super) fn plan_promotion(
    o: &PromoteOptions,
    root: &Path,
    sha: &str,
) -> Result<PromoteReport, Error> {
    let envs = env::load_environments(root)?;
    let from = find(&envs, &o.from)?;
    let to_name = match (&o.to, from.promotes_to.as_slice()) {
        (Some(t), _) => t.clone(),
        (None, [one]) => one.clone(),
        (None, []) => {
            return Err(Error::Usage(format!(
                "`{}` has no promotesTo; name the target environment",
                from.name
            )))
        }
        (None, many) => {
            return Err(Error::Usage(format!(
                "`{}` promotes to {}; name one",
                from.name,
                many.join(", ")
            )))
        }
    };
    let to = find(&envs, &to_name)?;
    for a in &o.apps {
        if !from.apps.iter().any(|x| &x.name == a) {
            return Err(Error::Usage(format!("no app `{a}` in `{}`", from.name)));
        }
    }
    let both = [from, to];
    let extra = |app: &str| decls(&both, app);
    let tracer = Tracer::new(root)?;
    // Every decision below is per app: with --app, only those are traced.
    let from_pins = pin::env_pins_traced(&tracer, from, &extra, &o.apps)?;
    let to_pins = pin::env_pins_traced(&tracer, to, &extra, &o.apps)?;
    let mut plan = plan::compute(&from_pins, &to_pins, &o.apps, &target_in(root, to));
    for it in plan.items.iter_mut().filter(|it| it.old.is_none()) {
        it.runs_now = pin::runs_now(&tracer, to, &it.target);
    }
    for to_app in to
        .apps
        .iter()
        .filter(|a| o.apps.is_empty() || o.apps.contains(&a.name))
    {
        let Some(from_app) = from.apps.iter().find(|a| a.name == to_app.name) else {
            continue;
        };
        let (copies, missing) = copy::find(root, from_app, to_app)?;
        plan.copies.extend(copies);
        plan.not_copied.extend(missing);
    }
    plan::check_policies(&mut plan, &to.promotion.block);
    check_gates(o, &mut plan, &envs, (from, to), &from_pins, &tracer)?;
    if !o.force && !o.all_or_nothing {
        plan.hold();
    }
    let in_plan = |app: &str| {
        let items = plan.items.iter().chain(&plan.held);
        let copies = plan.copies.iter().chain(&plan.held_copies);
        items
            .map(|i| &i.app)
            .chain(copies.map(|c| &c.app))
            .any(|a| a == app)
    };
    let notes = unpinned_notes(&tracer, from, to, &to_pins, &o.apps, &in_plan);
    let id = plan::id(&from.name, &to.name, &plan.items, &plan.copies);
    let mut sources: Vec<PathBuf> = Vec::new();
    for it in &plan.items {
        let f = from_pins
            .iter()
            .find(|p| p.app == it.app && p.name == it.pin);
        if let Some(file) = f.map(|p| p.place.file().to_path_buf()) {
            if !sources.contains(&file) {
                sources.push(file);
            }
        }
    }
    for c in &plan.copies {
        if !sources.contains(&c.from) {
            sources.push(c.from.clone());
        }
    }
    let template = to
        .promotion
        .commit_message
        .as_deref()
        .unwrap_or(message::DEFAULT_TEMPLATE);
    let ctx = |summary: &str| {
        minijinja::context! {
            from => &from.name, to => &to.name, id => &id, summary => summary,
            source => minijinja::context! { sha => &sha },
        }
    };
    let mut trailers = vec![
        ("Hydrate-Promoted-From", format!("{}@{sha}", from.name)),
        ("Hydrate-Promotion", id.clone()),
        ("Hydrate-Environment", to.name.clone()),
    ];
    if o.force {
        for r in &plan.refusals {
            if let plan::Refusal::Gate { gate, .. } = r {
                let t = ("Hydrate-Forced", gate.to_string());
                if !trailers.contains(&t) {
                    trailers.push(t);
                }
            }
        }
    }
    let msg = message::render_with_copies(template, ctx, &plan.items, &plan.copies, &trailers)?;
    Ok(PromoteReport {
        from: from.name.clone(),
        to: to.name.clone(),
        id,
        plan,
        outcome: None,
        branch: None,
        message: msg,
        rendered: Vec::new(),
        sources,
        notes,
        recovered: Vec::new(),
    })
}

/// Adds the verdicts of TO's gates (soak, freeze, requires, after) and of
/// the wave order, read from the history reachable from HEAD.
fn check_gates(
    o: &PromoteOptions,
    plan: &mut Plan,
    envs: &[Environment],
    (from, to): (&Environment, &Environment),
    from_pins: &[Pin],
    tracer: &Tracer,
) -> Result<(), Error> {
    let waits = gates::waits_for(envs, from, to);
    let p = &to.promotion;
    if waits.is_empty() && p.soak.is_none() && p.freeze.is_empty() && p.requires.is_empty() {
        return Ok(());
    }
    let repo = Repo::discover(&o.root)?;
    let history = history::every_change(&o.root)?;
    let mut others = Vec::new();
    for e in waits {
        let extra = |app: &str| decls(&[from, e], app);
        others.push((e, pin::env_pins_traced(tracer, e, &extra, &o.apps)?));
    }
    let notes = |sha: &str| -> Vec<String> {
        let Ok(id) = git2::Oid::from_str(sha) else {
            return Vec::new();
        };
        match repo.note(gates::APPROVALS_REF, id) {
            Ok(Some(bytes)) => gates::approvals_in(&String::from_utf8_lossy(&bytes)),
            _ => Vec::new(),
        }
    };
    gates::check(
        plan,
        &gates::Inputs {
            from,
            to,
            from_pins,
            history: &history,
            notes: &notes,
            others: &others,
            fresh: &o.fresh,
            now: o.now,
        },
    );
    Ok(())
}

/// FROM's targets in the order a promotion visits them: by `wave` (none
/// first), then as `promotesTo` lists them.
pub fn targets(root: &Path, from: &str) -> Result<Vec<String>, Error> {
    let envs = env::load_environments(root)?;
    let from = find(&envs, from)?;
    let mut out: Vec<(u32, usize, String)> = Vec::new();
    for (i, t) in from.promotes_to.iter().enumerate() {
        let wave = find(&envs, t)?.wave.unwrap_or(0);
        out.push((wave, i, t.clone()));
    }
    out.sort();
    Ok(out.into_iter().map(|(_, _, t)| t).collect())
}

/// One target's promotion, by the target's name.
pub type TargetResult = (String, Result<PromoteReport, Error>);

/// `hydrate promote FROM` where FROM promotes to several environments:
/// one promotion (one commit) per target, in wave order. Each target's
/// result stands on its own (a target everything is held from does not
/// stop the others); the gates of later targets see the apps promoted
/// earlier in the run as not carried yet.
pub fn promote_each(o: &PromoteOptions) -> Result<Vec<TargetResult>, Error> {
    let mut out = Vec::new();
    let mut fresh = o.fresh.clone();
    let several = targets(&o.root, &o.from)?.len() > 1;
    for t in targets(&o.root, &o.from)? {
        let mut one = o.clone();
        one.to = Some(t.clone());
        one.fresh.clone_from(&fresh);
        if let (true, Some(Some(name))) = (several, &o.branch) {
            one.branch = Some(Some(format!("{name}/{t}")));
        }
        let r = promote(&one);
        if let Ok(rep) = &r {
            let apps = rep.plan.items.iter().map(|i| &i.app);
            for app in apps.chain(rep.plan.copies.iter().map(|c| &c.app)) {
                let key = (t.clone(), app.clone());
                if !fresh.contains(&key) {
                    fresh.push(key);
                }
            }
        }
        let stop = matches!(&r, Err(e) if !matches!(e, Error::Held(_) | Error::Refused(_)));
        out.push((t, r));
        if stop {
            break;
        }
    }
    Ok(out)
}

/// `hydrate promote FROM [TO]`: FROM's pins as HEAD has them, written into
/// TO's files as HEAD has them, as one commit (or a branch).
pub fn promote(o: &PromoteOptions) -> Result<PromoteReport, Error> {
    let repo = Repo::discover(&o.root)?;
    let op = format!(
        "promote {} {:?} {:?} {} {}",
        o.from, o.to, o.apps, o.force, o.all_or_nothing
    );
    let commits = !o.dry_run && o.branch.is_none();
    // Every environment: the gates read the pins of those TO waits for.
    let scope = Scope::apps(&o.apps);
    let (tx, snap) = start(&repo, &o.root, commits.then_some(op.as_str()), &scope)?;
    let mut report = plan_promotion(o, snap.root(), &snap.commit().to_string())?;
    report.recovered = recovered(&tx);
    if o.dry_run {
        return Ok(report);
    }
    if !report.plan.refusals.is_empty() && !o.force && o.all_or_nothing {
        return Err(Error::Refused(report.plan.refusals.clone()));
    }
    if report.plan.is_empty() {
        if report.plan.holds_any() {
            return Err(Error::Held(report.plan.refusals.clone()));
        }
        return Ok(report);
    }
    let mode = match &o.branch {
        Some(name) => {
            let b = name.clone().unwrap_or_else(|| {
                format!("promote/{}-to-{}/{}", report.from, report.to, report.id)
            });
            report.branch = Some(b.clone());
            Mode::Branch(b)
        }
        None => Mode::Commit,
    };
    report.outcome = Some(apply::execute(Request {
        repo: &repo,
        snapshot: &snap,
        tx,
        targets: vec![apply::Target {
            env: &report.to,
            items: &report.plan.items,
            copies: &report.plan.copies,
        }],
        clean: &report.sources,
        message: report.message.clone(),
        mode,
        identity: o.identity.clone(),
        describe: o.describe,
    })?);
    if o.render && o.branch.is_none() {
        let opts = crate::render::Options {
            root: o.root.clone(),
            selection: env::Selection {
                envs: vec![report.to.clone()],
                ..Default::default()
            },
            identity: Some(o.identity.clone()),
            trailers: vec![("Hydrate-Promotion".into(), report.id.clone())],
            ..Default::default()
        };
        report.rendered = crate::render::run(&opts, &|_| {})?;
    }
    Ok(report)
}

/// What set-image / set-value / rollback did.
#[derive(Debug)]
pub struct SetReport {
    /// The pins changed.
    pub items: Vec<Item>,
    /// What applying did (None: nothing to change).
    pub outcome: Option<Outcome>,
    /// What was done to finish or undo a hydrate run killed earlier.
    pub recovered: Vec<String>,
}

fn image_items(
    root: &Path,
    e: &Environment,
    apps: &[String],
    spec: &ImageSpec,
) -> Result<Vec<Item>, Error> {
    let (mut found, mut matched) = (Vec::new(), 0);
    let selected: Vec<_> = e
        .apps
        .iter()
        .filter(|a| apps.is_empty() || apps.contains(&a.name))
        .collect();
    for app in &selected {
        let Source::Kustomize(dir) = &app.source else {
            continue;
        };
        let Some(file) = pin::kustomization_file(root, dir) else {
            continue;
        };
        let entry = image_entry(root, &file, &spec.name)?;
        let may_add = apps.len() == 1 && selected.len() == 1;
        if entry.is_none() && !may_add {
            continue;
        }
        found.extend(entry_changes(&app.name, &file, spec, entry.as_ref()));
        matched += 1;
    }
    if matched == 0 {
        return Err(Error::Usage(format!(
            "no app of `{}` has an images: entry named `{}`; name the app with --app to add one",
            e.name, spec.name
        )));
    }
    Ok(found)
}

/// The pin edits that make the `images:` entry (or a new one) what `spec`
/// says. kustomize setimage.go RunSetImage: the argument replaces the
/// entry, `*` keeps the entry's value (replaceNewName, replaceNewTag,
/// replaceDigest) or none, and a part not given is removed. One exception
/// keeps edits minimal: a newName equal to the entry's name is not added
/// to an entry without one (kustomize writes it; the render is the same).
/// Values are written before removals, so an entry is never emptied (and
/// dropped) on the way.
fn entry_changes(
    app: &str,
    file: &Path,
    spec: &ImageSpec,
    entry: Option<&crate::yaml::Node>,
) -> Vec<Item> {
    let (mut sets, mut removals) = (Vec::new(), Vec::new());
    let wanted = [
        ("newName", &spec.new_name),
        ("newTag", &spec.tag),
        ("digest", &spec.digest),
    ];
    for (field, want) in wanted {
        let old = entry
            .and_then(|e| e.get(field))
            .filter(|v| !v.is_null())
            .and_then(|v| v.as_scalar())
            .map(|s| s.text.clone());
        let new = match want {
            Field::Keep => continue,
            Field::Remove => None,
            Field::Set(v) if field == "newName" && *v == spec.name && old.is_none() => continue,
            Field::Set(v) => Some(v.clone()),
        };
        if old == new {
            continue;
        }
        let name = format!("{}:{field}", spec.name);
        let item = Item {
            app: app.to_string(),
            pin: name.clone(),
            old: old.clone(),
            new: new.clone(),
            target: Pin {
                app: app.to_string(),
                name,
                value: old,
                place: Place::Image {
                    file: file.to_path_buf(),
                    image: spec.name.clone(),
                    field: field.to_string(),
                },
            },
            runs_now: None,
        };
        match new {
            Some(_) => sets.push(item),
            None => removals.push(item),
        }
    }
    sets.extend(removals);
    sets
}

fn image_entry(root: &Path, file: &Path, name: &str) -> Result<Option<crate::yaml::Node>, Error> {
    let src = std::fs::read_to_string(root.join(file))
        .map_err(|e| Error::Pin(format!("{}: {e}", file.display())))?;
    let doc = crate::yaml::parse_one(&src, crate::yaml::Resolver::V3)
        .map_err(|e| Error::Pin(format!("{}: {e}", file.display())))?;
    Ok(doc
        .get("images")
        .and_then(|i| i.as_seq())
        .and_then(|s| {
            s.iter()
                .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(name))
        })
        .cloned())
}

/// A source edit of ENV under way: the repository, the transaction and
/// HEAD's sources.
struct Edit<'r> {
    repo: &'r Repo,
    tx: Option<Transaction<'r>>,
    snap: Snapshot,
}

impl<'r> Edit<'r> {
    fn start(
        repo: &'r Repo,
        root: &Path,
        operation: &str,
        scope: &Scope,
    ) -> Result<Edit<'r>, Error> {
        let (tx, snap) = start(repo, root, Some(operation), scope)?;
        Ok(Edit { repo, tx, snap })
    }

    fn finish(
        self,
        env: &str,
        items: Vec<Item>,
        message: String,
        no_commit: bool,
        identity: &Identity,
    ) -> Result<SetReport, Error> {
        self.finish_with_copies(env, items, &[], message, no_commit, identity)
    }

    fn finish_with_copies(
        self,
        env: &str,
        items: Vec<Item>,
        copies: &[copy::Copy],
        message: String,
        no_commit: bool,
        identity: &Identity,
    ) -> Result<SetReport, Error> {
        let recovered = recovered(&self.tx);
        if items.is_empty() && copies.is_empty() {
            return Ok(SetReport {
                items,
                outcome: None,
                recovered,
            });
        }
        let outcome = apply::execute(Request {
            repo: self.repo,
            snapshot: &self.snap,
            tx: self.tx,
            targets: vec![apply::Target {
                env,
                items: &items,
                copies,
            }],
            clean: &[],
            message,
            mode: if no_commit {
                Mode::NoCommit
            } else {
                Mode::Commit
            },
            identity: identity.clone(),
            describe: false,
        })?;
        Ok(SetReport {
            items,
            outcome: Some(outcome),
            recovered,
        })
    }
}

/// `hydrate set-image ENV [--app APP] NAME=NEWNAME[:TAG][@DIGEST]...`.
pub fn set_image(
    root: &Path,
    env_name: &str,
    apps: &[String],
    specs: &[ImageSpec],
    no_commit: bool,
    identity: &Identity,
) -> Result<SetReport, Error> {
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|t| t.name == s.name) {
            return Err(Error::Usage(format!(
                "`{}` is set twice (`{}`); give one argument per image",
                s.name, s.text
            )));
        }
    }
    let repo = Repo::discover(root)?;
    let op = format!("set-image {env_name} {apps:?} {specs:?} {no_commit}");
    // Only ENV: set-image reads `images:` entries and renders ENV's apps;
    // it traces no pins (which would read the other environments).
    let edit = Edit::start(&repo, root, &op, &Scope::env(env_name, apps))?;
    let view = edit.snap.root();
    let envs = env::load_environments(view)?;
    let e = find(&envs, env_name)?;
    if let Some(a) = apps.iter().find(|a| !e.apps.iter().any(|x| x.name == **a)) {
        return Err(Error::Usage(format!("no app `{a}` in `{env_name}`")));
    }
    let mut items = Vec::new();
    for s in specs {
        items.extend(image_items(view, e, apps, s)?);
    }
    let texts: Vec<&str> = specs.iter().map(|s| s.text.as_str()).collect();
    let msg = message::render(
        "set-image {{ env }}: {{ summary }}",
        |summary: &str| minijinja::context! { env => env_name, summary => summary },
        &items,
        &[
            ("Hydrate-Set-Image", texts.join(", ")),
            ("Hydrate-Environment", env_name.to_string()),
        ],
    )?;
    edit.finish(env_name, items, msg, no_commit, identity)
}

/// `hydrate set-value ENV APP PATH=VALUE`: a chart app's value pin.
pub fn set_value(
    root: &Path,
    env_name: &str,
    app: &str,
    assignment: &Assignment,
    no_commit: bool,
    identity: &Identity,
) -> Result<SetReport, Error> {
    let (path, value) = (assignment.path.as_str(), assignment.value.as_str());
    let repo = Repo::discover(root)?;
    let op = format!("set-value {env_name} {app} {path} {value} {no_commit}");
    // Every environment: a pin's place depends on the files the app's
    // other environments render too.
    let edit = Edit::start(&repo, root, &op, &Scope::apps(&[app.to_string()]))?;
    let view = edit.snap.root();
    let envs = env::load_environments(view)?;
    let e = find(&envs, env_name)?;
    let a = e
        .apps
        .iter()
        .find(|a| a.name == app)
        .ok_or_else(|| Error::Usage(format!("no app `{app}` in `{env_name}`")))?;
    if !matches!(a.source, Source::Helm(_)) {
        return Err(Error::Usage(format!(
            "`{app}` is not a chart app; use set-image"
        )));
    }
    let all = pin::app_pins(view, e, a, &[PinDecl::Value(path.to_string())])?;
    let mut items = Vec::new();
    if let Some(p) = all.into_iter().find(|p| p.name == path) {
        if p.value.as_deref() != Some(value) {
            items.push(Item {
                app: app.to_string(),
                pin: path.to_string(),
                old: p.value.clone(),
                new: Some(value.to_string()),
                target: p,
                runs_now: None,
            });
        }
    }
    let msg = message::render(
        "set-value {{ env }}: {{ summary }}",
        |summary: &str| minijinja::context! { env => env_name, summary => summary },
        &items,
        &[
            ("Hydrate-Set-Value", format!("{app} {path}={value}")),
            ("Hydrate-Environment", env_name.to_string()),
        ],
    )?;
    edit.finish(env_name, items, msg, no_commit, identity)
}

/// Where `hydrate rollback` goes back to.
#[derive(Clone, Debug)]
pub enum Rollback {
    /// ENV's pins as they were after this commit.
    To(String),
    /// As they were N recorded changes ago.
    Steps(usize),
}

/// `hydrate rollback ENV`: restores ENV's pin set (only the pins) as it
/// was at an earlier commit, as a new commit with `Hydrate-Rollback-Of`
/// (the newest change undone) and `Hydrate-Rollback-To` (the commit whose
/// pins are restored). Pins changed since are written back, pins added
/// since are removed, pins removed since are added back.
pub fn rollback(
    root: &Path,
    env_name: &str,
    target: &Rollback,
    identity: &Identity,
) -> Result<SetReport, Error> {
    let repo = Repo::discover(root)?;
    let op = format!("rollback {env_name} {target:?}");
    let edit = Edit::start(&repo, root, &op, &Scope::apps(&[]))?;
    if let Some(c) = edit.tx.as_ref().and_then(Transaction::finished_earlier) {
        // A killed run of this very rollback had committed; this run
        // finished it. Rolling back again would undo that rollback.
        return Ok(SetReport {
            items: Vec::new(),
            outcome: Some(Outcome {
                commit: Some(c.to_string()),
                ..Outcome::default()
            }),
            recovered: recovered(&edit.tx),
        });
    }
    let view = edit.snap.root();
    let envs = env::load_environments(view)?;
    let now = find(&envs, env_name)?;
    let entries = history::history(root, env_name)?;
    let (past_commit, undone) = match target {
        Rollback::To(rev) => {
            let id = repo.resolve(rev)?;
            let undone = entries.iter().find(|e| {
                repo.resolve(&e.sha)
                    .and_then(|c| repo.is_ancestor(id, c))
                    .is_ok_and(|newer| newer && e.sha != id.to_string())
            });
            (id, undone)
        }
        Rollback::Steps(0) => {
            return Err(Error::Usage("--steps must be 1 or more".into()));
        }
        Rollback::Steps(n) => {
            let last = entries.get(n - 1).ok_or_else(|| {
                Error::Usage(format!(
                    "`{env_name}` has {} recorded change(s); cannot go back {n}",
                    entries.len()
                ))
            })?;
            let before = last.before.as_deref().ok_or_else(|| {
                Error::Usage(format!(
                    "{} is the first commit; there is nothing before it to go back to",
                    last.sha
                ))
            })?;
            (repo.resolve(before)?, entries.first())
        }
    };
    let past_snap = Snapshot::of(&repo, root, past_commit, &Scope::apps(&[]))?;
    let past_envs = env::load_environments(past_snap.root())?;
    let past = past_envs
        .iter()
        .find(|e| e.name == env_name)
        .ok_or_else(|| {
            Error::Usage(format!(
                "`{env_name}` does not exist at {past_commit}: nothing to roll back to"
            ))
        })?;
    let both = [past, now];
    let extra = |app: &str| decls(&both, app);
    let old_pins = pin::env_pins_traced(&Tracer::new(past_snap.root())?, past, &extra, &[])?;
    let cur_pins = pin::env_pins_traced(&Tracer::new(view)?, now, &extra, &[])?;
    let past_apps: Vec<&str> = past.apps.iter().map(|a| a.name.as_str()).collect();
    let plan = plan::restore(&old_pins, &cur_pins, &past_apps, &target_in(view, now));
    let mut copies = Vec::new();
    for app in now
        .apps
        .iter()
        .filter(|a| past_apps.contains(&a.name.as_str()))
    {
        copies.extend(copy::restore(past_snap.root(), view, app)?);
    }
    let to = past_commit.to_string();
    let short: String = to.chars().take(12).collect();
    let mut trailers = Vec::new();
    if let Some(u) = undone {
        trailers.push(("Hydrate-Rollback-Of", u.sha.clone()));
    } else {
        trailers.push(("Hydrate-Rollback-Of", to.clone()));
    }
    trailers.push(("Hydrate-Rollback-To", to));
    trailers.push(("Hydrate-Environment", env_name.to_string()));
    let msg = message::render_with_copies(
        "rollback {{ env }} to {{ commit }}: {{ summary }}",
        |summary: &str| minijinja::context! { env => env_name, commit => &short, summary => summary },
        &plan.items,
        &copies,
        &trailers,
    )?;
    edit.finish_with_copies(env_name, plan.items, &copies, msg, false, identity)
}
