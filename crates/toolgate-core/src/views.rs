//! The core's state as the protocol carries it to the front ends: each function builds one
//! of the protocol's own types from the core's (the protocol depends on no core crate, so
//! the conversions live on this side).

use crate::protocol::{Containment, ServerInfo};
use crate::sandbox::Profile;
use crate::settings::{ServerConfig, ServerTransport};

/// How a configured server's process is contained, given the sandbox profile it runs under.
pub fn containment(config: &ServerConfig, profile: Option<&Profile>) -> Containment {
    match (&config.transport, profile) {
        (ServerTransport::Http { .. }, _) => Containment::Remote,
        (_, Some(p)) if p.is_confined() => Containment::Confined {
            profile: p.describe(),
        },
        _ => Containment::Unsandboxed,
    }
}

/// A configured server as `/mcp` lists it.
pub fn server_info(config: &ServerConfig, profile: Option<&Profile>) -> ServerInfo {
    ServerInfo {
        name: config.name.clone(),
        command_line: config.command_line(),
        containment: containment(config, profile),
        enabled: config.pool.enabled,
    }
}

/// An instruction file that went into the system prompt, as the front ends report it.
pub fn instructions_loaded(
    file: &crate::project::LoadedFile,
    project_trusted: bool,
) -> crate::protocol::InstructionsLoaded {
    crate::protocol::InstructionsLoaded {
        path: file.shown.clone(),
        scope: file.scope,
        project_trusted,
        imports: file.imports.clone(),
        refused: file
            .refused
            .iter()
            .map(|r| crate::protocol::RefusedImport {
                path: r.path.clone(),
                why: r.why.clone(),
            })
            .collect(),
    }
}

/// A pool tool as the front ends show it.
pub fn pool_tool(tool: &crate::pool::PoolTool) -> crate::protocol::PoolTool {
    use crate::pool::ToolOrigin;
    crate::protocol::PoolTool {
        name: tool.name.clone(),
        origin: match &tool.origin {
            ToolOrigin::Builtin(kind) => crate::protocol::ToolOrigin::Builtin {
                connector: kind.is_connector(),
            },
            ToolOrigin::Mcp { server, tool } => crate::protocol::ToolOrigin::Mcp {
                server: server.clone(),
                tool: tool.clone(),
            },
        },
        description: tool.description.clone(),
        input_schema: tool.input_schema.clone(),
        claims: tool.claims.clone(),
        shortened: tool.shortened,
    }
}
