//! Which built-in tool a pool entry is. Everything that treats built-ins differently (the
//! pool, the policy, the agent's dispatch) matches on this enum, so a new built-in is a
//! compile error wherever it needs a decision, and no module compares tool names as text.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A tool toolgate provides itself: the five file/shell tools [`super::run`] executes and
/// the two connectors the agent runs because they change the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BuiltinTool {
    Bash,
    ReadFile,
    WriteFile,
    EditFile,
    Glob,
    ConnectMcp,
    DisconnectMcp,
    /// `list_mcp_resources` and `read_mcp_resource`: present only while a connected server
    /// declares resources; the agent runs them through the hub.
    ListMcpResources,
    ReadMcpResource,
    /// `search_tools`: finds deferred MCP tools and loads them into the pool.
    SearchTools,
    /// `exit_plan_mode`: in plan mode only; shows the model's plan to the person, who may
    /// leave plan mode (the agent runs it).
    ExitPlanMode,
}

impl BuiltinTool {
    /// Every built-in, in pool order.
    pub const ALL: [BuiltinTool; 11] = [
        BuiltinTool::Bash,
        BuiltinTool::ReadFile,
        BuiltinTool::WriteFile,
        BuiltinTool::EditFile,
        BuiltinTool::Glob,
        BuiltinTool::ConnectMcp,
        BuiltinTool::DisconnectMcp,
        BuiltinTool::ListMcpResources,
        BuiltinTool::ReadMcpResource,
        BuiltinTool::SearchTools,
        BuiltinTool::ExitPlanMode,
    ];

    /// The model-facing name (also the name rules and the session log use).
    pub const fn name(self) -> &'static str {
        match self {
            BuiltinTool::Bash => "bash",
            BuiltinTool::ReadFile => "read_file",
            BuiltinTool::WriteFile => "write_file",
            BuiltinTool::EditFile => "edit_file",
            BuiltinTool::Glob => "glob",
            BuiltinTool::ConnectMcp => "connect_mcp",
            BuiltinTool::DisconnectMcp => "disconnect_mcp",
            BuiltinTool::ListMcpResources => "list_mcp_resources",
            BuiltinTool::ReadMcpResource => "read_mcp_resource",
            BuiltinTool::SearchTools => "search_tools",
            BuiltinTool::ExitPlanMode => "exit_plan_mode",
        }
    }

    /// The built-in with this model-facing name, if any.
    pub fn from_name(name: &str) -> Option<BuiltinTool> {
        BuiltinTool::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// connect_mcp, disconnect_mcp and search_tools change the pool itself; the agent
    /// runs them.
    pub const fn is_connector(self) -> bool {
        match self {
            BuiltinTool::ConnectMcp | BuiltinTool::DisconnectMcp | BuiltinTool::SearchTools => true,
            BuiltinTool::Bash
            | BuiltinTool::ReadFile
            | BuiltinTool::WriteFile
            | BuiltinTool::EditFile
            | BuiltinTool::Glob
            | BuiltinTool::ListMcpResources
            | BuiltinTool::ReadMcpResource
            | BuiltinTool::ExitPlanMode => false,
        }
    }

    /// The resource tools talk to a connected server through the hub; the agent runs them.
    pub const fn is_resource_tool(self) -> bool {
        matches!(
            self,
            BuiltinTool::ListMcpResources | BuiltinTool::ReadMcpResource
        )
    }

    /// The input field that names the file system location the tool touches: `path` for
    /// the file tools, `pattern` for glob (whose literal base is the location).
    pub const fn path_field(self) -> Option<&'static str> {
        match self {
            BuiltinTool::ReadFile | BuiltinTool::WriteFile | BuiltinTool::EditFile => Some("path"),
            BuiltinTool::Glob => Some("pattern"),
            BuiltinTool::Bash
            | BuiltinTool::ConnectMcp
            | BuiltinTool::DisconnectMcp
            | BuiltinTool::ListMcpResources
            | BuiltinTool::ReadMcpResource => None,
            BuiltinTool::SearchTools | BuiltinTool::ExitPlanMode => None,
        }
    }

    /// Whether the tool changes the file its path names (write_file, edit_file).
    pub const fn writes_files(self) -> bool {
        match self {
            BuiltinTool::WriteFile | BuiltinTool::EditFile => true,
            BuiltinTool::Bash
            | BuiltinTool::ReadFile
            | BuiltinTool::Glob
            | BuiltinTool::ConnectMcp
            | BuiltinTool::DisconnectMcp
            | BuiltinTool::ListMcpResources
            | BuiltinTool::ReadMcpResource => false,
            BuiltinTool::SearchTools | BuiltinTool::ExitPlanMode => false,
        }
    }
}

impl fmt::Display for BuiltinTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for kind in BuiltinTool::ALL {
            assert_eq!(BuiltinTool::from_name(kind.name()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.name())
            );
            assert_eq!(kind.to_string(), kind.name());
        }
        for other in ["rm_rf", "Bash", "mcp__docs__search", ""] {
            assert_eq!(BuiltinTool::from_name(other), None, "{other}");
        }
    }

    #[test]
    fn connectors_and_path_fields() {
        let connectors: Vec<&str> = BuiltinTool::ALL
            .into_iter()
            .filter(|k| k.is_connector())
            .map(BuiltinTool::name)
            .collect();
        assert_eq!(
            connectors,
            ["connect_mcp", "disconnect_mcp", "search_tools"]
        );
        let with_paths: Vec<(&str, &str)> = BuiltinTool::ALL
            .into_iter()
            .filter_map(|k| Some((k.name(), k.path_field()?)))
            .collect();
        assert_eq!(
            with_paths,
            [
                ("read_file", "path"),
                ("write_file", "path"),
                ("edit_file", "path"),
                ("glob", "pattern")
            ]
        );
    }
}
