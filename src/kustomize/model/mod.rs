//! The kustomization model, as kustomize's `api/types` has it: the file
//! (finding it, decoding it strictly as kustomize does, its deprecation
//! warnings) and the typed entries it holds — images, replicas, patches and
//! their selectors, generator arguments and options, vars, helm charts.
//!
//! It imports nothing from the transformers (patch, selector, replacement,
//! vars, helmchart, target...): they depend on the model, never the other
//! way round. Only the data modules below it (resource ids, field specs)
//! are used here.

mod decode;
mod helm_chart;
mod kustomization;
mod var;

pub use decode::{
    Decoder, GeneratorArgs, GeneratorKind, GeneratorOptions, Image, Patch, Replica, Selector,
};
pub use helm_chart::{decode_chart, decode_globals, Chart as HelmChart, Globals as HelmGlobals};
pub use kustomization::{find, Kind, Kustomization, FILE_NAMES};
pub use var::Var;
