//! The kustomization model, as kustomize's `api/types` has it: the file
//! (finding it, decoding it strictly as kustomize does, its deprecation
//! warnings) and the typed entries it holds — images, replicas, patches and
//! their selectors, generator arguments and options, vars, helm charts.
//!
//! It imports nothing from the transformers (patch, selector, replacement,
//! vars, helm_inflation, target...): they depend on the model, never the other
//! way round. Only the data modules below it (resource ids, field specs)
//! are used here.

mod decode;
mod helm_chart;
mod kustomization;
mod var;

pub(crate) use decode::{
    Decoder, GeneratorArgs, GeneratorKind, GeneratorOptions, Image, Patch, Replica, Selector,
};
pub(crate) use helm_chart::{
    decode_chart, decode_globals, Chart as HelmChart, Globals as HelmGlobals,
};
pub(crate) use kustomization::{find, Kind, Kustomization, FILE_NAMES};
pub(crate) use var::Var;

#[cfg(test)]
mod tests {
    /// The model's `use` lines reach only the data modules below it, so no
    /// transformer can be in an import cycle with it.
    #[test]
    fn model_imports_no_transformer() {
        let sources = [
            include_str!("decode.rs"),
            include_str!("helm_chart.rs"),
            include_str!("kustomization.rs"),
            include_str!("var.rs"),
        ];
        let allowed = [
            "crate::kustomize::Error",
            "crate::kustomize::resource::",
            "crate::kustomize::fieldspec::",
        ];
        for src in sources {
            let code = src.split("#[cfg(test)]").next().unwrap_or(src);
            for line in code.lines().map(str::trim_start) {
                if line.starts_with("//") {
                    continue;
                }
                assert!(!line.contains("super::super::"), "{line}");
                if let Some(i) = line.find("crate::kustomize::") {
                    assert!(allowed.iter().any(|a| line[i..].starts_with(a)), "{line}");
                }
            }
        }
    }
}
