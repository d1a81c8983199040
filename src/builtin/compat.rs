//! The names the closed enum gave each built-in (`BuiltinTool::Bash`, …), for the code that
//! still spells them: the TUI, the protocol and their tests, which the workspace split moves
//! to their own crates (issue 42). New tools need no entry here; new code uses
//! [`BuiltinId`] and each tool's `ID`.
#![allow(non_upper_case_globals)]

use super::BuiltinId;
use super::tools;

/// The identity of a built-in, under the enum's old name.
pub type BuiltinTool = BuiltinId;

impl BuiltinId {
    pub const Bash: BuiltinId = tools::bash::ID;
    pub const ReadFile: BuiltinId = tools::read_file::ID;
    pub const WriteFile: BuiltinId = tools::write_file::ID;
    pub const EditFile: BuiltinId = tools::edit_file::ID;
    pub const Glob: BuiltinId = tools::glob::ID;
    pub const ConnectMcp: BuiltinId = tools::connect_mcp::ID;
    pub const DisconnectMcp: BuiltinId = tools::disconnect_mcp::ID;
    pub const ListMcpResources: BuiltinId = tools::list_mcp_resources::ID;
    pub const ReadMcpResource: BuiltinId = tools::read_mcp_resource::ID;
    pub const SearchTools: BuiltinId = tools::search_tools::ID;
    pub const ExitPlanMode: BuiltinId = tools::exit_plan_mode::ID;
}
