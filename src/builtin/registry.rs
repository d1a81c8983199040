//! The built-in tools, in pool order: the one list a new tool is added to.

use super::handler::BuiltinHandler;
use super::tools;

pub(super) static HANDLERS: &[&dyn BuiltinHandler] = &[
    &tools::bash::Bash,
    &tools::read_file::ReadFile,
    &tools::write_file::WriteFile,
    &tools::edit_file::EditFile,
    &tools::glob::Glob,
    &tools::connect_mcp::ConnectMcp,
    &tools::disconnect_mcp::DisconnectMcp,
    &tools::list_mcp_resources::ListMcpResources,
    &tools::read_mcp_resource::ReadMcpResource,
    &tools::search_tools::SearchTools,
    &tools::exit_plan_mode::ExitPlanMode,
];
