//! Strategic merge patches: the input is the patch a kustomization applies
//! to a fixed Deployment (list merge keys, directives, `$patch`).
#![no_main]
use libfuzzer_sys::fuzz_target;

const KUSTOMIZATION: &str = "resources: [deploy.yaml]\npatches:\n- path: patch.yaml\n";
const RESOURCE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n        env: [{name: A, value: b}]\n";

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let ok = std::fs::write(dir.path().join("kustomization.yaml"), KUSTOMIZATION).is_ok()
        && std::fs::write(dir.path().join("deploy.yaml"), RESOURCE).is_ok()
        && std::fs::write(dir.path().join("patch.yaml"), data).is_ok();
    if ok {
        let _ = hydrate::kustomize::build(dir.path(), &hydrate::kustomize::Options::default());
    }
});
