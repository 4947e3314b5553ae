//! `hydrate promote`, `set-image`, `rollback` and `history` on a
//! temporary git repository made from the demo: one commit with only the
//! pinned lines, policies, the all-or-nothing render check, branches and
//! what they never touch.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::support::{demo_copy, git, hydrate};

fn demo_repo() -> tempfile::TempDir {
    let dir = demo_copy();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "Add the demo"]);
    dir
}

fn commit_all(dir: &Path, msg: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    hydrate()
        .args(args)
        .arg("--root")
        .arg(dir)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .output()
        .expect("hydrate runs")
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file of the working tree (not .git), path → bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn commits(dir: &Path) -> usize {
    git(dir, &["rev-list", "--count", "HEAD"]).parse().unwrap()
}

/// The changed lines of `git diff A B` (without file headers).
fn changed_lines(dir: &Path, range: &str) -> Vec<String> {
    git(dir, &["diff", "-U0", range])
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn promote_makes_one_commit_of_only_the_pinned_lines_and_is_idempotent() {
    let repo = demo_repo();
    let dir = repo.path();
    let o = run(dir, &["promote", "staging", "production"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(commits(dir), 2);
    assert_eq!(
        changed_lines(dir, "HEAD~1"),
        [
            "-    digest: sha256:4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b",
            "+    digest: sha256:9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
            "+    newTag: 2.8.1",
            "-  tag: 2.3.0",
            "+  tag: 2.3.1",
            "-    newTag: \"1.4.2\"",
            "+    newTag: \"1.4.3\"",
            "+    newTag: 0.9.4",
        ]
    );
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        msg.starts_with("promote staging → production: status 2.3.1, web 1.4.3, +2 more\n"),
        "{msg}"
    );
    for line in [
        "- web: ghcr.io/acme-shop/web:newTag 1.4.2 → 1.4.3\n",
        "- status: image.tag 2.3.0 → 2.3.1\n",
        // What production runs today, from the base: not "(none)".
        "- worker: ghcr.io/acme-shop/worker:newTag 0.9.3 (base) → 0.9.4\n",
        "- api: ghcr.io/acme-shop/api:digest sha256:4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b → sha256:9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9, ghcr.io/acme-shop/api:newTag (none) → 2.8.1\n",
        "Hydrate-Pin: worker ghcr.io/acme-shop/worker:newTag: (none) → 0.9.4",
        "Hydrate-Promoted-From: staging@",
        "Hydrate-Promotion: ",
        "Hydrate-Environment: production",
    ] {
        assert!(msg.contains(line), "{line} not in {msg}");
    }
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
    let again = run(dir, &["promote", "staging", "production"]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("production already has staging's pins"));
    assert_eq!(commits(dir), 2);
}

#[test]
fn blocked_pins_and_downgrades_refuse_without_force_and_change_nothing() {
    let repo = demo_repo();
    let dir = repo.path();
    // production blocks redis; staging moves it.
    let k = dir.join("testdata/apps/redis/overlays/staging/kustomization.yaml");
    let s = fs::read_to_string(&k)
        .unwrap()
        .replace("7.2.4-alpine", "7.2.5-alpine");
    fs::write(&k, s).unwrap();
    commit_all(dir, "staging: redis 7.2.5");
    let before = snapshot(dir);
    // All or nothing: refused whole, nothing changes.
    let o = run(
        dir,
        &["promote", "staging", "production", "--all-or-nothing"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("redis is blocked by the policy `redis`"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(dir), before);
    assert_eq!(commits(dir), 2);
    // Only redis asked for: everything is held, exit 1, nothing changes.
    let o = run(dir, &["promote", "staging", "production", "--app", "redis"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("held: redis (policy `redis`)"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(dir), before);
    // By default the rest goes ahead and redis is reported held.
    let o = run(dir, &["promote", "staging", "production", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("  held: redis (policy `redis`)\n"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("  redis redis:newTag"), "{}", text(&o));
    assert_eq!(snapshot(dir), before);
    // A hotfix in production: web is newer there than in staging.
    let w = dir.join("testdata/apps/web/overlays/production/kustomization.yaml");
    let s = fs::read_to_string(&w)
        .unwrap()
        .replace("\"1.4.2\"", "\"1.4.9\"");
    fs::write(&w, s).unwrap();
    commit_all(dir, "production: hotfix web 1.4.9");
    let before = snapshot(dir);
    let o = run(
        dir,
        &[
            "promote",
            "staging",
            "production",
            "--app",
            "web",
            "--all-or-nothing",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o)
            .contains("web/ghcr.io/acme-shop/web:newTag: the target has 1.4.9, newer than 1.4.3"),
        "{}",
        text(&o)
    );
    let o = run(dir, &["promote", "staging", "production", "--app", "web"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("held: web (ghcr.io/acme-shop/web:newTag: 1.4.9 is newer in the target)"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(dir), before);
    // --app narrows around the block, --force overrides the guard.
    let o = run(
        dir,
        &[
            "promote",
            "staging",
            "production",
            "--app",
            "web",
            "--force",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        changed_lines(dir, "HEAD~1"),
        ["-    newTag: \"1.4.9\"", "+    newTag: \"1.4.3\""]
    );
}

#[test]
fn a_render_failure_after_the_edit_writes_and_commits_nothing() {
    let repo = demo_repo();
    let dir = repo.path();
    let chart = dir.join("testdata/apps/status/chart");
    let broken = dir.join("testdata/apps/status/chart-0.5.0");
    crate::support::copy_tree(&chart, &broken);
    fs::write(
        broken.join("templates/broken.yaml"),
        "{{ fail \"this chart is broken\" }}\n",
    )
    .unwrap();
    let env = dir.join("environments/staging.yaml");
    let s = fs::read_to_string(&env).unwrap().replace(
        "chart: testdata/apps/status/chart\n",
        "chart: testdata/apps/status/chart-0.5.0\n",
    );
    fs::write(&env, s).unwrap();
    commit_all(dir, "staging: status chart 0.5.0");
    let before = snapshot(dir);
    let o = run(dir, &["promote", "staging", "production"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("this chart is broken")
            && out.contains("nothing was written or committed")
            && out.contains(" testdata/apps/status/chart-0.5.0: ")
            && !out.contains("/tmp"),
        "{out}"
    );
    assert_eq!(snapshot(dir), before);
    assert_eq!(commits(dir), 2);
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
}

#[test]
fn branch_leaves_head_index_and_worktree_alone_and_render_moves_the_env_branch() {
    let repo = demo_repo();
    let dir = repo.path();
    let head = git(dir, &["rev-parse", "HEAD"]);
    let index = fs::read(dir.join(".git/index")).unwrap();
    let before = snapshot(dir);
    let desc = tempfile::tempdir().unwrap();
    let desc_file = desc.path().join("mr.md");
    let o = run(
        dir,
        &[
            "promote",
            "staging",
            "production",
            "--branch",
            "--describe",
            desc_file.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(git(dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(fs::read(dir.join(".git/index")).unwrap(), index);
    assert_eq!(snapshot(dir), before);
    let branches = git(
        dir,
        &["branch", "--list", "promote/*", "--format=%(refname:short)"],
    );
    assert!(
        branches.starts_with("promote/staging-to-production/"),
        "{branches}"
    );
    assert_eq!(git(dir, &["rev-parse", &format!("{branches}~1")]), head);
    assert_eq!(changed_lines(dir, &format!("HEAD..{branches}")).len(), 8);
    let md = fs::read_to_string(&desc_file).unwrap();
    assert!(
        md.contains("| web | `ghcr.io/acme-shop/web:newTag` · `testdata/apps/web/overlays/production/kustomization.yaml:24` | `1.4.2` | `1.4.3` |"),
        "{md}"
    );
    assert!(md.contains("Deployment/web-blue"), "{md}");

    // --render writes production's output (a branch here) with the trailer.
    let env = dir.join("environments/production.yaml");
    let s = fs::read_to_string(&env)
        .unwrap()
        .replace("dir: rendered/production", "branch: env/production");
    fs::write(&env, s).unwrap();
    commit_all(dir, "production renders to env/production");
    let o = run(dir, &["promote", "staging", "production", "--render"]);
    assert!(o.status.success(), "{}", text(&o));
    let id = git(
        dir,
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Hydrate-Promotion,valueonly)",
        ],
    );
    assert!(!id.trim().is_empty());
    let rendered = git(dir, &["log", "-1", "--format=%B", "env/production"]);
    assert!(
        rendered.contains(&format!("Hydrate-Promotion: {}", id.trim())),
        "{rendered}"
    );
    let manifest = git(dir, &["show", "env/production:web/manifest.yaml"]);
    assert!(
        manifest.contains("registry.acme.internal/shop/web:1.4.3"),
        "{manifest}"
    );
}

#[test]
fn set_image_rollback_and_history() {
    let repo = demo_repo();
    let dir = repo.path();
    let k = dir.join("testdata/apps/web/overlays/production/kustomization.yaml");
    let src = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: shop-prod\nnameSuffix: -blue\n\nresources:\n  - ../../base   # shared\n  - pdb.yaml\n\n# bumped by CI on every release\nimages:\n\n  - {name: ghcr.io/acme-shop/web, newName: registry.acme.internal/shop/web, newTag: \"1.4.2\"}  # live\n\nreplicas:\n  - name: web\n    count: 4\n";
    fs::write(&k, src).unwrap();
    commit_all(dir, "production: web in flow style");
    let o = run(
        dir,
        &["promote", "staging", "production", "--app", "status"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        dir,
        &[
            "set-image",
            "production",
            "ghcr.io/acme-shop/web=registry.acme.internal/shop/web:1.5.0",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        fs::read_to_string(&k).unwrap(),
        src.replace("\"1.4.2\"", "\"1.5.0\"")
    );
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        msg.contains(
            "Hydrate-Set-Image: ghcr.io/acme-shop/web=registry.acme.internal/shop/web:1.5.0"
        ),
        "{msg}"
    );
    let o = run(dir, &["rollback", "production", "--steps", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(fs::read_to_string(&k).unwrap(), src);
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    assert!(msg.contains("Hydrate-Rollback-Of: "), "{msg}");
    let o = run(dir, &["history", "production", "--output", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<&str> = h
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["rollback", "set-image", "promotion"]);
    assert_eq!(h[1]["pins"][0]["new"], "1.5.0");
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let repo = demo_repo();
    let dir = repo.path();
    let before = snapshot(dir);
    let o = run(dir, &["promote", "staging", "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("web ghcr.io/acme-shop/web:newTag: 1.4.2 → 1.4.3"),
        "{t}"
    );
    assert!(t.contains("status image.tag: 2.3.0 → 2.3.1"), "{t}");
    assert_eq!(snapshot(dir), before);
    assert_eq!(commits(dir), 1);
}

#[test]
fn set_value_edits_the_value_file_and_dirty_files_are_refused() {
    let repo = demo_repo();
    let dir = repo.path();
    let values = dir.join("testdata/apps/status/values/staging.yaml");
    let src = fs::read_to_string(&values).unwrap();
    let o = run(dir, &["set-value", "staging", "status", "image.tag=2.3.2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        fs::read_to_string(&values).unwrap(),
        src.replace("tag: 2.3.1", "tag: 2.3.2")
    );
    let msg = git(dir, &["log", "-1", "--format=%B"]);
    assert!(
        msg.contains("Hydrate-Set-Value: status image.tag=2.3.2"),
        "{msg}"
    );
    // An uncommitted change in a file promotion would edit: refused, untouched.
    let prod = dir.join("testdata/apps/status/values/production.yaml");
    let dirty = format!("{}# local note\n", fs::read_to_string(&prod).unwrap());
    fs::write(&prod, &dirty).unwrap();
    let o = run(dir, &["promote", "staging", "production"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("uncommitted changes in testdata/apps/status/values/production.yaml"),
        "{}",
        text(&o)
    );
    assert_eq!(fs::read_to_string(&prod).unwrap(), dirty);
    assert_eq!(commits(dir), 2);
}

/// `--app` narrows the promotion to that app's pins, and only that app is
/// traced: another app of FROM that does not render (here staging's redis,
/// broken in the commit) does not stop it, while the whole promotion
/// reports it.
#[test]
fn promote_app_traces_only_that_app() {
    let repo = demo_repo();
    let dir = repo.path();
    let redis = dir.join("testdata/apps/redis/overlays/staging/kustomization.yaml");
    let mut text_of = fs::read_to_string(&redis).unwrap();
    text_of.push_str("resources:\n  - missing.yaml\n");
    fs::write(&redis, text_of).unwrap();
    commit_all(dir, "break redis in staging");
    let all = run(dir, &["promote", "staging", "production"]);
    assert_eq!(all.status.code(), Some(2), "{}", text(&all));
    assert!(text(&all).contains("redis"), "{}", text(&all));
    assert_eq!(commits(dir), 2);
    let web = run(dir, &["promote", "staging", "production", "--app", "web"]);
    assert!(web.status.success(), "{}", text(&web));
    assert_eq!(commits(dir), 3);
    assert_eq!(
        changed_lines(dir, "HEAD~1"),
        ["-    newTag: \"1.4.2\"", "+    newTag: \"1.4.3\""]
    );
    assert_eq!(git(dir, &["status", "--porcelain"]), "");
}
