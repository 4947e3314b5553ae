//! Promotion on the layouts real repositories have, beyond `images:`
//! entries: `testdata/repos/env-folders` (an overlay folder per
//! environment under `envs/`, the image set by a strategic-merge patch
//! file, a JSON 6902 patch file or an inline JSON 6902 patch, and a
//! `settings.yml` promoted as a whole file), three regions.

use std::path::Path;

use crate::support::{copy_tree, git, hydrate, need, repo, Need};

/// A git repository holding a copy of the env-folders fixture.
fn env_folders() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("testdata/repos/env-folders"), dir.path());
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "Add the env folders"]);
    dir
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    hydrate()
        .args(args)
        .arg("--root")
        .arg(dir)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000000")
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `hydrate kustomize build` of an overlay.
fn build(dir: &Path, overlay: &str) -> String {
    let o = hydrate()
        .args(["kustomize", "build"])
        .arg(dir.join(overlay))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

const IMAGE_PIN: &str = "Deployment/checkout#spec.template.spec.containers[name=web].image";

/// Each region sets the image its own way; each promotes as one commit of
/// the image line and the copied settings, and renders the new image.
/// Returns the repository, the target environment and its build.
fn promotes_one_region(region: &str, version_file: &str) -> (tempfile::TempDir, String, String) {
    let dir = env_folders();
    let d = dir.path();
    let (from, to) = (format!("staging-{region}"), format!("prod-{region}"));
    let o = run(d, &["promote", &from, &to, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o));
    let plan = text(&o);
    assert!(
        plan.contains(&format!(
            "  checkout {IMAGE_PIN}: ghcr.io/acme/checkout:1.2.0 → ghcr.io/acme/checkout:1.3.0\n"
        )),
        "{plan}"
    );
    assert!(
        plan.contains(&format!(
            "  checkout envs/{to}/settings.yml: copied from envs/{from}/settings.yml\n"
        )),
        "{plan}"
    );
    assert!(
        plan.contains("    -  NEW_CHECKOUT_FLOW: \"false\"\n    +  NEW_CHECKOUT_FLOW: \"true\"\n"),
        "{plan}"
    );
    let o = run(d, &["promote", &from, &to]);
    assert!(o.status.success(), "{}", text(&o));
    let stat = git(d, &["show", "--stat", "--format=%s", "HEAD"]);
    assert!(
        stat.starts_with(&format!("promote {from} → {to}: checkout 1.3.0\n")),
        "{stat}"
    );
    for file in ["settings.yml", version_file] {
        let line = |l: &&str| {
            let (name, count) = l.split_once('|').unwrap_or_default();
            name.trim() == format!("envs/{to}/{file}") && count.trim() == "2 +-"
        };
        assert!(stat.lines().any(|l| line(&l)), "{file}: {stat}");
    }
    assert!(
        stat.contains("2 files changed, 2 insertions(+), 2 deletions(-)"),
        "{stat}"
    );
    let body = git(d, &["log", "-1", "--format=%B"]);
    assert!(body.contains(&format!("Hydrate-Pin: checkout {IMAGE_PIN}: ghcr.io/acme/checkout:1.2.0 → ghcr.io/acme/checkout:1.3.0\n")), "{body}");
    assert!(
        body.contains(&format!(
            "Hydrate-Copy: checkout settings.yml envs/{from}/settings.yml → envs/{to}/settings.yml"
        )),
        "{body}"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    let out = build(d, &format!("envs/{to}"));
    assert!(
        out.contains("image: ghcr.io/acme/checkout:1.3.0\n"),
        "{out}"
    );
    assert!(out.contains("NEW_CHECKOUT_FLOW: \"true\"\n"), "{out}");
    assert!(
        out.contains("LOG_LEVEL: warn\n"),
        "env.yml is the environment's own: {out}"
    );
    // Nothing left to promote; running again changes nothing.
    let o = run(d, &["promote", &from, &to]);
    assert!(text(&o).contains("already has"), "{}", text(&o));
    (dir, to, out)
}

/// Each region's promoted environment builds with `kubectl kustomize` to
/// what hydrate built.
#[test]
#[cfg_attr(
    not(has_kubectl),
    ignore = "needs kubectl under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn promoted_regions_build_as_kubectl_builds_them() {
    let kubectl = need(Need::Kubectl);
    for (region, version_file) in [
        ("us", "version.yml"),
        ("eu", "version-patch.yml"),
        ("asia", "kustomization.yml"),
    ] {
        let (dir, to, out) = promotes_one_region(region, version_file);
        let o = std::process::Command::new(&kubectl)
            .arg("kustomize")
            .arg(dir.path().join(format!("envs/{to}")))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            out,
            "{region}: kubectl kustomize agrees"
        );
    }
}

#[test]
fn a_strategic_merge_patch_file_is_promoted() {
    promotes_one_region("us", "version.yml");
}

#[test]
fn a_json6902_patch_file_is_promoted() {
    promotes_one_region("eu", "version-patch.yml");
}

#[test]
fn an_inline_json6902_patch_is_promoted_on_its_line() {
    promotes_one_region("asia", "kustomization.yml");
}

#[test]
fn a_blocked_copy_is_held_and_the_image_still_goes() {
    let dir = env_folders();
    let d = dir.path();
    let f = d.join("environments/prod-us.yaml");
    let s = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &f,
        format!("{s}promotion:\n  block: [checkout/settings.yml]\n"),
    )
    .unwrap();
    git(d, &["commit", "-q", "-am", "hold settings"]);
    let o = run(d, &["promote", "staging-us", "prod-us"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("  held: checkout/settings.yml (policy `checkout/settings.yml`)\n"),
        "{}",
        text(&o)
    );
    let files = git(d, &["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files, "envs/prod-us/version.yml");
}

#[test]
fn a_rollback_restores_the_image_and_the_copied_file() {
    let dir = env_folders();
    let d = dir.path();
    let before = build(d, "envs/prod-eu");
    let o = run(d, &["promote", "staging-eu", "prod-eu"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(build(d, "envs/prod-eu"), before);
    let o = run(d, &["rollback", "prod-eu", "--steps", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(build(d, "envs/prod-eu"), before, "{}", text(&o));
    let body = git(d, &["log", "-1", "--format=%B"]);
    assert!(
        body.contains("- checkout: settings.yml restored\n"),
        "{body}"
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "");
}

#[test]
fn an_image_set_in_the_shared_base_is_not_a_pin() {
    let dir = env_folders();
    let d = dir.path();
    // prod-us stops setting the image: it runs the base's.
    std::fs::remove_file(d.join("envs/prod-us/version.yml")).unwrap();
    let k = d.join("envs/prod-us/kustomization.yml");
    let s = std::fs::read_to_string(&k).unwrap();
    std::fs::write(&k, s.replace("  - path: version.yml\n", "")).unwrap();
    let e = d.join("environments/prod-us.yaml");
    let s = std::fs::read_to_string(&e).unwrap();
    std::fs::write(
        &e,
        s.replace("    promotion:\n      copy: [settings.yml]\n", ""),
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "prod-us runs the base"]);
    let o = run(d, &["promote", "staging-us", "prod-us", "--dry-run"]);
    let out = text(&o);
    assert!(out.contains("nothing to promote"), "{out}");
    assert!(
        out.contains("no pins for checkout: its image is set by base/deployment.yml:17, which prod-us shares with other environments"),
        "{out}"
    );
}

/// The GitLab-flow loop of docs/promotion.md on the demo, step by step: a bump into
/// dev, dev → staging on the default branch, staging → production as a
/// merge request branch (redis is held by production's policy, the rest
/// goes), the MR merged with `--no-ff`, the render job writing
/// `env/production`, then history and a rollback.
#[test]
fn the_readmes_gitlab_loop_runs_end_to_end() {
    use crate::promote_trust::{assert_clean, demo_repo};
    let repo = demo_repo();
    let d = repo.path();
    // 1. CI built web 1.5.0 and bumps dev.
    let o = run(
        d,
        &[
            "set-image",
            "dev",
            "ghcr.io/acme-shop/web=ghcr.io/acme-shop/web:1.5.0",
        ],
    );
    assert!(o.status.success(), "1: {}", text(&o));
    // 2. dev → staging, committed on the default branch.
    let o = run(d, &["promote", "dev", "staging"]);
    assert!(o.status.success(), "2: {}", text(&o));
    assert!(
        text(&o).contains("  redis "),
        "staging takes redis: {}",
        text(&o)
    );
    let before = render_env(d, "production");
    // 3. staging → production as a merge request: redis is held, the rest goes.
    let mr = d.join("mr.md");
    let o = run(
        d,
        &["promote", "staging", "production", "--branch", "--describe"],
    );
    assert_eq!(o.status.code(), Some(2), "--describe needs a file");
    let o = hydrate()
        .args(["promote", "staging", "production", "--branch", "--describe"])
        .arg(&mr)
        .arg("--root")
        .arg(d)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", "1700000100")
        .output()
        .unwrap();
    assert!(o.status.success(), "3: {}", text(&o));
    let out = text(&o);
    assert!(out.contains("  held: redis (policy `redis`)\n"), "{out}");
    assert!(
        out.contains("  web ghcr.io/acme-shop/web:newTag: 1.4.2 → 1.5.0\n"),
        "{out}"
    );
    let description = std::fs::read_to_string(&mr).unwrap();
    assert!(
        description.contains(
            "| web | `ghcr.io/acme-shop/web:newTag` · \
             `testdata/apps/web/overlays/production/kustomization.yaml:24` | `1.4.2` | `1.5.0` |"
        ),
        "{description}"
    );
    std::fs::remove_file(&mr).unwrap();
    assert_clean(d);
    let branch = git(
        d,
        &["branch", "--list", "promote/*", "--format=%(refname:short)"],
    );
    assert!(
        branch.starts_with("promote/staging-to-production/"),
        "{branch}"
    );
    // 4. The MR is merged (GitLab's default: a merge commit), and the
    //    render job writes env/production.
    git(
        d,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge branch 'promote' into 'main'",
            &branch,
        ],
    );
    let o = run(
        d,
        &[
            "render",
            "--env",
            "production",
            "--to",
            "branch",
            "--no-cache",
        ],
    );
    assert!(o.status.success(), "4: {}", text(&o));
    let manifest = git(d, &["show", "env/production:web/manifest.yaml"]);
    // Production pulls from its mirror, at the promoted tag.
    assert!(
        manifest.contains("image: registry.acme.internal/shop/web:1.5.0\n"),
        "{manifest}"
    );
    assert!(
        !git(d, &["show", "env/production:redis/manifest.yaml"]).contains("7.4"),
        "redis held"
    );
    // 5. history shows the merged promotion; a rollback undoes it exactly.
    let o = run(d, &["history", "production"]);
    assert!(o.status.success(), "5: {}", text(&o));
    assert!(
        text(&o).contains("web ghcr.io/acme-shop/web:newTag: 1.4.2 → 1.5.0"),
        "{}",
        text(&o)
    );
    let o = run(d, &["rollback", "production", "--steps", "1"]);
    assert!(o.status.success(), "5: {}", text(&o));
    assert_eq!(render_env(d, "production"), before);
    assert_clean(d);
}

/// Every file `hydrate render` writes for `env` into a directory.
fn render_env(d: &Path, env: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    let out = tempfile::tempdir().unwrap();
    let _ = std::fs::remove_dir_all(d.join("rendered"));
    let o = run(d, &["render", "--env", env, "--to", "dir", "--no-cache"]);
    assert!(o.status.success(), "{}", text(&o));
    let base = d.join("rendered").join(env);
    crate::support::copy_tree(&base, out.path());
    let _ = std::fs::remove_dir_all(d.join("rendered"));
    crate::support::list_files(out.path())
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(out.path().join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

#[test]
fn pins_explain_names_why_and_where_for_the_env_folders() {
    let dir = env_folders();
    let o = run(
        dir.path(),
        &["pins", "--explain", "prod-us", "prod-eu", "prod-asia"],
    );
    assert!(o.status.success(), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stdout));
    let o = run(
        dir.path(),
        &["pins", "--explain", "--output", "json", "prod-asia"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pins"][0]["kind"], "traced");
    assert_eq!(v["pins"][0]["line"], 14);
    assert_eq!(v["pins"][0]["file"], "envs/prod-asia/kustomization.yml");
}

#[test]
fn pins_explain_names_why_and_where_for_the_demo() {
    let repo = crate::promote_trust::demo_repo();
    let o = run(repo.path(), &["pins", "--explain", "production"]);
    assert!(o.status.success(), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stdout));
    let o = run(repo.path(), &["pins", "--explain", "--output", "html"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn a_chart_app_without_pins_promotes_its_image_tag_by_convention() {
    let repo = crate::promote_trust::demo_repo();
    let d = repo.path();
    for env in ["dev", "staging", "production"] {
        let f = d.join(format!("environments/{env}.yaml"));
        let s = std::fs::read_to_string(&f).unwrap();
        assert!(s.contains("    pins: [image.tag]   # promoted with the images\n"));
        std::fs::write(
            &f,
            s.replace("    pins: [image.tag]   # promoted with the images\n", ""),
        )
        .unwrap();
    }
    git(d, &["commit", "-q", "-am", "status declares no pins"]);
    let o = run(
        d,
        &[
            "promote",
            "staging",
            "production",
            "--app",
            "status",
            "--dry-run",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("  status image.tag: 2.3.0 → 2.3.1\n"),
        "{}",
        text(&o)
    );
    let o = run(d, &["pins", "--explain", "production"]);
    assert!(
        text(&o).contains("  status image.tag = 2.3.0\n    an image value this environment's own values set (found by convention; the app declares no pins)\n    at testdata/apps/status/values/production.yaml:3\n"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_declared_file_pin_is_named_by_its_template_and_selects_a_container() {
    let dir = env_folders();
    let d = dir.path();
    let pin = "{dir}/version.yml#spec.template.spec.containers[name=web].image";
    for env in ["staging-us", "prod-us"] {
        let f = d.join(format!("environments/{env}.yaml"));
        let s = std::fs::read_to_string(&f).unwrap();
        let decl = "    pins:\n      - file: \"{dir}/version.yml\"\n        path: \"spec.template.spec.containers[name=web].image\"\n";
        std::fs::write(
            &f,
            s.replace("    promotion:\n", &format!("{decl}    promotion:\n")),
        )
        .unwrap();
    }
    git(d, &["commit", "-q", "-am", "declare the version file pin"]);
    let o = run(d, &["pins", "--output", "json", "staging-us", "prod-us"]);
    assert!(o.status.success(), "{}", text(&o));
    let json = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        json.matches(pin).count(),
        1,
        "one pin for both environments: {json}"
    );
    let o = run(d, &["promote", "staging-us", "prod-us", "--dry-run"]);
    assert!(
        text(&o).contains(&format!(
            "  checkout {pin}: ghcr.io/acme/checkout:1.2.0 → ghcr.io/acme/checkout:1.3.0\n"
        )),
        "{}",
        text(&o)
    );
    assert!(
        !text(&o).contains(IMAGE_PIN),
        "the traced pin is the declared one: {}",
        text(&o)
    );
}
