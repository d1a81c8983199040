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
