//! `list_mcp_resources`: offered only while a connected server declares resources; the
//! agent runs it through the hub.

use serde_json::json;

use crate::builtin::BuiltinId;
use crate::builtin::definitions::{object_schema, resource_server_property};
use crate::builtin::handler::{
    AgentJob, BuiltinHandler, Definition, DefinitionContext, Judgement, Presence, RunsIn,
};

pub struct ListMcpResources;

pub const ID: BuiltinId = BuiltinId::new(&ListMcpResources);

impl BuiltinHandler for ListMcpResources {
    fn name(&self) -> &'static str {
        "list_mcp_resources"
    }

    fn definition(&self, ctx: &DefinitionContext<'_>) -> Definition {
        let server = resource_server_property(ctx.with_resources);
        Definition {
            description: format!(
                "List the resources (and resource templates) that connected MCP servers offer: \
                 one line per resource with its URI, name, MIME type and description; templates \
                 are RFC 6570 URI templates whose variables you fill in to make a URI. Without \
                 `server`, every server that has resources is listed. Servers with resources: {}.",
                ctx.with_resources.join(", ")
            ),
            input_schema: object_schema(json!({ "server": server }), &[]),
        }
    }

    fn presence(&self) -> Presence {
        Presence::WithResources
    }

    fn judgement(&self) -> Judgement {
        Judgement::Resource { reads: false }
    }

    fn runs_in(&self) -> RunsIn {
        RunsIn::Agent(AgentJob::ListResources)
    }
}
