//! The directory writer under attack and bad luck (issue 13, items 1–3, 7
//! and 8): it writes and prunes only inside the output directory, never
//! through a symlink, deletes only files it wrote that still hold what it
//! wrote, checks every environment before writing any, and switches each
//! environment's directory as a unit (a kill leaves all old or all new).
//! One fixture per case; each snapshot holds the exit code and messages
//! with the temporary paths replaced by `[tmp]`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{clock_seed, git, render_at, report, Rng};

/// A scratch place: `[tmp]/repo` is the repository, `[tmp]/outside` a
/// directory outside it that must never change.
struct Scratch {
    tmp: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch {
            tmp: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(s.outside()).unwrap();
        fs::write(s.outside().join("keep.txt"), "precious\n").unwrap();
        s
    }

    fn repo(&self) -> PathBuf {
        self.tmp.path().join("repo")
    }

    fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    fn write(&self, path: &str, text: &str) {
        let p = self.repo().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// An app `name` rendering one ConfigMap holding `value`.
    fn app(&self, name: &str, value: &str) {
        self.write(
            &format!("apps/{name}/kustomization.yaml"),
            "resources:\n- cm.yaml\n",
        );
        self.write(
            &format!("apps/{name}/cm.yaml"),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: \"{value}\"\n"),
        );
    }

    /// `environments/<env>.yaml` with `output` (YAML lines under
    /// `output:`) and the apps.
    fn env(&self, env: &str, output: &str, apps: &[&str]) {
        let mut text = format!("name: {env}\noutput:\n{output}apps:\n");
        for a in apps {
            text.push_str(&format!("  - name: {a}\n    kustomize: apps/{a}\n"));
        }
        self.write(&format!("environments/{env}.yaml"), &text);
    }

    /// Runs `hydrate render ARGS`; the exit code, stdout and stderr with
    /// the scratch path replaced.
    fn render(&self, args: &[&str]) -> String {
        let out = render_at(&self.repo()).args(args).output().unwrap();
        let redact = |b: &[u8]| {
            String::from_utf8_lossy(b).replace(&self.tmp.path().display().to_string(), "[tmp]")
        };
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            out.status.code().unwrap_or(-1),
            redact(&out.stdout),
            redact(&out.stderr)
        )
    }

    /// Every file under `[tmp]` outside `repo/environments` and
    /// `repo/apps`, with its content (symlinks as `-> target`).
    fn state(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for e in walkdir::WalkDir::new(self.tmp.path()).min_depth(1) {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(self.tmp.path()).unwrap();
            let rel_s = rel.display().to_string();
            // The render cache keeps what rendered even when the run then
            // fails (as cargo keeps target/): it is not output.
            if rel.starts_with("repo/.hydrate/cache") {
                continue;
            }
            if rel_s.starts_with("repo/environments") || rel_s.starts_with("repo/apps") {
                continue;
            }
            let t = e.file_type();
            let v = if t.is_symlink() {
                format!("-> {}", fs::read_link(e.path()).unwrap().display())
            } else if t.is_file() {
                fs::read_to_string(e.path()).unwrap_or_else(|_| "<binary>".into())
            } else {
                continue;
            };
            out.insert(rel_s, v);
        }
        out
    }
}

fn symlink(target: &Path, link: &Path) {
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

const DEV: &str = "  dir: rendered/dev\n";

// ---- item 1: never through a symlink, never outside -------------------

#[test]
fn an_output_directory_that_is_a_symlink_is_refused() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    symlink(&s.outside(), &s.repo().join("rendered/dev"));
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

#[test]
fn a_symlink_on_the_way_to_the_output_directory_is_refused() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    symlink(&s.outside(), &s.repo().join("rendered"));
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

/// With `allowOutside: true` the configuration check lets a symlinked
/// output through; the writer still refuses to write through it.
#[test]
fn the_writer_refuses_a_symlinked_output_even_when_configuration_allows_outside() {
    let s = Scratch::new();
    s.app("web", "1");
    s.write(
        "environments/dev.yaml",
        "name: dev\nallowOutside: true\noutput:\n  dir: rendered/dev\napps:\n  - name: web\n    kustomize: apps/web\n",
    );
    symlink(&s.outside(), &s.repo().join("rendered/dev"));
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

#[test]
fn a_symlinked_app_directory_inside_the_output_is_never_written_through() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    symlink(&s.outside(), &s.repo().join("rendered/dev/web"));
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

#[test]
fn a_kind_that_is_a_path_cannot_name_a_file_outside() {
    let s = Scratch::new();
    s.write("apps/web/kustomization.yaml", "resources:\n- cm.yaml\n");
    s.write(
        "apps/web/cm.yaml",
        "apiVersion: v1\nkind: ../../../../KINDESC\nmetadata:\n  name: x\n",
    );
    s.env(
        "dev",
        "  dir: rendered/dev\n  layout: resources\n",
        &["web"],
    );
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

#[test]
fn an_output_directory_of_dot_dot_or_the_root_is_refused() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", "  dir: .\n", &["web"]);
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written anywhere");
}

// ---- item 2: ownership with content hashes --------------------------

/// Renders `web` and `old` once, then drops `old` from the environment.
fn rendered_then_old_removed(s: &Scratch) {
    s.app("web", "1");
    s.app("old", "1");
    s.env("dev", DEV, &["web", "old"]);
    assert!(s.render(&[]).starts_with("exit: 0"));
    s.env("dev", DEV, &["web"]);
}

/// Rewrites `.hydrate/owned` of `rendered/dev` with `edit`.
fn edit_owned(s: &Scratch, edit: impl FnOnce(&mut serde_json::Value)) {
    let p = s.repo().join("rendered/dev/.hydrate/owned");
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn an_owned_path_through_a_symlink_is_ignored_never_followed() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    symlink(&s.outside(), &s.repo().join("rendered/dev/link"));
    edit_owned(&s, |v| {
        v["apps"]["old"]
            .as_array_mut()
            .unwrap()
            .push("link/keep.txt".into());
        v["hashes"]["link/keep.txt"] = serde_json::json!(hash(b"precious\n"));
    });
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(
        fs::read_to_string(s.outside().join("keep.txt")).unwrap(),
        "precious\n"
    );
    assert!(fs::symlink_metadata(s.repo().join("rendered/dev/link"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!s.repo().join("rendered/dev/old").exists(), "old pruned");
}

#[test]
fn owned_entries_outside_the_directory_are_ignored() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    let abs = s.outside().join("keep.txt").display().to_string();
    edit_owned(&s, |v| {
        let old = v["apps"]["old"].as_array_mut().unwrap();
        old.push("../../../outside/keep.txt".into());
        old.push(abs.clone().into());
        old.push("web/./x".into());
    });
    let before = s.outside().join("keep.txt");
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(fs::read_to_string(before).unwrap(), "precious\n");
}

#[test]
fn a_user_file_listed_as_owned_is_not_deleted() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    s.write("rendered/dev/NOTES.md", "mine\n");
    edit_owned(&s, |v| {
        v["apps"]["old"]
            .as_array_mut()
            .unwrap()
            .push("NOTES.md".into());
        v["hashes"]["NOTES.md"] = serde_json::json!(hash(b"what hydrate wrote\n"));
    });
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(
        fs::read_to_string(s.repo().join("rendered/dev/NOTES.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_changed_owned_file_is_left_alone_with_a_warning() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    s.write("rendered/dev/old/manifest.yaml", "edited by hand\n");
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(
        fs::read_to_string(s.repo().join("rendered/dev/old/manifest.yaml")).unwrap(),
        "edited by hand\n"
    );
    // No longer owned: the next run says nothing about it.
    let again = s.render(&[]);
    assert!(!again.contains("old/manifest.yaml"), "{again}");
}

#[test]
fn unchanged_files_of_a_removed_app_are_pruned_and_user_files_survive() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    s.write("rendered/dev/README.md", "about this directory\n");
    s.write("rendered/dev/docs/a.txt", "mine\n");
    fs::create_dir_all(s.repo().join("rendered/dev/empty")).unwrap();
    insta::assert_snapshot!(s.render(&[]));
    let dev = s.repo().join("rendered/dev");
    assert!(!dev.join("old").exists());
    assert_eq!(
        fs::read_to_string(dev.join("README.md")).unwrap(),
        "about this directory\n"
    );
    assert_eq!(
        fs::read_to_string(dev.join("docs/a.txt")).unwrap(),
        "mine\n"
    );
    assert!(dev.join("empty").is_dir());
}

#[test]
fn a_live_apps_file_listed_under_a_removed_app_is_kept() {
    let s = Scratch::new();
    rendered_then_old_removed(&s);
    edit_owned(&s, |v| {
        v["apps"]["old"]
            .as_array_mut()
            .unwrap()
            .push("web/manifest.yaml".into());
    });
    insta::assert_snapshot!(s.render(&[]));
    assert!(s.repo().join("rendered/dev/web/manifest.yaml").is_file());
}

#[test]
fn a_live_apps_file_listed_under_a_removed_app_survives_a_partial_run() {
    let s = Scratch::new();
    s.app("web", "1");
    s.app("api", "1");
    s.app("old", "1");
    s.env("dev", DEV, &["web", "api", "old"]);
    assert!(s.render(&[]).starts_with("exit: 0"));
    s.env("dev", DEV, &["web", "api"]);
    edit_owned(&s, |v| {
        v["apps"]["old"]
            .as_array_mut()
            .unwrap()
            .push("api/manifest.yaml".into());
    });
    // Only web is rendered; api is carried over, old is not pruned.
    let out = s.render(&["--app", "web"]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(s.repo().join("rendered/dev/api/manifest.yaml").is_file());
    let out = s.render(&[]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(s.repo().join("rendered/dev/api/manifest.yaml").is_file());
    assert!(!s.repo().join("rendered/dev/old").exists());
}

#[test]
fn a_user_file_where_a_new_resource_goes_is_an_error() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    s.write("rendered/dev/web/manifest.yaml", "my own file\n");
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "nothing written");
}

#[test]
fn a_file_already_holding_the_render_is_adopted() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    assert!(s.render(&[]).starts_with("exit: 0"));
    // As a clone has it when `.hydrate/` is not committed.
    fs::remove_dir_all(s.repo().join("rendered/dev/.hydrate")).unwrap();
    let out = s.render(&[]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(s.repo().join("rendered/dev/.hydrate/owned").is_file());
}

fn hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

// ---- item 7: validate every environment before the first write -------

#[test]
fn a_later_environment_whose_directory_is_a_file_stops_every_write() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    s.env("prod", "  dir: rendered/prod\n", &["web"]);
    s.write("rendered/prod", "a file\n");
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "dev not written either");
}

#[test]
fn a_later_environment_with_a_broken_commit_message_stops_every_write() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    s.env(
        "prod",
        "  branch: env/prod\ncommitMessage: \"{{ oops\"\n",
        &["web"],
    );
    git(&s.repo(), &["init", "-q", "-b", "main"]);
    git(&s.repo(), &["add", "."]);
    git(&s.repo(), &["commit", "-q", "-m", "source"]);
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before, "dev not written either");
    assert_eq!(git(&s.repo(), &["branch", "--list", "env/*"]), "");
}

#[test]
fn two_environments_may_not_share_a_directory() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    s.env("prod", "  dir: rendered/dev/prod\n", &["web"]);
    let before = s.state();
    insta::assert_snapshot!(s.render(&[]));
    assert_eq!(s.state(), before);
}

#[test]
fn each_environment_is_reported_written_or_unchanged() {
    let s = Scratch::new();
    s.app("web", "1");
    s.app("api", "1");
    s.env("dev", DEV, &["web", "api"]);
    s.env("prod", "  dir: rendered/prod\n", &["web"]);
    assert!(s.render(&[]).starts_with("exit: 0"));
    s.app("api", "2");
    // dev is written again, prod is unchanged.
    insta::assert_snapshot!(s.render(&[]));
    let json = s.render(&["--output", "json"]);
    let body = json
        .split_once("--- stdout\n")
        .and_then(|(_, r)| r.split_once("--- stderr"))
        .unwrap()
        .0;
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let written: Vec<bool> = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["written"].as_bool().unwrap())
        .collect();
    assert_eq!(written, [false, false], "{json}");
}

// ---- item 8: each directory switched as a unit ------------------------

#[test]
fn a_killed_runs_leftovers_are_cleaned_up() {
    let s = Scratch::new();
    s.app("web", "1");
    s.env("dev", DEV, &["web"]);
    assert!(s.render(&[]).starts_with("exit: 0"));
    // A run without the atomic exchange killed between its two renames
    // (pid beyond any pid): the live tree set aside, the new one staged.
    let rendered = s.repo().join("rendered");
    fs::rename(
        rendered.join("dev"),
        rendered.join(".dev.hydrate-old-4294967295"),
    )
    .unwrap();
    s.write(
        "rendered/.dev.hydrate-new-4294967295/web/manifest.yaml",
        "x\n",
    );
    s.app("web", "2");
    insta::assert_snapshot!(s.render(&[]));
    let names: Vec<String> = fs::read_dir(&rendered)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["dev"]);
    let m = fs::read_to_string(rendered.join("dev/web/manifest.yaml")).unwrap();
    assert!(m.contains("v: \"2\""), "{m}");
}

/// The `v` value of every app's manifest in `dev`, and whether every file
/// matches the hash `.hydrate/owned` records for it.
fn versions(dev: &Path) -> (BTreeMap<String, usize>, bool) {
    let mut seen = BTreeMap::new();
    let Ok(owned) = fs::read(dev.join(".hydrate/owned")) else {
        return (seen, !dev.exists());
    };
    let owned: serde_json::Value = serde_json::from_slice(&owned).unwrap();
    let mut hashes_match = true;
    for (path, h) in owned["hashes"].as_object().unwrap() {
        let bytes = fs::read(dev.join(path)).unwrap_or_default();
        hashes_match &= hash(&bytes) == h.as_str().unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let v = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("v: "))
            .unwrap_or("?")
            .trim_matches('"')
            .to_string();
        *seen.entry(v).or_default() += 1;
    }
    (seen, hashes_match)
}

#[test]
fn kill_9_at_random_points_leaves_each_directory_all_old_or_all_new() {
    const APPS: usize = 300;
    const KILLS: usize = 50;
    let s = Scratch::new();
    s.write("base/kustomization.yaml", "resources:\n- cm.yaml\n");
    let set_version = |v: usize| {
        s.write(
            "base/cm.yaml",
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: \"{v}\"\n  pad: \"{}\"\n", "x".repeat(2000)),
        );
    };
    let names: Vec<String> = (0..APPS).map(|i| format!("app{i:03}")).collect();
    for n in &names {
        s.write(
            &format!("apps/{n}/kustomization.yaml"),
            &format!("namePrefix: {n}-\nresources:\n- ../../base\n"),
        );
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    s.env("dev", DEV, &refs);
    s.env("prod", "  dir: rendered/prod\n  layout: resources\n", &refs);
    set_version(0);
    assert!(s.render(&[]).starts_with("exit: 0"));
    // A run that rewrites every file, as each run below does.
    set_version(999);
    let start = Instant::now();
    assert!(s.render(&[]).starts_with("exit: 0"));
    let full = start.elapsed();
    let seed = clock_seed();
    let mut rng = Rng(seed);
    let bin = env!("CARGO_BIN_EXE_hydrate");
    let mut current = [999, 999];
    let (mut stayed_old, mut became_new, mut left_staging) = (0, 0, 0);
    for kill in 1..=KILLS {
        set_version(kill);
        let mut child = std::process::Command::new(bin)
            .args(["render", "--root"])
            .arg(s.repo())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Up to 1.2 full runs: most kills land while the new tree is
        // built, some after the switch, a few after the run ended.
        let wait = full.as_micros() as u64 * 6 / 5;
        std::thread::sleep(Duration::from_micros(rng.below(wait)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let leftovers = fs::read_dir(s.repo().join("rendered"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".hydrate-")
            })
            .count();
        if leftovers > 0 {
            left_staging += 1;
        }
        for (i, env) in ["dev", "prod"].into_iter().enumerate() {
            let (seen, hashes_match) = versions(&s.repo().join("rendered").join(env));
            assert!(
                hashes_match,
                "seed {seed} kill {kill}: {env} has files that differ from .hydrate/owned"
            );
            assert_eq!(
                seen.len(),
                1,
                "seed {seed} kill {kill}: {env} is mixed: {seen:?}"
            );
            let (v, count) = seen.into_iter().next().unwrap();
            assert_eq!(count, APPS, "seed {seed} kill {kill}: {env}: {v}");
            if v == kill.to_string() {
                became_new += 1;
                current[i] = kill;
            } else {
                assert_eq!(
                    v,
                    current[i].to_string(),
                    "seed {seed} kill {kill}: {env} neither old nor new"
                );
                stayed_old += 1;
            }
        }
    }
    // The next complete run cleans up and lands everything.
    let out = s.render(&[]);
    assert!(out.starts_with("exit: 0"), "{out}");
    let names: Vec<String> = fs::read_dir(s.repo().join("rendered"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "leftovers remain: {names:?}");
    for env in ["dev", "prod"] {
        let (seen, ok) = versions(&s.repo().join("rendered").join(env));
        assert!(ok);
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [(KILLS.to_string(), APPS)]
        );
    }
    report(&format!(
        "kill test: {KILLS} kills over {APPS} apps x 2 environments (full render {:.2}s, seed {seed}): \
         {stayed_old} environment states all old, {became_new} all new, 0 mixed; \
         {left_staging} kills left a staging tree, all cleaned by the next run",
        full.as_secs_f64()
    ));
}
