//! `hydrate helm template`: a drop-in for `helm template` (v3.17.3).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::helm::{self, HelmVersion, Options, SetKind};

#[derive(Subcommand)]
pub enum Command {
    /// Render chart templates locally, printing what `helm template` prints.
    Template(Box<TemplateArgs>),
}

#[derive(clap::Args)]
#[command(args_override_self = true)]
pub struct TemplateArgs {
    /// `[NAME] CHART`: the release name (default `release-name`) and the chart directory.
    #[arg(num_args = 1..=2, required = true)]
    args: Vec<String>,
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
    let release_name = match (name, &a.name_template) {
        (Some(n), _) => n,
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

pub fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    let Command::Template(a) = cmd;
    let validate = a.validate;
    let (chart, opts) = options(*a)?;
    if validate {
        eprintln!("note: --validate needs a cluster; hydrate works offline and renders without validating");
    }
    let rendered = helm::template(&chart, &opts)?;
    for w in &rendered.warnings {
        eprintln!("warning: {w}");
    }
    let mut out = std::io::stdout().lock();
    for f in &rendered.files {
        f.write()?;
        writeln!(out, "wrote {}", f.path)?;
    }
    out.write_all(rendered.output.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
