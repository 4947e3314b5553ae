//! Which helm release is being reproduced, and what differs between them:
//! the default Kubernetes version and API versions of `helm template`, the
//! `.Capabilities.HelmVersion` build info, the kind install order, and how
//! `--kube-version` is parsed. Everything else asks [`HelmVersion`].

use super::objects::Record;
use super::Error;
use crate::gotmpl::{ExecOptions, FuncMap, TemplateSet, Value};

/// The helm release whose `helm template` output is reproduced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HelmVersion {
    /// helm v3.17.3 (Go 1.23).
    #[default]
    V3,
    /// helm v4.1.4 (Go 1.25).
    V4,
}

/// `version.BuildInfo` fields (helm prints them as `.Capabilities.HelmVersion`).
pub(crate) struct BuildInfo {
    pub version: &'static str,
    pub git_commit: &'static str,
    pub go_version: &'static str,
    /// helm4 only: the client-go minor it was built with.
    pub kube_client_version: Option<&'static str>,
}

impl HelmVersion {
    /// Parses `3`/`4` (also `v3`, `v4`).
    pub fn parse(text: &str) -> Result<HelmVersion, Error> {
        match text.trim_start_matches('v') {
            "3" => Ok(HelmVersion::V3),
            "4" => Ok(HelmVersion::V4),
            _ => Err(Error::Usage(format!(
                "unsupported helm version {text:?} (expected 3 or 4)"
            ))),
        }
    }

    /// `helm template`'s default `.Capabilities.KubeVersion`: helm derives
    /// it from the client-go version it was built with (v0.32 / v0.35).
    pub fn default_kube_version(self) -> KubeVersion {
        let (version, minor) = match self {
            HelmVersion::V3 => ("v1.32.0", "32"),
            HelmVersion::V4 => ("v1.35.0", "35"),
        };
        KubeVersion {
            version: version.into(),
            normalized: version.into(),
            major: "1".into(),
            minor: minor.into(),
        }
    }

    pub(crate) fn build_info(self) -> BuildInfo {
        match self {
            HelmVersion::V3 => BuildInfo {
                version: "v3.17.3",
                git_commit: "e4da49785aa6e6ee2b86efd5dd9e43400318262b",
                go_version: "go1.23.7",
                kube_client_version: None,
            },
            HelmVersion::V4 => BuildInfo {
                version: "v4.1.4",
                git_commit: "05fa37973dc9e42b76e1d2883494c87174b6074f",
                go_version: "go1.25.9",
                kube_client_version: Some("v1.35"),
            },
        }
    }

    /// `version.Get()` as templates see it: `.Capabilities.HelmVersion`
    /// and the data of `helm version --template`.
    pub(crate) fn build_info_record(self) -> Record {
        let info = self.build_info();
        let mut h = Vec::new();
        let mut hj = Vec::new();
        let mut both = |field: &str, key: &str, v: &str| {
            h.push((field.to_string(), Value::from(v)));
            hj.push((key.to_string(), Value::from(v)));
        };
        both("Version", "version", info.version);
        both("GitCommit", "git_commit", info.git_commit);
        both("GitTreeState", "git_tree_state", "clean");
        both("GoVersion", "go_version", info.go_version);
        if let Some(kc) = info.kube_client_version {
            both("KubeClientVersion", "kube_client_version", kc);
        }
        Record::new("version.BuildInfo", h.iter().cloned().collect())
            .with_struct_fields(h)
            .with_json_fields(hj)
    }

    /// What `helm version` prints (helm's `cmd/helm/version.go`): the
    /// `--template` rendered with plain text/template (no Sprig, no newline
    /// added), else `formatVersion`: `v3.17.3+ge4da497` with `--short`,
    /// Go's `%#v` of `version.BuildInfo` without; both end in a newline.
    pub fn version_output(self, short: bool, template: Option<&str>) -> Result<String, Error> {
        if let Some(text) = template {
            let funcs = std::sync::Arc::new(FuncMap::with_builtins());
            let mut set = TemplateSet::new("_", funcs);
            set.parse("_", text)
                .map_err(|e| Error::Render(e.to_string()))?;
            let data = Value::Object(std::sync::Arc::new(self.build_info_record()));
            return set
                .execute("_", data, &ExecOptions::default())
                .map_err(|e| Error::Render(e.to_string()));
        }
        let info = self.build_info();
        if short {
            let commit = info.git_commit.get(..7).unwrap_or(info.git_commit);
            return Ok(format!("{}+g{commit}\n", info.version));
        }
        let kube = info
            .kube_client_version
            .map(|k| format!(", KubeClientVersion:{k:?}"))
            .unwrap_or_default();
        Ok(format!(
            "version.BuildInfo{{Version:{:?}, GitCommit:{:?}, GitTreeState:\"clean\", GoVersion:{:?}{kube}}}\n",
            info.version, info.git_commit, info.go_version
        ))
    }

    /// `chartutil.DefaultVersionSet`: every group/version client-go's
    /// scheme knows, in its priority order.
    pub(crate) fn default_api_versions(self) -> &'static [&'static str] {
        match self {
            HelmVersion::V3 => API_VERSIONS_V3,
            HelmVersion::V4 => API_VERSIONS_V4,
        }
    }

    /// `releaseutil.InstallOrder`.
    pub(crate) fn install_order(self) -> &'static [&'static str] {
        match self {
            HelmVersion::V3 => &INSTALL_ORDER[..INSTALL_ORDER.len() - 2],
            // helm4 kind_sorter.go: webhook configurations go last.
            HelmVersion::V4 => INSTALL_ORDER,
        }
    }

    /// `--kube-version`: helm3 parses it as semver (`chartutil.ParseKubeVersion`),
    /// helm4 with k8s' generic version parser, keeping the text as given.
    pub fn parse_kube_version(self, text: &str) -> Result<KubeVersion, Error> {
        match self {
            HelmVersion::V3 => KubeVersion::parse(text),
            HelmVersion::V4 => KubeVersion::parse_generic(text),
        }
    }
}

/// `.Capabilities.KubeVersion`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeVersion {
    /// `.Version`: `v1.32.0` (helm4 keeps suffixes: `v1.33.4-gke.1`).
    pub version: String,
    /// What `String()` prints and constraints are checked against
    /// (helm4's `normalizedVersion`; equal to `version` in helm3).
    pub normalized: String,
    /// `1`.
    pub major: String,
    /// `32`.
    pub minor: String,
}

impl KubeVersion {
    /// helm3's `chartutil.ParseKubeVersion` (Masterminds semver, `v` + its `String()`).
    pub fn parse(text: &str) -> Result<KubeVersion, Error> {
        let bad = || {
            Error::Usage(format!(
                "invalid kube version '{text}': Invalid Semantic Version"
            ))
        };
        let t = text.strip_prefix('v').unwrap_or(text);
        let split = t.find(['-', '+']).unwrap_or(t.len());
        let (core, suffix) = t.split_at(split);
        let mut parts = core.split('.');
        let num = |p: Option<&str>| -> Result<u64, Error> {
            match p {
                None => Ok(0),
                Some(s) => s.parse().map_err(|_| bad()),
            }
        };
        let (major, minor, patch) = (num(parts.next())?, num(parts.next())?, num(parts.next())?);
        if parts.next().is_some() || core.is_empty() {
            return Err(bad());
        }
        let version = format!("v{major}.{minor}.{patch}{suffix}");
        Ok(KubeVersion {
            normalized: version.clone(),
            version,
            major: major.to_string(),
            minor: minor.to_string(),
        })
    }

    /// helm4's `common.ParseKubeVersion`: k8s `version.ParseGeneric` (at
    /// least major.minor, anything after the numbers ignored), `.Version`
    /// the input with a `v` prefix, `String()` the numbers only.
    pub fn parse_generic(text: &str) -> Result<KubeVersion, Error> {
        let bad = |why: String| Error::Usage(format!("invalid kube version '{text}': {why}"));
        let t = text.trim_start();
        let t = t.strip_prefix('v').unwrap_or(t);
        let end = t
            .char_indices()
            .scan(false, |prev_dot, (i, c)| {
                // a component is digits; a dot must be followed by a digit
                let ok = c.is_ascii_digit() || (c == '.' && !*prev_dot);
                *prev_dot = c == '.';
                ok.then_some(i + c.len_utf8())
            })
            .last()
            .unwrap_or(0);
        let numbers = t[..end].trim_end_matches('.');
        if numbers.is_empty() {
            return Err(bad(format!("could not parse {text:?} as version")));
        }
        let comps: Vec<&str> = numbers.split('.').collect();
        if comps.len() < 2 {
            return Err(bad(format!("illegal version string {text:?}")));
        }
        if comps[0].len() > 1 && comps[0].starts_with('0') {
            return Err(bad(format!(
                "illegal zero-prefixed version component {:?} in {text:?}",
                comps[0]
            )));
        }
        let mut nums = Vec::new();
        for c in &comps {
            nums.push(c.parse::<u64>().map_err(|e| {
                bad(format!(
                    "illegal non-numeric version component {c:?} in {text:?}: {e}"
                ))
            })?);
        }
        let version = if text.starts_with('v') {
            text.to_string()
        } else {
            format!("v{text}")
        };
        let normalized = format!(
            "v{}",
            nums.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(".")
        );
        Ok(KubeVersion {
            version,
            normalized,
            major: nums[0].to_string(),
            minor: nums[1].to_string(),
        })
    }
}

/// helm's `InstallOrder`; helm3 stops at `APIService`.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// helm v3.17.3 (client-go v0.32).
const API_VERSIONS_V3: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1alpha1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1alpha1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

/// helm v4.1.4 (client-go v0.35).
const API_VERSIONS_V4: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_version_parsing_per_helm() {
        let v3 = |t| {
            HelmVersion::V3
                .parse_kube_version(t)
                .map(|k| (k.version, k.normalized, k.minor))
        };
        let v4 = |t| {
            HelmVersion::V4
                .parse_kube_version(t)
                .map(|k| (k.version, k.normalized, k.minor))
        };
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(v3("1.20").ok(), Some(s("v1.20.0", "v1.20.0", "20")));
        assert_eq!(
            v3("v1.20.3-gke.1").ok(),
            Some(s("v1.20.3-gke.1", "v1.20.3-gke.1", "20"))
        );
        assert!(v3("1.2.3.4").is_err() && v3("x.y").is_err());
        assert_eq!(v4("1.20").ok(), Some(s("v1.20", "v1.20", "20")));
        assert_eq!(
            v4("v1.20.3-gke.1").ok(),
            Some(s("v1.20.3-gke.1", "v1.20.3", "20"))
        );
        assert_eq!(v4("1.2.3.4").ok(), Some(s("v1.2.3.4", "v1.2.3.4", "2")));
        assert_eq!(v4("1.2x").ok(), Some(s("v1.2x", "v1.2", "2")));
        assert!(v4("1").is_err() && v4("01.2").is_err() && v4("x").is_err());
    }

    #[test]
    fn version_tables() {
        assert_eq!(HelmVersion::parse("4").ok(), Some(HelmVersion::V4));
        assert!(HelmVersion::parse("5").is_err());
        assert_eq!(HelmVersion::V3.install_order().last(), Some(&"APIService"));
        assert_eq!(
            HelmVersion::V4.install_order().last(),
            Some(&"ValidatingWebhookConfiguration")
        );
        assert_eq!(HelmVersion::V3.default_api_versions().len(), 56);
        assert_eq!(HelmVersion::V4.default_api_versions().len(), 57);
    }
}
