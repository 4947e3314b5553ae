//! The JSON Schema in schemas/ describes the environment files hydrate reads.

use std::fs;

use hydrate::yaml::{parse_one, to_json, Resolver};

use crate::support::repo;

pub(crate) fn validator() -> (boon::Schemas, boon::SchemaIndex) {
    let text = fs::read_to_string(repo().join("schemas/environment.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("environment.schema.json", schema)
        .unwrap();
    let index = compiler
        .compile("environment.schema.json", &mut schemas)
        .unwrap();
    (schemas, index)
}

#[test]
fn demo_environments_validate() {
    let (schemas, index) = validator();
    let mut n = 0;
    for e in fs::read_dir(repo().join("environments")).unwrap() {
        let path = e.unwrap().path();
        let doc = parse_one(&fs::read_to_string(&path).unwrap(), Resolver::V3).unwrap();
        if let Err(err) = schemas.validate(&to_json(&doc), index) {
            panic!("{}: {err}", path.display());
        }
        n += 1;
    }
    assert_eq!(n, 3);
}

#[test]
fn schema_accepts_the_guards() {
    let (schemas, index) = validator();
    let ok = "name: dev\nsecrets: mask\nstrict: true\nallowOutside: false\noutput: {branch: env/dev-1.2}\n";
    let doc = parse_one(ok, Resolver::V3).unwrap();
    assert!(schemas.validate(&to_json(&doc), index).is_ok());
}

#[test]
fn schema_rejects_what_hydrate_rejects() {
    let (schemas, index) = validator();
    for bad in [
        "name: dev\nkustomise: x\n",
        "name: dev\noutput: {dir: a, branch: b}\n",
        "name: dev\napps:\n- name: web\n",
        "promotesTo: prod\n",
        "name: dev\napps:\n- name: web\n  kustomize: a\n  helm: {chart: c}\n",
        "name: dev\napps:\n- name: web\n  helm: {chart: c, skipCrds: maybe}\n",
        "name: dev\napps:\n- name: web\n  helm: {valueFiles: [a.yaml]}\n",
        "name: dev\nsecrets: hide\n",
        "name: dev\nstrict: maybe\n",
        "name: dev\noutput: {branch: HEAD}\n",
        "name: dev\noutput: {branch: refs/heads/x}\n",
        "name: dev\noutput: {branch: x.lock}\n",
        "name: dev\noutput: {branch: a/.b}\n",
        "name: dev\noutput: {branch: \"x:y\"}\n",
    ] {
        let doc = parse_one(bad, Resolver::V3).unwrap();
        assert!(schemas.validate(&to_json(&doc), index).is_err(), "{bad}");
    }
}
