//! One file per built-in tool: its definition, its judgement for the gate and how it runs.

pub mod bash;
pub mod connect_mcp;
pub mod disconnect_mcp;
pub mod edit_file;
pub mod exit_plan_mode;
pub mod glob;
pub mod list_mcp_resources;
pub mod read_file;
pub mod read_mcp_resource;
pub mod search_tools;
pub mod write_file;
