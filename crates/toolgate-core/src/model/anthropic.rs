//! Anthropic Messages API (`POST /v1/messages`, `stream: true`).

use super::http::{SseDecoder, build_client, stream_sse};
use super::retry::RetryPolicy;
use super::sse::SseEvent;
use super::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, RetryReason, Role, StopReason,
    StreamEvent, Usage,
};
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::collections::HashMap;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
pub const API_VERSION: &str = "2023-06-01";
const PROVIDER: &str = "anthropic";
/// Used when the request leaves `max_tokens` at 0; the API requires a value.
const FALLBACK_MAX_TOKENS: u32 = 8192;

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    pub api_key: String,
    pub base_url: String,
    pub model: String,
    pub retry: RetryPolicy,
    /// `[model] thinking`: extended thinking's budget in tokens; 0 leaves it off.
    pub thinking_budget: u32,
}

pub struct AnthropicProvider {
    client: reqwest::Client,
    config: AnthropicConfig,
}

impl AnthropicProvider {
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        Ok(AnthropicProvider {
            client: build_client()?,
            config,
        })
    }

    fn endpoint(&self) -> String {
        format!("{}/v1/messages", self.config.base_url.trim_end_matches('/'))
    }
}

impl ModelProvider for AnthropicProvider {
    fn label(&self) -> String {
        format!("anthropic {}", self.config.model)
    }

    fn context_window(&self) -> u64 {
        super::window::for_model(&self.config.model)
    }

    fn with_model(&self, model: &str) -> Option<Box<dyn ModelProvider>> {
        let config = AnthropicConfig {
            model: model.to_string(),
            ..self.config.clone()
        };
        Some(Box::new(AnthropicProvider {
            client: self.client.clone(),
            config,
        }))
    }

    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let url = format!(
            "{}/v1/models?limit=1000",
            self.config.base_url.trim_end_matches('/')
        );
        let request = self
            .client
            .get(url)
            .header("x-api-key", &self.config.api_key)
            .header("anthropic-version", API_VERSION);
        super::listing::fetch(request)
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        let mut body = request_body(&self.config.model, &request);
        with_thinking(&mut body, self.config.thinking_budget, &request);
        let client = self.client.clone();
        let url = self.endpoint();
        let api_key = self.config.api_key.clone();
        let build = move || {
            let mut builder = client
                .post(&url)
                .header("anthropic-version", API_VERSION)
                .header("accept", "text/event-stream")
                .json(&body);
            if !api_key.is_empty() {
                builder = builder.header("x-api-key", &api_key);
            }
            builder
        };
        stream_sse::<AnthropicDecoder>(PROVIDER.to_string(), self.config.retry, build)
    }
}

/// A prompt-cache breakpoint: the API caches the request's prefix up to and including the
/// block that carries it (5 minutes, refreshed by each hit).
fn cache_breakpoint() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body of a streaming Messages API request.
///
/// Prompt caching: three breakpoints (the API allows four) mark the prefix that stays the
/// same from one call to the next: the last tool definition (tools come first in the
/// API's prefix order), the system prompt, and the last block of the conversation. The
/// next call of the turn extends the conversation, so its prefix up to the previous last
/// block is read from the cache (the API looks back up to 20 blocks for an earlier
/// breakpoint). Tools that `search_tools` loads are appended to the tools array, so the
/// earlier tool prefix stays valid too.
pub fn request_body(model: &str, request: &ModelRequest) -> Value {
    let max_tokens = if request.max_tokens == 0 {
        FALLBACK_MAX_TOKENS
    } else {
        request.max_tokens
    };
    let mut messages: Vec<Value> = request.messages.iter().filter_map(message_json).collect();
    // Thinking blocks take no cache_control.
    if let Some(last_block) = messages
        .last_mut()
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|blocks| blocks.last_mut())
        .filter(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
    {
        last_block["cache_control"] = cache_breakpoint();
    }
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": messages,
    });
    // Anthropic takes temperatures from 0 to 1.
    if let Some(t) = request.sampling.temperature {
        body["temperature"] = json!(t.clamp(0.0, 1.0));
    }
    if !request.sampling.stop_sequences.is_empty() {
        body["stop_sequences"] = json!(request.sampling.stop_sequences);
    }
    if !request.system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": request.system,
            "cache_control": cache_breakpoint(),
        }]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = cache_breakpoint();
        }
        body["tools"] = Value::Array(tools);
    }
    body
}

/// The smallest budget the API takes for extended thinking.
const MIN_THINKING_BUDGET: u32 = 1024;

/// Turns extended thinking on with `budget` tokens (0: off). `max_tokens` must exceed the
/// budget, so the reply keeps the room it had on top of it. A request with a temperature
/// (a server's sampling request) goes without: the API takes no temperature with thinking.
pub fn with_thinking(body: &mut Value, budget: u32, request: &ModelRequest) {
    if budget == 0 || request.sampling.temperature.is_some() {
        return;
    }
    let budget = budget.max(MIN_THINKING_BUDGET);
    let room = body["max_tokens"]
        .as_u64()
        .unwrap_or(u64::from(FALLBACK_MAX_TOKENS));
    body["max_tokens"] = json!(room + u64::from(budget));
    body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
}

/// An image block with inline base64 data.
fn image_json(image: &crate::model::ImageData) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    })
}

/// A message as content blocks. Empty text blocks are dropped (the API rejects them), and
/// so is a message left with no blocks at all.
fn message_json(message: &Message) -> Option<Value> {
    let blocks: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::ToolUse { id, name, input } => {
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                images,
            } => {
                // With images the content becomes a list of blocks (text first); without,
                // the plain string form keeps requests as they always were.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    // An empty text block is refused by the API (a tool that returned
                    // only an image).
                    let mut parts = Vec::new();
                    if !content.is_empty() {
                        parts.push(json!({"type": "text", "text": content}));
                    }
                    parts.extend(images.iter().map(image_json));
                    json!(parts)
                };
                Some(json!({
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": content,
                    "is_error": is_error,
                }))
            }
            ContentBlock::Image(image) => Some(image_json(image)),
            // Back exactly as they came, signature included (the API checks it).
            ContentBlock::Thinking {
                thinking,
                signature,
            } => Some(json!({"type": "thinking", "thinking": thinking, "signature": signature})),
            ContentBlock::RedactedThinking { data } => {
                Some(json!({"type": "redacted_thinking", "data": data}))
            }
        })
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let mut blocks = blocks;
    if message.role == Role::User {
        // The API wants a user message's tool_result blocks before any text (a note the
        // user attached to a denial, say); a stable sort keeps each group's order.
        blocks.sort_by_key(|b| b["type"] != "tool_result");
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({"role": role, "content": blocks}))
}

pub fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        _ => StopReason::Other,
    }
}

enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        /// Input given whole in `content_block_start` (used when no deltas follow).
        initial_input: Value,
        partial_json: String,
    },
    /// Extended thinking, gathered with its signature to be sent back.
    Thinking {
        text: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// Block types the agent does not use.
    Ignored,
}

/// The state of one streamed message: open blocks by index, stop reason, usage.
#[derive(Default)]
pub struct AnthropicDecoder {
    blocks: HashMap<u64, Block>,
    stop_reason: Option<StopReason>,
    saw_tool_use: bool,
    usage: Usage,
    done: bool,
}

fn stream_error(message: impl Into<String>) -> ModelError {
    ModelError::Stream {
        provider: PROVIDER.to_string(),
        message: message.into(),
    }
}

fn index_of(data: &Value, event: &str) -> Result<u64, ModelError> {
    data.get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| stream_error(format!("'{event}' event without a block index")))
}

impl AnthropicDecoder {
    fn read_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        // input_tokens comes in message_start; message_delta carries the cumulative
        // output_tokens (and, on newer API versions, input_tokens again).
        if let Some(n) = usage.get("input_tokens").and_then(Value::as_u64) {
            self.usage.input_tokens = n;
        }
        if let Some(n) = usage.get("output_tokens").and_then(Value::as_u64) {
            self.usage.output_tokens = n;
        }
        if let Some(n) = usage.get("cache_read_input_tokens").and_then(Value::as_u64) {
            self.usage.cache_read_input_tokens = n;
        }
        if let Some(n) = usage
            .get("cache_creation_input_tokens")
            .and_then(Value::as_u64)
        {
            self.usage.cache_creation_input_tokens = n;
        }
    }

    fn block_start(&mut self, data: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        let index = index_of(data, "content_block_start")?;
        let block = data.get("content_block").unwrap_or(&Value::Null);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let mut out = Vec::new();
        let state = match kind {
            "text" => {
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.push(StreamEvent::TextDelta(text.to_string()));
                }
                Block::Text
            }
            "tool_use" => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if id.is_empty() || name.is_empty() {
                    return Err(stream_error("tool_use block without id or name"));
                }
                out.push(StreamEvent::ToolUseStarted {
                    id: id.to_string(),
                    name: name.to_string(),
                });
                Block::ToolUse {
                    id: id.to_string(),
                    name: name.to_string(),
                    initial_input: block.get("input").cloned().unwrap_or(Value::Null),
                    partial_json: String::new(),
                }
            }
            "thinking" => {
                let text = block
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !text.is_empty() {
                    out.push(StreamEvent::ThinkingDelta(text.to_string()));
                }
                Block::Thinking {
                    text: text.to_string(),
                    signature: block
                        .get("signature")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }
            }
            "redacted_thinking" => Block::RedactedThinking {
                data: block
                    .get("data")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            },
            _ => Block::Ignored,
        };
        self.blocks.insert(index, state);
        Ok(out)
    }

    fn block_delta(&mut self, data: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        let index = index_of(data, "content_block_delta")?;
        let delta = data.get("delta").unwrap_or(&Value::Null);
        match delta.get("type").and_then(Value::as_str).unwrap_or("") {
            "text_delta" => {
                let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                Ok(if text.is_empty() {
                    vec![]
                } else {
                    vec![StreamEvent::TextDelta(text.to_string())]
                })
            }
            "input_json_delta" => {
                let piece = delta
                    .get("partial_json")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                match self.blocks.get_mut(&index) {
                    Some(Block::ToolUse { partial_json, .. }) => {
                        partial_json.push_str(piece);
                        Ok(vec![])
                    }
                    _ => Err(stream_error(format!(
                        "input_json_delta for block {index}, which is not an open tool_use block"
                    ))),
                }
            }
            "thinking_delta" => {
                let piece = delta.get("thinking").and_then(Value::as_str).unwrap_or("");
                match self.blocks.get_mut(&index) {
                    Some(Block::Thinking { text, .. }) => {
                        text.push_str(piece);
                        Ok(if piece.is_empty() {
                            vec![]
                        } else {
                            vec![StreamEvent::ThinkingDelta(piece.to_string())]
                        })
                    }
                    _ => Err(stream_error(format!(
                        "thinking_delta for block {index}, which is not an open thinking block"
                    ))),
                }
            }
            "signature_delta" => {
                let piece = delta.get("signature").and_then(Value::as_str).unwrap_or("");
                if let Some(Block::Thinking { signature, .. }) = self.blocks.get_mut(&index) {
                    signature.push_str(piece);
                }
                Ok(vec![])
            }
            // citations_delta and types added later
            _ => Ok(vec![]),
        }
    }

    fn block_stop(&mut self, data: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        let index = index_of(data, "content_block_stop")?;
        match self.blocks.remove(&index) {
            Some(Block::ToolUse {
                id,
                name,
                initial_input,
                partial_json,
            }) => {
                let input = if !partial_json.trim().is_empty() {
                    serde_json::from_str(&partial_json).map_err(|e| {
                        stream_error(format!("tool input for '{name}' is not valid JSON: {e}"))
                    })?
                } else if initial_input.as_object().is_some_and(|o| !o.is_empty()) {
                    initial_input
                } else {
                    json!({})
                };
                self.saw_tool_use = true;
                Ok(vec![StreamEvent::ToolUse { id, name, input }])
            }
            Some(Block::Thinking { text, signature }) => {
                Ok(vec![StreamEvent::ThinkingBlock(ContentBlock::Thinking {
                    thinking: text,
                    signature,
                })])
            }
            Some(Block::RedactedThinking { data }) => Ok(vec![StreamEvent::ThinkingBlock(
                ContentBlock::RedactedThinking { data },
            )]),
            _ => Ok(vec![]),
        }
    }

    fn api_error(data: &Value) -> ModelError {
        let kind = data
            .pointer("/error/type")
            .and_then(Value::as_str)
            .unwrap_or("error");
        let message = data
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the API reported an error without a message");
        let reason = match kind {
            "overloaded_error" => Some(RetryReason::Overloaded),
            "rate_limit_error" => Some(RetryReason::RateLimited),
            "api_error" | "timeout_error" => Some(RetryReason::ServerError),
            _ => None,
        };
        match reason {
            Some(reason) => ModelError::Transient {
                provider: PROVIDER.to_string(),
                reason,
                message: format!("{kind} during the response: {message}"),
            },
            None => stream_error(format!("{kind}: {message}")),
        }
    }
}

impl SseDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ModelError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            let excerpt: String = event.data.chars().take(120).collect();
            stream_error(format!(
                "malformed SSE data in '{}' event ({e}): {excerpt}",
                event.event
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str());
        match kind {
            "message_start" => {
                self.read_usage(data.pointer("/message/usage"));
                Ok(vec![])
            }
            "content_block_start" => self.block_start(&data),
            "content_block_delta" => self.block_delta(&data),
            "content_block_stop" => self.block_stop(&data),
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(map_stop_reason(reason));
                }
                self.read_usage(data.get("usage"));
                Ok(vec![])
            }
            "message_stop" => {
                self.done = true;
                let reason = self.stop_reason.unwrap_or(if self.saw_tool_use {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                });
                Ok(vec![
                    StreamEvent::Usage(self.usage),
                    StreamEvent::Stop(reason),
                ])
            }
            "error" => Err(Self::api_error(&data)),
            // ping, and event types added after this was written (the API's versioning
            // policy says clients should ignore them).
            _ => Ok(vec![]),
        }
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn on_body_end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        Err(stream_error("stream ended before message_stop"))
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
