//! A model API on 127.0.0.1 with a context limit: it speaks the Anthropic Messages API
//! (`POST /v1/messages`) and OpenAI Chat Completions (`POST /v1/chat/completions`), both
//! streamed, and refuses a request whose body is over `limit_bytes` the way the real APIs
//! refuse an over-long prompt (Anthropic: 400 `invalid_request_error` "prompt is too long:
//! N tokens > M maximum"; OpenAI: 400 `context_length_exceeded`). Tokens are counted as
//! bytes ÷ 4, and each accepted reply reports that count as its input usage, as a real API
//! reports its own count. What it answers comes from a `brain` that sees each accepted
//! request. It records every request and stops by itself after a while without one.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What the model says to one request.
#[derive(Debug, Clone)]
pub enum Say {
    Text(String),
    /// One tool call.
    Tool {
        name: String,
        input: Value,
    },
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub bytes: usize,
    /// Answered 400 as too long.
    pub refused: bool,
    pub body: Value,
}

impl Seen {
    /// True for a summary request (toolgate's compaction): it carries no tools.
    pub fn is_summary(&self) -> bool {
        self.body["tools"].as_array().is_none_or(Vec::is_empty)
    }
}

type Brain = Box<dyn FnMut(&Value) -> Say + Send>;

pub struct WindowApi {
    /// The base URL toolgate is given (`…/v1` for OpenAI-compatible, without for Anthropic).
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl WindowApi {
    pub fn start(limit_bytes: usize, brain: impl FnMut(&Value) -> Say + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        listener.set_nonblocking(true).expect("nonblocking");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped) = (seen.clone(), stop.clone());
        let mut brain: Brain = Box::new(brain);
        thread::spawn(move || {
            let mut idle_since = Instant::now();
            while !stopped.load(Ordering::SeqCst) && idle_since.elapsed() < Duration::from_secs(90)
            {
                match listener.accept() {
                    Ok((socket, _)) => {
                        serve(socket, limit_bytes, &mut brain, &log);
                        idle_since = Instant::now();
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(2));
                    }
                    Err(_) => return,
                }
            }
        });
        WindowApi { url, seen, stop }
    }

    /// Every tool result the model server received, in order (the last request holds
    /// them all), as the text the model read.
    pub fn tool_results(&self) -> Vec<String> {
        let seen = self.seen();
        let last = seen.last().expect("a model request");
        last.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "tool_result")
            .map(|block| match &block["content"] {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen lock").clone()
    }
}

impl Drop for WindowApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(mut socket: TcpStream, limit: usize, brain: &mut Brain, log: &Mutex<Vec<Seen>>) {
    let _ = socket.set_nonblocking(false);
    let Some((path, body_bytes)) = super::model_api::read_http_request(&mut socket) else {
        return;
    };
    let bytes = body_bytes.len();
    let body: Value = serde_json::from_slice(&body_bytes).unwrap_or(Value::Null);
    let openai = path.ends_with("/chat/completions");
    let refused = bytes > limit;
    log.lock().expect("seen lock").push(Seen {
        bytes,
        refused,
        body: body.clone(),
    });
    let (tokens, max) = (bytes / 4, limit / 4);
    let response = if refused {
        let error = if openai {
            json!({"error": {
                "message": format!("This model's maximum context length is {max} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        } else {
            json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("prompt is too long: {tokens} tokens > {max} maximum")}})
        }
        .to_string();
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{error}",
            error.len()
        )
    } else {
        let say = brain(&body);
        let n = log.lock().expect("seen lock").len();
        let stream = if openai {
            openai_stream(&say, tokens, n)
        } else {
            anthropic_stream(&say, tokens, n)
        };
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{stream}",
            stream.len()
        )
    };
    let _ = socket.write_all(response.as_bytes());
    let _ = socket.flush();
}

fn sse(events: &[Value], named: bool) -> String {
    events
        .iter()
        .map(|e| {
            if named {
                format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))
            } else {
                format!("data: {e}\n\n")
            }
        })
        .collect()
}

fn anthropic_stream(say: &Say, input_tokens: usize, n: usize) -> String {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_w", "type": "message", "role": "assistant", "content": [],
        "model": "claude-window-test", "stop_reason": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})];
    let stop = match say {
        Say::Text(text) => {
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}));
            "end_turn"
        }
        Say::Tool { name, input } => {
            let id = format!("toolu_{n}");
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
            "tool_use"
        }
    };
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}));
    events.push(json!({"type": "message_stop"}));
    sse(&events, true)
}

fn openai_stream(say: &Say, input_tokens: usize, n: usize) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-w", "object": "chat.completion.chunk", "model": "gpt-window-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let finish = match say {
        Say::Text(text) => {
            events.push(chunk(json!({"content": text}), Value::Null));
            "stop"
        }
        Say::Tool { name, input } => {
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}}]}),
                Value::Null,
            ));
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), json!(finish)));
    events.push(json!({"id": "chatcmpl-w", "object": "chat.completion.chunk", "model": "gpt-window-test",
        "choices": [], "usage": {"prompt_tokens": input_tokens, "completion_tokens": 20, "total_tokens": input_tokens + 20}}));
    let mut text = sse(&events, false);
    text.push_str("data: [DONE]\n\n");
    text
}
