//! What a connected server offers besides tools: resources, resource templates and
//! prompts, as toolgate keeps them (listed after connect and after each `list_changed`),
//! and the contents of a read resource or a fetched prompt in toolgate's own types.

use crate::ids::ServerName;
use serde::{Deserialize, Serialize};

/// A resource a server listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceEntry {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
}

/// A resource template (RFC 6570 URI template) a server listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateEntry {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArg {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// A prompt a server listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptEntry {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArg>,
}

/// Everything but the tools of one connected server, as last listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    pub server: ServerName,
    /// The server declared the `resources` capability.
    pub has_resources: bool,
    /// The server declared the `prompts` capability.
    pub has_prompts: bool,
    /// The server declared `completions`: template and prompt arguments can be completed.
    pub completions: bool,
    pub resources: Vec<ResourceEntry>,
    pub templates: Vec<TemplateEntry>,
    pub prompts: Vec<PromptEntry>,
    /// What went wrong while listing (a failed or unreadable `resources/list`, …), worded
    /// for the person; the lists that did work are kept.
    pub problems: Vec<String>,
}

/// One part of a read resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourcePart {
    Text {
        uri: String,
        mime_type: Option<String>,
        text: String,
    },
    /// Base64 data as the server sent it.
    Blob {
        uri: String,
        mime_type: Option<String>,
        blob: String,
    },
}

impl ResourcePart {
    pub fn uri(&self) -> &str {
        match self {
            ResourcePart::Text { uri, .. } | ResourcePart::Blob { uri, .. } => uri,
        }
    }
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    User,
    Assistant,
}

/// The content of one prompt message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptContent {
    Text(String),
    Image {
        mime_type: String,
        data: String,
    },
    /// An embedded resource.
    Resource(ResourcePart),
    /// A link to a resource (not its contents).
    Link {
        uri: String,
    },
    /// Audio or a content type newer than this client, described.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    pub role: PromptRole,
    pub content: PromptContent,
}

/// A fetched prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptResult {
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}

/// What a completion is for: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    Prompt(String),
    Template(String),
}

/// The catalog a connection starts with: what the server declared, nothing listed yet.
pub(super) fn declared(server: &str, peer: &rmcp::Peer<rmcp::RoleClient>) -> Catalog {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let capabilities = capabilities.as_ref();
    Catalog {
        server: server.to_string().into(),
        has_resources: capabilities.is_some_and(|c| c.resources.is_some()),
        has_prompts: capabilities.is_some_and(|c| c.prompts.is_some()),
        completions: capabilities.is_some_and(|c| c.completions.is_some()),
        ..Catalog::default()
    }
}

pub(super) fn resource_entry(r: &rmcp::model::Resource) -> ResourceEntry {
    ResourceEntry {
        uri: r.uri.clone(),
        name: r.name.clone(),
        title: r.title.clone(),
        description: r.description.clone(),
        mime_type: r.mime_type.clone(),
        size: r.size,
    }
}

pub(super) fn template_entry(t: &rmcp::model::ResourceTemplate) -> TemplateEntry {
    TemplateEntry {
        uri_template: t.uri_template.clone(),
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        mime_type: t.mime_type.clone(),
    }
}

pub(super) fn prompt_entry(p: &rmcp::model::Prompt) -> PromptEntry {
    PromptEntry {
        name: p.name.clone(),
        title: p.title.clone(),
        description: p.description.clone(),
        arguments: p
            .arguments
            .iter()
            .flatten()
            .map(|a| PromptArg {
                name: a.name.clone(),
                description: a.description.clone(),
                required: a.required.unwrap_or(false),
            })
            .collect(),
    }
}

pub(super) fn resource_part(c: &rmcp::model::ResourceContents) -> ResourcePart {
    use rmcp::model::ResourceContents;
    match c {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => ResourcePart::Text {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            text: text.clone(),
        },
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => ResourcePart::Blob {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            blob: blob.clone(),
        },
        // Kinds newer than this client: say so rather than drop them.
        _ => ResourcePart::Text {
            uri: String::new(),
            mime_type: None,
            text: "[resource contents of an unsupported kind]".into(),
        },
    }
}

pub(super) fn prompt_message(m: &rmcp::model::PromptMessage) -> PromptMessage {
    use rmcp::model::ContentBlock;
    let role = match m.role {
        rmcp::model::Role::User => PromptRole::User,
        rmcp::model::Role::Assistant => PromptRole::Assistant,
    };
    let content = match &m.content {
        ContentBlock::Text(t) => PromptContent::Text(t.text.clone()),
        ContentBlock::Image(i) => PromptContent::Image {
            mime_type: i.mime_type.clone(),
            data: i.data.clone(),
        },
        ContentBlock::Resource(r) => PromptContent::Resource(resource_part(&r.resource)),
        ContentBlock::ResourceLink(link) => PromptContent::Link {
            uri: link.uri.clone(),
        },
        ContentBlock::Audio(a) => PromptContent::Other(format!(
            "[audio {} ({} bytes base64) not shown]",
            a.mime_type,
            a.data.len()
        )),
        // Content kinds newer than this client: say so rather than drop them.
        #[allow(unreachable_patterns)]
        _ => PromptContent::Other("[content of an unsupported type]".into()),
    };
    PromptMessage { role, content }
}
