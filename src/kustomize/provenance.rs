//! What `kustomize version` v5.7.1 prints (`kustomize/commands/version`,
//! `api/provenance`): the release binary's provenance stamp in its three
//! formats. Owns only these texts; it must not read the host beyond Go's
//! `runtime.GOOS`/`GOARCH` equivalents.

use super::KUSTOMIZE_VERSION;

/// The v5.7.1 release's `vcs.revision` (the tagged commit).
const GIT_COMMIT: &str = "168971a50110fc90dfbd1327245e7aabe5c07e8f";
/// The v5.7.1 release's `-X provenance.buildDate`.
const BUILD_DATE: &str = "2025-07-23T12:45:29Z";
/// The Go the release was built with (`go.work`'s `go` line).
const GO_VERSION: &str = "go1.22.7";

/// `kustomize version`'s `--output` formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionFormat {
    /// No flag: `Semver()`.
    Plain,
    /// `--short` (deprecated): `Short()`, a `%v` of a struct with only the
    /// version and build date set.
    Short,
    /// `-o yaml`.
    Yaml,
    /// `-o json` (`json.MarshalIndent`, two spaces).
    Json,
    /// Any other `-o` value: kustomize's `Run` has no case for it and
    /// prints nothing.
    Other,
}

/// Go's `runtime.GOOS` / `runtime.GOARCH` for this host.
fn go_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    };
    (os, arch)
}

/// The text `kustomize version` writes to stdout in `format` (each format
/// ends as `fmt.Fprintln` leaves it).
pub fn version_text(format: VersionFormat) -> String {
    let (os, arch) = go_platform();
    let fields = [
        ("version", KUSTOMIZE_VERSION),
        ("gitCommit", GIT_COMMIT),
        ("buildDate", BUILD_DATE),
        ("goOs", os),
        ("goArch", arch),
        ("goVersion", GO_VERSION),
    ];
    match format {
        VersionFormat::Plain => format!("{KUSTOMIZE_VERSION}\n"),
        VersionFormat::Short => format!("{{{KUSTOMIZE_VERSION}  {BUILD_DATE}   }}\n"),
        VersionFormat::Yaml => {
            // go-yaml v3 quotes the date: unquoted it would be a timestamp.
            let lines: String = fields
                .iter()
                .map(|(k, v)| match *k {
                    "buildDate" => format!("{k}: \"{v}\"\n"),
                    _ => format!("{k}: {v}\n"),
                })
                .collect();
            format!("{lines}\n")
        }
        VersionFormat::Json => {
            let body: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("  \"{k}\": \"{v}\""))
                .collect();
            format!("{{\n{}\n}}\n", body.join(",\n"))
        }
        VersionFormat::Other => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(version_text(VersionFormat::Plain), "v5.7.1\n");
        assert_eq!(
            version_text(VersionFormat::Short),
            "{v5.7.1  2025-07-23T12:45:29Z   }\n"
        );
        let yaml = version_text(VersionFormat::Yaml);
        assert!(yaml.starts_with("version: v5.7.1\ngitCommit: "));
        assert!(yaml.contains("buildDate: \"2025-07-23T12:45:29Z\"\n"));
        assert!(yaml.ends_with("goVersion: go1.22.7\n\n"));
        let json = version_text(VersionFormat::Json);
        assert!(json.starts_with("{\n  \"version\": \"v5.7.1\",\n"));
        assert!(json.ends_with("  \"goVersion\": \"go1.22.7\"\n}\n"));
        assert_eq!(version_text(VersionFormat::Other), "");
    }
}
