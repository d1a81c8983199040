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
        input_schema: std::sync::Arc::new(serde_json::Value::Object((*tool.input_schema).clone())),
        claims,
    }
}

/// Why a raw `tools/list` result could not be read as a tool list, naming the tools at
/// fault: rmcp only says "unexpected response type" when, say, one tool's `inputSchema` is
/// `true` (valid JSON Schema, but not the object MCP and the model APIs require).
pub fn unlistable_tools(result: &serde_json::Value) -> Option<String> {
    let tools = result.get("tools")?.as_array()?;
    let problems: Vec<String> = tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name").and_then(|n| n.as_str()).unwrap_or("(unnamed)");
            match tool.get("inputSchema") {
                Some(serde_json::Value::Object(_)) => None,
                Some(other) => Some(format!(
                    "tool '{name}' has an inputSchema that is not a JSON object ({}); model APIs require an object schema",
                    short_json(other)
                )),
                None => Some(format!("tool '{name}' has no inputSchema")),
            }
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

fn short_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unlistable_tools_names_every_tool_at_fault() {
        let listing = json!({"tools": [
            {"name": "fine", "inputSchema": {"type": "object"}},
            {"name": "yes", "inputSchema": true},
            {"name": "bare"},
            {"name": "long", "inputSchema": ["x".repeat(100)]},
        ]});
        let text = unlistable_tools(&listing).unwrap();
        assert!(text.starts_with("tool 'yes' has an inputSchema that is not a JSON object (true)"));
        assert!(
            text.contains("; tool 'bare' has no inputSchema; tool 'long'"),
            "{text}"
        );
        assert!(text.contains("…"), "long schemas are cut: {text}");
        assert!(!text.contains("fine"));
        assert_eq!(
            unlistable_tools(&json!({"tools": [{"name": "ok", "inputSchema": {}}]})),
            None
        );
    }
}
