//! The conversation's own data: messages and their blocks, images, token usage, why a
//! reply stopped and why a model request is tried again. The model providers (in the core)
//! speak them; the session log and the front ends show them.

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
