//! `hydrate helm template` and `hydrate helm version`: drop-ins for
//! `helm template` and `helm version` (v3.17.3, or v4.1.4 with
//! `--helm-version 4`), accepting every flag helm's `template` has. Flags
//! that only matter against a cluster or a repository are parsed and
//! ignored as helm ignores them for a local chart; flags that would need
//! the network or another binary are refused with the offline way.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

use super::error::Outcome;
use super::out::{self, errln};

use crate::helm::{self, HelmVersion, Options, SetKind};
use crate::warning::WarningKind;

#[derive(Subcommand)]
pub enum Command {
    /// Render chart templates locally, printing what `helm template` prints.
    Template(Box<TemplateArgs>),
    /// Print the version of the helm being reproduced, as `helm version` does.
    Version(Box<VersionArgs>),
}

#[derive(clap::Args)]
pub struct VersionArgs {
    /// Print the version number only (`v3.17.3+ge4da497`).
    #[arg(long)]
    short: bool,
    /// helm3's client-only switch (helm4 has no `-c`).
    #[arg(short = 'c', long)]
    client: bool,
    /// A Go template over `version.BuildInfo` (`{{.Version}}`).
    #[arg(long)]
    template: Option<String>,
    /// Which helm to reproduce: 3 (v3.17.3) or 4 (v4.1.4).
    #[arg(long = "helm-version", default_value = "3", value_parser = parse_helm_version)]
    helm_version: HelmVersion,
    /// helm's global `--debug` (adds nothing to `helm version`).
    #[arg(long, hide = true)]
    debug: bool,
    /// helm's global `--namespace` (not read by `helm version`).
    #[arg(short = 'n', long, hide = true)]
    namespace: Option<String>,
    #[command(flatten)]
    global: GlobalArgs,
}

/// helm's global flags (`helm --help`): all about the cluster connection,
/// the registry and repository configuration, none read by a local
/// `helm template` except `--namespace`, which `TemplateArgs` keeps.
#[derive(clap::Args)]
struct GlobalArgs {
    #[arg(long = "burst-limit", hide = true)]
    burst_limit: Option<String>,
    #[arg(long = "kube-apiserver", hide = true)]
    kube_apiserver: Option<String>,
    #[arg(long = "kube-as-group", hide = true)]
    kube_as_group: Vec<String>,
    #[arg(long = "kube-as-user", hide = true)]
    kube_as_user: Option<String>,
    #[arg(long = "kube-ca-file", hide = true)]
    kube_ca_file: Option<String>,
    #[arg(long = "kube-context", hide = true)]
    kube_context: Option<String>,
    #[arg(long = "kube-insecure-skip-tls-verify", hide = true)]
    kube_insecure_skip_tls_verify: bool,
    #[arg(long = "kube-tls-server-name", hide = true)]
    kube_tls_server_name: Option<String>,
    #[arg(long = "kube-token", hide = true)]
    kube_token: Option<String>,
    #[arg(long, hide = true)]
    kubeconfig: Option<String>,
    #[arg(long, hide = true)]
    qps: Option<String>,
    #[arg(long = "registry-config", hide = true)]
    registry_config: Option<String>,
    #[arg(long = "repository-cache", hide = true)]
    repository_cache: Option<String>,
    #[arg(long = "repository-config", hide = true)]
    repository_config: Option<String>,
    /// helm4: `--color`/`--colour` (never/auto/always); output has no colour.
    #[arg(long, alias = "colour", hide = true)]
    color: Option<String>,
    /// helm4: where downloaded charts are cached.
    #[arg(long = "content-cache", hide = true)]
    content_cache: Option<String>,
}

/// `helm template`'s install flags that act only on a cluster, a chart
/// repository or a release's stored metadata: helm parses them and, for a
/// local chart rendered client-side, reads none of them (`action.Install`
/// with `DryRun`, `ClientOnly`; `ChartPathOptions.LocateChart` returns a
/// local path before looking at the repository options).
#[derive(clap::Args)]
struct IgnoredArgs {
    #[arg(long, hide = true)]
    atomic: bool,
    #[arg(long = "ca-file", hide = true)]
    ca_file: Option<String>,
    #[arg(long = "cert-file", hide = true)]
    cert_file: Option<String>,
    #[arg(long = "create-namespace", hide = true)]
    create_namespace: bool,
    #[arg(long, hide = true)]
    description: Option<String>,
    #[arg(long, hide = true)]
    devel: bool,
    #[arg(long = "disable-openapi-validation", hide = true)]
    disable_openapi_validation: bool,
    /// `--dry-run[=client|server|none]`: `helm template` is always a client dry run.
    #[arg(long = "dry-run", num_args = 0..=1, require_equals = true, default_missing_value = "client", hide = true)]
    dry_run: Option<String>,
    #[arg(long, hide = true)]
    force: bool,
    #[arg(long = "force-conflicts", hide = true)]
    force_conflicts: bool,
    #[arg(long = "force-replace", hide = true)]
    force_replace: bool,
    /// `helm template` never prints NOTES.txt.
    #[arg(long = "hide-notes", hide = true)]
    hide_notes: bool,
    #[arg(long = "insecure-skip-tls-verify", hide = true)]
    insecure_skip_tls_verify: bool,
    #[arg(long = "key-file", hide = true)]
    key_file: Option<String>,
    #[arg(long, hide = true)]
    keyring: Option<String>,
    /// Release metadata labels: stored with a release, never rendered.
    #[arg(short = 'l', long, value_delimiter = ',', hide = true)]
    labels: Vec<String>,
    #[arg(long = "pass-credentials", hide = true)]
    pass_credentials: bool,
    #[arg(long, hide = true)]
    password: Option<String>,
    #[arg(long = "plain-http", hide = true)]
    plain_http: bool,
    #[arg(long = "post-renderer-args", hide = true)]
    post_renderer_args: Vec<String>,
    /// `helm template` never prints NOTES.txt, the subcharts' neither.
    #[arg(long = "render-subchart-notes", hide = true)]
    render_subchart_notes: bool,
    #[arg(long, hide = true)]
    replace: bool,
    #[arg(long = "rollback-on-failure", hide = true)]
    rollback_on_failure: bool,
    #[arg(long = "server-side", num_args = 0..=1, require_equals = true, default_missing_value = "true", hide = true)]
    server_side: Option<String>,
    #[arg(long = "take-ownership", hide = true)]
    take_ownership: bool,
    #[arg(long, hide = true)]
    timeout: Option<String>,
    #[arg(long, hide = true)]
    username: Option<String>,
    /// A chart version constraint: only read when the chart is downloaded.
    #[arg(long, hide = true)]
    version: Option<String>,
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", hide = true)]
    wait: Option<String>,
    #[arg(long = "wait-for-jobs", hide = true)]
    wait_for_jobs: bool,
}

/// Flags that would need the network or another binary: parsed so that the
/// refusal can say why and what to do offline.
#[derive(clap::Args)]
struct OfflineArgs {
    /// Refused unless CHART is a local directory (then ignored, as helm does).
    #[arg(long, hide = true)]
    repo: Option<String>,
    /// Refused when the chart's dependencies are missing from `charts/`.
    #[arg(long = "dependency-update", hide = true)]
    dependency_update: bool,
    /// Refused: would run another program over the output.
    #[arg(long = "post-renderer", hide = true)]
    post_renderer: Option<String>,
    /// Refused: needs the chart's provenance file and a keyring.
    #[arg(long, hide = true)]
    verify: bool,
    /// Refused: `getHostByName` would query DNS.
    #[arg(long = "enable-dns", hide = true)]
    enable_dns: bool,
}

#[derive(clap::Args)]
#[command(args_override_self = true)]
pub struct TemplateArgs {
    /// `[NAME] CHART`: the release name (default `release-name`) and the chart directory.
    #[arg(num_args = 1..=2, required = true)]
    args: Vec<String>,
    /// Omit NAME: `helm template` then names the release `release-name`.
    #[arg(short = 'g', long = "generate-name")]
    generate_name: bool,
    /// Values files, applied in order (comma-separated lists allowed).
    #[arg(short = 'f', long = "values", value_delimiter = ',')]
    values: Vec<PathBuf>,
    /// `key=value` pairs, typed as helm types them.
    #[arg(long)]
    set: Vec<String>,
    /// `key=value` pairs kept as strings.
    #[arg(long = "set-string")]
    set_string: Vec<String>,
    /// `key=json` pairs.
    #[arg(long = "set-json")]
    set_json: Vec<String>,
    /// `key=path` pairs: the file's content becomes the value.
    #[arg(long = "set-file")]
    set_file: Vec<String>,
    /// One `key=value`, the value taken literally.
    #[arg(long = "set-literal")]
    set_literal: Vec<String>,
    /// Release namespace.
    #[arg(short = 'n', long, default_value = "default")]
    namespace: String,
    /// `.Capabilities.KubeVersion`.
    #[arg(long = "kube-version")]
    kube_version: Option<String>,
    /// Extra API versions for `.Capabilities.APIVersions`.
    #[arg(short = 'a', long = "api-versions", value_delimiter = ',')]
    api_versions: Vec<String>,
    /// Print the chart's `crds/` first.
    #[arg(long = "include-crds")]
    include_crds: bool,
    /// Accepted for compatibility (CRDs are only printed with --include-crds).
    #[arg(long = "skip-crds")]
    skip_crds: bool,
    /// Leave out test hooks.
    #[arg(long = "skip-tests")]
    skip_tests: bool,
    /// Leave out all hooks.
    #[arg(long = "no-hooks")]
    no_hooks: bool,
    /// Set `.Release.IsUpgrade`.
    #[arg(long = "is-upgrade")]
    is_upgrade: bool,
    /// Only print manifests from these templates.
    #[arg(short = 's', long = "show-only")]
    show_only: Vec<String>,
    /// Template for the release name.
    #[arg(long = "name-template")]
    name_template: Option<String>,
    /// Do not validate values against `values.schema.json`.
    #[arg(long = "skip-schema-validation")]
    skip_schema_validation: bool,
    /// Accepted for compatibility.
    #[arg(long)]
    debug: bool,
    /// Accepted; hydrate is offline, so nothing is validated against a cluster.
    #[arg(long)]
    validate: bool,
    /// Write each template's output to files under this directory instead of stdout.
    #[arg(long = "output-dir")]
    output_dir: Option<String>,
    /// With --output-dir, put manifests under DIR/RELEASE.
    #[arg(long = "release-name")]
    release_name: bool,
    /// Which helm to reproduce: 3 (v3.17.3) or 4 (v4.1.4).
    #[arg(long = "helm-version", default_value = "3", value_parser = parse_helm_version)]
    helm_version: HelmVersion,
    #[command(flatten)]
    global: GlobalArgs,
    #[command(flatten)]
    ignored: IgnoredArgs,
    #[command(flatten)]
    offline: OfflineArgs,
}

fn parse_helm_version(text: &str) -> Result<HelmVersion, String> {
    HelmVersion::parse(text).map_err(|e| e.to_string())
}

/// Parses the arguments of `helm template` (without the command words) as
/// the command does: the chart path and the options, paths left as given
/// (relative to the working directory). The conformance tests call it to
/// render corpus cases in-process, flag for flag as the binary would.
pub fn template_options<I, T>(args: I) -> anyhow::Result<(PathBuf, Options)>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    #[derive(clap::Parser)]
    #[command(no_binary_name = true)]
    struct Standalone {
        #[command(flatten)]
        args: TemplateArgs,
    }
    let parsed = <Standalone as clap::Parser>::try_parse_from(args)?;
    options(parsed.args)
}

/// The chart path and the options a parsed command line asks for.
fn options(a: TemplateArgs) -> anyhow::Result<(PathBuf, Options)> {
    let (name, chart) = match a.args.as_slice() {
        [chart] => (None, chart.clone()),
        [name, chart] => (Some(name.clone()), chart.clone()),
        _ => anyhow::bail!("expected [NAME] CHART"),
    };
    refuse_offline(&a.offline, &chart)?;
    // helm's `Install.NameAndChart`: a NAME excludes both naming flags;
    // `helm template` presets the name `release-name`, which
    // `--generate-name` never overrides (only `--name-template` does).
    let release_name = match (name, &a.name_template) {
        (Some(_), _) if a.generate_name => {
            anyhow::bail!("cannot set --generate-name and also specify a name")
        }
        (Some(_), Some(_)) => anyhow::bail!("cannot set --name-template and also specify a name"),
        (Some(n), None) => n,
        (None, Some(t)) => helm::name_from_template(t, a.helm_version)?,
        (None, None) => "release-name".into(),
    };
    let mut sets = Vec::new();
    sets.extend(a.set_json.into_iter().map(|s| (SetKind::Json, s)));
    sets.extend(a.set.into_iter().map(|s| (SetKind::Typed, s)));
    sets.extend(a.set_string.into_iter().map(|s| (SetKind::String, s)));
    sets.extend(a.set_file.into_iter().map(|s| (SetKind::File, s)));
    sets.extend(a.set_literal.into_iter().map(|s| (SetKind::Literal, s)));
    let mut opts = Options {
        release_name,
        namespace: a.namespace,
        values_files: a.values,
        sets,
        api_versions: a.api_versions,
        include_crds: a.include_crds,
        skip_tests: a.skip_tests,
        no_hooks: a.no_hooks,
        is_upgrade: a.is_upgrade,
        show_only: a.show_only,
        skip_schema_validation: a.skip_schema_validation,
        helm_version: a.helm_version,
        output_dir: a.output_dir,
        use_release_name: a.release_name,
        ..Options::default()
    };
    if let Some(k) = &a.kube_version {
        opts.kube_version = Some(a.helm_version.parse_kube_version(k)?);
    }
    let _ = (a.skip_crds, a.debug, a.validate);
    Ok((PathBuf::from(chart), opts))
}

/// The flags hydrate cannot honour offline, refused before rendering.
/// `--repo` is read only when CHART is not a local path (helm's
/// `LocateChart` returns an existing path first).
fn refuse_offline(o: &OfflineArgs, chart: &str) -> anyhow::Result<()> {
    const OFFLINE: &str = "hydrate renders offline and runs no other program";
    if o.repo.is_some() && !std::path::Path::new(chart).exists() {
        anyhow::bail!(
            "--repo: chart {chart:?} would be downloaded from a repository; {OFFLINE}: \
             fetch it first (`helm pull --untar --repo URL {chart}`) and pass the directory"
        );
    }
    if let Some(p) = &o.post_renderer {
        anyhow::bail!(
            "--post-renderer {p:?}: {OFFLINE}: pipe the output through it instead \
             (`hydrate helm template ... | {p}`)"
        );
    }
    if o.verify {
        anyhow::bail!(
            "--verify: {OFFLINE}: check the chart's provenance with `helm verify` before rendering"
        );
    }
    if o.enable_dns {
        anyhow::bail!("--enable-dns: {OFFLINE}: getHostByName lookups are not performed");
    }
    Ok(())
}

/// Its errors exit 1, as helm's do (`error.rs`).
pub fn run(cmd: Command) -> anyhow::Result<Outcome> {
    let a = match cmd {
        Command::Template(a) => a,
        Command::Version(v) => return version(*v),
    };
    let validate = a.validate;
    let dependency_update = a.offline.dependency_update;
    let (chart, opts) = options(*a)?;
    if validate {
        errln!("note: --validate needs a cluster; hydrate works offline and renders without validating");
    }
    let rendered = match helm::template_printed(&chart, &opts) {
        Ok(r) => r,
        Err(e @ helm::Error::Chart(_)) if dependency_update => anyhow::bail!(
            "{e}\n--dependency-update would download missing dependencies; hydrate renders \
             offline: vendor them under charts/ first (`helm dependency build {}`)",
            chart.display()
        ),
        Err(e) => return Err(e.into()),
    };
    for w in &rendered.warnings {
        match w.kind {
            // helm's own log line.
            WarningKind::Symlink => errln!("{}", w.message),
            _ => errln!("warning: {w}"),
        }
    }
    let mut out = out::stdout();
    for f in &rendered.files {
        f.write()?;
        writeln!(out, "wrote {}", f.path)?;
    }
    out.write_all(rendered.output.as_bytes())?;
    std::mem::forget(rendered);
    Ok(Outcome::Done)
}

/// helm's persistent flags that take a value (pflag reads the next word
/// when no `=` follows). cobra accepts persistent flags before the
/// subcommand (`helm --kube-context x template ...`, as helmfile runs it).
const GLOBALS_WITH_VALUE: &[&str] = &[
    "-n",
    "--namespace",
    "--burst-limit",
    "--kube-apiserver",
    "--kube-as-group",
    "--kube-as-user",
    "--kube-ca-file",
    "--kube-context",
    "--kube-tls-server-name",
    "--kube-token",
    "--kubeconfig",
    "--qps",
    "--registry-config",
    "--repository-cache",
    "--repository-config",
    "--color",
    "--colour",
    "--content-cache",
    "--helm-version",
];

/// helm's persistent switches.
const GLOBAL_SWITCHES: &[&str] = &["--debug", "--kube-insecure-skip-tls-verify"];

/// Moves helm's global flags written before the subcommand (`args[at..]`
/// follows `helm`) to just after it, where clap reads them. Anything else
/// before the subcommand is left for clap to reject.
pub fn globals_after_subcommand(args: &mut Vec<std::ffi::OsString>, at: usize) {
    let mut i = at;
    let mut moved = Vec::new();
    while let Some(word) = args.get(i).and_then(|a| a.to_str()) {
        let name = word.split('=').next().unwrap_or(word);
        let takes_value = GLOBALS_WITH_VALUE.contains(&name) && !word.contains('=');
        let short_joined = word.starts_with("-n") && !word.starts_with("--") && word.len() > 2;
        if takes_value {
            let end = (i + 2).min(args.len());
            moved.extend(args.drain(i..end));
        } else if GLOBALS_WITH_VALUE.contains(&name)
            || GLOBAL_SWITCHES.contains(&name)
            || short_joined
        {
            moved.push(args.remove(i));
        } else {
            break;
        }
    }
    if moved.is_empty() || i >= args.len() || args[i].to_str().is_some_and(|w| w.starts_with('-')) {
        // No subcommand follows: put the words back for clap's message.
        for (k, w) in moved.into_iter().enumerate() {
            args.insert(at + k, w);
        }
        return;
    }
    i += 1;
    for (k, w) in moved.into_iter().enumerate() {
        args.insert(i + k, w);
    }
}

/// `helm version`: helm4 has no `-c`, and cobra rejects it as it does.
fn version(v: VersionArgs) -> anyhow::Result<Outcome> {
    if v.client && v.helm_version == HelmVersion::V4 {
        anyhow::bail!("unknown shorthand flag: 'c' in -c");
    }
    let out = v
        .helm_version
        .version_output(v.short, v.template.as_deref())?;
    out::stdout().write_all(out.as_bytes())?;
    Ok(Outcome::Done)
}
