//! The one error type at the binary's edge: every command ends in `Result<(), Failure>`,
//! and `main` turns a failure into a message on stderr and the process exit code.
//!
//! Exit codes (documented in the README):
//! - 0: success (for `-p`: the turn finished);
//! - 1: the run failed (model error, the agent stopped early, a server or tool failed,
//!   the terminal could not be used);
//! - 2: usage (bad arguments or flags, an empty prompt, an unknown session id, a provider
//!   that cannot be selected, a rule flag that does not parse);
//! - 128 + N: the console ended on signal N (SIGINT 130, SIGQUIT 131, SIGTERM 143,
//!   SIGHUP 129) after restoring the terminal and stopping the agent.

use std::process::ExitCode;

/// Which exit code a failure maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Run,
    Usage,
    /// Ended on this signal (its number), as a shell reports a process killed by it.
    Signal(i32),
}

impl FailureKind {
    pub fn code(self) -> u8 {
        match self {
            FailureKind::Run => 1,
            FailureKind::Usage => 2,
            FailureKind::Signal(signal) => u8::try_from(128 + signal.clamp(1, 127)).unwrap_or(255),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Run(String),
    /// Already shown on the command's own output (a headless `error` event, `mcp call`'s
    /// error result): only the exit code is left to give.
    #[error("failed (reported above)")]
    Reported(FailureKind),
}

impl Failure {
    pub fn kind(&self) -> FailureKind {
        match self {
            Failure::Usage(_) => FailureKind::Usage,
            Failure::Run(_) => FailureKind::Run,
            Failure::Reported(kind) => *kind,
        }
    }

    /// A command that printed its own report and says how it went by a code.
    pub fn from_reported_code(code: i32) -> Result<(), Failure> {
        match code {
            0 => Ok(()),
            2 => Err(Failure::Reported(FailureKind::Usage)),
            _ => Err(Failure::Reported(FailureKind::Run)),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::Run(format!("{e:#}"))
    }
}

/// Prints the failure (unless it was reported already) and gives the exit code.
pub fn exit(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if !matches!(failure, Failure::Reported(_)) {
                eprintln!("toolgate: {failure}");
            }
            ExitCode::from(failure.kind().code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_documented_table() {
        assert_eq!(Failure::Usage("x".into()).kind().code(), 2);
        assert_eq!(Failure::Run("x".into()).kind().code(), 1);
        assert_eq!(Failure::Reported(FailureKind::Usage).kind().code(), 2);
        assert_eq!(FailureKind::Signal(2).code(), 130);
        assert_eq!(FailureKind::Signal(15).code(), 143);
        assert!(Failure::from_reported_code(0).is_ok());
        assert_eq!(
            Failure::from_reported_code(1).map_err(|f| f.kind()),
            Err(FailureKind::Run)
        );
        assert_eq!(
            Failure::from_reported_code(2).map_err(|f| f.kind()),
            Err(FailureKind::Usage)
        );
    }
}
