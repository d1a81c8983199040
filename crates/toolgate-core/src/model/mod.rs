//! Model providers behind one trait: Anthropic Messages API, OpenAI-compatible Chat
//! Completions, and the scripted demo model. All of them stream.

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::protocol::conversation::{
    ContentBlock, ImageData, Message, RetryNotice, RetryReason, Role, StopReason, Usage,
};

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
