//! MCP resources on the agent's side: `@server:uri` mentions in a user message are read
//! and attached to it, and the built-ins `list_mcp_resources` / `read_mcp_resource` answer
//! the model (after the gate, like any tool).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::runner::Agent;
use super::tools::ToolRun;
use crate::builtin::BuiltinTool;
use crate::mcp::McpHub;
use crate::mcp::catalog::{Catalog, ResourcePart};
use crate::model::{ContentBlock, ImageData};
use crate::protocol::AgentEvent;

/// Base64 characters of the largest image attached (about 5 MB decoded: what the model
/// APIs take per image). A bigger one is described instead.
pub(super) const MAX_IMAGE_BASE64: usize = 7_000_000;

/// Connected servers that declare resources, in connection order.
pub(super) fn servers_with_resources(hub: &McpHub) -> Vec<String> {
    hub.catalogs()
        .iter()
        .filter(|c| c.has_resources)
        .map(|c| c.server.clone())
        .collect()
}

/// Whether a user text block is one `user_content` attached (not typed by the person).
pub(super) fn is_attachment_text(text: &str) -> bool {
    text.starts_with("<resource server=\"")
        || (text.starts_with("[image ") && text.ends_with(" follows]"))
        || (text.starts_with("[@") && text.contains(" could not be read: "))
        || (text.starts_with("[@") && text.ends_with(" is empty]"))
        || text.starts_with("[resource ")
}

/// A `@server:uri` mention in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub server: String,
    pub uri: String,
}

/// The mentions of `servers` (the configured ones) in `text`: `@` at the start of a word, a server name, `:`,
/// then the URI up to the next white space. Punctuation that ends a sentence (`.`, `,`,
/// `;`, `!`, `?`, `)`) is not part of the URI. Each mention once, in order.
pub fn mentions(text: &str, servers: &[String]) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        if !servers.iter().any(|s| s == server) {
            continue;
        }
        let uri = uri.trim_end_matches(['.', ',', ';', '!', '?', ')']);
        if uri.is_empty() {
            continue;
        }
        let mention = Mention {
            server: server.to_string(),
            uri: uri.to_string(),
        };
        if !found.contains(&mention) {
            found.push(mention);
        }
    }
    found
}

/// How a read resource reaches the model: text parts as tagged text, images as images,
/// other binary parts described.
pub(super) enum Attached {
    Text(String),
    Image(ImageData),
}

pub(super) fn attach_parts(server: &str, parts: &[ResourcePart]) -> Vec<Attached> {
    parts
        .iter()
        .map(|part| match part {
            ResourcePart::Text {
                uri,
                mime_type,
                text,
            } => Attached::Text(tagged(server, uri, mime_type.as_deref(), text)),
            ResourcePart::Blob {
                mime_type: Some(mime),
                blob,
                ..
            } if mime.starts_with("image/") && blob.len() <= MAX_IMAGE_BASE64 => {
                Attached::Image(ImageData {
                    media_type: mime.clone(),
                    data: blob.clone(),
                })
            }
            ResourcePart::Blob {
                uri,
                mime_type,
                blob,
            } => Attached::Text(format!(
                "[resource {server}:{uri} is binary ({}, {} bytes base64){}: not shown]",
                mime_type.as_deref().unwrap_or("unknown type"),
                blob.len(),
                if blob.len() > MAX_IMAGE_BASE64 {
                    ", too large to attach"
                } else {
                    ""
                }
            )),
        })
        .collect()
}

/// A text resource as the model reads it. The attributes come from the server, so a `"`
/// in them is escaped and cannot end the attribute early.
pub(super) fn tagged(server: &str, uri: &str, mime: Option<&str>, text: &str) -> String {
    let attr = |v: &str| v.replace('&', "&amp;").replace('"', "&quot;");
    let mime = mime
        .map(|m| format!(" mimeType=\"{}\"", attr(m)))
        .unwrap_or_default();
    format!(
        "<resource server=\"{}\" uri=\"{}\"{mime}>\n{text}\n</resource>",
        attr(server),
        attr(uri)
    )
}

impl Agent {
    /// The content of a typed message: its text, then each `@server:uri` of a connected
    /// server read and attached (text cut to the output budget with a marker, images as
    /// image blocks). The person typed the mention, so no permission is asked; a read
    /// that fails is a notice, and the model is told which mention could not be read.
    pub(super) async fn user_content(
        &mut self,
        text: String,
        cancel: &CancellationToken,
    ) -> Vec<ContentBlock> {
        let found = mentions(&text, &self.hub.configured());
        let mut content = vec![ContentBlock::Text { text }];
        for (n, mention) in found.iter().enumerate() {
            let shown = format!("@{}:{}", mention.server, mention.uri);
            // Naming a configured server that is not connected yet connects it (through
            // the usual checks: a project server still asks), so `toolgate -p "… @docs:…"`
            // works without a connect_mcp first.
            if !self.hub.is_connected(&mention.server) {
                let connected = self
                    .connect_server(&mention.server, true, Some(cancel))
                    .await;
                self.emit(AgentEvent::Notice(connected.text.clone())).await;
                if connected.is_error() {
                    content.push(ContentBlock::Text {
                        text: format!("[{shown} could not be read: {}]", connected.text),
                    });
                    continue;
                }
            }
            let parts = match self
                .hub
                .read_resource(&mention.server, &mention.uri, cancel)
                .await
            {
                Ok(parts) if parts.is_empty() => {
                    self.emit(AgentEvent::Notice(format!(
                        "{shown}: the resource is empty"
                    )))
                    .await;
                    content.push(ContentBlock::Text {
                        text: format!("[{shown} is empty]"),
                    });
                    continue;
                }
                Ok(parts) => parts,
                Err(e) => {
                    self.emit(AgentEvent::Notice(format!("Could not attach {shown}: {e}")))
                        .await;
                    content.push(ContentBlock::Text {
                        text: format!("[{shown} could not be read: {e}]"),
                    });
                    continue;
                }
            };
            let mut characters = 0;
            let mut images = 0;
            let mut truncated = false;
            let turn = self.messages.len();
            for (i, attached) in attach_parts(&mention.server, &parts)
                .into_iter()
                .enumerate()
            {
                match attached {
                    Attached::Text(text) => {
                        let id = format!("attachment-{turn}-{n}-{i}");
                        let (text, saved) = self.fit_budget(&id, text, true).await;
                        truncated |= saved.is_some() || text.contains("[output truncated");
                        characters += text.chars().count();
                        content.push(ContentBlock::Text { text });
                    }
                    Attached::Image(image) => {
                        images += 1;
                        content.push(ContentBlock::Text {
                            text: format!("[image {} from {shown} follows]", image.media_type),
                        });
                        content.push(ContentBlock::Image(image));
                    }
                }
            }
            let mut what = Vec::new();
            if characters > 0 {
                what.push(format!("{characters} characters"));
            }
            if images > 0 {
                what.push(format!(
                    "{images} image{}",
                    if images == 1 { "" } else { "s" }
                ));
            }
            self.emit(AgentEvent::Notice(format!(
                "Attached {shown} ({}){}",
                what.join(", "),
                if truncated {
                    " — cut to the output budget"
                } else {
                    ""
                }
            )))
            .await;
        }
        content
    }

    /// `list_mcp_resources` and `read_mcp_resource`, once the gate let them run.
    pub(super) async fn run_resource_tool(
        &mut self,
        kind: BuiltinTool,
        input: &Value,
        cancel: &CancellationToken,
    ) -> ToolRun {
        let server = input
            .get("server")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let with_resources = servers_with_resources(&self.hub);
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
        match kind {
            BuiltinTool::ReadMcpResource => {
                let (Some(server), Some(uri)) = (server, input.get("uri").and_then(Value::as_str))
                else {
                    return ToolRun::error("read_mcp_resource needs `server` and `uri`");
                };
                match self.hub.read_resource(server, uri, cancel).await {
                    Err(crate::mcp::McpError::Cancelled) => ToolRun::cancelled(),
                    Err(e) => ToolRun::error(e.to_string()),
                    Ok(parts) => resource_run(server, uri, &parts),
                }
            }
            _ => {
                let servers: Vec<String> = match server {
                    Some(s) => vec![s.to_string()],
                    None => with_resources,
                };
                let mut text = String::new();
                for server in servers {
                    // Listed afresh: the model asks because it wants what is there now.
                    let catalog = self.hub.refresh_catalog(&server).await;
                    if let Some(catalog) = catalog {
                        text.push_str(&listing(&catalog));
                    }
                }
                ToolRun::ok(text.trim_end().to_string())
            }
        }
    }
}

/// read_mcp_resource's answer: text parts in order, images as images.
fn resource_run(server: &str, uri: &str, parts: &[ResourcePart]) -> ToolRun {
    if parts.is_empty() {
        return ToolRun::ok(format!("{server}:{uri} is empty."));
    }
    let mut run = ToolRun::ok(String::new());
    let mut texts = Vec::new();
    for attached in attach_parts(server, parts) {
        match attached {
            Attached::Text(text) => texts.push(text),
            Attached::Image(image) => {
                texts.push(format!("[image {} attached]", image.media_type));
                run.images.push(image);
            }
        }
    }
    run.text = texts.join("\n");
    run
}

/// One server's resources and templates, one line each.
pub(super) fn listing(catalog: &Catalog) -> String {
    let mut text = format!("Server '{}':\n", catalog.server);
    if catalog.resources.is_empty() && catalog.templates.is_empty() {
        text.push_str("  (no resources)\n");
    }
    for r in &catalog.resources {
        text.push_str(&format!(
            "  {} — {}",
            r.uri,
            r.title.as_deref().unwrap_or(&r.name)
        ));
        if let Some(mime) = &r.mime_type {
            text.push_str(&format!(" ({mime})"));
        }
        if let Some(d) = &r.description {
            text.push_str(&format!(": {d}"));
        }
        text.push('\n');
    }
    for t in &catalog.templates {
        text.push_str(&format!(
            "  template {} — {}",
            t.uri_template,
            t.title.as_deref().unwrap_or(&t.name)
        ));
        if let Some(d) = &t.description {
            text.push_str(&format!(": {d}"));
        }
        text.push('\n');
    }
    for problem in &catalog.problems {
        text.push_str(&format!("  (problem: {problem})\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers() -> Vec<String> {
        vec!["docs".into(), "fix-1".into()]
    }

    #[test]
    fn mentions_are_words_naming_a_connected_server() {
        let found = mentions(
            "see @docs:docs://readme, and @fix-1:fixture://pages/intro. not me@docs:x nor @other:y @docs: @docs:docs://readme",
            &servers(),
        );
        assert_eq!(
            found,
            vec![
                Mention {
                    server: "docs".into(),
                    uri: "docs://readme".into()
                },
                Mention {
                    server: "fix-1".into(),
                    uri: "fixture://pages/intro".into()
                },
            ]
        );
    }

    #[test]
    fn quotes_from_the_server_cannot_end_an_attribute() {
        assert_eq!(
            tagged("s", "a://x\" onload=\"y", Some("text/plain"), "t"),
            "<resource server=\"s\" uri=\"a://x&quot; onload=&quot;y\" mimeType=\"text/plain\">\nt\n</resource>"
        );
    }

    #[test]
    fn attached_blocks_are_told_from_typed_text() {
        for attached in [
            "<resource server=\"s\" uri=\"a://t\">\nhi\n</resource>",
            "[image image/png from @s:a://i follows]",
            "[@s:a://x could not be read: MCP server 's': not found]",
            "[@s:a://x is empty]",
            "[resource s:a://b is binary (application/zip, 4 bytes base64): not shown]",
        ] {
            assert!(is_attachment_text(attached), "{attached}");
        }
        for typed in ["look at @s:a://t", "[draft] notes", "<resource> tags"] {
            assert!(!is_attachment_text(typed), "{typed}");
        }
    }

    #[test]
    fn parts_become_tagged_text_images_or_a_description() {
        let parts = vec![
            ResourcePart::Text {
                uri: "a://t".into(),
                mime_type: Some("text/plain".into()),
                text: "hello".into(),
            },
            ResourcePart::Blob {
                uri: "a://i".into(),
                mime_type: Some("image/png".into()),
                blob: "iVBO".into(),
            },
            ResourcePart::Blob {
                uri: "a://b".into(),
                mime_type: Some("application/zip".into()),
                blob: "UEsD".into(),
            },
        ];
        let run = resource_run("s", "a://t", &parts);
        assert_eq!(
            run.text,
            "<resource server=\"s\" uri=\"a://t\" mimeType=\"text/plain\">\nhello\n</resource>\n\
             [image image/png attached]\n\
             [resource s:a://b is binary (application/zip, 4 bytes base64): not shown]"
        );
        assert_eq!(
            run.images,
            vec![ImageData {
                media_type: "image/png".into(),
                data: "iVBO".into()
            }]
        );
    }
}
