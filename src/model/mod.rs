//! Model providers behind one trait: Anthropic Messages API, OpenAI-compatible Chat
//! Completions, and the scripted demo model. All of them stream.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
        /// Images the tool returned besides its text (an MCP `image` content block). Kept
        /// out of `content` so providers that take images get them as images.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageData>,
    },
    /// An image in a user message (an attached resource, say).
    Image(ImageData),
}

/// An image as the model APIs take it: base64 data and its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageData {
    /// `image/png`, `image/jpeg`, …
    pub media_type: String,
    /// Base64, as MCP delivers it (no data: prefix).
    pub data: String,
}

impl ImageData {
    /// How the image reads where a provider cannot take images.
    pub fn placeholder(&self) -> String {
        format!(
            "[image {} ({} bytes base64) not shown: this model endpoint takes no images]",
            self.media_type,
            self.data.len()
        )
    }

    /// An OpenAI-style `data:` URL.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }
}

/// A tool as the model API receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// Shared with the pool entry: no copy per model call.
    pub input_schema: crate::pool::Schema,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    pub max_tokens: u32,
    /// What an MCP server's sampling request asked of the model beyond the messages; the
    /// agent's own calls leave the provider's defaults.
    pub sampling: SamplingOptions,
}

/// Temperature and stop sequences, as a sampling request carries them (`temperature`,
/// `stopSequences`); each provider sends them in its own words and range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SamplingOptions {
    pub temperature: Option<f32>,
    pub stop_sequences: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    Other,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens billed at the full rate (Anthropic: not read from or written to the
    /// prompt cache).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache (Anthropic
    /// `cache_read_input_tokens`; 0 where the provider reports none).
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Adds another call's figures (a turn's total, the session's total).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

/// What a provider's stream yields. Providers accumulate partial tool input JSON themselves
/// and emit each tool call once, complete.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    /// A tool call began (lets the UI show a card before the arguments are complete).
    ToolUseStarted {
        id: String,
        name: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    Usage(Usage),
    Stop(StopReason),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// 400/401/403/404…: the API's own message, not retried.
    #[error("{provider} API error {status}: {message}")]
    Api {
        provider: String,
        status: u16,
        message: String,
    },
    /// Retries exhausted on 429/5xx/529 or connection errors.
    #[error("{provider}: {message}")]
    Unavailable { provider: String, message: String },
    /// The stream ended before the message was complete, or a frame could not be parsed.
    #[error("{provider} stream broken: {message}")]
    Stream { provider: String, message: String },
    #[error("{0}")]
    Config(String),
}

/// One model backend. `label` is what the UI shows (e.g. `anthropic claude-sonnet-4-5`,
/// `scripted demo`).
pub trait ModelProvider: Send + Sync {
    fn label(&self) -> String;
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>>;
}

pub mod anthropic;
mod http;
pub mod openai;
pub mod retry;
pub mod scripted;
pub mod select;
pub mod sse;

pub use retry::RetryPolicy;
pub use select::{ProviderKind, ProviderOptions, select};
