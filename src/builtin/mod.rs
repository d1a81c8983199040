//! The built-in tools (bash, read_file, write_file, edit_file, glob) and the definitions of
//! the connector tools (connect_mcp, disconnect_mcp) whose execution lives in the agent.

use crate::pool::PoolTool;
use serde_json::Value;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// A built-in tool's result as text for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltinOutput {
    pub text: String,
    pub is_error: bool,
}

/// bash, read_file, write_file, edit_file, glob, connect_mcp (enum of `server_names`),
/// disconnect_mcp — in that order.
// CONTRACT (builtin work replaces the bodies).
pub fn builtin_tools(_server_names: &[String]) -> Vec<PoolTool> {
    Vec::new()
}

/// Runs one of the five file/shell built-ins inside `workspace`.
pub async fn run(
    name: &str,
    _input: &Value,
    _workspace: &Path,
    _cancel: CancellationToken,
) -> BuiltinOutput {
    BuiltinOutput {
        text: format!("Unknown tool: {name}"),
        is_error: true,
    }
}
