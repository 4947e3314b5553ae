//! `hydrate kustomize build`: a drop-in for `kustomize build`.

use std::io::Write;
use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

use super::error::Outcome;
use super::out::{self, errln};

use crate::kustomize::{self, LoadRestrictor, Options, Reorder};
use crate::warning::WarningKind;

#[derive(Subcommand)]
pub enum Command {
    /// Build a kustomization target, printing what `kustomize build` prints.
    Build(Box<BuildArgs>),
    /// Print the version of the kustomize being reproduced (`v5.7.1`).
    Version(VersionArgs),
}

/// `kustomize version`'s flags.
#[derive(clap::Args)]
pub struct VersionArgs {
    /// Short form (deprecated in kustomize, and will be removed in the future).
    #[arg(long)]
    short: bool,
    /// One of 'yaml' or 'json'.
    #[arg(short, long, value_name = "FORMAT")]
    output: Option<String>,
}

#[derive(clap::Args)]
pub struct BuildArgs {
    /// The kustomization directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Resource order: `legacy` (kustomize's kind order) or `none` (input order).
    #[arg(long, value_enum, default_value = "legacy")]
    reorder: ReorderArg,
    /// `LoadRestrictionsRootOnly` (default) or `LoadRestrictionsNone`.
    #[arg(long, value_enum, default_value = "LoadRestrictionsRootOnly")]
    load_restrictor: RestrictorArg,
    /// Render `helmCharts` (natively: no helm binary is run).
    #[arg(long)]
    enable_helm: bool,
    /// Accepted for compatibility: hydrate renders charts itself.
    #[arg(long, value_name = "PATH")]
    helm_command: Option<String>,
    /// `.Capabilities.KubeVersion` for every chart.
    #[arg(long)]
    helm_kube_version: Option<String>,
    /// `.Capabilities.APIVersions` additions for every chart.
    #[arg(long, value_delimiter = ',')]
    helm_api_versions: Vec<String>,
    /// Accepted for compatibility.
    #[arg(long)]
    helm_debug: bool,
    /// Add `app.kubernetes.io/managed-by: kustomize-v5.7.1` to every resource.
    #[arg(long)]
    enable_managedby_label: bool,
    /// Write the output to this file instead of stdout; to an existing
    /// directory, one file per resource as kustomize names them.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Refused: would run plugins (exec or container KRM functions).
    #[arg(long, hide = true)]
    enable_alpha_plugins: bool,
    /// Refused: would run exec KRM functions.
    #[arg(long, hide = true)]
    enable_exec: bool,
    /// Refused: gives container KRM functions network access.
    #[arg(long, hide = true)]
    network: bool,
    /// Container functions' docker network: read only with plugins, ignored.
    #[arg(long, hide = true)]
    network_name: Option<String>,
    /// Container functions' mounts: read only with plugins, ignored.
    #[arg(long, hide = true)]
    mount: Vec<String>,
    /// Container functions' environment: read only with plugins, ignored.
    #[arg(short = 'e', long, hide = true)]
    env: Vec<String>,
    /// Container functions' user: read only with plugins, ignored.
    #[arg(long, hide = true)]
    as_current_user: bool,
    /// kustomize's `--stack-trace` (prints Go stack traces on error): ignored.
    #[arg(long, hide = true)]
    stack_trace: bool,
}

/// Refuses the flags that would run other programs or give them the
/// network: hydrate runs no plugins. `--mount`, `--env`,
/// `--as-current-user` and `--network-name` only configure container
/// functions, so without plugins kustomize reads none of them either.
fn refuse_plugins(args: &BuildArgs) -> anyhow::Result<()> {
    const WHY: &str = "hydrate builds offline and runs no plugins or KRM functions; \
                       render them with kustomize and commit their output as resources";
    let flag = if args.enable_alpha_plugins {
        "--enable-alpha-plugins"
    } else if args.enable_exec {
        "--enable-exec"
    } else if args.network {
        "--network"
    } else {
        return Ok(());
    };
    anyhow::bail!("{flag}: {WHY}")
}

#[derive(Clone, Copy, ValueEnum)]
enum ReorderArg {
    Legacy,
    None,
}

#[derive(Clone, Copy, ValueEnum)]
enum RestrictorArg {
    #[value(name = "LoadRestrictionsRootOnly", alias = "rootOnly")]
    RootOnly,
    #[value(name = "LoadRestrictionsNone", alias = "none")]
    None,
}

/// Parses the arguments of `kustomize build` (without the command words) as
/// the command does: the target directory, left as given (relative to the
/// working directory), and the options. The conformance tests call it to
/// build corpus cases in-process, flag for flag as the binary would.
pub fn build_options<I, T>(args: I) -> anyhow::Result<(PathBuf, Options)>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    #[derive(clap::Parser)]
    #[command(no_binary_name = true)]
    struct Standalone {
        #[command(flatten)]
        args: BuildArgs,
    }
    let parsed = <Standalone as clap::Parser>::try_parse_from(args)?;
    Ok((parsed.args.dir.clone(), options(&parsed.args)))
}

/// The options a parsed command line asks for.
fn options(args: &BuildArgs) -> Options {
    let _ = (&args.helm_command, args.helm_debug, &args.network_name);
    let _ = (
        &args.mount,
        &args.env,
        args.as_current_user,
        args.stack_trace,
    );
    Options {
        reorder: match args.reorder {
            ReorderArg::Legacy => Reorder::Legacy,
            ReorderArg::None => Reorder::None,
        },
        load_restrictor: match args.load_restrictor {
            RestrictorArg::RootOnly => LoadRestrictor::RootOnly,
            RestrictorArg::None => LoadRestrictor::None,
        },
        managed_by_label: args.enable_managedby_label,
        helm: kustomize::HelmSettings {
            enabled: args.enable_helm,
            kube_version: args.helm_kube_version.clone(),
            api_versions: args.helm_api_versions.clone(),
        },
        sources: None,
        provenance: false,
    }
}

/// kustomize's `version` command (`Options.Validate` then `Run`).
fn version(v: &VersionArgs) -> anyhow::Result<Outcome> {
    if v.short {
        // cobra's notice for a flag marked deprecated.
        errln!("Flag --short has been deprecated, and will be removed in the future.");
        if v.output.as_deref().is_some_and(|o| !o.is_empty()) {
            anyhow::bail!("--short and --output are mutually exclusive");
        }
    }
    let format = match (v.short, v.output.as_deref()) {
        (true, _) => kustomize::VersionFormat::Short,
        (false, None | Some("")) => kustomize::VersionFormat::Plain,
        (false, Some("yaml")) => kustomize::VersionFormat::Yaml,
        (false, Some("json")) => kustomize::VersionFormat::Json,
        (false, Some(_)) => kustomize::VersionFormat::Other,
    };
    write!(out::stdout(), "{}", kustomize::version_text(format))?;
    Ok(Outcome::Done)
}

/// Its errors exit 1, as kustomize's do (`error.rs`).
pub fn run(cmd: Command) -> anyhow::Result<Outcome> {
    let args = match cmd {
        Command::Build(args) => args,
        Command::Version(v) => return version(&v),
    };
    refuse_plugins(&args)?;
    let opts = options(&args);
    if opts.reorder == Reorder::None {
        // kustomize prints this deprecation notice and still honours the flag.
        errln!("Flag --reorder has been deprecated, use the new 'sortOptions' field in kustomization.yaml instead.");
    }
    let build = match kustomize::build_warned(&args.dir, &opts) {
        Ok(b) => b,
        // kustomize prints its warnings as it meets them: before its error.
        Err(f) => {
            print_warnings(&f.warnings);
            return Err(f.error.into());
        }
    };
    print_warnings(&build.warnings);
    let out = build.to_yaml();
    match args.output {
        // kustomize's `-o DIR`: one file per resource.
        Some(dir) if dir.is_dir() => {
            for (name, text) in build.individual_files() {
                crate::output::write_file_atomic(&dir.join(name), text.as_bytes())?;
            }
        }
        Some(path) => {
            refuse_missing_parent(&path)?;
            crate::output::write_file_atomic(&path, out.as_bytes())?;
        }
        None => out::stdout().write_all(out.as_bytes())?,
    }
    // The process exits next: freeing every resource tree one node at a
    // time would cost a few percent of a large build for nothing.
    std::mem::forget(build);
    Ok(Outcome::Done)
}

/// kustomize's `-o FILE` opens the file with `os.Create` (kustomize
/// `build.go` `writeFile`): it creates no directories, so a missing parent
/// is Go's `open PATH: no such file or directory`, and a name ending in `/`
/// that is no directory is `open PATH: is a directory`; a file on the
/// way is `not a directory`.
fn refuse_missing_parent(path: &std::path::Path) -> anyhow::Result<()> {
    let shown = path.display();
    if path.as_os_str().to_string_lossy().ends_with('/') {
        anyhow::bail!("open {shown}: is a directory");
    }
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) if p.is_dir() => Ok(()),
        // A file where a directory should be: ENOTDIR.
        Some(p) if p.ancestors().any(|a| a.is_file()) => {
            anyhow::bail!("open {shown}: not a directory")
        }
        Some(_) => anyhow::bail!("open {shown}: no such file or directory"),
        None => Ok(()),
    }
}

fn print_warnings(warnings: &[crate::warning::Warning]) {
    for w in warnings {
        match w.kind {
            // kustomize's own stderr line.
            WarningKind::Deprecation => errln!("# Warning: {}", w.message),
            _ => errln!("warning: {w}"),
        }
    }
}
