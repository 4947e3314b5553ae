//! The hydrator contract of Argo CD's Source Hydrator and gitops-promoter on
//! hydrate's environment branches: root and per-app `hydrator.metadata`
//! with Go's field names, the `refs/notes/hydrator.metadata` note (moved on
//! renders that make no commit), and no output file that Argo CD's
//! directory source would take for a manifest.

use std::path::Path;

use regex::Regex;

use crate::support::{demo_copy, hydrate, GitHome};

const AUTHOR: &str = "CI Bot <ci@example.com>";
const TIME: &str = "1700000000";
const ORIGIN: &str = "https://git.example.com/team/deploy.git";

/// The demo as a repository with one commit on `main` and an `origin`
/// remote (a URL only: nothing is fetched).
fn demo_repo(home: &GitHome, dir: &Path) {
    home.git(dir, &["init", "-q", "-b", "main"]);
    home.git(dir, &["add", "-A"]);
    home.git(dir, &["commit", "-q", "-m", "Add the demo"]);
    let with_token = "https://user:secret@git.example.com/team/deploy.git";
    home.git(dir, &["remote", "add", "origin", with_token]);
}

fn render(home: &GitHome, dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = home.command(assert_cmd::cargo::cargo_bin("hydrate"));
    cmd.arg("render")
        .arg("--root")
        .arg(dir)
        .args(extra)
        .env("HYDRATE_AUTHOR", AUTHOR)
        .env("HYDRATE_TIMESTAMP", TIME)
        .output()
        .unwrap()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn branches_carry_argo_cd_metadata_and_a_note_that_follows_no_op_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let home = GitHome::new(tmp.path());
    let src = demo_copy();
    let dir = src.path();
    demo_repo(&home, dir);
    let out = render(&home, dir, &["--to", "branch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = home.git(dir, &["rev-parse", "HEAD"]);

    // gitops-promoter's default activePath is the repository root.
    let root = json(&home.git(dir, &["show", "env/staging:hydrator.metadata"]));
    assert_eq!(root["drySha"], head.as_str());
    assert_eq!(root["repoURL"], ORIGIN, "origin's URL, without credentials");
    assert_eq!(root["author"], "Dev <dev@example.com>");
    assert_eq!(root["subject"], "Add the demo");
    let date = root["date"].as_str().unwrap();
    assert!(
        Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
            .unwrap()
            .is_match(date),
        "RFC 3339: {date}"
    );
    let files = home.git(dir, &["ls-tree", "-r", "--name-only", "env/staging"]);
    for app in ["web", "api", "worker", "redis", "status"] {
        assert!(files.contains(&format!("{app}/manifest.yaml")), "{files}");
        let path = format!("env/staging:{app}/hydrator.metadata");
        let m = json(&home.git(dir, &["show", &path]));
        assert_eq!(m["drySha"], head.as_str(), "{app}");
        assert_eq!(m["repoURL"], ORIGIN, "{app}");
        assert_eq!(
            m["commands"],
            serde_json::json!([format!("hydrate render --env staging --app {app}")])
        );
    }
    let note = home.git(
        dir,
        &["notes", "--ref=hydrator.metadata", "show", "env/staging"],
    );
    assert_eq!(json(&note), serde_json::json!({ "drySha": head }));
    let tip = home.git(dir, &["rev-parse", "env/staging"]);

    // A source commit that changes no manifest: no commit, the note moves.
    home.git(
        dir,
        &["commit", "-q", "--allow-empty", "-m", "Nothing to render"],
    );
    let new_head = home.git(dir, &["rev-parse", "HEAD"]);
    let check = render(&home, dir, &["--to", "branch", "--check"]);
    let said = String::from_utf8_lossy(&check.stdout).to_string()
        + &String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(
        said.contains("stale: refs/notes/hydrator.metadata"),
        "--check reports the old note: {said}"
    );
    let out = render(&home, dir, &["--to", "branch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        home.git(dir, &["rev-parse", "env/staging"]),
        tip,
        "no new commit"
    );
    let note = home.git(
        dir,
        &["notes", "--ref=hydrator.metadata", "show", "env/staging"],
    );
    assert_eq!(json(&note), serde_json::json!({ "drySha": new_head }));
    let check = render(&home, dir, &["--to", "branch", "--check"]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    // --next writes the note on the -next branch's commit.
    home.git(dir, &["commit", "-q", "--allow-empty", "-m", "Next"]);
    let next_head = home.git(dir, &["rev-parse", "HEAD"]);
    let out = render(&home, dir, &["--to", "branch", "--next"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let note = home.git(
        dir,
        &[
            "notes",
            "--ref=hydrator.metadata",
            "show",
            "env/staging-next",
        ],
    );
    assert_eq!(json(&note), serde_json::json!({ "drySha": next_head }));
}

#[test]
fn the_files_read_with_the_go_field_names_of_argo_cd_and_gitops_promoter() {
    let tmp = tempfile::tempdir().unwrap();
    let home = GitHome::new(tmp.path());
    let src = demo_copy();
    let dir = src.path();
    home.git(dir, &["init", "-q", "-b", "main"]);
    home.git(dir, &["add", "-A"]);
    let msg = "Bump web\n\nWhy it moved.\n\n\
               Argocd-reference-commit-sha: abc1234\n\
               Argocd-reference-commit-subject: feat: faster\n\
               Argocd-reference-commit-repourl: https://git.example.com/team/web";
    home.git(dir, &["commit", "-q", "-m", msg]);
    let staging = dir.join("environments/staging.yaml");
    let text = std::fs::read_to_string(&staging).unwrap();
    std::fs::write(
        &staging,
        format!("repoURL: https://example.com/set.git\n{text}"),
    )
    .unwrap();
    let out = render(&home, dir, &["--to", "branch", "--env", "staging"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The exact keys Go's encoding/json tags name, nothing else.
    let root = json(&home.git(dir, &["show", "env/staging:hydrator.metadata"]));
    let keys: Vec<&str> = root
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let mut want = vec![
        "author",
        "body",
        "date",
        "drySha",
        "references",
        "repoURL",
        "subject",
    ];
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(
        root["repoURL"], "https://example.com/set.git",
        "repoURL: wins"
    );
    assert_eq!(
        root["body"], "Why it moved.",
        "known trailers leave the body"
    );
    assert_eq!(
        root["references"],
        serde_json::json!([{ "commit": {
            "subject": "feat: faster",
            "sha": "abc1234",
            "repoURL": "https://git.example.com/team/web",
        }}])
    );
    let raw = home.git(dir, &["show", "env/staging:web/hydrator.metadata"]);
    let order: Vec<usize> = ["\"repoURL\"", "\"drySha\"", "\"commands\"", "\"author\""]
        .iter()
        .map(|k| raw.find(k).unwrap_or_else(|| panic!("{k} in {raw}")))
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "Go struct order: {raw}"
    );
    let web = json(&raw);
    for k in ["drySha", "repoURL", "commands", "author", "date", "subject"] {
        assert!(web.get(k).is_some(), "{k} in {raw}");
    }
}

/// Every document of every file Argo CD's directory source would read
/// (`^.*\.(yaml|yml|json|jsonnet)$`, recursively, hidden directories too)
/// is a Kubernetes object.
fn assert_only_manifests(files: &[(String, String)], what: &str) {
    let argo = Regex::new(r"^.*\.(yaml|yml|json|jsonnet)$").unwrap();
    let mut seen = 0;
    for (path, text) in files.iter().filter(|(p, _)| argo.is_match(p)) {
        seen += 1;
        assert!(
            !path.ends_with(".json") && !path.ends_with(".jsonnet"),
            "{what}: {path}"
        );
        for doc in text.split("\n---\n").filter(|d| !d.trim().is_empty()) {
            let top = |key: &str| doc.lines().any(|l| l.starts_with(&format!("{key}: ")));
            assert!(top("apiVersion") && top("kind"), "{what}: {path}: {doc}");
        }
    }
    assert!(seen >= 5, "{what}: the walk found the manifests ({seen})");
}

#[test]
fn argo_cd_directory_sources_find_only_kubernetes_objects() {
    let tmp = tempfile::tempdir().unwrap();
    let home = GitHome::new(tmp.path());
    let src = demo_copy();
    let dir = src.path();
    demo_repo(&home, dir);

    let out = render(&home, dir, &["--to", "branch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = home.git(dir, &["ls-tree", "-r", "--name-only", "env/staging"]);
    assert!(listing.contains(".hydrate/owned\n"), "{listing}");
    let files: Vec<(String, String)> = listing
        .lines()
        .map(|p| {
            (
                p.to_string(),
                home.git(dir, &["show", &format!("env/staging:{p}")]),
            )
        })
        .collect();
    assert_only_manifests(&files, "branch env/staging");

    let out = hydrate()
        .arg("render")
        .arg("--root")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = dir.join("rendered/staging");
    assert!(rendered.join(".hydrate/owned").is_file());
    let files: Vec<(String, String)> = walkdir::WalkDir::new(&rendered)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(&rendered)
                .unwrap()
                .display()
                .to_string();
            (rel, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    assert_only_manifests(&files, "directory rendered/staging");
}

#[test]
fn the_old_ownership_manifest_is_read_and_migrated() {
    let src = demo_copy();
    let dir = src.path();
    let render = || {
        let out = hydrate()
            .args(["render", "--env", "staging", "--root"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    render();
    let root = dir.join("rendered/staging");
    // As an older hydrate left it (no content hashes), plus a file it
    // owned that is gone from the render now.
    let owned = std::fs::read_to_string(root.join(".hydrate/owned")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&owned).unwrap();
    v.as_object_mut().unwrap().remove("hashes");
    let owned = serde_json::to_string_pretty(&v).unwrap().replace(
        "\"web/manifest.yaml\"",
        "\"web/manifest.yaml\", \"web/old.yaml\"",
    );
    std::fs::write(root.join(".hydrate/owned.json"), owned).unwrap();
    std::fs::remove_file(root.join(".hydrate/owned")).unwrap();
    std::fs::write(root.join("web/old.yaml"), "kind: Old\n").unwrap();
    let stderr = render();
    assert!(root.join(".hydrate/owned").is_file());
    assert!(!root.join(".hydrate/owned.json").exists(), "migrated");
    // Without a hash hydrate cannot tell it from a file someone changed:
    // it is left in place, with a warning, and no longer owned.
    assert!(
        root.join("web/old.yaml").exists(),
        "never deleted unverified"
    );
    assert!(
        stderr.contains("web/old.yaml: written by an older hydrate that kept no content hash"),
        "{stderr}"
    );
    let owned = std::fs::read_to_string(root.join(".hydrate/owned")).unwrap();
    assert!(!owned.contains("web/old.yaml"), "{owned}");
    assert!(owned.contains("\"hashes\""), "{owned}");
    assert!(render().is_empty(), "warned once");
}

#[test]
fn readmes_and_gitattributes_are_written_as_argo_cd_does_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let home = GitHome::new(tmp.path());
    let src = demo_copy();
    let dir = src.path();
    let staging = dir.join("environments/staging.yaml");
    let text = std::fs::read_to_string(&staging).unwrap();
    std::fs::write(&staging, format!("readme: true\n{text}")).unwrap();
    let prod = dir.join("environments/production.yaml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, format!("readme: readme.j2\n{text}")).unwrap();
    std::fs::write(
        dir.join("readme.j2"),
        "{{ env }}/{{ app }} from {{ drySha }}\n",
    )
    .unwrap();
    demo_repo(&home, dir);
    let out = render(&home, dir, &["--to", "branch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = home.git(dir, &["rev-parse", "HEAD"]);
    let readme = home.git(dir, &["show", "env/staging:web/README.md"]);
    assert!(readme.starts_with("# Manifest Hydration\n"), "{readme}");
    assert!(
        readme.contains(&format!("git clone {ORIGIN}\n")),
        "{readme}"
    );
    assert!(
        readme.contains(&format!("git checkout {head}\n")),
        "{readme}"
    );
    assert!(
        readme.contains("hydrate render --env staging --app web\n```"),
        "{readme}"
    );
    assert_eq!(
        home.git(dir, &["show", "env/staging:.gitattributes"]),
        "**/README.md linguist-generated=true\n**/hydrator.metadata linguist-generated=true"
    );
    assert_eq!(
        home.git(dir, &["show", "env/production:api/README.md"]),
        format!("production/api from {head}")
    );
    assert!(
        !home.git_ok(dir, &["cat-file", "-e", "env/dev:web/README.md"]),
        "off by default"
    );
    // READMEs name the source commit, yet a no-op source change commits nothing.
    let tip = home.git(dir, &["rev-parse", "env/staging"]);
    home.git(dir, &["commit", "-q", "--allow-empty", "-m", "Nothing"]);
    let out = render(&home, dir, &["--to", "branch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(home.git(dir, &["rev-parse", "env/staging"]), tip);
}
