//! Promotion as a graph: `promotesTo` lists, waves, `promote --plan`, and
//! the gates of `promotion:` (soak, freeze, requires, after) decided from
//! git history and `HYDRATE_NOW`, on a fixture built here: dev → staging →
//! [canary (wave 1), prod-eu, prod-us (wave 2)].

use std::fs;
use std::path::Path;

use crate::support::{git, hydrate};

/// 2026-12-04T18:00:00Z, a Friday.
const T0: i64 = 1_796_407_200;
const HOUR: i64 = 3_600;

/// The fixture; `prod_eu` is the rest of prod-eu's file (its gates).
pub(crate) fn fixture(prod_eu: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |p: &str, text: &str| {
        let p = root.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write(
        "apps/web/base/kustomization.yaml",
        "resources: [deployment.yaml]\n",
    );
    write(
        "apps/web/base/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: example/web:1.0.0\n",
    );
    let envs: [(&str, String); 5] = [
        ("dev", "promotesTo: staging\n".into()),
        ("staging", "promotesTo: [canary, prod-eu, prod-us]\n".into()),
        ("canary", "wave: 1\n".into()),
        ("prod-eu", format!("wave: 2\n{prod_eu}")),
        ("prod-us", "wave: 2\n".into()),
    ];
    for (env, extra) in envs {
        write(
            &format!("apps/web/envs/{env}/kustomization.yaml"),
            "resources: [../../base]\nimages:\n- name: example/web\n  newTag: 1.0.0\n",
        );
        write(
            &format!("environments/{env}.yaml"),
            &format!("name: {env}\n{extra}apps:\n- name: web\n  kustomize: apps/web/envs/{env}\n"),
        );
    }
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "The fixture"]);
    dir
}

/// `hydrate ARGS --root DIR` with commits at `time` and the clock at `now`.
pub(crate) fn run_at(dir: &Path, time: i64, now: i64, args: &[&str]) -> (i32, String) {
    let o = hydrate()
        .args(args)
        .arg("--root")
        .arg(dir)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", time.to_string())
        .env("HYDRATE_NOW", now.to_string())
        .output()
        .expect("hydrate runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

/// 1.1.0 set in dev at T0 and promoted into staging an hour later.
fn in_staging(dir: &Path) {
    let (code, out) = run_at(dir, T0, T0, &["set-image", "dev", "example/web:1.1.0"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run_at(dir, T0 + HOUR, T0 + HOUR, &["promote", "dev"]);
    assert_eq!(code, 0, "{out}");
}

fn subjects(dir: &Path) -> Vec<String> {
    git(dir, &["log", "--format=%s"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn one_promotion_makes_one_commit_per_target_in_wave_order() {
    let dir = fixture("");
    in_staging(dir.path());
    let t = T0 + 2 * HOUR;
    let (code, out) = run_at(dir.path(), t, t, &["promote", "staging"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("committed"), "{out}");
    assert!(
        out.contains("held: web (wave 2: canary does not carry web 1.1.0 yet; promoted in this run, the next run follows)"),
        "{out}"
    );
    assert_eq!(
        subjects(dir.path())[0],
        "promote staging → canary: web 1.1.0"
    );
    // The next run: canary carries it, both regions go, one commit each.
    let (code, out) = run_at(dir.path(), t + 60, t + 60, &["promote", "staging"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        subjects(dir.path())[..2],
        [
            "promote staging → prod-us: web 1.1.0",
            "promote staging → prod-eu: web 1.1.0"
        ]
    );
    // Nothing left: exit 0, nothing committed.
    let before = subjects(dir.path()).len();
    let (code, out) = run_at(dir.path(), t + 120, t + 120, &["promote", "staging"]);
    assert_eq!((code, subjects(dir.path()).len()), (0, before), "{out}");
}

#[test]
fn soak_holds_then_lets_through() {
    let dir = fixture("promotion:\n  soak: 24h\n");
    in_staging(dir.path());
    // canary first (wave 1), then the regions.
    let (code, out) = run_at(
        dir.path(),
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        &["promote", "staging", "canary"],
    );
    assert_eq!(code, 0, "{out}");
    let now = T0 + HOUR + 18 * HOUR + 48 * 60;
    let (code, out) = run_at(dir.path(), now, now, &["promote", "staging", "prod-eu"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("held: web (soak: 5 h 12 min left)"), "{out}");
    let now = T0 + 25 * HOUR;
    let (code, out) = run_at(dir.path(), now, now, &["promote", "staging", "prod-eu"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        subjects(dir.path())[0],
        "promote staging → prod-eu: web 1.1.0"
    );
}

#[test]
fn freeze_holds_then_lets_through_and_force_is_recorded() {
    let dir = fixture("promotion:\n  freeze: [\"Fri 16:00 – Mon 08:00 Europe/Berlin\"]\n");
    in_staging(dir.path());
    let (code, out) = run_at(
        dir.path(),
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        &["promote", "staging", "canary"],
    );
    assert_eq!(code, 0, "{out}");
    // Friday 19:00 in Berlin: frozen until Monday.
    let (code, out) = run_at(
        dir.path(),
        T0,
        T0 + 2 * HOUR,
        &["promote", "staging", "prod-eu"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("held: web (freeze until Mon 08:00 CET)"),
        "{out}"
    );
    // Monday 2026-12-07 08:00 CET = 07:00Z: open.
    let monday = T0 + 2 * 86_400 + 13 * HOUR;
    let (code, out) = run_at(
        dir.path(),
        monday,
        monday,
        &["promote", "staging", "prod-eu", "--dry-run"],
    );
    assert_eq!(code, 0, "{out}");
    // --force goes through the freeze and says so in the commit.
    let (code, out) = run_at(
        dir.path(),
        T0 + 3 * HOUR,
        T0 + 3 * HOUR,
        &["promote", "staging", "prod-eu", "--force"],
    );
    assert_eq!(code, 0, "{out}");
    let body = git(dir.path(), &["log", "-1", "--format=%B"]);
    assert!(body.contains("Hydrate-Forced: freeze"), "{body}");
}

#[test]
fn approval_holds_until_noted() {
    let dir = fixture("promotion:\n  requires: [qa]\n");
    in_staging(dir.path());
    let t = T0 + 2 * HOUR;
    let (code, out) = run_at(dir.path(), t, t, &["promote", "staging", "canary"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run_at(dir.path(), t, t, &["promote", "staging", "prod-eu"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("requires: qa has not approved staging's change"),
        "{out}"
    );
    assert!(out.contains("(hydrate approve staging --as qa)"), "{out}");
    let (code, out) = run_at(dir.path(), t, t, &["approve", "staging", "--as", "qa"]);
    assert_eq!(code, 0, "{out}");
    let notes = git(dir.path(), &["notes", "--ref", "hydrate-approvals", "list"]);
    assert_eq!(notes.lines().count(), 1, "{notes}");
    let (code, out) = run_at(dir.path(), t, t, &["promote", "staging", "prod-eu"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn plan_shows_the_path_and_what_holds_each_step() {
    let dir = fixture("promotion:\n  soak: 24h\n");
    in_staging(dir.path());
    let (code, out) = run_at(
        dir.path(),
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        &["promote", "--plan"],
    );
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("graph_plan_text", out);
    let (code, out) = run_at(
        dir.path(),
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        &["promote", "--plan", "web", "--output", "json"],
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["apps"][0]["path"][2],
        serde_json::json!(["canary", "prod-eu", "prod-us"])
    );
    assert_eq!(v["apps"][0]["steps"][1]["state"], "ready");
    let (code, out) = run_at(
        dir.path(),
        T0 + 2 * HOUR,
        T0 + 2 * HOUR,
        &["promote", "--plan", "--output", "markdown"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("| staging → prod-eu | held by gate soak: 23 h left; gate wave 2: canary does not carry web 1.1.0 yet |"), "{out}");
}

#[test]
fn a_cycle_is_refused_at_file_and_line() {
    let dir = fixture("promotesTo: dev\n");
    let (code, out) = run_at(dir.path(), T0, T0, &["promote", "--plan"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(
            "environments/prod-eu.yaml:3: promotesTo makes a cycle: dev → staging → prod-eu → dev"
        ),
        "{out}"
    );
}

/// The board (`pins --output html`) of a graph with soak, approval and
/// freeze gates, two hours after staging got its versions.
fn gated_board() -> String {
    let dir = fixture(
        "promotion:\n  soak: 24h\n  requires: [qa]\n  freeze: [\"Fri 16:00 – Mon 08:00 Europe/Berlin\"]\n",
    );
    in_staging(dir.path());
    let now = T0 + 2 * HOUR;
    let (code, html) = run_at(dir.path(), now, now, &["pins", "--output", "html"]);
    assert_eq!(code, 0, "{html}");
    html
}

#[test]
fn the_board_lays_environments_out_by_the_graph_with_gate_states() {
    let html = gated_board();
    assert!(html.is_ascii());
    // Three layers: dev, staging, then the three targets side by side.
    let graph = html
        .split("<section class=\"graph\"")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .unwrap_or_else(|| panic!("no graph in {html}"));
    assert_eq!(graph.matches("<div class=\"layer\">").count(), 3, "{graph}");
    assert_eq!(graph.matches("&rarr;").count(), 2, "{graph}");
    let last = graph
        .rsplit("<div class=\"layer\">")
        .next()
        .unwrap_or_default();
    let order: Vec<&str> = ["canary", "prod-eu", "prod-us"]
        .into_iter()
        .filter(|e| last.contains(&format!("<h2>{e}</h2>")))
        .collect();
    assert_eq!(order.len(), 3, "{last}");
    assert!(
        graph.contains("closed until Mon 08:00 CET"),
        "the freeze is closed on a Friday evening: {graph}"
    );
    assert!(
        graph.contains("web <code>1.1.0</code> <span class=\"age\">for 1 h</span>"),
        "{graph}"
    );
    assert!(
        graph.contains("held: wave 2: canary does not carry web 1.1.0 yet"),
        "{graph}"
    );
}

/// The gated board fits a 1280 px window in chromium.
#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium on PATH (Debian: apt-get install chromium)"
)]
fn the_gated_board_fits_a_1280_px_window_in_chromium() {
    let html = gated_board();
    let bin = crate::support::need(crate::support::Need::Chromium);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph-board");
    fs::create_dir_all(&out).unwrap();
    let page = out.join("board.html");
    fs::write(&page, &html).unwrap();
    let shot = out.join("graph-board-1280.png");
    let o = crate::pins::chromium(&bin, &page, &format!("--screenshot={}", shot.display()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let width = crate::pins::png_width(&fs::read(&shot).unwrap());
    crate::support::report(&format!(
        "graph board in chromium: screenshot {width} px wide ({})",
        shot.display()
    ));
    assert_eq!(width, 1280);
}

/// The scheduled CI job's script (docs/ci/promote-scheduled.sh, which the
/// GitLab and GitHub templates run) against a bare remote: the first run
/// promotes canary only (wave 1), on a branch with its description; the
/// second, once canary carries the version, the two regions.
#[test]
fn the_scheduled_ci_job_promotes_what_the_gates_let_through_on_branches() {
    let dir = fixture("");
    let root = dir.path();
    in_staging(root);
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare", "-b", "main"]);
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            &remote.path().display().to_string(),
        ],
    );
    git(root, &["push", "-q", "origin", "main"]);
    let bin = assert_cmd::cargo::cargo_bin("hydrate");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = crate::support::repo().join("docs/ci/promote-scheduled.sh");
    let job = |branch: &str, now: i64| {
        let o = std::process::Command::new("sh")
            .arg(&script)
            .current_dir(root)
            .env("PATH", &path)
            .env("FROM", "staging")
            .env("BRANCH", branch)
            .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
            .env("HYDRATE_TIMESTAMP", now.to_string())
            .env("HYDRATE_NOW", now.to_string())
            .env("HYDRATE_CACHE_KEY", crate::support::CACHE_KEY)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{text}");
        text
    };
    let out = job("promote/run1", T0 + 2 * HOUR);
    assert!(out.contains("## Promotion plan"), "{out}");
    let remote_refs = || git(remote.path(), &["for-each-ref", "--format=%(refname)"]);
    assert_eq!(
        remote_refs(),
        "refs/heads/main\nrefs/heads/promote/run1/canary",
        "{out}"
    );
    // One description per target, named in the list the merge-request
    // step reads.
    let listed = fs::read_to_string(root.join("promoted-branches.txt")).unwrap();
    assert_eq!(listed, "promote/run1/canary descriptions/canary.md\n");
    let described = fs::read_to_string(root.join("descriptions/canary.md")).unwrap();
    assert!(
        described.starts_with("## Promote staging → canary\n"),
        "{described}"
    );
    // The job left the checkout alone: HEAD, index and working tree.
    assert_eq!(
        git(root, &["rev-parse", "HEAD"]),
        git(root, &["rev-parse", "origin/main"])
    );
    // The merge request is merged; the next scheduled run takes the regions.
    git(
        root,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge canary",
            "promote/run1/canary",
        ],
    );
    git(root, &["push", "-q", "origin", "main"]);
    job("promote/run2", T0 + 3 * HOUR);
    let refs = remote_refs();
    assert!(refs.contains("refs/heads/promote/run2/prod-eu"), "{refs}");
    assert!(refs.contains("refs/heads/promote/run2/prod-us"), "{refs}");
    assert!(!refs.contains("refs/heads/promote/run2/canary"), "{refs}");
    let listed = fs::read_to_string(root.join("promoted-branches.txt")).unwrap();
    assert_eq!(
        listed,
        "promote/run2/prod-eu descriptions/prod-eu.md\npromote/run2/prod-us descriptions/prod-us.md\n"
    );
    for env in ["prod-eu", "prod-us"] {
        let d = fs::read_to_string(root.join(format!("descriptions/{env}.md"))).unwrap();
        assert!(
            d.starts_with(&format!("## Promote staging → {env}\n")),
            "{d}"
        );
        assert!(
            d.contains(&format!("apps/web/envs/{env}/kustomization.yaml")),
            "{d}"
        );
    }
    assert!(!root.join("descriptions/canary.md").exists());
    // Nothing left to promote: the job succeeds and pushes nothing.
    git(
        root,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge eu",
            "promote/run2/prod-eu",
        ],
    );
    git(
        root,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge us",
            "promote/run2/prod-us",
        ],
    );
    let out = job("promote/run3", T0 + 4 * HOUR);
    assert!(
        out.contains("every target already carries staging's version"),
        "{out}"
    );
    assert!(!remote_refs().contains("run3"));
}

/// `--together`: one commit for the targets that are not held. The first
/// run takes canary alone (wave 2 waits for canary to carry the version
/// when the run starts); the second takes both regions in one commit that
/// names each environment; `hydrate history` shows it in both, and
/// `rollback prod-eu` restores prod-eu's files only.
#[test]
fn together_makes_one_commit_for_the_targets_not_held() {
    let dir = fixture("");
    in_staging(dir.path());
    let t = T0 + 2 * HOUR;
    let (code, out) = run_at(dir.path(), t, t, &["promote", "staging", "--together"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("promotion staging → prod-us: nothing promoted\n  held: web (wave 2: canary does not carry web 1.1.0 yet; promoted in this run, the next run follows)"),
        "{out}"
    );
    // Into one environment, the commit is an ordinary promotion.
    let body = git(dir.path(), &["log", "-1", "--format=%B"]);
    assert!(
        body.contains(
            "Hydrate-Environment: canary\nHydrate-Pin: web example/web:newTag: 1.0.0 → 1.1.0"
        ),
        "{body}"
    );
    let before = subjects(dir.path()).len();
    let describe = dir.path().join("mr-{env}.md").display().to_string();
    let (code, out) = run_at(
        dir.path(),
        t + 60,
        t + 60,
        &["promote", "staging", "--together", "--describe", &describe],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(subjects(dir.path()).len(), before + 1, "{out}");
    // One description for the one commit, a section per target.
    let d = fs::read_to_string(dir.path().join("mr-prod-eu+prod-us.md")).unwrap();
    assert!(
        d.starts_with("## Promote staging → prod-eu, prod-us\n"),
        "{d}"
    );
    assert!(
        d.contains("\n### prod-eu\n") && d.contains("\n### prod-us\n"),
        "{d}"
    );
    fs::remove_file(dir.path().join("mr-prod-eu+prod-us.md")).unwrap();
    assert_eq!(
        subjects(dir.path())[0],
        "promote staging → prod-eu, prod-us: web 1.1.0"
    );
    let body = git(dir.path(), &["log", "-1", "--format=%B"]);
    let trailers: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("Hydrate-Environment") || l.starts_with("Hydrate-Pin"))
        .collect();
    assert_eq!(
        trailers,
        [
            "Hydrate-Environment: prod-eu",
            "Hydrate-Environment: prod-us",
            "Hydrate-Pin: prod-eu/web example/web:newTag: 1.0.0 → 1.1.0",
            "Hydrate-Pin: prod-us/web example/web:newTag: 1.0.0 → 1.1.0",
        ]
    );
    let together = git(dir.path(), &["rev-parse", "HEAD"]);
    for (env, other) in [("prod-eu", "prod-us"), ("prod-us", "prod-eu")] {
        let (code, out) = run_at(dir.path(), t + 90, t + 90, &["history", env]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains(&format!(
                "one commit with {other}\n    web example/web:newTag: 1.0.0 → 1.1.0\n"
            )),
            "{out}"
        );
    }
    // The board counts prod-us's time from the together commit.
    let (_, board) = run_at(
        dir.path(),
        t + 60 + HOUR,
        t + 60 + HOUR,
        &["pins", "--output", "json"],
    );
    let b: serde_json::Value = serde_json::from_str(&board).unwrap();
    assert_eq!(
        b["apps"][0]["environments"]["prod-us"]["since"],
        "2026-12-04T20:01:00Z"
    );
    // Rolling back one environment of the commit restores its files only.
    let (code, out) = run_at(
        dir.path(),
        t + 120,
        t + 120,
        &["rollback", "prod-eu", "--steps", "1"],
    );
    assert_eq!(code, 0, "{out}");
    let changed = git(dir.path(), &["show", "--format=", "--name-only", "HEAD"]);
    assert_eq!(changed, "apps/web/envs/prod-eu/kustomization.yaml");
    let body = git(dir.path(), &["log", "-1", "--format=%B"]);
    assert!(
        body.contains(&format!("Hydrate-Rollback-Of: {together}")),
        "{body}"
    );
    let tag = |env: &str| {
        fs::read_to_string(
            dir.path()
                .join(format!("apps/web/envs/{env}/kustomization.yaml")),
        )
        .unwrap()
    };
    assert!(tag("prod-eu").contains("newTag: 1.0.0"));
    assert!(tag("prod-us").contains("newTag: 1.1.0"));
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

/// `pins` as text, markdown and JSON on the graph fixture: the
/// environments layer by layer with their promotesTo edges and waves,
/// each gate open, held (the app and why, when it opens) or closed (until
/// when), and each app's version and how long it has been there.
#[test]
fn the_text_json_and_markdown_boards_show_the_graph_with_gate_states() {
    let dir = fixture(
        "promotion:\n  soak: 24h\n  requires: [qa]\n  freeze: [\"Fri 16:00 – Mon 08:00 Europe/Berlin\"]\n",
    );
    in_staging(dir.path());
    let now = T0 + 2 * HOUR;
    // The fixture's first commit has the clock's time: its sha varies, and
    // so do those after it.
    let shas = git(dir.path(), &["log", "--format=%H"]);
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let stable = |text: String| {
        let mut text = text.replace(&name, "<repo>");
        for sha in shas.lines() {
            text = text.replace(sha, "<sha>").replace(&sha[..12], "<sha>");
        }
        text
    };
    let (code, text) = run_at(dir.path(), now, now, &["pins"]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("graph_board_text", stable(text));
    let (code, md) = run_at(dir.path(), now, now, &["pins", "--output", "markdown"]);
    assert_eq!(code, 0, "{md}");
    insta::assert_snapshot!("graph_board_markdown", stable(md));
    let (code, json) = run_at(dir.path(), now, now, &["pins", "--output", "json"]);
    assert_eq!(code, 0, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let graph = serde_json::json!({"graph": v["graph"], "environments": v["environments"]});
    insta::assert_snapshot!(
        "graph_board_json",
        stable(serde_json::to_string_pretty(&graph).unwrap())
    );
}
