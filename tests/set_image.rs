//! `hydrate set-image`'s argument grammar over the real binary on the
//! demo: each form of kustomize's `edit set image` (setimage.go), with the
//! `images:` entry it leaves, against what kustomize v5.7.1 writes (read
//! from setimage.go RunSetImage and its tests: kubectl has no `edit`, so
//! the expectations are written out here); and each malformed reference,
//! refused with exit 2 and the reason, nothing written. The table is a
//! snapshot; docs/commands/set-image.md shows it short.

use std::fs;
use std::path::Path;

use hydrate::yaml::{parse_one, Resolver};

use crate::promote_trust::{assert_clean, demo_repo, run, state, text};
use crate::support::{git, need, Need};

const KUSTOMIZATION: &str = "testdata/apps/web/overlays/dev/kustomization.yaml";
const WEB: &str = "ghcr.io/acme-shop/web";
const MIRROR: &str = "registry.acme.internal/shop/web";
const OLD: &str = "sha256:0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091";
const NEW: &str = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3";

/// An `images:` entry's fields besides `name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry<'a> {
    new_name: Option<&'a str>,
    tag: Option<&'a str>,
    digest: Option<&'a str>,
}

const fn entry<'a>(n: Option<&'a str>, t: Option<&'a str>, d: Option<&'a str>) -> Entry<'a> {
    Entry {
        new_name: n,
        tag: t,
        digest: d,
    }
}

/// The demo's dev entry.
const TAG_ONLY: Entry = entry(None, Some("1.5.0-rc.1"), None);
/// An entry with every field.
const FULL: Entry = entry(Some(MIRROR), Some("1.5.0-rc.1"), Some(OLD));

/// The entry in the kustomization's block style.
fn entry_text(e: &Entry) -> String {
    let mut s = format!("  - name: {WEB}\n");
    for (k, v) in [
        ("newName", e.new_name),
        ("newTag", e.tag),
        ("digest", e.digest),
    ] {
        if let Some(v) = v {
            s.push_str(&format!("    {k}: {v}\n"));
        }
    }
    s
}

/// The `images:` block of a kustomization, as its lines.
fn images_block(src: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in src.lines() {
        if line.starts_with("images:") {
            inside = true;
        } else if inside && !line.starts_with([' ', '-']) {
            break;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The fields of the entry named WEB in `src` (None: no entry).
fn fields(src: &str) -> Option<(Option<String>, Option<String>, Option<String>)> {
    let doc = parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"));
    let e = doc
        .get("images")?
        .as_seq()?
        .iter()
        .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(WEB))?
        .clone();
    let f = |k: &str| e.get(k).and_then(|v| v.as_scalar()).map(|s| s.text.clone());
    Some((f("newName"), f("newTag"), f("digest")))
}

/// kustomize's result, with a newName equal to the name read as none (the
/// one place hydrate writes less than kustomize: the render is the same).
fn same_render(e: &Entry) -> (Option<String>, Option<String>, Option<String>) {
    let own = |v: Option<&str>| v.map(str::to_string);
    (
        e.new_name.filter(|n| *n != WEB).map(str::to_string),
        own(e.tag),
        own(e.digest),
    )
}

/// Writes `before` into the dev kustomization and commits it.
fn start_from(dir: &Path, base: &str, before: &Entry) {
    let src = base.replace(
        &images_block(base),
        &format!("images:\n{}", entry_text(before)),
    );
    fs::write(dir.join(KUSTOMIZATION), src).unwrap();
    git(
        dir,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-am",
            "set-image table: starting entry",
        ],
    );
}

/// `(form, before, argument, kustomize's entry after)`: setimage.go's
/// forms. kustomize replaces the entry with what the argument says; `*`
/// keeps the entry's value (none when it has none); a part not given is
/// removed (setimage_test.go "keep new name, remove tag, and set digest",
/// "override new tag and new name with just a new tag").
fn forms() -> Vec<(&'static str, Entry<'static>, String, Entry<'static>)> {
    let n = Some;
    vec![
        (
            "NAME=NEWNAME:TAG",
            FULL,
            format!("{WEB}={MIRROR}:2.0.0"),
            entry(n(MIRROR), n("2.0.0"), None),
        ),
        (
            "NAME=NEWNAME",
            FULL,
            format!("{WEB}=registry.acme.internal/web"),
            entry(n("registry.acme.internal/web"), None, None),
        ),
        (
            "NAME=NEWNAME@DIGEST",
            FULL,
            format!("{WEB}={MIRROR}@{NEW}"),
            entry(n(MIRROR), None, n(NEW)),
        ),
        (
            "NAME=NEWNAME:TAG@DIGEST",
            TAG_ONLY,
            format!("{WEB}={MIRROR}:2.0.0@{NEW}"),
            entry(n(MIRROR), n("2.0.0"), n(NEW)),
        ),
        (
            "NAME=NAME:TAG",
            TAG_ONLY,
            format!("{WEB}={WEB}:2.0.0"),
            entry(n(WEB), n("2.0.0"), None),
        ),
        (
            "NAME:TAG",
            FULL,
            format!("{WEB}:2.0.0"),
            entry(None, n("2.0.0"), None),
        ),
        (
            "NAME:TAG (quoted)",
            TAG_ONLY,
            format!("{WEB}:1234"),
            entry(None, n("1234"), None),
        ),
        (
            "NAME@DIGEST",
            FULL,
            format!("{WEB}@{NEW}"),
            entry(None, None, n(NEW)),
        ),
        (
            "NAME:TAG@DIGEST",
            TAG_ONLY,
            format!("{WEB}:2.0.0@{NEW}"),
            entry(None, n("2.0.0"), n(NEW)),
        ),
        (
            "NAME=*:TAG",
            FULL,
            format!("{WEB}=*:9.9.9"),
            entry(n(MIRROR), n("9.9.9"), None),
        ),
        (
            "NAME=*:TAG, no newName",
            TAG_ONLY,
            format!("{WEB}=*:9.9.9"),
            entry(None, n("9.9.9"), None),
        ),
        (
            "NAME=NEWNAME:*",
            FULL,
            format!("{WEB}=registry.acme.internal/web:*"),
            entry(n("registry.acme.internal/web"), n("1.5.0-rc.1"), None),
        ),
        (
            "NAME=*@DIGEST",
            FULL,
            format!("{WEB}=*@{NEW}"),
            entry(n(MIRROR), None, n(NEW)),
        ),
        (
            "NAME=NEWNAME@*",
            FULL,
            format!("{WEB}=registry.acme.internal/web@*"),
            entry(n("registry.acme.internal/web"), None, n(OLD)),
        ),
        ("NAME=*:*@*", FULL, format!("{WEB}=*:*@*"), FULL),
        (
            "NAME:*@*",
            FULL,
            format!("{WEB}:*@*"),
            entry(None, n("1.5.0-rc.1"), n(OLD)),
        ),
    ]
}

/// `(what, argument)`: references the grammar refuses.
fn malformed() -> Vec<(&'static str, String)> {
    vec![
        ("NAME alone", WEB.to_string()),
        ("empty NAME", "=ghcr.io/acme-shop/web:1".into()),
        ("empty NEWNAME", format!("{WEB}=")),
        ("empty TAG", format!("{WEB}:")),
        ("empty DIGEST", format!("{WEB}@")),
        ("`*` as NAME", "*:1".into()),
        ("a:b:c", "a:b:c".into()),
        ("line break", format!("{WEB}:1.0\n")),
        ("comment", format!("{WEB}:1.0 # x")),
        ("upper case", "ghcr.io/acme-shop/Web:1".into()),
        ("empty component", format!("{WEB}=ghcr.io/acme//web:1")),
        ("bad component", format!("{WEB}=ghcr.io/acme/-web:1")),
        ("bad registry", format!("{WEB}=reg-.io/web:1")),
        ("tag starts with `.`", format!("{WEB}:.1")),
        ("tag of 129", format!("{WEB}:{}", "a".repeat(129))),
        ("short digest", format!("{WEB}@sha256:0c1d2e3f")),
        (
            "upper-case digest",
            format!("{WEB}@{}", NEW.to_uppercase().replace("SHA256", "sha256")),
        ),
        ("unknown algorithm", format!("{WEB}@md5:{}", "0".repeat(32))),
    ]
}

#[test]
fn set_image_takes_kustomizes_grammar_and_refuses_malformed_references() {
    let repo = demo_repo();
    let dir = repo.path();
    let base = fs::read_to_string(dir.join(KUSTOMIZATION)).unwrap();
    let mut table = String::new();
    for (form, before, arg, kustomize) in forms() {
        start_from(dir, &base, &before);
        let o = run(dir, &["set-image", "dev", &arg]);
        assert!(o.status.success(), "{arg}: {}", text(&o));
        assert_clean(dir);
        let after = fs::read_to_string(dir.join(KUSTOMIZATION)).unwrap();
        assert_eq!(fields(&after), Some(same_render(&kustomize)), "{arg}");
        table.push_str(&format!(
            "## {form}: `{arg}`\nbefore:\n{}after:\n{}\n",
            entry_text(&before),
            images_block(&after).trim_start_matches("images:\n")
        ));
    }
    start_from(dir, &base, &TAG_ONLY);
    for (what, arg) in malformed() {
        let before = state(dir);
        let o = run(dir, &["set-image", "dev", &arg]);
        assert_eq!(o.status.code(), Some(2), "{arg:?}: {}", text(&o));
        assert_eq!(state(dir), before, "{arg:?} changed something");
        assert_clean(dir);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let reason = stderr
            .lines()
            .find_map(|l| l.split_once("': ").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("{arg:?}: {stderr}"));
        table.push_str(&format!(
            "## {what}: `{}`\n{reason}\n\n",
            arg.escape_debug()
        ));
    }
    insta::assert_snapshot!("set_image_grammar", table);
}

#[test]
fn an_image_set_twice_in_one_run_is_refused_and_nothing_is_written() {
    let repo = demo_repo();
    let dir = repo.path();
    let before = state(dir);
    let o = run(
        dir,
        &[
            "set-image",
            "dev",
            &format!("{WEB}:1"),
            &format!("{WEB}=*:2"),
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("is set twice"), "{}", text(&o));
    assert_eq!(state(dir), before);
    assert_clean(dir);
}

#[test]
fn set_value_refuses_empty_path_segments_and_multi_document_values() {
    let repo = demo_repo();
    let dir = repo.path();
    let before = state(dir);
    for (arg, reason) in [
        ("image..tag=1.0", "PATH `image..tag`: segment 2 is empty"),
        (".image.tag=1.0", "PATH `.image.tag`: segment 1 is empty"),
        ("image.tag.=1.0", "PATH `image.tag.`: segment 3 is empty"),
        (
            "image.tag=1.0\n---\nkind: Secret",
            "VALUE: it contains a line break",
        ),
        ("image.tag=---", "VALUE: `---` starts a new YAML document"),
        ("image.tag", "expected PATH=VALUE"),
    ] {
        let o = run(dir, &["set-value", "dev", "status", arg]);
        assert_eq!(o.status.code(), Some(2), "{arg:?}: {}", text(&o));
        assert!(text(&o).contains(reason), "{arg:?}: {}", text(&o));
        assert_eq!(state(dir), before, "{arg:?} changed something");
        assert_clean(dir);
    }
}

/// hydrate leaves out a newName equal to the entry's name where kustomize
/// writes one: kustomize builds both kustomizations to the same bytes.
#[test]
#[cfg_attr(
    not(has_kubectl),
    ignore = "needs kubectl under ~/.cache/oracles (../shared/tools/install-oracles)"
)]
fn a_new_name_equal_to_the_name_renders_as_kustomize_writes_it() {
    let kubectl = need(Need::Kubectl);
    let repo = demo_repo();
    let dir = repo.path();
    let o = run(dir, &["set-image", "dev", &format!("{WEB}={WEB}:2.0.0")]);
    assert!(o.status.success(), "{}", text(&o));
    let ours = fs::read_to_string(dir.join(KUSTOMIZATION)).unwrap();
    let theirs = ours.replace(
        &images_block(&ours),
        &format!("images:\n  - name: {WEB}\n    newName: {WEB}\n    newTag: 2.0.0\n"),
    );
    let twin = dir.join("testdata/apps/web/overlays/kustomize");
    fs::create_dir_all(&twin).unwrap();
    fs::write(twin.join("kustomization.yaml"), theirs).unwrap();
    let build = |overlay: &str| {
        let o = std::process::Command::new(&kubectl)
            .args(["kustomize", overlay])
            .current_dir(dir.join("testdata/apps/web/overlays"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let (a, b) = (build("dev"), build("kustomize"));
    assert!(String::from_utf8_lossy(&a).contains(&format!("image: {WEB}:2.0.0")));
    assert_eq!(a, b);
}
