//! rmcp's types to toolgate's: tool listings and call results.

use super::types::CallOutput;
use crate::model::ImageData;
use crate::pool::{InvalidTool, McpToolInfo, SchemaProblem, ToolClaims};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde::Deserialize;

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
            task_required: false,
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

/// One page of a raw `tools/list` result, read tool by tool: rmcp's typed listing fails
/// as a whole when one tool's `inputSchema` is, say, `true` (valid JSON Schema, but not the
/// object MCP and the model APIs require), and one bad tool must not cost the others.
/// None when the result has no `tools` array at all.
pub fn tools_page(result: &serde_json::Value) -> Option<ToolsPage> {
    let entries = result.get("tools")?.as_array()?;
    let mut page = ToolsPage {
        tools: Vec::with_capacity(entries.len()),
        invalid: Vec::new(),
        next_cursor: result
            .get("nextCursor")
            .and_then(|c| c.as_str())
            .filter(|c| !c.is_empty())
            .map(str::to_string),
    };
    for entry in entries {
        match Tool::deserialize(entry) {
            Ok(tool) => page.tools.push(tool),
            Err(e) => page.invalid.push(InvalidTool {
                name: entry
                    .get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("(unnamed)")
                    .to_string(),
                problem: match entry.get("inputSchema") {
                    None => SchemaProblem::Missing,
                    Some(serde_json::Value::Object(_)) => SchemaProblem::Unreadable(e.to_string()),
                    Some(other) => SchemaProblem::NotAnObject(short_json(other)),
                },
            }),
        }
    }
    Some(page)
}

/// What [`tools_page`] read: the tools, the ones left out, and the next page's cursor.
#[derive(Debug, Default)]
pub struct ToolsPage {
    pub tools: Vec<Tool>,
    pub invalid: Vec<InvalidTool>,
    pub next_cursor: Option<String>,
}

fn short_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Image types every provider toolgate speaks to takes (Anthropic's list; OpenAI's is the
/// same). Other image types are described in text instead of sent and refused.
const MODEL_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Decoded size of base64 data, for descriptions (padding ignored: close enough to show).
fn decoded_len(base64: &str) -> usize {
    base64.trim_end_matches('=').len() * 3 / 4
}

/// Turns a result into what the model receives: text, plus images as images. What a model
/// cannot take (audio, binary resources, links) is described in text with its URI and type
/// rather than dropped, so the model knows it was there.
pub fn call_output(result: &CallToolResult) -> CallOutput {
    let mut parts: Vec<String> = Vec::new();
    let mut images: Vec<ImageData> = Vec::new();
    let mut has_text = false;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => {
                has_text = true;
                parts.push(t.text.clone());
            }
            ContentBlock::Image(i) => {
                if let Some(described) = image_or_description(&i.mime_type, &i.data, None) {
                    parts.push(described);
                } else {
                    images.push(ImageData {
                        media_type: i.mime_type.clone(),
                        data: i.data.clone(),
                    });
                }
            }
            ContentBlock::Audio(a) => parts.push(format!(
                "[audio {} ({} bytes) not shown: the model takes no audio]",
                a.mime_type,
                decoded_len(&a.data)
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    text,
                    mime_type,
                    ..
                } => parts.push(format!(
                    "[resource {uri}{}]\n{text}",
                    type_suffix(mime_type.as_deref())
                )),
                ResourceContents::BlobResourceContents {
                    uri,
                    blob,
                    mime_type,
                    ..
                } => {
                    let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                    if mime.starts_with("image/")
                        && image_or_description(mime, blob, Some(uri)).is_none()
                    {
                        parts.push(format!("[resource {uri} ({mime}): the image follows]"));
                        images.push(ImageData {
                            media_type: mime.to_string(),
                            data: blob.clone(),
                        });
                    } else {
                        parts.push(format!(
                            "[binary resource {uri} ({mime}, {} bytes) not shown]",
                            decoded_len(blob)
                        ));
                    }
                }
                _ => parts.push("[embedded resource of an unsupported kind]".to_string()),
            },
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("[resource link {}", link.uri);
                let mut details = vec![format!("name: {}", link.name)];
                if let Some(mime) = &link.mime_type {
                    details.push(format!("type: {mime}"));
                }
                if let Some(size) = link.size {
                    details.push(format!("{size} bytes"));
                }
                if let Some(description) = &link.description {
                    details.push(format!("description: {description}"));
                }
                line.push_str(&format!(" ({})]", details.join(", ")));
                parts.push(line);
            }
            // Content kinds newer than this client: say so rather than drop them.
            _ => parts.push("[content of an unsupported type]".to_string()),
        }
    }
    // `structuredContent` is the same answer as JSON; servers should also send it as
    // text, and when they do the text is enough. Without text it is the answer.
    if !has_text && let Some(structured) = &result.structured_content {
        parts.push(structured.to_string());
    }
    CallOutput {
        text: parts.join("\n"),
        is_error: result.is_error.unwrap_or(false),
        images,
    }
}

/// None when the image can go to the model as an image; else the text that stands for it.
fn image_or_description(mime: &str, data: &str, uri: Option<&str>) -> Option<String> {
    if MODEL_IMAGE_TYPES.contains(&mime) {
        return None;
    }
    let source = uri.map(|u| format!(" {u}")).unwrap_or_default();
    Some(format!(
        "[image{source} {mime} ({} bytes) not shown: model APIs take png, jpeg, gif and webp]",
        decoded_len(data)
    ))
}

fn type_suffix(mime: Option<&str>) -> String {
    mime.map(|m| format!(" ({m})")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tools_page_leaves_out_each_tool_at_fault_and_keeps_the_rest() {
        let listing = json!({"tools": [
            {"name": "fine", "inputSchema": {"type": "object"}},
            {"name": "yes", "inputSchema": true},
            {"name": "bare"},
            {"name": "long", "inputSchema": ["x".repeat(100)]},
            {"name": "also_fine", "inputSchema": {}},
        ], "nextCursor": "2"});
        let page = tools_page(&listing).unwrap();
        let names: Vec<&str> = page.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, vec!["fine", "also_fine"]);
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        assert_eq!(page.invalid[0].name, "yes");
        assert_eq!(
            page.invalid[0].problem,
            SchemaProblem::NotAnObject("true".into())
        );
        assert_eq!(page.invalid[1].problem, SchemaProblem::Missing);
        assert!(
            matches!(&page.invalid[2].problem, SchemaProblem::NotAnObject(text) if text.ends_with('…')),
            "long schemas are cut: {:?}",
            page.invalid[2]
        );
        assert!(tools_page(&json!({"resources": []})).is_none());
    }

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn structured_content_counts_only_without_text() {
        let with_text = result(json!({"content": [{"type": "text", "text": "21.5 C"}],
                                      "structuredContent": {"t": 21.5}}));
        assert_eq!(call_output(&with_text).text, "21.5 C");
        let with_image = result(
            json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                                       "structuredContent": {"t": 21.5}}),
        );
        let out = call_output(&with_image);
        assert_eq!(out.text, r#"{"t":21.5}"#);
        assert_eq!(
            out.images,
            vec![ImageData {
                media_type: "image/png".into(),
                data: "AAAA".into()
            }]
        );
        let error = result(
            json!({"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/ogg"}],
                                  "isError": true}),
        );
        let out = call_output(&error);
        assert!(out.is_error && out.images.is_empty());
        assert_eq!(
            out.text,
            "[audio audio/ogg (3 bytes) not shown: the model takes no audio]"
        );
    }
}
