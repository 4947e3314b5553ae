//! Builtin plugins configured by resources listed under `transformers:` and
//! `generators:` (`apiVersion: builtin`, `kind: PrefixSuffixTransformer`,
//! …). Each config is decoded as kustomize's plugin `Config` does
//! (`yaml.Unmarshal`: unknown fields ignored) and runs through the same
//! code as the matching kustomization field. Exec, Go and KRM function
//! plugins are refused: hydrate runs no external code.

use std::path::Path;

use super::fieldspec::FieldSpec;
use super::model::{Decoder, GeneratorArgs, GeneratorKind, Image, Patch, Replica, Selector};
use super::patch::{Patches, Reader};
use super::resource::Resource;
use super::transform::{self, NamespaceOptions, SubjectMode};
use super::Error;
use crate::k8s::Catalog;
use crate::yaml::{Node, Value};

/// A configured builtin transformer.
pub enum Transformer {
    /// PrefixSuffixTransformer, PrefixTransformer, SuffixTransformer.
    PrefixSuffix {
        /// Prepended to names.
        prefix: String,
        /// Appended to names.
        suffix: String,
        /// Where names are.
        specs: Vec<FieldSpec>,
    },
    /// LabelTransformer.
    Labels {
        /// The labels.
        pairs: Vec<(String, String)>,
        /// Where they go.
        specs: Vec<FieldSpec>,
    },
    /// AnnotationsTransformer.
    Annotations {
        /// The annotations.
        pairs: Vec<(String, String)>,
        /// Where they go.
        specs: Vec<FieldSpec>,
    },
    /// NamespaceTransformer.
    Namespace {
        /// The namespace (`metadata.namespace` of the config).
        namespace: String,
        /// Where namespaces are.
        specs: Vec<FieldSpec>,
        /// unsetOnly and setRoleBindingSubjects.
        opts: NamespaceOptions,
    },
    /// ImageTagTransformer.
    ImageTag {
        /// The image rule.
        image: Image,
        /// Where images are.
        specs: Vec<FieldSpec>,
    },
    /// ReplicaCountTransformer.
    ReplicaCount {
        /// Name and count.
        replica: Replica,
        /// Where replica counts are.
        specs: Vec<FieldSpec>,
    },
    /// PatchTransformer, PatchStrategicMergeTransformer, PatchJson6902Transformer.
    Patches(Box<Patches>),
    /// HashTransformer.
    Hash,
    /// ReplacementTransformer.
    Replacements(Vec<super::replacement::Replacement>),
    /// ValueAddTransformer.
    ValueAdd {
        /// The value (default: the kustomization directory's name).
        value: String,
        /// (selector, slash-separated field path, file path position).
        targets: Vec<(Option<Selector>, String, i64)>,
    },
}

/// Reads the kind of a builtin plugin config, refusing anything else.
fn builtin_kind<'n>(config: &'n Node, file: &Path) -> Result<&'n str, Error> {
    let api = config.get_str("apiVersion").unwrap_or_default();
    let kind = config.get_str("kind").unwrap_or_default();
    // isBuiltinPlugin: empty group and version `builtin`.
    if api != "builtin" {
        return Err(Error::NotSupported {
            path: file.to_path_buf(),
            field: format!(
                "plugin {api}/{kind} (only builtin plugins run; exec, Go and KRM function plugins are not supported)"
            ),
        });
    }
    Ok(kind)
}

fn decoder<'a>(file: &'a Path, kind: &'a str) -> Decoder<'a> {
    Decoder {
        path: file,
        strict: false,
        what: kind,
    }
}

fn field_specs(d: &Decoder, config: &Node) -> Result<Option<Vec<FieldSpec>>, Error> {
    match config.get("fieldSpecs") {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(n) => FieldSpec::list_from(n)
            .map(Some)
            .map_err(|m| d.err(n, format!("invalid {}: {m}", d.what))),
    }
}

fn string_field(d: &Decoder, config: &Node, key: &str) -> Result<String, Error> {
    config.get(key).map_or(Ok(String::new()), |n| d.string(n))
}

impl Transformer {
    /// Configures the builtin transformer `config` names; `file` is where
    /// it came from and `read` loads files relative to the kustomization.
    pub fn load(config: &Node, file: &Path, read: &mut Reader) -> Result<Transformer, Error> {
        let kind = builtin_kind(config, file)?;
        let d = decoder(file, kind);
        let specs = field_specs(&d, config)?;
        let get = |key: &str| string_field(&d, config, key);
        let map = |key: &str| config.get(key).map_or(Ok(Vec::new()), |n| d.string_map(n));
        Ok(match kind {
            "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
                let Some(specs) = specs else {
                    return Err(d.err(config, "fieldSpecs is not expected to be nil"));
                };
                let prefix = if kind == "SuffixTransformer" {
                    String::new()
                } else {
                    get("prefix")?
                };
                let suffix = if kind == "PrefixTransformer" {
                    String::new()
                } else {
                    get("suffix")?
                };
                Transformer::PrefixSuffix {
                    prefix,
                    suffix,
                    specs,
                }
            }
            "LabelTransformer" => Transformer::Labels {
                pairs: map("labels")?,
                specs: specs.unwrap_or_default(),
            },
            "AnnotationsTransformer" => Transformer::Annotations {
                pairs: map("annotations")?,
                specs: specs.unwrap_or_default(),
            },
            "NamespaceTransformer" => Transformer::Namespace {
                namespace: config
                    .get("metadata")
                    .and_then(|m| m.get("namespace"))
                    .map_or(Ok(String::new()), |n| d.string(n))?,
                specs: specs.unwrap_or_default(),
                opts: namespace_options(&d, config)?,
            },
            "ImageTagTransformer" => Transformer::ImageTag {
                image: config
                    .get("imageTag")
                    .map_or(Ok(Image::default()), |n| d.image(n))?,
                specs: specs.unwrap_or_default(),
            },
            "ReplicaCountTransformer" => Transformer::ReplicaCount {
                replica: match config.get("replica") {
                    Some(n) => d.replica(n)?,
                    None => Replica {
                        name: String::new(),
                        count: 0,
                        at: crate::yaml::Pos::default(),
                    },
                },
                specs: specs.unwrap_or_default(),
            },
            "PatchTransformer" => {
                let p = d.patch(config)?;
                Transformer::Patches(Box::new(Patches::from_parts(
                    file,
                    &[],
                    &[p],
                    &[],
                    read,
                    None,
                )?))
            }
            "PatchStrategicMergeTransformer" => {
                let mut entries = config
                    .get("paths")
                    .map_or(Ok(Vec::new()), |n| d.strings(n))?;
                let inline = get("patches")?;
                if entries.is_empty() && inline.is_empty() {
                    return Err(d.err(config, "empty file path and empty patch content"));
                }
                if !inline.is_empty() {
                    entries.push(inline);
                }
                Transformer::Patches(Box::new(Patches::from_parts(
                    file,
                    &entries,
                    &[],
                    &[],
                    read,
                    None,
                )?))
            }
            "PatchJson6902Transformer" => {
                let p = Patch {
                    path: get("path")?,
                    patch: get("jsonOp")?,
                    target: match config.get("target") {
                        Some(t) if !t.is_null() => Some(d.selector(t)?),
                        _ => None,
                    },
                    line: config.pos.line,
                    ..Default::default()
                };
                Transformer::Patches(Box::new(Patches::from_parts(
                    file,
                    &[],
                    &[],
                    &[p],
                    read,
                    None,
                )?))
            }
            "HashTransformer" => Transformer::Hash,
            "ValueAddTransformer" => value_add(&d, config, file, read)?,
            "ReplacementTransformer" => {
                Transformer::Replacements(super::replacement::from_plugin_config(&d, config, read)?)
            }
            "ConfigMapGenerator" | "SecretGenerator" | "IAMPolicyGenerator" => {
                return Err(d.err(config, format!("plugin {kind} not a transformer")))
            }
            other => {
                return Err(Error::NotSupported {
                    path: file.to_path_buf(),
                    field: format!("builtin plugin {other}"),
                })
            }
        })
    }

    /// Runs the transformer; resources it empties are dropped afterwards
    /// (multiTransformer's DropEmpties).
    pub fn apply(
        &self,
        file: &Path,
        cat: &Catalog,
        resources: &mut Vec<Resource>,
    ) -> Result<(), Error> {
        let fail = |e: String| Error::invalid(file, e);
        match self {
            Transformer::PrefixSuffix {
                prefix,
                suffix,
                specs,
            } => {
                // PrefixSuffixTransformer is the prefix plugin, then the suffix plugin.
                transform::prefix_suffix(prefix, "", specs, resources).map_err(fail)?;
                transform::prefix_suffix("", suffix, specs, resources).map_err(fail)?;
            }
            Transformer::Labels { pairs, specs } | Transformer::Annotations { pairs, specs } => {
                transform::map_entries(pairs, specs, resources).map_err(fail)?
            }
            Transformer::Namespace {
                namespace,
                specs,
                opts,
            } => {
                if !namespace.is_empty() {
                    transform::namespace(namespace, specs, opts, resources).map_err(fail)?;
                }
            }
            Transformer::ImageTag { image, specs } => {
                transform::images(image, specs, resources).map_err(fail)?
            }
            Transformer::ReplicaCount { replica, specs } => {
                transform::replicas(replica, specs, resources).map_err(fail)?
            }
            Transformer::Patches(p) => {
                p.apply_strategic_merge(cat, resources)?;
                p.apply_patches(cat, resources, &mut |_, _| {})?;
                p.apply_json6902(resources, &mut |_, _| {})?;
            }
            Transformer::Hash => super::generator::add_hashes(resources),
            Transformer::ValueAdd { value, targets } => {
                for (selector, path, position) in targets {
                    let chosen: Vec<usize> = match selector {
                        Some(s) => super::patch::select(resources, s).map_err(fail)?,
                        None => (0..resources.len()).collect(),
                    };
                    for i in chosen {
                        add_value(&mut resources[i], value, path, *position).map_err(fail)?;
                    }
                }
            }
            Transformer::Replacements(list) => {
                super::replacement::apply(list, resources).map_err(fail)?
            }
        }
        resources.retain(|r| !matches!(&r.node.value, Value::Map(m) if m.is_empty()));
        Ok(())
    }
}

/// ValueAddTransformer's Config: targets inline and from `targetFilePath`.
fn value_add(
    d: &Decoder,
    config: &Node,
    file: &Path,
    read: &mut Reader,
) -> Result<Transformer, Error> {
    let mut value = string_field(d, config, "value")?.trim().to_string();
    if value.is_empty() {
        value = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
    }
    let mut targets = Vec::new();
    let mut add = |d: &Decoder, list: Option<&Node>| -> Result<(), Error> {
        for t in list.and_then(Node::as_seq).into_iter().flatten() {
            let selector = match t.get("selector") {
                Some(s) if !s.is_null() => Some(d.selector(s)?),
                _ => None,
            };
            let path = string_field(d, t, "fieldPath")?;
            if path.is_empty() {
                return Err(d.err(t, "fieldPath cannot be empty"));
            }
            let position = match t.get("filePathPosition").and_then(Node::as_scalar) {
                Some(s) => match crate::yaml::parse_int(&s.text) {
                    Some(crate::yaml::Int::Signed(i)) if i >= 0 => i,
                    _ => return Err(d.err(t, "filePathPosition must be a non-negative int")),
                },
                None => 0,
            };
            targets.push((selector, path, position));
        }
        Ok(())
    };
    add(d, config.get("targets"))?;
    let target_file = string_field(d, config, "targetFilePath")?;
    if !target_file.is_empty() {
        let (path, text) = read(&target_file)?;
        let root = crate::yaml::parse_one(&text, crate::yaml::Resolver::V2)
            .map_err(|e| Error::yaml(&path, e))?;
        let fd = decoder(&path, d.what);
        add(&fd, root.get("targets"))?;
    }
    if targets.is_empty() {
        return Err(d.err(config, "must specify at least one target"));
    }
    Ok(Transformer::ValueAdd { value, targets })
}

/// valueadd.Filter (and the namespace filter for metadata/namespace).
fn add_value(r: &mut Resource, value: &str, path: &str, position: i64) -> Result<(), String> {
    if path == "metadata/namespace" {
        let opts = NamespaceOptions::default();
        return transform::namespace(value, &[], &opts, std::slice::from_mut(r));
    }
    let spec = FieldSpec {
        path: path.to_string(),
        ..Default::default()
    };
    let mut node = &mut r.node;
    let parts = spec.path_parts();
    for (i, part) in parts.iter().enumerate() {
        if node.as_map().is_none() {
            return Err(format!(
                "wrong node kind: expected MappingNode but got {}",
                node.kind_name()
            ));
        }
        if node.get(part).is_none() {
            let fresh = if i + 1 == parts.len() {
                Node::string("")
            } else {
                Node::map()
            };
            node.set(part, fresh);
        }
        let Some(next) = node.get_mut(part) else {
            return Ok(());
        };
        node = next;
    }
    let Some(old) = node.as_scalar().map(|s| s.text.clone()) else {
        return Err(format!(
            "wrong node kind: expected ScalarNode but got {}",
            node.kind_name()
        ));
    };
    // filesys.InsertPathPart: the value becomes path part `position - 1`.
    let new = if position > 0 {
        let mut parts: Vec<&str> = old.split('/').collect();
        let at = usize::try_from(position - 1).unwrap_or(0).min(parts.len());
        parts.insert(at, value);
        parts.join("/")
    } else {
        value.to_string()
    };
    *node = Node::string(new);
    Ok(())
}

fn namespace_options(d: &Decoder, config: &Node) -> Result<NamespaceOptions, Error> {
    let unset_only = match config.get("unsetOnly") {
        Some(n) => d.bool(n)?,
        None => false,
    };
    let subjects = match string_field(d, config, "setRoleBindingSubjects")?.as_str() {
        "" | "defaultOnly" => SubjectMode::DefaultOnly,
        "allServiceAccounts" => SubjectMode::AllServiceAccounts,
        "none" => SubjectMode::None,
        other => {
            return Err(d.err(
                config,
                format!(
                    "invalid value \"{other}\" for setRoleBindingSubjects: must be one of \"defaultOnly\", \"none\" or \"allServiceAccounts\""
                ),
            ))
        }
    };
    Ok(NamespaceOptions {
        unset_only,
        subjects,
    })
}

/// A configured builtin generator.
pub enum Generator {
    /// ConfigMapGenerator or SecretGenerator.
    Args(GeneratorArgs),
    /// HelmChartInflationGenerator: `helmGlobals` and `helmCharts` fields
    /// inline in one config.
    Helm(super::model::HelmGlobals, Box<super::model::HelmChart>),
    /// IAMPolicyGenerator: the one resource it makes.
    Iam(Box<Node>),
}

/// Configures a builtin generator. ConfigMapGenerator and SecretGenerator
/// have their arguments at the top of the config, `metadata.name` and
/// `metadata.namespace` filling in when `name`/`namespace` are unset.
pub fn load_generator(config: &Node, file: &Path) -> Result<Generator, Error> {
    let kind = builtin_kind(config, file)?;
    let d = decoder(file, kind);
    let gkind = match kind {
        "ConfigMapGenerator" => GeneratorKind::ConfigMap,
        "SecretGenerator" => GeneratorKind::Secret,
        "HelmChartInflationGenerator" => {
            let globals = super::model::decode_globals(&d, config)?;
            let chart = super::model::decode_chart(&d, config)?;
            return Ok(Generator::Helm(globals, Box::new(chart)));
        }
        "IAMPolicyGenerator" => return Ok(Generator::Iam(Box::new(iam_policy(&d, config)?))),
        k if k.ends_with("Transformer") => {
            return Err(d.err(config, format!("plugin {kind} not a generator")))
        }
        other => {
            return Err(Error::NotSupported {
                path: file.to_path_buf(),
                field: format!("builtin plugin {other}"),
            })
        }
    };
    let mut args = d.generator(config, gkind)?;
    let meta = |key: &str| {
        config
            .get("metadata")
            .and_then(|m| m.get(key))
            .map_or(Ok(String::new()), |n| d.string(n))
    };
    if args.name.is_empty() {
        args.name = meta("name")?;
    }
    if args.namespace.is_empty() {
        args.namespace = meta("namespace")?;
    }
    Ok(Generator::Args(args))
}

/// IAMPolicyGenerator (api/filters/iampolicygenerator): for `cloud: gke`, a
/// ServiceAccount annotated with its Google service account. Like kustomize,
/// the values are written into YAML text unquoted and that text is parsed.
fn iam_policy(d: &Decoder, config: &Node) -> Result<Node, Error> {
    let get = |section: Option<&str>, key: &str| {
        let parent = match section {
            Some(s) => config.get(s).filter(|n| !n.is_null()),
            None => Some(config),
        };
        parent
            .and_then(|p| p.get(key))
            .map_or(Ok(String::new()), |n| d.string(n))
    };
    let cloud = get(None, "cloud")?;
    if cloud != "gke" {
        return Err(d.err(config, format!("cloud provider {cloud} not supported yet")));
    }
    let (k8s_name, namespace) = (
        get(Some("kubernetesService"), "name")?,
        get(Some("kubernetesService"), "namespace")?,
    );
    let (gsa, project) = (
        get(Some("serviceAccount"), "name")?,
        get(Some("serviceAccount"), "projectId")?,
    );
    let mut text = format!(
        "\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    iam.gke.io/gcp-service-account: {gsa}@{project}.iam.gserviceaccount.com\n  name: {k8s_name}\n"
    );
    if !namespace.is_empty() {
        text.push_str(&format!("\n  namespace: {namespace}"));
    }
    crate::yaml::parse_one(&text, crate::yaml::Resolver::V3)
        .map_err(|e| d.err(config, format!("IAMPolicyGenerator: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, to_string, Resolver};
    use std::path::PathBuf;

    fn node(src: &str) -> Node {
        parse_one(src, Resolver::V3).unwrap()
    }

    fn no_files(name: &str) -> Result<(PathBuf, String), Error> {
        Err(Error::invalid(name, "no such file"))
    }

    fn run(config: &str, resources: &[&str]) -> Result<Vec<String>, Error> {
        let file = Path::new("t.yaml");
        let t = Transformer::load(&node(config), file, &mut no_files)?;
        let mut rs: Vec<Resource> = resources.iter().map(|s| Resource::new(node(s))).collect();
        t.apply(file, Catalog::builtin(), &mut rs)?;
        Ok(rs.iter().map(|r| to_string(&r.node).unwrap()).collect())
    }

    const DEPLOY: &str =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: keep\n";

    #[test]
    fn prefix_suffix_and_namespace_plugins() {
        let out = run(
            "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata: {name: x}\nprefix: a-\nsuffix: -b\nfieldSpecs:\n- path: metadata/name\n",
            &[DEPLOY],
        )
        .unwrap();
        assert!(out[0].contains("name: a-web-b"), "{}", out[0]);
        let out = run(
            "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata: {name: x, namespace: new}\nunsetOnly: true\n",
            &[DEPLOY, "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"],
        )
        .unwrap();
        assert!(out[0].contains("namespace: keep") && out[1].contains("namespace: new"));
        let e = run(
            "apiVersion: builtin\nkind: PrefixTransformer\nmetadata: {name: x}\nprefix: a-\n",
            &[],
        );
        assert!(e.is_err());
    }

    #[test]
    fn foreign_plugins_are_refused() {
        let e = run(
            "apiVersion: someteam.example.com/v1\nkind: SedTransformer\nmetadata: {name: x}\n",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("not supported yet: plugin someteam.example.com/v1/SedTransformer"),
            "{e}"
        );
    }

    #[test]
    fn generator_names_fall_back_to_metadata() {
        let Generator::Args(g) = load_generator(
            &node("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: m, namespace: n}\nliterals: [a=b]\n"),
            Path::new("g.yaml"),
        )
        .unwrap() else {
            panic!("not a ConfigMapGenerator");
        };
        assert_eq!((g.name.as_str(), g.namespace.as_str()), ("m", "n"));
        assert_eq!(g.literals, ["a=b"]);
        let Generator::Helm(globals, chart) = load_generator(
            &node("apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata: {name: h}\nchartHome: vendor\nname: demo\nvaluesInline: {a: 1}\nother: ignored\n"),
            Path::new("g.yaml"),
        )
        .unwrap() else {
            panic!("not a HelmChartInflationGenerator");
        };
        assert_eq!(
            (globals.chart_home.as_str(), chart.name.as_str()),
            ("vendor", "demo")
        );
        assert!(chart.values_inline.is_some());
    }

    #[test]
    fn iam_policy_generator() {
        let cfg = "apiVersion: builtin\nkind: IAMPolicyGenerator\nmetadata: {name: g}\ncloud: gke\nkubernetesService: {name: ksa, namespace: ns}\nserviceAccount: {name: gsa, projectId: p}\n";
        let Generator::Iam(n) = load_generator(&node(cfg), Path::new("k.yaml")).unwrap() else {
            panic!("not an IAMPolicyGenerator");
        };
        assert_eq!(
            crate::yaml::to_string(&n).unwrap(),
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  annotations:\n    iam.gke.io/gcp-service-account: gsa@p.iam.gserviceaccount.com\n  name: ksa\n  namespace: ns\n"
        );
        let aws = cfg.replace("gke", "aws");
        let e = load_generator(&node(&aws), Path::new("k.yaml"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cloud provider aws not supported yet"), "{e}");
    }

    #[test]
    fn value_add_inserts_path_parts() {
        let out = run(
            "apiVersion: builtin\nkind: ValueAddTransformer\nmetadata: {name: x}\nvalue: area-51\ntargets:\n- fieldPath: spec/ref\n  filePathPosition: 2\n- fieldPath: metadata/namespace\n",
            &["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  ref: projects/data\n"],
        )
        .unwrap();
        assert!(out[0].contains("ref: projects/area-51/data"), "{}", out[0]);
        assert!(out[0].contains("namespace: area-51"), "{}", out[0]);
    }
}
