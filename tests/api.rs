//! The engine through its public surface only (`hydrate::…` as a program
//! embedding the library would call it): the demo rendered and written
//! in-process, byte for byte what the binary writes, and the binary's
//! render cache answering an embedding program (cache keys name the build
//! of hydrate, not the running executable).

use std::collections::BTreeSet;

use hydrate::env::{self, cache::Secret, Cache};
use hydrate::render;

use crate::support::{demo_copy, list_files, render_at, CACHE_KEY};

#[test]
fn the_facade_renders_and_writes_the_demo_as_the_binary_does() {
    let ours = demo_copy();
    let theirs = demo_copy();
    let opts = render::Options {
        root: ours.path().to_path_buf(),
        ..render::Options::default()
    };
    let reports = render::run(&opts, &|_| {}).unwrap_or_else(|e| panic!("{e}"));
    let envs: BTreeSet<String> = reports.iter().map(|r| r.env.clone()).collect();
    assert_eq!(
        envs,
        ["dev", "production", "staging"].map(String::from).into()
    );
    assert!(reports.iter().all(|r| r.written && r.resources > 0));
    render_at(theirs.path()).assert().success();
    let rendered = |root: &std::path::Path| {
        let files = list_files(&root.join("rendered"));
        assert!(!files.is_empty());
        files
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(root.join("rendered").join(&f)).unwrap();
                (f, bytes)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rendered(ours.path()), rendered(theirs.path()));
}

#[test]
fn an_embedding_program_is_answered_from_the_binarys_render_cache() {
    let repo = demo_copy();
    let root = repo.path();
    render_at(root).assert().success();
    let secret = Secret::from_text(CACHE_KEY.as_bytes()).unwrap();
    let cache = Cache::open(root, secret).expect("a cache directory hydrate made");
    let envs = env::load_environments(root).unwrap_or_else(|e| panic!("{e}"));
    let jobs = env::plan(root, &envs, &env::Selection::default());
    assert!(!jobs.is_empty());
    env::render_all_cached(&jobs, Some(&cache), &|| {}).unwrap_or_else(|e| panic!("{e:?}"));
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.stored), (jobs.len(), 0), "{stats:?}");
}
