//! `connect_mcp`: connects a configured server and adds its tools to the pool (the agent
//! runs it).

use crate::builtin::BuiltinId;
use crate::builtin::definitions::{available, server_name_schema};
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, RunsIn,
};

pub struct ConnectMcp;

pub const ID: BuiltinId = BuiltinId::new(&ConnectMcp);

impl BuiltinHandler for ConnectMcp {
    fn name(&self) -> &'static str {
        "connect_mcp"
    }

    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: format!(
                "Connect to a configured MCP server and add its tools to your tool pool. The \
                 answer lists the tools discovered; from your next step on they can be called \
                 under the names mcp__<server>__<tool>. {}",
                available(ctx.configured)
            ),
            input_schema: server_name_schema(
                ctx.configured,
                "Name of the MCP server to connect to.",
            ),
        }
    }

    fn judgement(&self) -> Judgement {
        Judgement::Connector
    }

    fn changes_pool(&self) -> bool {
        true
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::ConnectServer)
    }
}
