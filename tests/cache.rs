//! The render cache (`.hydrate/cache`): a render whose inputs are unchanged
//! is answered from it, a change to any input re-renders exactly the jobs
//! that read it, a damaged entry is never trusted, and the bytes written
//! are the same with and without it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hydrate::env::{self, Cache};

use crate::support::{demo_copy, hydrate, list_files, render_at, CACHE_KEY};

/// The secret `hydrate` runs with in these tests (`HYDRATE_CACHE_KEY`).
fn secret() -> env::cache::Secret {
    env::cache::Secret::from_text(CACHE_KEY.as_bytes()).unwrap()
}

/// The demo with a patch file in api's production overlay, a deprecated
/// field (a warning) in redis's dev overlay, and dev written one file per
/// resource.
fn demo() -> tempfile::TempDir {
    let repo = demo_copy();
    let root = repo.path();
    let api = root.join("testdata/apps/api/overlays/production");
    std::fs::write(
        api.join("patch.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  minReadySeconds: 5\n",
    )
    .unwrap();
    append(
        &api.join("kustomization.yaml"),
        "patches:\n  - path: patch.yaml\n",
    );
    append(
        &root.join("testdata/apps/redis/overlays/dev/kustomization.yaml"),
        "commonLabels:\n  tier: cache\n",
    );
    let dev = root.join("environments/dev.yaml");
    let text = std::fs::read_to_string(&dev).unwrap();
    let text = text.replacen(
        "  dir: rendered/dev\n",
        "  dir: rendered/dev\n  layout: resources\n",
        1,
    );
    std::fs::write(dev, text).unwrap();
    repo
}

fn append(path: &Path, text: &str) {
    let mut s = std::fs::read_to_string(path).unwrap();
    s.push_str(text);
    std::fs::write(path, s).unwrap();
}

fn jobs(root: &Path) -> Vec<env::Job> {
    let envs = env::load_environments(root).unwrap();
    env::plan(root, &envs, &env::Selection::default())
}

/// Renders every job through a cache in `dir` (storing the misses).
fn fill(root: &Path, dir: &Path, build: &str) -> env::cache::Stats {
    let cache = Cache::at(dir.to_path_buf(), build.into(), u64::MAX, secret());
    env::render_all_cached(&jobs(root), Some(&cache), &|| {}).unwrap();
    cache.stats()
}

/// The jobs a fresh run would have to render.
fn misses(root: &Path, dir: &Path, build: &str) -> BTreeSet<String> {
    let cache = Cache::at(dir.to_path_buf(), build.into(), u64::MAX, secret());
    jobs(root)
        .iter()
        .filter(|j| cache.lookup(j).hit().is_none())
        .map(|j| format!("{}/{}", j.env, j.app))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_changed_input_invalidates_exactly_the_renders_that_read_it() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    let all = jobs(root).len();
    age();
    assert_eq!(fill(root, &dir, "t").stored, all);
    assert_eq!(misses(root, &dir, "t"), set(&[]), "everything cached");
    let apps = "testdata/apps";
    let every = |app: &str| -> Vec<String> {
        ["dev", "production", "staging"]
            .iter()
            .map(|e| format!("{e}/{app}"))
            .collect()
    };
    let cases: Vec<(String, &str, Vec<String>)> = vec![
        (
            format!("{apps}/status/values/staging.yaml"),
            "a values file",
            vec!["staging/status".into()],
        ),
        (
            format!("{apps}/status/chart/templates/service.yaml"),
            "a chart template",
            every("status"),
        ),
        (
            format!("{apps}/status/chart/values.yaml"),
            "a chart's values",
            every("status"),
        ),
        (
            format!("{apps}/web/base/deployment.yaml"),
            "a base file",
            every("web"),
        ),
        (
            format!("{apps}/web/base/kustomization.yaml"),
            "a base kustomization",
            every("web"),
        ),
        (
            format!("{apps}/api/overlays/production/patch.yaml"),
            "a patch",
            vec!["production/api".into()],
        ),
        (
            format!("{apps}/redis/overlays/dev/kustomization.yaml"),
            "an overlay",
            vec!["dev/redis".into()],
        ),
    ];
    for (file, what, want) in cases {
        append(&root.join(&file), "# changed\n");
        let want: BTreeSet<String> = want.into_iter().collect();
        assert_eq!(misses(root, &dir, "t"), want, "{what}: {file}");
        assert_eq!(
            fill(root, &dir, "t").stored,
            want.len(),
            "{what}: only those render"
        );
        assert_eq!(misses(root, &dir, "t"), set(&[]), "{what}: cached again");
    }
    // Files that were absent but would be read: a new template, a second
    // kustomization file (kustomize then fails).
    std::fs::write(
        root.join(format!("{apps}/status/chart/templates/extra.yaml")),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    )
    .unwrap();
    assert_eq!(
        misses(root, &dir, "t"),
        every("status").into_iter().collect()
    );
    std::fs::write(
        root.join(format!("{apps}/web/overlays/dev/kustomization.yml")),
        "",
    )
    .unwrap();
    assert!(misses(root, &dir, "t").contains("dev/web"));
    assert!(!misses(root, &dir, "t").contains("staging/web"));
}

/// A base the overlays name (`../../base`) through a symlink: a new file
/// beside it changes nothing they read, and pointing the link at another
/// base with the same file names re-renders them (the named directory is
/// an input; the directory it is in is not).
#[cfg(unix)]
#[test]
fn a_base_pointed_elsewhere_re_renders_and_a_file_beside_it_does_not() {
    let repo = demo();
    let root = repo.path();
    let web = root.join("testdata/apps/web");
    std::fs::rename(web.join("base"), web.join("base-a")).unwrap();
    std::fs::create_dir(web.join("base-b")).unwrap();
    for f in std::fs::read_dir(web.join("base-a")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, web.join("base-b").join(f.file_name().unwrap())).unwrap();
    }
    append(&web.join("base-b/kustomization.yaml"), "# b\n");
    std::os::unix::fs::symlink("base-a", web.join("base")).unwrap();
    let dir = root.join(".hydrate/cache");
    age();
    fill(root, &dir, "t");
    std::fs::write(web.join("NOTES.md"), "beside the base\n").unwrap();
    assert_eq!(misses(root, &dir, "t"), set(&[]), "a file beside the base");
    std::fs::remove_file(web.join("base")).unwrap();
    std::os::unix::fs::symlink("base-b", web.join("base")).unwrap();
    assert_eq!(
        misses(root, &dir, "t"),
        set(&["dev/web", "production/web", "staging/web"]),
        "the base pointed elsewhere"
    );
}

/// Waits until files written now are older than the racy window, so the
/// next run remembers their stats.
fn age() {
    std::thread::sleep(env::cache::RACY + std::time::Duration::from_millis(100));
}

#[test]
fn the_stat_index_answers_for_unchanged_inputs_and_never_for_changed_ones() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    age();
    let first = fill(root, &dir, "t");
    assert!(
        first.inputs_hashed > 0 && first.inputs_indexed == 0,
        "{first:?}"
    );
    let index = || std::fs::read(dir.join("index")).unwrap();
    let learnt = index();
    let warm = fill(root, &dir, "t");
    assert_eq!(warm.hits, jobs(root).len());
    assert_eq!(warm.inputs_hashed, 0, "nothing read again: {warm:?}");
    assert!(warm.inputs_indexed > 0);
    // A run that learnt nothing leaves the index as it was (it is written
    // to a new file and renamed, so a rewrite is a new file), and the next
    // run trusts it as much.
    #[cfg(unix)]
    let ino =
        || std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("index")).unwrap());
    #[cfg(unix)]
    let before = ino();
    let again = fill(root, &dir, "t");
    assert_eq!(index(), learnt, "an unchanged run writes no index");
    #[cfg(unix)]
    assert_eq!(ino(), before, "an unchanged run writes no index");
    assert_eq!((again.hits, again.inputs_hashed), (warm.hits, 0));
    // Same size, modification time put back: the change time still moved.
    let values = root.join("testdata/apps/status/values/staging.yaml");
    let text = std::fs::read(&values).unwrap();
    let mtime = std::fs::metadata(&values).unwrap().modified().unwrap();
    let mut changed = text.clone();
    let last = changed
        .iter()
        .rposition(|b| b.is_ascii_alphanumeric())
        .unwrap();
    changed[last] = if changed[last] == b'x' { b'y' } else { b'x' };
    std::fs::write(&values, &changed).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&values)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(misses(root, &dir, "t"), set(&["staging/status"]));
    // Racy: rewritten within the racy window of a run that read it, same
    // size: never remembered, so the next change is seen too (a third
    // content: the original's result is still cached, rightly).
    fill(root, &dir, "t");
    let mut third = changed.clone();
    third[last] = if changed[last] == b'x' && text[last] != b'q' {
        b'q'
    } else {
        b'w'
    };
    assert!(third != text && third != changed);
    std::fs::write(&values, &third).unwrap();
    assert_eq!(misses(root, &dir, "t"), set(&["staging/status"]));
}

/// A run that learnt a few stats and no job record leaves the index as it
/// was (rewriting an index of every input for one changed file was a
/// quarter of such a run at 10,000 apps); the runs after it hash that file
/// again, and trust nothing they should not.
#[test]
fn a_few_new_stats_leave_the_index_unwritten_and_are_hashed_again() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    age();
    fill(root, &dir, "t");
    let index = || std::fs::read(dir.join("index")).unwrap();
    let before = index();
    let values = root.join("testdata/apps/status/values/staging.yaml");
    let mut text = std::fs::read(&values).unwrap();
    text.extend_from_slice(b"\n# changed\n");
    std::fs::write(&values, &text).unwrap();
    age();
    assert_eq!(misses(root, &dir, "t"), set(&["staging/status"]));
    let changed = fill(root, &dir, "t");
    assert_eq!(changed.inputs_hashed, 1, "{changed:?}");
    assert_eq!(index(), before, "one new stat: the index is not rewritten");
    for _ in 0..2 {
        let next = fill(root, &dir, "t");
        assert_eq!(next.hits, jobs(root).len(), "{next:?}");
        assert_eq!(next.inputs_hashed, 1, "hashed again, not trusted: {next:?}");
    }
    // Changed once more: its result is another, found by its new hash.
    text.extend_from_slice(b"# again\n");
    std::fs::write(&values, &text).unwrap();
    age();
    assert_eq!(misses(root, &dir, "t"), set(&["staging/status"]));
}

#[test]
fn an_environment_file_change_invalidates_exactly_its_apps() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    age();
    fill(root, &dir, "t");
    let dev = root.join("environments/dev.yaml");
    let text = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(
        &dev,
        text.replacen("namespace: status-dev", "namespace: status-dev2", 1),
    )
    .unwrap();
    assert_eq!(misses(root, &dir, "t"), set(&["dev/status"]));
}

#[test]
fn the_key_holds_hydrates_version() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    fill(root, &dir, "0.1.0+build-a");
    assert_eq!(misses(root, &dir, "0.1.0+build-a"), set(&[]));
    assert_eq!(misses(root, &dir, "0.1.0+build-b").len(), jobs(root).len());
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "out"))
        .collect();
    out.sort();
    out
}

fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    list_files(root)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(root.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

#[test]
fn corrupt_truncated_and_foreign_entries_are_rendered_again_and_replaced() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    let first = render_at(root).output().unwrap();
    assert!(first.status.success());
    let written = tree(&root.join("rendered"));
    let files = entries(&dir);
    assert!(files.len() >= jobs(root).len(), "{files:?}");
    let originals: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    for (i, f) in files.iter().enumerate() {
        let mut bytes = originals[i].clone();
        match i % 5 {
            0 => bytes.truncate(bytes.len() / 2),
            1 => *bytes.last_mut().unwrap() ^= 0x20,
            2 => bytes = originals[(i + 1) % originals.len()].clone(),
            3 => bytes.clear(),
            _ => bytes = b"not a cache entry".to_vec(),
        }
        std::fs::write(f, bytes).unwrap();
    }
    // A damaged index (stat index, job inputs, render times) is ignored.
    let index = dir.join("index");
    let good_index = std::fs::read(&index).unwrap();
    std::fs::write(&index, &good_index[..good_index.len() / 2]).unwrap();
    std::fs::remove_dir_all(root.join("rendered")).unwrap();
    let second = render_at(root).output().unwrap();
    assert!(second.status.success());
    assert_eq!(tree(&root.join("rendered")), written, "the same bytes");
    assert_ne!(
        std::fs::read(&index).unwrap().len(),
        good_index.len() / 2,
        "the index is rebuilt"
    );
    assert_eq!(second.stderr, first.stderr, "the same warnings");
    for (f, original) in files.iter().zip(&originals) {
        assert_eq!(
            &std::fs::read(f).unwrap(),
            original,
            "{} rewritten",
            f.display()
        );
    }
}

#[test]
fn no_cache_writes_the_same_bytes_and_warnings_replay_from_the_cache() {
    let repo = demo();
    let root = repo.path();
    let cold = render_at(root).output().unwrap();
    assert!(cold.status.success());
    let stderr = String::from_utf8_lossy(&cold.stderr).into_owned();
    assert!(
        stderr.contains("warning[deprecation]") && stderr.contains("commonLabels"),
        "{stderr}"
    );
    let written = tree(&root.join("rendered"));

    std::fs::remove_dir_all(root.join("rendered")).unwrap();
    let warm = render_at(root).output().unwrap();
    assert!(warm.status.success());
    assert_eq!(
        String::from_utf8_lossy(&warm.stderr),
        stderr,
        "warnings from the cache"
    );
    assert_eq!(
        tree(&root.join("rendered")),
        written,
        "bytes from the cache"
    );
    let again = render_at(root).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&again.stdout)
            .matches(": unchanged")
            .count(),
        3
    );

    std::fs::remove_dir_all(root.join("rendered")).unwrap();
    let before = entries(&root.join(".hydrate/cache"));
    std::fs::remove_dir_all(root.join(".hydrate/cache")).unwrap();
    let bypass = render_at(root).arg("--no-cache").output().unwrap();
    assert!(bypass.status.success());
    assert_eq!(String::from_utf8_lossy(&bypass.stderr), stderr);
    assert_eq!(
        tree(&root.join("rendered")),
        written,
        "--no-cache: the same bytes"
    );
    assert!(
        !root.join(".hydrate/cache").exists(),
        "--no-cache writes no cache"
    );
    assert!(!before.is_empty());
}

#[test]
fn least_recently_used_entries_go_first_when_the_cache_is_full() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    fill(root, &dir, "t");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    let mut total = 0;
    for f in entries(&dir) {
        total += std::fs::metadata(&f).unwrap().len();
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    // A run of dev alone, with one of its inputs changed: dev's entries
    // are used (and so the most recent), one is stored, and the cache is
    // trimmed to its bound by dropping the entries used longest ago.
    append(
        &root.join("testdata/apps/redis/overlays/dev/kustomization.yaml"),
        "# changed\n",
    );
    let limit = total / 2;
    let cache = Cache::at(dir.clone(), "t".into(), limit, secret());
    let dev: Vec<env::Job> = jobs(root).into_iter().filter(|j| j.env == "dev").collect();
    env::render_all_cached(&dev, Some(&cache), &|| {}).unwrap();
    assert_eq!(cache.stats().stored, 1);
    let left: u64 = entries(&dir)
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(left <= limit, "{left} > {limit}");
    let m = misses(root, &dir, "t");
    assert!(
        m.iter().all(|j| !j.starts_with("dev/")),
        "dev was used last: {m:?}"
    );
    assert!(m.len() > 3, "something was evicted: {m:?}");
}

#[test]
fn cache_clean_removes_only_the_cache() {
    let repo = demo();
    let root = repo.path();
    assert!(render_at(root).output().unwrap().status.success());
    let dir = root.join(".hydrate/cache");
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
        "*\n"
    );
    assert!(!entries(&dir).is_empty());
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let out = hydrate()
        .args(["cache", "clean", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(entries(&dir).is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    let out = hydrate()
        .args(["cache", "clean", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!dir.exists());
}

/// The guards read more of a document than its identity: a cached Secret
/// comes back with its data, so a warm cache cannot let a plain Secret past
/// `secrets: refuse`.
#[test]
fn a_cached_secret_keeps_its_data_for_the_secret_guard() {
    let repo = demo_copy();
    let root = repo.path();
    let dir = root.join(".hydrate/cache-test");
    fill(root, &dir, "b1");
    let cache = Cache::at(dir, "b1".into(), u64::MAX, secret());
    let api = jobs(root)
        .into_iter()
        .find(|j| j.env == "production" && j.app == "api")
        .unwrap();
    let hit = cache.lookup(&api).hit().expect("a cache hit");
    let secret = hit
        .objects
        .iter()
        .find(|o| o.id.gvk.kind == "Secret")
        .expect("api renders a Secret");
    assert!(
        secret
            .node
            .document()
            .and_then(|n| n.get("data"))
            .is_some_and(|d| d.as_map().is_some()),
        "the cached Secret lost its data"
    );
    // Every other named object is handed on as its identity alone, and
    // says so in its type; for a validating caller with no findings
    // stored under its tags, the cache gives every one back whole.
    let named = hit
        .objects
        .iter()
        .filter(|o| o.id.gvk.kind != "Secret" && !o.id.name.is_empty());
    assert!(named.clone().count() > 0);
    assert!(named.clone().all(|o| o.node.document().is_none()));
    let whole = Cache::at(
        root.join(".hydrate/cache-test"),
        "b1".into(),
        u64::MAX,
        self::secret(),
    )
    .with_findings(Default::default());
    let hit = whole.lookup(&api).hit().expect("a cache hit");
    assert!(hit.objects.iter().all(|o| o.node.document().is_some()));

    render_at(root).assert().success();
    let prod = root.join("environments/production.yaml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, text.replace("secrets: allow", "secrets: refuse")).unwrap();
    let out = render_at(root).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Secret"), "{err}");
}

/// An environment whose guard lets Secrets through unread (`secrets:
/// allow`) gets its cached Secrets as identities, like any named object:
/// nothing reads their values, so they are not parsed again on every hit.
/// Any other environment still gets them whole (above).
#[test]
fn a_secret_its_guard_never_reads_comes_back_as_its_identity() {
    let repo = demo_copy();
    let root = repo.path();
    let dir = root.join(".hydrate/cache-test");
    fill(root, &dir, "b1");
    let api = |env: &str| {
        jobs(root)
            .into_iter()
            .find(|j| j.env == env && j.app == "api")
            .unwrap()
    };
    let cache = Cache::at(dir, "b1".into(), u64::MAX, secret())
        .with_secrets_unread(["production".to_string()]);
    let secret_body = |env: &str| {
        let hit = cache.lookup(&api(env)).hit().expect("a cache hit");
        let s = hit
            .objects
            .into_iter()
            .find(|o| o.id.gvk.kind == "Secret")
            .expect("api renders a Secret");
        s.node.document().is_some()
    };
    assert!(!secret_body("production"), "parsed although unread");
    assert!(secret_body("staging"), "staging's guard may read it");
}

/// A `.hydrate` that is a symlink is never written through: the run
/// renders without the cache and nothing lands where the link points.
#[test]
fn a_symlinked_cache_directory_is_never_written_through() {
    let repo = demo_copy();
    let root = repo.path();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(".hydrate")).unwrap();
    render_at(root).assert().success();
    let written: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(written.is_empty(), "wrote through the symlink: {written:?}");
}

/// Renders the jobs of environment `env` through `cache` (and finishes it).
fn fill_env(root: &Path, cache: &Cache, env: &str) {
    let some: Vec<env::Job> = jobs(root).into_iter().filter(|j| j.env == env).collect();
    env::render_all_cached(&some, Some(cache), &|| {}).unwrap();
}

#[test]
fn overlapping_runs_keep_each_others_jobs_and_stats() {
    let repo = demo();
    let root = repo.path();
    let dir = root.join(".hydrate/cache");
    age();
    // Two runs open the cache before either writes its index: the second
    // to finish merges with what the first wrote.
    let a = Cache::at(dir.clone(), "t".into(), u64::MAX, secret());
    let b = Cache::at(dir.clone(), "t".into(), u64::MAX, secret());
    fill_env(root, &a, "dev");
    fill_env(root, &b, "staging");
    let production: BTreeSet<String> = jobs(root)
        .iter()
        .filter(|j| j.env == "production")
        .map(|j| format!("{}/{}", j.env, j.app))
        .collect();
    assert!(!production.is_empty());
    assert_eq!(misses(root, &dir, "t"), production);
    // A run that opens the index after both wrote it adds its own jobs
    // and keeps theirs.
    let c = Cache::at(dir.clone(), "t".into(), u64::MAX, secret());
    fill_env(root, &c, "production");
    assert_eq!(misses(root, &dir, "t"), set(&[]));
    let warm = fill(root, &dir, "t");
    assert_eq!(warm.hits, jobs(root).len());
    assert_eq!(
        warm.inputs_hashed, 0,
        "every input in the stat index: {warm:?}"
    );
}

/// From the second change on, each environment's new tree is made from the
/// spare tree the last switch set aside (`.hydrate/spare/`, which git never
/// lists): the outputs are byte for byte what a fresh render writes, and
/// `cache clean` removes the spare trees too.
#[test]
fn renders_from_the_spare_tree_write_what_a_fresh_render_writes() {
    let repo = demo();
    let root = repo.path();
    let ok = |cmd: &mut assert_cmd::Command| {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(&mut render_at(root));
    let spare = root.join(".hydrate/spare");
    assert!(!spare.exists(), "the first write has no old tree to keep");
    let patch = root.join("testdata/apps/api/overlays/production/patch.yaml");
    for n in 6..9 {
        std::fs::write(
            &patch,
            format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  minReadySeconds: {n}\n"),
        )
        .unwrap();
        ok(&mut render_at(root));
    }
    assert_eq!(
        std::fs::read_to_string(spare.join(".gitignore")).unwrap(),
        "*\n"
    );
    assert!(spare.join("rendered%2Fproduction").is_dir());
    let fresh = tempfile::tempdir().unwrap();
    crate::support::copy_tree(
        &root.join("environments"),
        &fresh.path().join("environments"),
    );
    crate::support::copy_tree(&root.join("testdata"), &fresh.path().join("testdata"));
    ok(render_at(fresh.path()).arg("--no-cache"));
    assert_eq!(
        tree(&root.join("rendered")),
        tree(&fresh.path().join("rendered"))
    );
    let out = ok(hydrate().args(["cache", "clean", "--root"]).arg(root));
    assert!(out.contains("trees"), "{out}");
    assert!(!spare.exists());
    assert!(root.join("rendered/production").is_dir(), "outputs stay");
}

/// A repository copied elsewhere with its `.hydrate` (as `cp -a`, or a CI
/// cache restored into another checkout path) renders its own files: the
/// entries name the original's inputs, absolute, whose stats still match,
/// and must not answer for the copy's.
#[test]
fn a_copy_elsewhere_with_its_cache_renders_its_own_files() {
    let repo = demo_copy();
    let out = render_at(repo.path()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("copy");
    crate::support::copy_tree(repo.path(), &copy);
    append(
        &copy.join("testdata/apps/api/overlays/production/kustomization.yaml"),
        "commonAnnotations:\n  copied: only-here\n",
    );
    let out = render_at(&copy).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let manifest = std::fs::read_to_string(copy.join("rendered/production/api/manifest.yaml"));
    assert!(
        manifest.unwrap().contains("copied: only-here"),
        "the copy's change was rendered: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
