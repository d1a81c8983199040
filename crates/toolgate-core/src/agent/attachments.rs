//! What `@server:uri` mentions and `read_mcp_resource` attach, how attached text is told
//! from typed text, and the resource listing (pure: reading the resources is the agent's,
//! in `resources.rs`).

use super::tool_run::ToolRun;
use crate::ids::ServerName;
use crate::mcp::McpHub;
use crate::mcp::catalog::{Catalog, ResourcePart};
use crate::model::ImageData;

/// Base64 characters of the largest image attached (about 5 MB decoded: what the model
/// APIs take per image). A bigger one is described instead.
pub(super) const MAX_IMAGE_BASE64: usize = 7_000_000;

/// Connected servers that declare resources, in connection order.
pub(super) fn servers_with_resources(hub: &McpHub) -> Vec<String> {
    hub.catalogs()
        .iter()
        .filter(|c| c.has_resources)
        .map(|c| c.server.to_string())
        .collect()
}

/// Whether a user text block is one `user_content` attached (not typed by the person).
pub(super) fn is_attachment_text(text: &str) -> bool {
    text.starts_with("<resource server=\"")
        || (text.starts_with("[image ") && text.ends_with(" follows]"))
        || (text.starts_with("[@") && text.contains(" could not be read: "))
        || (text.starts_with("[@") && text.ends_with(" is empty]"))
        || text.starts_with("[resource ")
        || crate::project::files::is_attached_file(text)
}

/// A `@server:uri` mention in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub server: ServerName,
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
            server: server.to_string().into(),
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

/// read_mcp_resource's answer: text parts in order, images as images.
pub(super) fn resource_run(server: &str, uri: &str, parts: &[ResourcePart]) -> ToolRun {
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
    // `  URI — title (mime): description`.
    let mut line = |head: String, title: &str, mime: Option<&str>, description: Option<&str>| {
        text.push_str(&format!("  {head} — {title}"));
        if let Some(mime) = mime {
            text.push_str(&format!(" ({mime})"));
        }
        if let Some(d) = description {
            text.push_str(&format!(": {d}"));
        }
        text.push('\n');
    };
    for r in &catalog.resources {
        line(
            r.uri.clone(),
            r.title.as_deref().unwrap_or(&r.name),
            r.mime_type.as_deref(),
            r.description.as_deref(),
        );
    }
    for t in &catalog.templates {
        line(
            format!("template {}", t.uri_template),
            t.title.as_deref().unwrap_or(&t.name),
            None,
            t.description.as_deref(),
        );
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
