//! Warnings that repeat: one line per distinct warning with a relative
//! path and a count, `-q/--quiet` hiding them, and an environment's
//! `warnings: {ignore: [...]}` silencing a kind.

use std::path::Path;

use crate::support::render_at;

/// Two apps whose kustomizations use the deprecated
/// `patchesStrategicMerge`, rendered in two environments; `ignore` goes
/// into staging's file.
fn repo(root: &Path, ignore: &str) {
    for app in ["a", "b"] {
        let dir = root.join("apps").join(app);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            "resources: [cm.yaml]\npatchesStrategicMerge: [patch.yaml]\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("patch.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: w\n",
        )
        .unwrap();
    }
    std::fs::create_dir_all(root.join("environments")).unwrap();
    for env in ["dev", "staging"] {
        let extra = if env == "staging" { ignore } else { "" };
        std::fs::write(
            root.join(format!("environments/{env}.yaml")),
            format!(
                "name: {env}\n{extra}apps:\n  - name: a\n    kustomize: apps/a\n  \
                 - name: b\n    kustomize: apps/b\n"
            ),
        )
        .unwrap();
    }
}

fn stderr(root: &Path, args: &[&str]) -> String {
    let out = render_at(root).args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_repeated_warning_prints_once_with_a_count_and_a_relative_path() {
    let tmp = tempfile::tempdir().unwrap();
    repo(tmp.path(), "");
    let text = stderr(tmp.path(), &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "warning[deprecation]: apps/a/kustomization.yaml:2: 'patchesStrategicMerge' is \
             deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update \
             your Kustomization automatically. (and 1 more file)",
            "  in 4 app(s): dev/a, dev/b, staging/a and 1 more"
        ],
        "{text}"
    );
    assert!(!text.contains(&tmp.path().display().to_string()), "{text}");
}

#[test]
fn quiet_hides_warnings_and_ignore_silences_a_kind() {
    let tmp = tempfile::tempdir().unwrap();
    repo(tmp.path(), "");
    assert_eq!(stderr(tmp.path(), &["-q"]), "");
    assert_eq!(stderr(tmp.path(), &["--quiet"]), "");
    let tmp = tempfile::tempdir().unwrap();
    repo(tmp.path(), "warnings:\n  ignore: [kustomize-deprecated]\n");
    let text = stderr(tmp.path(), &[]);
    assert!(text.contains("in 2 app(s): dev/a, dev/b\n"), "{text}");
    assert!(!text.contains("staging/"), "{text}");
}
