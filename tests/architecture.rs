//! docs/architecture.md against the code: every top-level module of `src/`
//! is named in its code map, and no module imports one of a higher layer.
//!
//! The layers, bottom to top (docs/architecture.md, "Invariants"). A module
//! may use modules of its own layer or below, and the uses within a layer
//! must not form a cycle:
//!
//! 0. `yaml`, `k8s`, `warning`
//! 1. `gotmpl`
//! 2. `helm`, `kustomize`
//! 3. `env`
//! 4. `git`, `output`
//! 5. `render`, `diff`, `compare`, `verify`, `promote`, `init`
//! 6. `cli`

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::repo;

const LAYERS: &[&[&str]] = &[
    &["yaml", "k8s", "warning", "realpath", "fx", "lock"],
    &["gotmpl"],
    &["helm", "kustomize"],
    &["env"],
    &["git", "output", "validate"],
    &[
        "render", "diff", "explain", "compare", "verify", "promote", "init",
    ],
    &["cli"],
];

/// The top-level modules `src/lib.rs` declares.
fn modules() -> Vec<String> {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.trim_end_matches(';').trim().to_string())
        })
        .collect()
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level modules that `text` names as `crate::x` (also inside
/// `use crate::{x, y::z}`), comments left out.
fn crate_uses(text: &str, known: &[String]) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let preceded = rest[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        rest = &rest[i + "crate::".len()..];
        if preceded {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // The top level of the braces: `{a, b::{c, d}, e}` names a, b, e.
            let mut depth = 0;
            let mut word = String::new();
            let mut at_start = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_start = true,
                    c if depth == 0 && at_start && (c.is_alphanumeric() || c == '_') => {
                        word.push(c)
                    }
                    _ if depth == 0 && !word.is_empty() => {
                        out.insert(std::mem::take(&mut word));
                        at_start = false;
                    }
                    _ => {}
                }
            }
            if !word.is_empty() {
                out.insert(word);
            }
        } else {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(word);
        }
    }
    out.retain(|m| known.contains(m));
    out
}

/// Every `.rs` file of a module (`src/x.rs`, `src/x/…`).
fn module_files(module: &str) -> Vec<std::path::PathBuf> {
    let src = repo().join("src");
    let mut files = Vec::new();
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        files.push(file);
    }
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    walk(&src.join(module), &mut files);
    files.sort();
    files
}

/// Each module's imports of other top-level modules.
fn import_table() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    known
        .iter()
        .map(|m| {
            let mut uses = BTreeSet::new();
            for f in module_files(m) {
                uses.extend(crate_uses(&std::fs::read_to_string(f).unwrap(), &known));
            }
            uses.remove(m);
            (m.clone(), uses)
        })
        .collect()
}

#[test]
fn no_module_imports_a_higher_layer() {
    let table = import_table();
    println!("layer  module     imports (top-level modules, `crate::x`)");
    let mut rows: Vec<(&String, &BTreeSet<String>)> = table.iter().collect();
    rows.sort_by_key(|(m, _)| (layer_of(m), m.to_string()));
    for (m, uses) in rows {
        let layer = layer_of(m).map_or("?".into(), |l| l.to_string());
        let shown: Vec<String> = uses
            .iter()
            .map(|u| format!("{u}({})", layer_of(u).map_or("?".into(), |l| l.to_string())))
            .collect();
        println!("{layer:>5}  {m:<10} {}", shown.join(" "));
    }
    let problems = layering_problems(&table);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What breaks the layering in an import table: a module with no layer,
/// an import of a higher layer, a cycle within a layer.
fn layering_problems(table: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for (m, uses) in table {
        let Some(layer) = layer_of(m) else {
            problems.push(format!(
                "src/{m} has no layer: add it to LAYERS here and to docs/architecture.md"
            ));
            continue;
        };
        for u in uses {
            if let Some(l) = layer_of(u).filter(|&l| l > layer) {
                problems.push(format!(
                    "{m} (layer {layer}) imports {u} (layer {l}): an upward import"
                ));
            }
            if layer_of(u) == Some(layer) && reaches(table, u, m) {
                problems.push(format!("{m} and {u} (one layer) import each other"));
            }
        }
    }
    problems
}

#[test]
fn an_upward_import_or_a_cycle_is_a_problem() {
    let table = |rows: &[(&str, &[&str])]| -> BTreeMap<String, BTreeSet<String>> {
        rows.iter()
            .map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect()))
            .collect()
    };
    assert!(layering_problems(&table(&[("env", &["yaml"]), ("yaml", &[])])).is_empty());
    assert_eq!(
        layering_problems(&table(&[("yaml", &["cli"]), ("cli", &[])])),
        ["yaml (layer 0) imports cli (layer 6): an upward import"]
    );
    assert_eq!(
        layering_problems(&table(&[("render", &["diff"]), ("diff", &["render"])])).len(),
        2
    );
    assert_eq!(layering_problems(&table(&[("nowhere", &[])])).len(), 1);
}

/// Whether `from` reaches `to` through same-layer imports.
fn reaches(table: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if m == to {
            return true;
        }
        if !seen.insert(m.clone()) {
            continue;
        }
        for u in table.get(&m).into_iter().flatten() {
            if layer_of(u) == layer_of(&m) {
                stack.push(u.clone());
            }
        }
    }
    false
}

#[test]
fn every_module_is_in_the_architecture_map() {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md"))
        .expect("docs/architecture.md exists");
    let missing: Vec<String> = modules()
        .into_iter()
        .filter(|m| {
            let dir = format!("`{m}/`");
            let file = format!("`{m}.rs`");
            !doc.contains(&dir) && !doc.contains(&file)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "top-level modules of src/ not named (as `x/` or `x.rs`) in docs/architecture.md: {missing:?}"
    );
}

#[test]
fn crate_uses_reads_groups_and_paths() {
    let known: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let text = "use crate::a::X;\n// crate::d\nuse crate::{b::{Y, Z}, c};\nfn f() { $crate::d }";
    assert_eq!(
        crate_uses(text, &known).into_iter().collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
}
