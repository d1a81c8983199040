//! `disconnect_mcp`: offered only while something is connected (its enum is what is), so
//! the starting pool stays the six tools a user expects (the agent runs it).

use crate::builtin::BuiltinId;
use crate::builtin::definitions::server_name_schema;
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, Presence, RunsIn,
};

pub struct DisconnectMcp;

pub const ID: BuiltinId = BuiltinId::new(&DisconnectMcp);

impl BuiltinHandler for DisconnectMcp {
    fn name(&self) -> &'static str {
        "disconnect_mcp"
    }

    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: format!(
                "Disconnect from a connected MCP server and remove its tools from your tool \
                 pool. Use it when a server's tools are no longer needed. Connected servers: {}.",
                ctx.connected.join(", ")
            ),
            input_schema: server_name_schema(
                ctx.connected,
                "Name of the connected MCP server to disconnect.",
            ),
        }
    }

    fn presence(&self) -> Presence {
        Presence::WhileConnected
    }

    fn judgement(&self) -> Judgement {
        Judgement::Connector
    }

    fn changes_pool(&self) -> bool {
        true
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::DisconnectServer)
    }
}
