//! The command line's one error type, and the exit-code table.
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | done |
//! | 1 | a finding: stale output (`render --check`), differences (`diff`), a promotion held by a policy, a push the remote refuses |
//! | 2 | a usage or runtime error: unknown environment or app, bad input, I/O |
//!
//! `hydrate kustomize` and `hydrate helm` stand in for the real tools and
//! exit 1 for every error of theirs, as kustomize and helm do. A closed
//! stdout changes nothing here: the command ends with the code of what it
//! did (`out.rs`).
//!
//! Commands return [`Outcome`] or [`CommandError`]; the library's errors
//! become a `CommandError` through the `From` impls below, which decide
//! each variant's [`Kind`], so no command picks its own exit code (jj's
//! `CommandError` is the model).

use std::fmt::Display;
use std::process::ExitCode;

use super::out::errln;

/// What a command that did its work found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done; nothing to report: exit 0.
    Done,
    /// Done, and it found what the user asked about (stale output,
    /// differences): exit 1.
    Finding,
}

impl Outcome {
    /// [`Outcome::Finding`] when `found`, else [`Outcome::Done`].
    pub fn finding_if(found: bool) -> Outcome {
        if found {
            Outcome::Finding
        } else {
            Outcome::Done
        }
    }

    /// The exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Done => 0,
            Outcome::Finding => 1,
        }
    }
}

/// What kind of failure an error is; [`Kind::code`] is the exit-code table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A finding reported as an error: the policies hold back the whole
    /// promotion (`--all-or-nothing`, or everything held), the remote
    /// refuses a push. Exit 1.
    Finding,
    /// The command line or its input is wrong: an unknown environment or
    /// app, a flag, an invalid file, a failing render. Exit 2.
    Usage,
    /// The work failed: I/O, git, a lock. Exit 2.
    Runtime,
    /// An error of a drop-in (`hydrate kustomize`, `hydrate helm`): exit 1,
    /// as the real tools exit.
    Tool,
}

impl Kind {
    /// The exit code: the one place it is decided.
    pub fn code(self) -> u8 {
        match self {
            Kind::Finding | Kind::Tool => 1,
            Kind::Usage | Kind::Runtime => 2,
        }
    }
}

/// A failed command: its kind, what went wrong (one `Error:` line each; a
/// render run reports every failed app) and hints: what stands despite the
/// error or what to do, printed after it as they are.
#[derive(Debug)]
pub struct CommandError {
    kind: Kind,
    errors: Vec<String>,
    hints: Vec<String>,
}

/// What every command returns.
pub type CommandResult = Result<Outcome, CommandError>;

impl CommandError {
    /// An error of `kind` with one message per line of output.
    pub fn new(kind: Kind, errors: Vec<String>) -> CommandError {
        CommandError {
            kind,
            errors,
            hints: Vec::new(),
        }
    }

    /// A usage or input error.
    pub fn usage(message: impl Display) -> CommandError {
        CommandError::new(Kind::Usage, vec![message.to_string()])
    }

    /// A runtime error (I/O).
    pub fn runtime(message: impl Display) -> CommandError {
        CommandError::new(Kind::Runtime, vec![message.to_string()])
    }

    /// A drop-in's error: exit 1, as kustomize and helm exit.
    pub fn tool(error: anyhow::Error) -> CommandError {
        CommandError::new(Kind::Tool, vec![error.to_string()])
    }

    /// Adds a hint: what was done despite the error, or what to do.
    pub fn hint(mut self, hint: impl Display) -> CommandError {
        self.hints.push(hint.to_string());
        self
    }

    /// The messages, for machine-readable output (`--output json`).
    pub fn messages(&self) -> &[String] {
        &self.errors
    }

    /// Prints the error on stderr.
    fn report(&self) {
        for e in &self.errors {
            errln!("Error: {e}");
        }
        for h in &self.hints {
            errln!("{h}");
        }
    }
}

/// Reports a command's result and turns it into the process exit code.
pub fn exit_code(result: CommandResult) -> ExitCode {
    ExitCode::from(match result {
        Ok(outcome) => outcome.code(),
        Err(e) => {
            e.report();
            e.kind.code()
        }
    })
}

fn one(kind: Kind, e: impl Display) -> CommandError {
    CommandError::new(kind, vec![e.to_string()])
}

/// `From<E> for CommandError` with the message of `E` and the kind that
/// `$kind` gives it.
macro_rules! kind_of {
    ($($error:ty => $kind:path;)*) => {$(
        impl From<$error> for CommandError {
            fn from(e: $error) -> CommandError {
                one($kind(&e), e)
            }
        }
    )*};
}

kind_of! {
    std::io::Error => io_kind;
    serde_json::Error => json_kind;
    crate::env::Error => env_kind;
    crate::git::Error => git_kind;
    crate::output::Error => output_kind;
    crate::init::Error => init_kind;
    crate::compare::Error => compare_kind;
    crate::promote::Error => promote_kind;
    crate::verify::Error => verify_kind;
}

fn verify_kind(e: &crate::verify::Error) -> Kind {
    use crate::verify::Error as E;
    match e {
        E::Env(e) => env_kind(e),
        E::Git(e) => git_kind(e),
        E::Usage(_) => Kind::Usage,
    }
}

fn io_kind(_: &std::io::Error) -> Kind {
    Kind::Runtime
}

fn json_kind(_: &serde_json::Error) -> Kind {
    Kind::Runtime
}

fn env_kind(e: &crate::env::Error) -> Kind {
    use crate::env::Error as E;
    match e {
        E::Read { .. } => Kind::Runtime,
        E::Config { .. }
        | E::NoEnvironments { .. }
        | E::NoEnvironmentFiles { .. }
        | E::SharedOutput(_)
        | E::Render { .. }
        | E::Secret { .. }
        | E::Strict { .. }
        | E::Chart { .. } => Kind::Usage,
    }
}

fn git_kind(e: &crate::git::Error) -> Kind {
    use crate::git::Error as E;
    match e {
        E::Shallow { .. } | E::Usage(_) | E::Outside { .. } | E::NotFound { .. } => Kind::Usage,
        E::Command { .. }
        | E::Git { .. }
        | E::Locked { .. }
        | E::Io { .. }
        | E::Conflict { .. } => Kind::Runtime,
    }
}

fn output_kind(e: &crate::output::Error) -> Kind {
    use crate::output::Error as E;
    match e {
        E::Git(g) => git_kind(g),
        E::Io { .. } | E::Diverged { .. } => Kind::Runtime,
        E::NoRemote(_)
        | E::BranchName(_)
        | E::Template(_)
        | E::Target { .. }
        | E::InTheWay { .. }
        | E::Layout(_) => Kind::Usage,
    }
}

fn init_kind(e: &crate::init::Error) -> Kind {
    use crate::init::Error as E;
    match e {
        E::Io { .. } | E::Invalid { .. } => Kind::Runtime,
        E::Exists { .. } | E::NothingFound { .. } => Kind::Usage,
    }
}

fn compare_kind(e: &crate::compare::Error) -> Kind {
    use crate::compare::Error as E;
    match e {
        E::Env(e) => env_kind(e),
        E::Git(e) => git_kind(e),
        E::Output(e) => output_kind(e),
        E::Io { .. } => Kind::Runtime,
        E::Renders(_) | E::Diff(_) | E::Usage(_) | E::Validate(_) => Kind::Usage,
    }
}

fn render_kind(e: &crate::render::Error) -> Kind {
    use crate::render::Error as E;
    match e {
        E::Env(e) => env_kind(e),
        E::Output(e) => output_kind(e),
        E::InEnv { source, .. } => output_kind(source),
        E::Partial { source, .. } => render_kind(source),
        E::Git(e) => git_kind(e),
        E::Renders(_) | E::Usage(_) | E::Selection(_) => Kind::Usage,
        E::Invalid(_) => Kind::Finding,
        E::Validate(_) => Kind::Usage,
    }
}

/// A policy refusing the promotion is a finding (exit 1): the promotion
/// was asked about and the answer is no.
fn promote_kind(e: &crate::promote::Error) -> Kind {
    use crate::promote::Error as E;
    match e {
        E::Refused(_) | E::Held(_) => Kind::Finding,
        E::Env(e) => env_kind(e),
        E::Git(e) => git_kind(e),
        E::Output(e) => render_kind(e),
        E::Pin(_) | E::Edit { .. } | E::Uncommitted(_) | E::Render { .. } | E::Template(_) => {
            Kind::Usage
        }
        E::Usage(_) => Kind::Usage,
    }
}

/// A render run reports every failed app, then how many failed and that
/// nothing was written.
impl From<crate::render::Error> for CommandError {
    fn from(e: crate::render::Error) -> CommandError {
        let kind = render_kind(&e);
        match &e {
            crate::render::Error::Renders(errors) => {
                let lines = errors.iter().map(ToString::to_string).collect();
                CommandError::new(kind, lines).hint(e)
            }
            crate::render::Error::Invalid(findings) => {
                let lines = findings
                    .iter()
                    .map(crate::validate::report::text_line)
                    .collect();
                CommandError::new(kind, lines).hint(e)
            }
            _ => one(kind, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table() {
        let codes = [Kind::Finding, Kind::Usage, Kind::Runtime, Kind::Tool].map(Kind::code);
        assert_eq!(codes, [1, 2, 2, 1]);
        assert_eq!([Outcome::Done, Outcome::Finding].map(Outcome::code), [0, 1]);
    }

    #[test]
    fn a_promotion_held_whole_is_a_finding_and_an_unknown_name_is_usage() {
        let held = CommandError::from(crate::promote::Error::Held(Vec::new()));
        assert_eq!(held.kind, Kind::Finding);
        let usage = CommandError::from(crate::promote::Error::Usage("no env".into()));
        assert_eq!(usage.kind, Kind::Usage);
    }

    #[test]
    fn io_is_an_error() {
        let io = std::io::Error::other("disk");
        assert_eq!(CommandError::from(io).kind, Kind::Runtime);
    }

    #[test]
    fn failed_renders_are_one_error_each_then_the_count() {
        let failed = |app: &str| crate::env::Error::Config {
            path: format!("environments/{app}.yaml").into(),
            line: 3,
            message: "bad".into(),
        };
        let e = CommandError::from(crate::render::Error::Renders(vec![
            failed("a"),
            failed("b"),
        ]));
        assert_eq!(e.kind, Kind::Usage);
        assert_eq!(
            e.messages(),
            ["environments/a.yaml:3: bad", "environments/b.yaml:3: bad"]
        );
        assert_eq!(e.hints, ["2 render(s) failed; nothing was written"]);
    }
}
