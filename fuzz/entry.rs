//! What each fuzz target does with one input, shared by the cargo-fuzz
//! binaries (`fuzz_targets/<target>.rs`) and the stable replay harness
//! (`tests/fuzz_replay.rs`), so a regression input replays through exactly
//! the code that found it. An input may be rejected with an error; it may
//! not panic, overflow the stack, hang or exhaust memory.
#![allow(dead_code)] // each fuzz binary uses one target

use std::path::Path;
use std::sync::{Arc, OnceLock};

use hydrate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};
use hydrate::yaml::{parse_all, to_stream, Resolver};

/// What a target does with one input.
pub type Target = fn(&[u8]);

/// The targets by name, as `fuzz/Cargo.toml` names their binaries.
pub const TARGETS: &[(&str, Target)] = &[
    ("yaml_roundtrip", yaml_roundtrip),
    ("gotmpl", gotmpl),
    ("kustomization", kustomization),
    ("strategic_merge", strategic_merge),
    ("json_patch", json_patch),
    ("chart_tgz", chart_tgz),
];

/// YAML parse, then emit what parsed, then parse the emitted text again.
pub fn yaml_roundtrip(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for resolver in [Resolver::V2, Resolver::V3] {
        if let Ok(docs) = parse_all(text, resolver) {
            if let Ok(out) = to_stream(&docs) {
                let _ = parse_all(&out, resolver);
            }
        }
    }
}

/// Go template parse and execute with the Sprig function library.
pub fn gotmpl(data: &[u8]) {
    static FUNCS: OnceLock<Arc<FuncMap>> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let funcs = FUNCS.get_or_init(|| Arc::new(FuncMap::with_sprig()));
    let mut set = TemplateSet::new("fuzz", funcs.clone());
    if set.parse("fuzz", text).is_ok() {
        let _ = set.execute("fuzz", Value::Nil, &ExecOptions::default());
    }
}

/// `kustomize build` of a directory holding `files`.
fn build(files: &[(&str, &[u8])]) {
    let Ok(dir) = tempfile::tempdir() else { return };
    if files
        .iter()
        .all(|(name, data)| std::fs::write(dir.path().join(name), data).is_ok())
    {
        let _ = hydrate::kustomize::build(dir.path(), &hydrate::kustomize::Options::default());
    }
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

/// The kustomization loader: the input is `kustomization.yaml` beside one
/// fixed resource.
pub fn kustomization(data: &[u8]) {
    build(&[
        ("kustomization.yaml", data),
        ("cm.yaml", CONFIGMAP.as_bytes()),
    ]);
}

const SMP_DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n        env: [{name: A, value: b}]\n";

/// Strategic merge patches: the input is the patch a kustomization applies
/// to a fixed Deployment (list merge keys, directives, `$patch`).
pub fn strategic_merge(data: &[u8]) {
    build(&[
        (
            "kustomization.yaml",
            b"resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n",
        ),
        ("deploy.yaml", SMP_DEPLOYMENT.as_bytes()),
        ("patch.yaml", data),
    ]);
}

const JSON_DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n        ports: [{containerPort: 80}]\n";

/// JSON 6902 patches: the input is the patch file a kustomization applies
/// to a fixed Deployment.
pub fn json_patch(data: &[u8]) {
    build(&[
        (
            "kustomization.yaml",
            b"resources: [deploy.yaml]\npatches:\n- path: patch.json\n  target: {kind: Deployment}\n",
        ),
        ("deploy.yaml", JSON_DEPLOYMENT.as_bytes()),
        ("patch.json", data),
    ]);
}

/// The chart loader from packaged bytes: the input is `chart.tgz`,
/// rendered as `helm template` would.
pub fn chart_tgz(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path: &Path = &dir.path().join("chart.tgz");
    if std::fs::write(path, data).is_ok() {
        let _ = hydrate::helm::template(path, &hydrate::helm::Options::default());
    }
}
