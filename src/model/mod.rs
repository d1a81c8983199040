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
    /// The model's extended thinking (Anthropic), kept in the assistant message with its
    /// signature: the API wants it back unchanged in a tool-use turn (decision 0079).
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Thinking the API encrypted (flagged by its safety systems): sent back as it came.
    RedactedThinking {
        data: String,
    },
}

impl ContentBlock {
    /// Thinking, plain or redacted: kept for the API, never shown as the reply.
    pub fn is_thinking(&self) -> bool {
        matches!(
            self,
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
        )
    }
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

/// The system prompt of a request for a summary of the conversation so far (compaction).
/// Providers send it like any other; the scripted demo model recognises it.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You write summaries of conversations between a person and a coding agent, so that the agent can continue the work from the summary alone.";

/// What a summary request asks for, after the transcript it summarizes.
pub const SUMMARY_INSTRUCTIONS: &str = "Summarize the conversation above for the agent that will continue it. Keep the person's task and requests in their own words, the decisions made and why, the state of the work (done, in progress, next), the files and commands that matter, errors met and how they were resolved, and anything the person asked to remember. Be concise and factual: write notes, not a reply to the person.";

/// A tool as the model API receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// Shared with the pool entry: no copy per model call.
    pub input_schema: crate::pool::Schema,
}

impl From<&crate::pool::PoolTool> for ToolDef {
    fn from(tool: &crate::pool::PoolTool) -> Self {
        ToolDef {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
        }
    }
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
    /// A piece of the model's thinking (Anthropic `thinking_delta`, an OpenAI-compatible
    /// server's `reasoning_content`), to show as it streams.
    ThinkingDelta(String),
    /// A finished thinking block (with its signature) to keep in the assistant message.
    ThinkingBlock(ContentBlock),
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
    /// The attempt failed and the same request will be sent again after `wait`. Everything
    /// the stream yielded before this (text shown, tool calls not yet run) belongs to the
    /// failed attempt and is void: the events after it start the reply over.
    Retrying(RetryNotice),
}

/// Why a model request is being tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryReason {
    /// 529, or Anthropic's `overloaded_error` event.
    Overloaded,
    /// 429, or a `rate_limit_error` event.
    RateLimited,
    /// 500, 502, 503, 504, or an `api_error` / `timeout_error` event.
    ServerError,
    /// The connection could not be made or broke before the response began.
    Connection,
    /// The response broke off before its end marker (Anthropic `message_stop`,
    /// OpenAI-compatible `[DONE]` or a `finish_reason`).
    Cut,
}

impl RetryReason {
    /// HTTP statuses worth trying again, by what they mean.
    pub fn of_status(status: u16) -> Option<RetryReason> {
        match status {
            529 => Some(RetryReason::Overloaded),
            429 => Some(RetryReason::RateLimited),
            500 | 502 | 503 | 504 => Some(RetryReason::ServerError),
            _ => None,
        }
    }

    /// A few words for a status line: "overloaded, retrying in 12s".
    pub fn label(self) -> &'static str {
        match self {
            RetryReason::Overloaded => "overloaded",
            RetryReason::RateLimited => "rate limited",
            RetryReason::ServerError => "server error",
            RetryReason::Connection => "connection failed",
            RetryReason::Cut => "reply cut",
        }
    }
}

/// One retry of a model request, announced before its wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The attempt that follows the wait (2 for the first retry).
    pub attempt: u32,
    /// The most attempts the policy allows.
    pub max_attempts: u32,
    pub wait: std::time::Duration,
    pub reason: RetryReason,
    /// What went wrong, e.g. `HTTP 529: Overloaded`.
    pub detail: String,
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
    /// The request was longer than the model's context window ("prompt is too long",
    /// `context_length_exceeded`): the agent compacts and tries once more.
    #[error("{provider}: the conversation is too long for the model: {message}")]
    ContextOverflow {
        provider: String,
        message: String,
        /// The window the API named, in tokens.
        limit: Option<u64>,
    },
    /// Retries exhausted on 429/5xx/529, connection errors or cut streams.
    #[error("{provider}: {message}")]
    Unavailable { provider: String, message: String },
    /// The stream ended before the message was complete, or a frame could not be parsed.
    #[error("{provider} stream broken: {message}")]
    Stream { provider: String, message: String },
    /// A failure worth trying again that a stream decoder found (an `overloaded_error`
    /// event, say). The retry loop turns it into a retry, or into `Unavailable` once the
    /// budget is spent, so callers of [`ModelProvider::stream`] never see it.
    #[error("{provider}: {message}")]
    Transient {
        provider: String,
        reason: RetryReason,
        message: String,
    },
    #[error("{0}")]
    Config(String),
}

/// One model backend. `label` is what the UI shows (e.g. `anthropic claude-sonnet-4-5`,
/// `scripted demo`).
pub trait ModelProvider: Send + Sync {
    fn label(&self) -> String;
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>>;
    /// The model's context window in tokens (from [`window::for_model`] unless the
    /// provider knows better).
    fn context_window(&self) -> u64 {
        window::DEFAULT_WINDOW
    }
    /// The same provider (endpoint, key, retries) on another model, for `/model NAME`;
    /// None when the provider has no models to choose from (the scripted demo).
    fn with_model(&self, _model: &str) -> Option<Box<dyn ModelProvider>> {
        None
    }
    /// The models the provider offers (its own list endpoint), for `/model` completion;
    /// none by default (the scripted demo has no others).
    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        Box::pin(futures::future::ready(Ok(Vec::new())))
    }
}

pub mod anthropic;
mod http;
mod listing;
pub mod openai;
pub mod retry;
pub mod scripted;
pub mod select;
pub mod sse;
pub mod window;

pub use retry::RetryPolicy;
pub use select::{ProviderKind, ProviderOptions, select};
