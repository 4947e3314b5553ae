//! Environments answered by the record of their last clean run
//! (`.hydrate/cache/*.settled`): a run in which nothing an environment
//! depends on changed renders, looks up and compares nothing for it and
//! reports what the long way reports; any change to an input, to the
//! output directory or to the configuration takes the long way again.

use std::path::{Path, PathBuf};

use hydrate::env;

use crate::support::{clock_seed, demo_copy, render_at, Rng};

/// Waits until what was just written is older than the racy window:
/// stats younger than it never go into a record.
fn age() {
    std::thread::sleep(env::cache::RACY + std::time::Duration::from_millis(100));
}

fn cache_files(root: &Path, ext: &str) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root.join(".hydrate/cache")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// Deletes every rendered result in the cache: a run that looks one up
/// then renders and stores it again.
fn forget_results(root: &Path) {
    for e in cache_files(root, "out") {
        std::fs::remove_file(e).unwrap();
    }
}

/// One `hydrate render`: (stdout, stderr), asserting success.
fn render(root: &Path, args: &[&str]) -> (String, String) {
    let out = render_at(root).args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    (stdout, stderr)
}

/// The demo rendered, then found unchanged once it is old enough: every
/// environment then has its record.
fn settled_demo() -> (tempfile::TempDir, (String, String)) {
    let repo = demo_copy();
    let root = repo.path();
    // A warning, so that replaying them is checked too.
    let dev = root.join("testdata/apps/redis/overlays/dev/kustomization.yaml");
    let mut k = std::fs::read_to_string(&dev).unwrap();
    k.push_str("commonLabels:\n  tier: cache\n");
    std::fs::write(&dev, k).unwrap();
    render(root, &[]);
    assert!(
        cache_files(root, "settled").is_empty(),
        "just written: racy"
    );
    age();
    let unchanged = render(root, &[]);
    assert_eq!(
        unchanged.0.matches(": unchanged").count(),
        3,
        "{}",
        unchanged.0
    );
    assert_eq!(cache_files(root, "settled").len(), 3);
    (repo, unchanged)
}

#[test]
fn an_unchanged_environment_is_answered_by_its_record_alone() {
    let (repo, long_way) = settled_demo();
    let root = repo.path();
    assert!(long_way.1.contains("commonLabels"), "{}", long_way.1);
    // Without its rendered results, a run that looked anything up would
    // render and store them again.
    forget_results(root);
    let index = root.join(".hydrate/cache/index");
    let index_before = std::fs::read(&index).unwrap();
    let settled = render(root, &[]);
    assert_eq!(settled, long_way, "the same report and warnings");
    assert!(cache_files(root, "out").is_empty(), "nothing rendered");
    assert_eq!(std::fs::read(&index).unwrap(), index_before);
}

#[test]
fn a_changed_input_renders_only_the_app_that_read_it() {
    let (repo, _) = settled_demo();
    let root = repo.path();
    // Without the rendered results, every app looked up is rendered and
    // stored again: the entries stored tell which apps ran.
    forget_results(root);
    let api = root.join("testdata/apps/api/overlays/production/kustomization.yaml");
    let mut k = std::fs::read_to_string(&api).unwrap();
    k.push_str("commonAnnotations:\n  settled: \"no\"\n");
    std::fs::write(&api, k).unwrap();
    let (out, _) = render(root, &[]);
    assert!(
        out.contains("rendered/production: 1 files changed"),
        "{out}"
    );
    assert_eq!(out.matches(": unchanged").count(), 2, "{out}");
    let manifest = root.join("rendered/production/api/manifest.yaml");
    assert!(std::fs::read_to_string(manifest)
        .unwrap()
        .contains("settled: \"no\""));
    assert_eq!(
        cache_files(root, "out").len(),
        1,
        "production's other apps were taken as they are, not looked up"
    );
    // The written environment has a record again, for the apps whose
    // inputs and files are old enough to vouch for them: the next run
    // renders the changed app (its result is stored) and nothing else,
    // and then records the whole environment.
    assert_eq!(cache_files(root, "settled").len(), 3);
    age();
    forget_results(root);
    let (again, _) = render(root, &[]);
    assert_eq!(again.matches(": unchanged").count(), 3, "{again}");
    assert_eq!(cache_files(root, "out").len(), 1, "only api rendered");
    forget_results(root);
    let (settled, _) = render(root, &[]);
    assert_eq!(settled, again);
    assert!(cache_files(root, "out").is_empty(), "nothing rendered");
}

/// The settled check states `overlays/dev/../../base` as `base` only
/// when the directories it climbs over are no symlinks this run. An app's
/// `overlays` moved elsewhere and linked back keeps every file it read
/// (same inodes), but `../../base` now leads to the base beside the moved
/// overlays: the apps render from that base, not from the record.
#[cfg(unix)]
#[test]
fn overlays_linked_elsewhere_climb_to_the_base_beside_them() {
    let (repo, _) = settled_demo();
    let root = repo.path();
    let api = root.join("testdata/apps/api");
    let moved = root.join("testdata/moved/api");
    crate::support::copy_tree(&api.join("base"), &moved.join("base"));
    let k = moved.join("base/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("commonAnnotations:\n  base: moved\n");
    std::fs::write(&k, text).unwrap();
    std::fs::rename(api.join("overlays"), moved.join("overlays")).unwrap();
    std::os::unix::fs::symlink("../../moved/api/overlays", api.join("overlays")).unwrap();
    age();
    let (out, _) = render(root, &[]);
    assert_eq!(out.matches(": unchanged").count(), 0, "{out}");
    for env in ["dev", "staging", "production"] {
        let manifest = root.join(format!("rendered/{env}/api/manifest.yaml"));
        let text = std::fs::read_to_string(manifest).unwrap();
        assert!(text.contains("base: moved"), "{env}: {text}");
    }
}

/// The repository named by another path (from its parent directory, or
/// absolute) is the same repository: its records answer, and without
/// them its rendered results do; nothing is rendered again.
#[test]
fn the_root_however_spelled_is_one_repository() {
    let (repo, long_way) = settled_demo();
    let root = repo.path();
    let parent = root.parent().unwrap();
    let from_parent = |spelled: &Path| {
        let out = crate::support::hydrate()
            .current_dir(parent)
            .args(["render", "--root"])
            .arg(spelled)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Without the records: every app looked up, every result found.
    for record in cache_files(root, "settled") {
        std::fs::remove_file(record).unwrap();
    }
    let results = cache_files(root, "out");
    let stdout = from_parent(&root.canonicalize().unwrap());
    assert_eq!(stdout, long_way.0);
    assert_eq!(
        cache_files(root, "out"),
        results,
        "every result found, none stored"
    );
    // That run's records, under a third spelling: without the rendered
    // results, a run that looked anything up would render it again.
    forget_results(root);
    let stdout = from_parent(Path::new(root.file_name().unwrap()));
    assert_eq!(stdout, long_way.0);
    assert!(
        cache_files(root, "out").is_empty(),
        "answered by the records"
    );
}

/// After a run that rewrote one app, its record lists the whole tree with
/// the app's entries as young: a file the user adds there is still found
/// and carried into the next tree, and so is one added to an app the run
/// did not touch.
#[test]
fn a_file_added_after_a_write_is_carried_into_the_next_tree() {
    let (repo, _) = settled_demo();
    let root = repo.path();
    let api = root.join("testdata/apps/api/overlays/production/kustomization.yaml");
    let base = std::fs::read_to_string(&api).unwrap();
    for (round, value) in ["one", "two", "three"].iter().enumerate() {
        std::fs::write(
            &api,
            format!("{base}commonAnnotations:\n  round: {value}\n"),
        )
        .unwrap();
        let (out, _) = render(root, &[]);
        assert!(
            out.contains("rendered/production: 1 files changed"),
            "{out}"
        );
        let manifest = std::fs::read_to_string(root.join("rendered/production/api/manifest.yaml"));
        assert!(manifest.unwrap().contains(&format!("round: {value}")));
        for (i, dir) in ["api", "web"].iter().enumerate().take(round) {
            let note = root.join(format!("rendered/production/{dir}/NOTES-{i}.md"));
            assert_eq!(std::fs::read_to_string(&note).unwrap(), "mine\n", "{round}");
        }
        if let Some(dir) = ["api", "web"].get(round) {
            let note = root.join(format!("rendered/production/{dir}/NOTES-{round}.md"));
            std::fs::write(note, "mine\n").unwrap();
        }
    }
}

#[test]
fn a_hand_edit_or_a_new_file_in_the_output_is_seen() {
    let (repo, _) = settled_demo();
    let root = repo.path();
    let manifest = root.join("rendered/dev/api/manifest.yaml");
    let original = std::fs::read(&manifest).unwrap();
    // Same length, so only the stat's times can tell.
    let mut edited = original.clone();
    let at = edited.iter().position(|b| *b == b'a').unwrap();
    edited[at] = b'b';
    std::fs::write(&manifest, &edited).unwrap();
    let (out, _) = render(root, &[]);
    assert!(out.contains("rendered/dev: 1 files changed"), "{out}");
    assert_eq!(std::fs::read(&manifest).unwrap(), original, "restored");

    // A file hydrate did not write: the long way (which leaves it alone).
    forget_results(root);
    let stray = root.join("rendered/staging/stray.yaml");
    std::fs::write(&stray, "kind: Stray\n").unwrap();
    let (out, _) = render(root, &[]);
    assert!(out.contains("rendered/staging: unchanged"), "{out}");
    assert!(
        !cache_files(root, "out").is_empty(),
        "looked up and rendered"
    );
    assert!(stray.exists(), "not hydrate's file: left alone");
}

#[test]
fn another_configuration_or_option_is_another_record() {
    let (repo, long_way) = settled_demo();
    let root = repo.path();
    forget_results(root);
    // --strict changes what the guards refuse: not the recorded run.
    let (out, _) = render(root, &["--strict"]);
    assert_eq!(out, long_way.0);
    assert!(!cache_files(root, "out").is_empty(), "rendered again");
    forget_results(root);
    // A setting of the environment: its layout (one file per resource).
    let dev = root.join("environments/dev.yaml");
    let text = std::fs::read_to_string(&dev).unwrap();
    let text = text.replacen(
        "  dir: rendered/dev\n",
        "  dir: rendered/dev\n  layout: resources\n",
        1,
    );
    std::fs::write(&dev, text).unwrap();
    let (out, _) = render(root, &[]);
    assert!(!out.contains("rendered/dev: unchanged"), "{out}");
    assert!(!root.join("rendered/dev/api/manifest.yaml").exists());
}

#[test]
fn a_record_sealed_under_another_secret_is_no_record() {
    let (repo, long_way) = settled_demo();
    let root = repo.path();
    forget_results(root);
    let out = render_at(root)
        .env(
            "HYDRATE_CACHE_KEY",
            "another-key-0123456789abcdef0123456789abcdef",
        )
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), long_way.0);
    assert!(!cache_files(root, "out").is_empty(), "rendered again");
}

#[test]
fn a_run_that_stages_an_environment_removes_its_record_first() {
    let (repo, _) = settled_demo();
    let root = repo.path();
    // web's dev overlay made unreadable YAML: dev goes the long way and
    // its render fails after dev's stage opened; nothing is written.
    let k = root.join("testdata/apps/web/overlays/dev/kustomization.yaml");
    let before = std::fs::read(&k).unwrap();
    std::fs::write(&k, "resources: [\n").unwrap();
    let out = render_at(root).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let dev = env::cache::settled::path(
        &root.join(".hydrate/cache"),
        "dev",
        Path::new("rendered/dev"),
    );
    assert!(
        !dev.exists(),
        "dev's record removed before its stage opened"
    );
    assert_eq!(
        cache_files(root, "settled").len(),
        2,
        "staging and production read nothing that changed: settled"
    );
    std::fs::write(&k, before).unwrap();
    let (out, _) = render(root, &[]);
    assert_eq!(out.matches(": unchanged").count(), 3, "{out}");
}

/// Each app's version as its rendered ConfigMap says.
fn rendered_versions(root: &Path, apps: usize) -> Vec<String> {
    (0..apps)
        .map(|i| {
            let m = root.join(format!("rendered/dev/app{i:02}/manifest.yaml"));
            let text = std::fs::read_to_string(&m).unwrap_or_default();
            text.lines()
                .find_map(|l| l.trim().strip_prefix("v: "))
                .unwrap_or("?")
                .trim_matches('"')
                .to_string()
        })
        .collect()
}

#[test]
fn kill_9_at_random_points_never_leaves_a_record_vouching_for_a_stale_app() {
    const APPS: usize = 40;
    const KILLS: usize = 15;
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    let write = |p: &str, s: &str| {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    let set_version = |i: usize, v: usize| {
        write(
            &format!("apps/app{i:02}/cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: \"{v}\"\n"
            ),
        );
    };
    let mut env = String::from("name: dev\noutput: {dir: rendered/dev}\napps:\n");
    for i in 0..APPS {
        write(
            &format!("apps/app{i:02}/kustomization.yaml"),
            &format!("namePrefix: app{i:02}-\nresources:\n- cm.yaml\n"),
        );
        set_version(i, 0);
        env.push_str(&format!(
            "  - {{name: app{i:02}, kustomize: apps/app{i:02}}}\n"
        ));
    }
    write("environments/dev.yaml", &env);
    render(root, &[]);
    age();
    let start = std::time::Instant::now();
    render(root, &[]);
    let full = start.elapsed();
    assert_eq!(cache_files(root, "settled").len(), 1, "settled");
    let seed = clock_seed();
    let mut rng = Rng(seed);
    let mut expected = vec!["0".to_string(); APPS];
    for kill in 1..=KILLS {
        // Now and then the last edits grow old enough to be recorded, so
        // that records vouch for apps edited and killed before.
        if kill % 3 == 0 {
            age();
        }
        let app = kill * 7 % APPS;
        set_version(app, kill);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hydrate"))
            .args(["render", "--root"])
            .arg(root)
            .env("HYDRATE_CACHE_KEY", crate::support::CACHE_KEY)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Up to 1.5 full runs: while it checks the record, renders,
        // switches the directory, writes the next record, or after.
        std::thread::sleep(std::time::Duration::from_micros(
            rng.below(full.as_micros() as u64 * 3 / 2),
        ));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        expected[app] = kill.to_string();
        render(root, &[]);
        assert_eq!(
            rendered_versions(root, APPS),
            expected,
            "seed {seed} kill {kill}: after a complete run"
        );
    }
    age();
    forget_results(root);
    let (out, _) = render(root, &[]);
    assert!(out.contains("rendered/dev: unchanged"), "{out}");
    assert_eq!(rendered_versions(root, APPS), expected, "seed {seed}");
}
