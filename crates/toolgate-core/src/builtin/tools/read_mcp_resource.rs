//! `read_mcp_resource`: one resource of a connected server by URI, offered only while a
//! connected server declares resources; the agent runs it through the hub.

use serde_json::json;

use crate::builtin::BuiltinId;
use crate::builtin::definitions::{object_schema, resource_server_property, string_property};
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, Presence, RunsIn,
};

pub struct ReadMcpResource;

pub const ID: BuiltinId = BuiltinId::new(&ReadMcpResource);

impl BuiltinHandler for ReadMcpResource {
    fn name(&self) -> &'static str {
        "read_mcp_resource"
    }

    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition {
        Definition {
            description: "Read one resource of a connected MCP server by URI. Text contents \
                          come back as text (long contents are cut with a marker saying so); \
                          images come back as images; other binary contents are described, not \
                          shown. Reading a server's resource is treated like calling one of its \
                          tools: the person may be asked first."
                .to_string(),
            input_schema: object_schema(
                json!({
                    "server": resource_server_property(ctx.with_resources),
                    "uri": string_property("The resource's URI as list_mcp_resources shows it, or a URI made from one of its templates.")
                }),
                &["server", "uri"],
            ),
        }
    }

    fn presence(&self) -> Presence {
        Presence::WithResources
    }

    fn judgement(&self) -> Judgement {
        Judgement::Resource { reads: true }
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::ReadResource)
    }
}
