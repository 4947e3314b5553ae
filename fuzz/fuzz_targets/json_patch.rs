//! JSON 6902 patches: the input is the patch file a kustomization applies
//! to a fixed Deployment.
#![no_main]
use libfuzzer_sys::fuzz_target;

const KUSTOMIZATION: &str = "resources: [deploy.yaml]\npatches:\n- path: patch.json\n  target: {kind: Deployment}\n";
const RESOURCE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n        ports: [{containerPort: 80}]\n";

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let ok = std::fs::write(dir.path().join("kustomization.yaml"), KUSTOMIZATION).is_ok()
        && std::fs::write(dir.path().join("deploy.yaml"), RESOURCE).is_ok()
        && std::fs::write(dir.path().join("patch.json"), data).is_ok();
    if ok {
        let _ = hydrate::kustomize::build(dir.path(), &hydrate::kustomize::Options::default());
    }
});
