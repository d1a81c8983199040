//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`, `stream: true`):
//! OpenAI itself, Ollama, vLLM, llama.cpp server, LM Studio.

use super::http::{SseDecoder, build_client, stream_sse};
use super::retry::RetryPolicy;
use super::sse::SseEvent;
use super::{
    ContentBlock, ModelError, ModelProvider, ModelRequest, Role, StopReason, StreamEvent, Usage,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";
const PROVIDER: &str = "openai";

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Empty for local servers: then no Authorization header is sent.
    pub api_key: String,
    pub base_url: String,
    pub model: String,
    pub retry: RetryPolicy,
    /// Whether the endpoint takes image parts (`TOOLGATE_OPENAI_IMAGES=false` says it
    /// does not). Even when true, a 400 that names images turns them off for the session.
    pub images: bool,
}

pub struct OpenAiProvider {
    client: reqwest::Client,
    config: OpenAiConfig,
    /// Starts as `config.images`; cleared for good when the endpoint refused images.
    images: Arc<AtomicBool>,
}

impl OpenAiProvider {
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        Ok(OpenAiProvider {
            client: build_client()?,
            images: Arc::new(AtomicBool::new(config.images)),
            config,
        })
    }

    /// One streaming request with this body, retried as the policy says.
    fn send(&self, body: Value) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        let client = self.client.clone();
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let api_key = self.config.api_key.clone();
        let build = move || {
            let mut builder = client
                .post(&url)
                .header("accept", "text/event-stream")
                .json(&body);
            if !api_key.is_empty() {
                builder = builder.bearer_auth(&api_key);
            }
            builder
        };
        stream_sse::<OpenAiDecoder>(PROVIDER.to_string(), self.config.retry, build)
    }

    fn is_openai_itself(&self) -> bool {
        self.config.base_url.contains("api.openai.com")
    }
}

impl ModelProvider for OpenAiProvider {
    fn list_models(&self) -> futures::future::BoxFuture<'static, Result<Vec<String>, String>> {
        let url = format!("{}/models", self.config.base_url.trim_end_matches('/'));
        let mut request = self.client.get(url);
        if !self.config.api_key.is_empty() {
            request = request.bearer_auth(&self.config.api_key);
        }
        super::listing::fetch(request)
    }

    fn label(&self) -> String {
        if self.is_openai_itself() {
            format!("openai {}", self.config.model)
        } else {
            let host = reqwest::Url::parse(&self.config.base_url)
                .ok()
                .and_then(|u| {
                    u.host_str().map(|h| {
                        format!(
                            "{h}{}",
                            u.port().map(|p| format!(":{p}")).unwrap_or_default()
                        )
                    })
                })
                .unwrap_or_else(|| self.config.base_url.clone());
            format!("openai-compatible {} @ {host}", self.config.model)
        }
    }

    fn context_window(&self) -> u64 {
        super::window::for_model(&self.config.model)
    }

    fn with_model(&self, model: &str) -> Option<Box<dyn ModelProvider>> {
        let config = OpenAiConfig {
            model: model.to_string(),
            ..self.config.clone()
        };
        // Another model may take images where this one did not: asked afresh.
        Some(Box::new(OpenAiProvider {
            client: self.client.clone(),
            images: Arc::new(AtomicBool::new(config.images)),
            config,
        }))
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        let openai_itself = self.is_openai_itself();
        let images_ok = self.images.load(Ordering::Relaxed);
        let body = request_body_with(&self.config.model, &request, openai_itself, images_ok);
        let first = self.send(body);
        if !images_ok || !has_images(&request) {
            return first;
        }
        // Many compatible servers (text-only models behind Ollama, vLLM, llama.cpp) answer
        // image parts with a 400. Then the same request goes again with the images as
        // placeholder text, and images stay off for the rest of the session.
        let fallback = self.send(request_body_with(
            &self.config.model,
            &request,
            openai_itself,
            false,
        ));
        let images = self.images.clone();
        Box::pin(async_stream::stream! {
            let mut first = first;
            match first.next().await {
                Some(Err(ModelError::Api { status: 400, message, .. }))
                    if message.to_ascii_lowercase().contains("image") =>
                {
                    tracing::warn!("the model endpoint refused image parts ({message}); sending images as text from now on");
                    images.store(false, Ordering::Relaxed);
                    let mut fallback = fallback;
                    while let Some(item) = fallback.next().await {
                        yield item;
                    }
                }
                Some(item) => {
                    yield item;
                    while let Some(item) = first.next().await {
                        yield item;
                    }
                }
                None => {}
            }
        })
    }
}

fn has_images(request: &ModelRequest) -> bool {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .any(|b| match b {
            ContentBlock::Image(_) => true,
            ContentBlock::ToolResult { images, .. } => !images.is_empty(),
            _ => false,
        })
}

/// The JSON body of a streaming Chat Completions request. OpenAI's own API has replaced
/// `max_tokens` by `max_completion_tokens` (its reasoning models reject the old name);
/// compatible servers mostly know only `max_tokens`.
pub fn request_body(model: &str, request: &ModelRequest, openai_itself: bool) -> Value {
    request_body_with(model, request, openai_itself, true)
}

/// `request_body`, with images as image parts (`images`) or as placeholder text.
pub fn request_body_with(
    model: &str,
    request: &ModelRequest,
    openai_itself: bool,
    images: bool,
) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        append_messages(&mut messages, message.role, &message.content, images);
    }
    let mut body = json!({
        "model": model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    if request.max_tokens > 0 {
        let key = if openai_itself {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[key] = json!(request.max_tokens);
    }
    // Chat Completions takes temperatures from 0 to 2 and at most four stop sequences.
    if let Some(t) = request.sampling.temperature {
        body["temperature"] = json!(t.clamp(0.0, 2.0));
    }
    if !request.sampling.stop_sequences.is_empty() {
        let stop: Vec<&String> = request.sampling.stop_sequences.iter().take(4).collect();
        body["stop"] = json!(stop);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
    }
    body
}

/// One of our messages becomes one or more Chat Completions messages: tool results are
/// separate `tool` messages and must come right after the assistant's `tool_calls`, so they
/// go before any user text of the same message.
fn append_messages(out: &mut Vec<Value>, role: Role, blocks: &[ContentBlock], images_ok: bool) {
    let text: Vec<String> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.is_empty() => Some(text.clone()),
            ContentBlock::Image(image) if !images_ok => Some(image.placeholder()),
            _ => None,
        })
        .collect();
    let text = text.join("\n\n");
    match role {
        Role::Assistant => {
            let tool_calls: Vec<Value> = blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": input.to_string()},
                    })),
                    _ => None,
                })
                .collect();
            if text.is_empty() && tool_calls.is_empty() {
                return;
            }
            let mut message = json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { json!(text) },
            });
            if !tool_calls.is_empty() {
                message["tool_calls"] = json!(tool_calls);
            }
            out.push(message);
        }
        Role::User => {
            // Chat Completions' tool messages take text only: images a tool returned go
            // in one user message right after the tool messages, saying whose they are.
            let mut images: Vec<Value> = Vec::new();
            for block in blocks {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    images: result_images,
                } = block
                {
                    if !result_images.is_empty() && images_ok {
                        images.push(json!({
                            "type": "text",
                            "text": format!("Images returned by tool call {tool_use_id}:"),
                        }));
                        images.extend(result_images.iter().map(image_part));
                    }
                    // The format has no error flag; say it in the content.
                    let mut content = if *is_error && !content.starts_with("Permission denied") {
                        format!("Error: {content}")
                    } else {
                        content.clone()
                    };
                    if !images_ok {
                        for image in result_images {
                            if !content.is_empty() {
                                content.push('\n');
                            }
                            content.push_str(&image.placeholder());
                        }
                    }
                    out.push(json!({
                        "role": "tool",
                        "tool_call_id": tool_use_id,
                        "content": content,
                    }));
                }
            }
            images.extend(blocks.iter().filter_map(|b| match b {
                ContentBlock::Image(image) if images_ok => Some(image_part(image)),
                _ => None,
            }));
            if images.is_empty() {
                if !text.is_empty() {
                    out.push(json!({"role": "user", "content": text}));
                }
            } else {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text}));
                }
                parts.extend(images);
                out.push(json!({"role": "user", "content": parts}));
            }
        }
    }
}

/// An image as a Chat Completions content part (inline `data:` URL).
fn image_part(image: &crate::model::ImageData) -> Value {
    json!({"type": "image_url", "image_url": {"url": image.data_url()}})
}

pub fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        _ => StopReason::Other,
    }
}

#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    announced: bool,
}

/// The state of one streamed completion: tool calls by index, finish reason, usage.
#[derive(Default)]
pub struct OpenAiDecoder {
    calls: BTreeMap<u64, PendingCall>,
    finish: Option<StopReason>,
    usage: Option<Usage>,
    done: bool,
}

fn stream_error(message: impl Into<String>) -> ModelError {
    ModelError::Stream {
        provider: PROVIDER.to_string(),
        message: message.into(),
    }
}

impl OpenAiDecoder {
    /// Emits every accumulated tool call, complete, in index order.
    fn flush_calls(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for (index, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() {
                // Some local servers omit ids; the agent needs one to pair the result.
                format!("call_{index}_{}", uuid::Uuid::new_v4().simple())
            } else {
                call.id
            };
            if !call.announced {
                out.push(StreamEvent::ToolUseStarted {
                    id: id.clone(),
                    name: call.name.clone(),
                });
            }
            let input = if call.arguments.trim().is_empty() {
                json!({})
            } else {
                match serde_json::from_str(&call.arguments) {
                    Ok(value) => value,
                    Err(err) => {
                        // Small local models do emit broken JSON. Passing the raw text on
                        // lets the agent's argument validation answer with an error
                        // tool_result the model can correct, instead of ending the turn.
                        tracing::warn!(tool = %call.name, %err, "tool arguments are not valid JSON");
                        Value::String(call.arguments)
                    }
                }
            };
            out.push(StreamEvent::ToolUse {
                id,
                name: call.name,
                input,
            });
        }
        out
    }

    fn finish_events(&mut self) -> Vec<StreamEvent> {
        self.done = true;
        let mut out = self.flush_calls();
        let emitted_tools = out.iter().any(|e| matches!(e, StreamEvent::ToolUse { .. }));
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        let mut reason = self.finish.unwrap_or(StopReason::EndTurn);
        // Ollama reports "stop" even when the message carries tool calls.
        if emitted_tools && reason == StopReason::EndTurn {
            reason = StopReason::ToolUse;
        }
        out.push(StreamEvent::Stop(reason));
        out
    }

    fn on_chunk(&mut self, chunk: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(stream_error(format!(
                "the server reported an error: {message}"
            )));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let read = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            // OpenAI counts cached prompt tokens inside prompt_tokens; Usage keeps them apart.
            let cached = usage
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            self.usage = Some(Usage {
                input_tokens: read("prompt_tokens").saturating_sub(cached),
                output_tokens: read("completion_tokens"),
                cache_read_input_tokens: cached,
                cache_creation_input_tokens: 0,
            });
        }
        let mut out = Vec::new();
        let choices = chunk.get("choices").and_then(Value::as_array);
        // Only the first choice is used (we never ask for n > 1).
        let Some(choice) = choices.and_then(|c| c.first()) else {
            return Ok(out);
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        // DeepSeek, vLLM and llama.cpp stream reasoning apart from the answer; it is shown
        // and never sent back (those servers refuse it in a request).
        if let Some(text) = delta.get("reasoning_content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(StreamEvent::ThinkingDelta(text.to_string()));
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(StreamEvent::TextDelta(text.to_string()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, piece) in calls.iter().enumerate() {
                let index = piece
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(position as u64);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = piece.get("id").and_then(Value::as_str)
                    && !id.is_empty()
                {
                    call.id = id.to_string();
                }
                let function = piece.get("function").unwrap_or(&Value::Null);
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    // OpenAI sends the name once; some compatible servers repeat it whole
                    // in later chunks, which must not double it.
                    if call.name != name {
                        call.name.push_str(name);
                    }
                }
                match function.get("arguments") {
                    Some(Value::String(args)) => call.arguments.push_str(args),
                    // A few servers send the arguments as a JSON object, not a string.
                    Some(args @ Value::Object(_)) => call.arguments = args.to_string(),
                    _ => {}
                }
                if !call.announced && !call.id.is_empty() && !call.name.is_empty() {
                    call.announced = true;
                    out.push(StreamEvent::ToolUseStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(map_finish_reason(reason));
        }
        Ok(out)
    }
}

impl SseDecoder for OpenAiDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ModelError> {
        if event.data.trim() == "[DONE]" {
            return Ok(self.finish_events());
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
            let excerpt: String = event.data.chars().take(120).collect();
            stream_error(format!("malformed SSE data ({e}): {excerpt}"))
        })?;
        self.on_chunk(&chunk)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// A server that closes the body after the finish_reason but without `[DONE]` has
    /// still sent a complete message; without a finish_reason the message was cut.
    fn on_body_end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.finish.is_some() {
            Ok(self.finish_events())
        } else {
            Err(stream_error(
                "stream ended before the completion finished (no finish_reason, no [DONE])",
            ))
        }
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
