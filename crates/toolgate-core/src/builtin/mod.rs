//! The built-in tools (bash, read_file, write_file, edit_file, glob) and the definitions of
//! the connector tools (connect_mcp, disconnect_mcp) whose execution lives in the agent.
//!
//! `run` does no permission checks: the policy has already decided (and asked the user when a
//! path lies outside the workspace) before a call reaches this module. Every failure becomes
//! an error result for the model; nothing here panics or prints.

mod args;
mod capture;
mod definitions;
mod files;
mod glob;
mod kind;
mod proposed;
mod shell;

pub use definitions::{
    SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, builtin_tools, disconnect_tool, exit_plan_mode_tool,
    pool_builtins, pool_builtins_with_resources, resource_tools, search_tools_tool,
};
pub use kind::BuiltinTool;
pub use proposed::{NoPreview, PREVIEW_BYTE_LIMIT, ProposedWrite, proposed_write};
pub use shell::{DEFAULT_TIMEOUT, MAX_TIMEOUT, OUTPUT_LIMIT_CHARS};

use crate::beneath::FileTarget;
use crate::sandbox::{Sandbox, WriteLog};
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

/// Runs one of the five file/shell built-ins inside `workspace`. Relative paths resolve
/// against `workspace`; absolute paths are used as given (the policy approved them).
/// bash runs under the default sandbox settings of this machine; see [`run_with`].
pub async fn run(
    tool: BuiltinTool,
    input: &Value,
    workspace: &Path,
    cancel: CancellationToken,
) -> BuiltinOutput {
    run_with(tool, input, workspace, &Sandbox::default(), cancel).await
}

/// [`run`] with the session's sandbox (its `[sandbox]` settings and the kernel's status):
/// bash runs under `sandbox.bash_profile(workspace)`, or is refused when that profile
/// cannot be enforced. The connectors change the pool, which only the agent can do: here
/// they are an error.
pub async fn run_with(
    tool: BuiltinTool,
    input: &Value,
    workspace: &Path,
    sandbox: &Sandbox,
    cancel: CancellationToken,
) -> BuiltinOutput {
    run_traced(tool, input, workspace, sandbox, cancel, None, None).await
}

/// [`run_with`], recording in `trace` the paths a confined bash command asks to change
/// (checkpoints keep only those as the call's own changes). `target`: the location the
/// gate resolved and decided for a file tool's call; read_file, write_file and edit_file
/// open exactly that (beneath the workspace's handle, or as approved outside it).
#[allow(clippy::too_many_arguments)]
pub async fn run_traced(
    tool: BuiltinTool,
    input: &Value,
    workspace: &Path,
    sandbox: &Sandbox,
    cancel: CancellationToken,
    trace: Option<&WriteLog>,
    target: Option<&FileTarget>,
) -> BuiltinOutput {
    match tool {
        BuiltinTool::Bash => shell::run_bash(input, workspace, sandbox, cancel, trace).await,
        BuiltinTool::ReadFile => files::read_file(input, workspace, target).await,
        BuiltinTool::WriteFile => files::write_file(input, workspace, target).await,
        BuiltinTool::EditFile => files::edit_file(input, workspace, target).await,
        BuiltinTool::Glob => glob::run_glob(input, workspace, cancel).await,
        BuiltinTool::ConnectMcp
        | BuiltinTool::DisconnectMcp
        | BuiltinTool::SearchTools
        | BuiltinTool::ExitPlanMode
        | BuiltinTool::ListMcpResources
        | BuiltinTool::ReadMcpResource => BuiltinOutput::error(format!("Unknown tool: {tool}")),
    }
}

#[cfg(test)]
mod tests;
