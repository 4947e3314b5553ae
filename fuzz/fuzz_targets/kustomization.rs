//! The kustomization loader: the input is `kustomization.yaml` beside one
//! fixed resource.
#![no_main]
use libfuzzer_sys::fuzz_target;

const RESOURCE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let ok = std::fs::write(dir.path().join("kustomization.yaml"), data).is_ok()
        && std::fs::write(dir.path().join("cm.yaml"), RESOURCE).is_ok();
    if ok {
        let _ = hydrate::kustomize::build(dir.path(), &hydrate::kustomize::Options::default());
    }
});
