//! The built-in part of the pool: each registered built-in's definition, for the
//! connections of the moment, as pool entries.

use super::PoolTool;
use super::search::MAX_PARTS;
use crate::builtin::{BuiltinId, DefinitionContext, Presence, tools};

/// The entry of `tool` with its definition for `ctx`.
fn entry(tool: BuiltinId, ctx: &DefinitionContext<'_>) -> PoolTool {
    let definition = tool.handler().definition(ctx);
    PoolTool::builtin(tool, &definition.description, definition.input_schema)
}

fn context<'a>(
    configured: &'a [String],
    connected: &'a [String],
    with_resources: &'a [String],
) -> DefinitionContext<'a> {
    DefinitionContext {
        configured,
        connected,
        with_resources,
        max_search_queries: MAX_PARTS,
    }
}

/// bash, read_file, write_file, edit_file, glob, connect_mcp (enum of `server_names`), in
/// that order: the pool before anything is connected.
pub fn builtin_tools(server_names: &[String]) -> Vec<PoolTool> {
    pool_builtins_with_resources(server_names, &[], &[])
}

/// The built-in part of the pool for the current connections.
pub fn pool_builtins(configured: &[String], connected: &[String]) -> Vec<PoolTool> {
    pool_builtins_with_resources(configured, connected, &[])
}

/// [`pool_builtins`] plus the resource tools while `with_resources` is not empty: every
/// built-in whose presence the connections call for, in registry order.
pub fn pool_builtins_with_resources(
    configured: &[String],
    connected: &[String],
    with_resources: &[String],
) -> Vec<PoolTool> {
    let ctx = context(configured, connected, with_resources);
    BuiltinId::all()
        .filter(|tool| match tool.presence() {
            Presence::Always => true,
            Presence::WhileConnected => !connected.is_empty(),
            Presence::WithResources => !with_resources.is_empty(),
            Presence::InPlanMode | Presence::WhileDeferring => false,
        })
        .map(|tool| entry(tool, &ctx))
        .collect()
}

/// The built-ins present in plan mode only (`exit_plan_mode`), for the agent to add.
pub fn plan_mode_tools() -> Vec<PoolTool> {
    let ctx = context(&[], &[], &[]);
    BuiltinId::all()
        .filter(|tool| tool.presence() == Presence::InPlanMode)
        .map(|tool| entry(tool, &ctx))
        .collect()
}

/// `search_tools`, in the pool while MCP tools are deferred.
pub fn search_tools_tool() -> PoolTool {
    entry(tools::search_tools::ID, &context(&[], &[], &[]))
}
