//! Inputs the real tools reject, one fixture each under
//! `testdata/errors/<case>/`: `input/` (a kustomization or a chart),
//! `oracle.txt` (the tool, its exit code and its stderr, recorded from
//! kubectl kustomize v5.7.1, helm 3.17.3 or helm 4.1.4 (`helm4 template`,
//! run as `--helm-version 4`), with the case directory
//! written `CASE`), `expect.txt` (a part of the message both print) and
//! optionally `symlinks.txt` (`link target` lines, made in the copy).
//! hydrate must exit as the tool does, print that part, and print nothing
//! on stdout.

#![cfg(unix)]

use std::path::Path;

use crate::support::{copy_tree, hydrate, repo};

fn run_case(case: &Path) {
    let name = case.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap_or_default();
    let oracle = read("oracle.txt");
    let expect = read("expect.txt");
    let expect = expect.trim_end();
    assert!(
        oracle.contains(expect),
        "{name}: oracle.txt lacks {expect:?}"
    );
    let field = |key: &str| {
        oracle
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_default()
            .to_string()
    };
    let code: i32 = field("exit: ").parse().unwrap_or(-1);
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&case.join("input"), &dir.path().join("input"));
    for line in read("symlinks.txt").lines() {
        if let Some((link, target)) = line.split_once(' ') {
            std::os::unix::fs::symlink(target, dir.path().join("input").join(link)).unwrap();
        }
    }
    let mut cmd = hydrate();
    cmd.current_dir(dir.path());
    match field("tool: ").as_str() {
        "helm3 template" => cmd.args(["helm", "template", "input"]),
        "helm4 template" => cmd.args(["helm", "template", "input", "--helm-version", "4"]),
        _ => cmd.args(["kustomize", "build", "input"]),
    };
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let root = dir.path().to_string_lossy().into_owned();
    let want = expect.replace("CASE", &root);
    assert_eq!(out.status.code(), Some(code), "{name}: {err}");
    assert!(err.contains(&want), "{name}: {err}\nwants: {want}");
    assert!(out.stdout.is_empty(), "{name}: printed output");
}

#[test]
fn every_error_fixture_fails_as_the_real_tool_does() {
    let root = repo().join("testdata/errors");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "{cases:?}");
    for case in cases {
        run_case(&case);
    }
}
