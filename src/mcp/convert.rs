//! rmcp's types to toolgate's: tool listings and call results.

use super::CallOutput;
use crate::pool::{McpToolInfo, ToolClaims};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};

pub fn tool_info(tool: &Tool) -> McpToolInfo {
    let claims = tool
        .annotations
        .as_ref()
        .map(|a| ToolClaims {
            title: a.title.clone().or_else(|| tool.title.clone()),
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        })
        .unwrap_or_else(|| ToolClaims {
            title: tool.title.clone(),
            ..ToolClaims::default()
        });
    McpToolInfo {
        name: tool.name.to_string(),
        description: tool.description.as_deref().unwrap_or_default().to_string(),
        input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
        claims,
    }
}

/// Flattens a result into the text the model receives. Non-text content is described
/// rather than dropped, so the model knows something was there.
pub fn call_output(result: &CallToolResult) -> CallOutput {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!(
                "[image {} ({} bytes base64)]",
                i.mime_type,
                i.data.len()
            )),
            ContentBlock::Audio(a) => parts.push(format!(
                "[audio {} ({} bytes base64)]",
                a.mime_type,
                a.data.len()
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("[resource {uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents { uri, .. } => {
                    parts.push(format!("[binary resource {uri}]"))
                }
                _ => parts.push("[resource]".to_string()),
            },
            ContentBlock::ResourceLink(link) => parts.push(format!("[resource link {}]", link.uri)),
            // Content kinds newer than this client: say so rather than drop them.
            _ => parts.push("[content of an unsupported type]".to_string()),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    CallOutput {
        text: parts.join("\n"),
        is_error: result.is_error.unwrap_or(false),
    }
}
