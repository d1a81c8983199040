//! The built-in tools, each behind [`BuiltinHandler`] in its own file under `tools/` and
//! listed once in `registry.rs`: bash, read_file, write_file, edit_file and glob run here;
//! the connectors, the resource tools, search_tools and exit_plan_mode are defined and
//! judged here and run by the agent (their [`RunsIn::Agent`] job).
//!
//! Running does no permission checks: the policy has already decided (and asked the user when a
//! path lies outside the workspace) before a call reaches this module. Every failure becomes
//! an error result for the model; nothing here panics or prints.

mod args;
mod capture;
mod definitions;
mod files;
mod glob;
mod handler;
mod kind;
mod proposed;
mod registry;
mod shell;
pub mod tools;

pub use handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, FileAccess, FileFamily, Judgement,
    LocalCall, Locate, Presence, RunsIn,
};
pub use kind::BuiltinId;
pub use proposed::{NoPreview, PREVIEW_BYTE_LIMIT, ProposedWrite, proposed_write};
pub use shell::{DEFAULT_TIMEOUT, MAX_TIMEOUT, OUTPUT_LIMIT_CHARS};
pub use tools::search_tools::{SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX};

use crate::sandbox::Sandbox;
use serde_json::Value;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// A built-in tool's result as text for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltinOutput {
    pub text: String,
    pub is_error: bool,
}

impl BuiltinOutput {
    pub fn ok(text: impl Into<String>) -> Self {
        BuiltinOutput {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        BuiltinOutput {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Runs a built-in that runs here inside `workspace`. Relative paths resolve against
/// `workspace`; absolute paths are used as given (the policy approved them). bash runs
/// under the default sandbox settings of this machine; see [`run_with`].
pub async fn run(
    tool: BuiltinId,
    input: &Value,
    workspace: &Path,
    cancel: CancellationToken,
) -> BuiltinOutput {
    run_with(tool, input, workspace, &Sandbox::default(), cancel).await
}

/// [`run`] with the session's sandbox (its `[sandbox]` settings and the kernel's status):
/// bash runs under `sandbox.bash_profile(workspace)`, or is refused when that profile
/// cannot be enforced. The tools the agent runs (they change the pool or ask the person)
/// are an error here.
pub async fn run_with(
    tool: BuiltinId,
    input: &Value,
    workspace: &Path,
    sandbox: &Sandbox,
    cancel: CancellationToken,
) -> BuiltinOutput {
    tool.handler()
        .run(LocalCall {
            input,
            workspace,
            sandbox,
            cancel,
            trace: None,
            target: None,
        })
        .await
}

#[cfg(test)]
mod tests;
