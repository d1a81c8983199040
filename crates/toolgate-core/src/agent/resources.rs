//! The built-ins `list_mcp_resources` / `read_mcp_resource`: they answer the model after
//! the gate let them run, like any tool.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::attachments::{listing, resource_run, servers_with_resources};
use super::tool_run::ToolRun;
use crate::mcp::McpHub;

/// `list_mcp_resources` and (`reads`) `read_mcp_resource`, once the gate let them run.
pub(super) async fn run_resource_tool(
    hub: &McpHub,
    reads: bool,
    input: &Value,
    cancel: &CancellationToken,
) -> ToolRun {
    let server = input
        .get("server")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let with_resources = servers_with_resources(hub);
    if let Some(server) = server
        && !with_resources.iter().any(|s| s == server)
    {
        return ToolRun::error(format!(
            "MCP server '{server}' is not connected or has no resources. Servers with resources: {}",
            if with_resources.is_empty() {
                "none".to_string()
            } else {
                with_resources.join(", ")
            }
        ));
    }
    match reads {
        true => {
            let (Some(server), Some(uri)) = (server, input.get("uri").and_then(Value::as_str))
            else {
                return ToolRun::error("read_mcp_resource needs `server` and `uri`");
            };
            match hub.read_resource(server, uri, cancel).await {
                Err(crate::mcp::McpError::Cancelled) => ToolRun::cancelled(),
                Err(e) => ToolRun::error(e.to_string()),
                Ok(parts) => resource_run(server, uri, &parts),
            }
        }
        false => {
            let servers: Vec<String> = match server {
                Some(s) => vec![s.to_string()],
                None => with_resources,
            };
            let mut text = String::new();
            for server in servers {
                // Listed afresh: the model asks because it wants what is there now.
                let catalog = hub.refresh_catalog(&server).await;
                if let Some(catalog) = catalog {
                    text.push_str(&listing(&catalog));
                }
            }
            ToolRun::ok(text.trim_end().to_string())
        }
    }
}
