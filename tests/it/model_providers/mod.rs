//! The model providers against local HTTP servers (wiremock on 127.0.0.1, and a raw TCP
//! socket for a connection cut mid-body) speaking the real Anthropic SSE and OpenAI
//! Chat Completions stream formats, plus the scripted demo model driven turn by turn.

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate::model::scripted::{Scenario, ScriptedProvider};
use toolgate::model::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, ProviderOptions, RetryPolicy,
    RetryReason, Role, StopReason, StreamEvent, ToolDef, Usage, select,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TIMEOUT: Duration = Duration::from_secs(20);

fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

fn anthropic_at(base_url: &str, retry: RetryPolicy) -> Box<dyn ModelProvider> {
    let opts = ProviderOptions {
        provider_flag: Some("anthropic".into()),
        anthropic_api_key: Some("test-key".into()),
        anthropic_base_url: Some(base_url.into()),
        model: Some("claude-test".into()),
        retry,
        ..Default::default()
    };
    select(&opts).expect("anthropic provider")
}

fn openai_at(base_url: &str, key: Option<&str>, retry: RetryPolicy) -> Box<dyn ModelProvider> {
    let opts = ProviderOptions {
        provider_flag: Some("openai".into()),
        openai_api_key: key.map(str::to_string),
        openai_base_url: Some(base_url.into()),
        model: Some("gpt-test".into()),
        retry,
        ..Default::default()
    };
    select(&opts).expect("openai provider")
}

/// A conversation that has been through one tool round, so the request carries every
/// block type.
fn request_after_tool_round() -> ModelRequest {
    ModelRequest {
        system: "You are toolgate's agent.".into(),
        messages: vec![
            Message::user_text("deploy web"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Text {
                        text: "Checking status.".into(),
                    },
                    ContentBlock::ToolUse {
                        id: "toolu_1".into(),
                        name: "mcp__deploy__status".into(),
                        input: json!({"service": "web"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "server not connected".into(),
                    is_error: true,
                    images: vec![],
                }],
            },
        ],
        tools: vec![ToolDef {
            name: "mcp__docs__search".into(),
            description: "Search the docs".into(),
            input_schema: json!({"type": "object", "properties": {"query": {"type": "string"}}})
                .into(),
        }],
        max_tokens: 1024,
        sampling: Default::default(),
    }
}

/// Collects the stream, stopping at the first error (which is returned with what came
/// before it).
async fn collect(
    provider: &dyn ModelProvider,
    request: ModelRequest,
) -> (Vec<StreamEvent>, Option<ModelError>) {
    let mut stream = provider.stream(request);
    let mut events = Vec::new();
    let outcome = tokio::time::timeout(TIMEOUT, async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(err) => return Some(err),
            }
        }
        None
    })
    .await
    .expect("the stream ended within the timeout");
    (events, outcome)
}

/// The retries a stream announced: the attempt each leads to, and why.
fn retries(events: &[StreamEvent]) -> Vec<(u32, RetryReason)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying(notice) => Some((notice.attempt, notice.reason)),
            _ => None,
        })
        .collect()
}

/// What the stream says after its last retry: the reply the caller keeps.
fn after_last_retry(events: &[StreamEvent]) -> Vec<StreamEvent> {
    let start = events
        .iter()
        .rposition(|e| matches!(e, StreamEvent::Retrying(_)))
        .map_or(0, |i| i + 1);
    events[start..].to_vec()
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn anthropic_turn_body() -> String {
    sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":42,"cache_creation_input_tokens":1200,"cache_read_input_tokens":3400,"output_tokens":1}}}),
        ),
        ("ping", json!({"type":"ping"})),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look"}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" that up."}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":0}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"mcp__docs__search","input":{}}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"que"}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ry\": \"dep"}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"loy\", \"limit\": 3}"}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":1}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"mcp__docs__get_version","input":{}}}),
        ),
        (
            "content_block_stop",
            json!({"type":"content_block_stop","index":2}),
        ),
        (
            "message_delta",
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":77}}),
        ),
        ("message_stop", json!({"type":"message_stop"})),
    ])
}

fn expected_anthropic_turn() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta("Let me look".into()),
        StreamEvent::TextDelta(" that up.".into()),
        StreamEvent::ToolUseStarted {
            id: "toolu_a".into(),
            name: "mcp__docs__search".into(),
        },
        StreamEvent::ToolUse {
            id: "toolu_a".into(),
            name: "mcp__docs__search".into(),
            input: json!({"query": "deploy", "limit": 3}),
        },
        StreamEvent::ToolUseStarted {
            id: "toolu_b".into(),
            name: "mcp__docs__get_version".into(),
        },
        StreamEvent::ToolUse {
            id: "toolu_b".into(),
            name: "mcp__docs__get_version".into(),
            input: json!({}),
        },
        StreamEvent::Usage(Usage {
            input_tokens: 42,
            output_tokens: 77,
            cache_read_input_tokens: 3400,
            cache_creation_input_tokens: 1200,
        }),
        StreamEvent::Stop(StopReason::ToolUse),
    ]
}

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

#[tokio::test]
async fn anthropic_full_turn_with_text_and_tool_use() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_response(anthropic_turn_body()))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(3));
    assert_eq!(provider.label(), "anthropic claude-test");

    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(error, None);
    assert_eq!(events, expected_anthropic_turn());

    let requests = server.received_requests().await.expect("recording on");
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.headers.get("x-api-key").unwrap(), "test-key");
    assert_eq!(
        request.headers.get("anthropic-version").unwrap(),
        "2023-06-01"
    );
    let body: Value = request.body_json().unwrap();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 1024);
    // Prompt-cache breakpoints on the stable prefix: the last tool, the system prompt and
    // the last block of the conversation.
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are toolgate's agent.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "mcp__docs__search", "description": "Search the docs",
                "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "deploy web"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking status."},
                {"type": "tool_use", "id": "toolu_1", "name": "mcp__deploy__status", "input": {"service": "web"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "server not connected", "is_error": true,
                 "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
    let breakpoints = body.to_string().matches("cache_control").count();
    assert_eq!(breakpoints, 3, "the API allows at most 4: {body}");
}

/// Chat Completions chunks as `data:` lines, the way OpenAI, vLLM and Ollama send them.
fn openai_chunks(chunks: &[Value]) -> String {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

fn openai_turn_body() -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test",
               "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    };
    openai_chunks(&[
        chunk(json!({"role":"assistant","content":""}), Value::Null),
        chunk(json!({"content":"Let me look"}), Value::Null),
        chunk(json!({"content":" that up."}), Value::Null),
        chunk(
            json!({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"mcp__docs__search","arguments":""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"que"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls":[{"index":0,"function":{"arguments":"ry\": \"deploy\"}"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"mcp__docs__get_version","arguments":""}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test",
               "choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}),
    ])
}

#[tokio::test]
async fn openai_full_turn_with_text_and_streamed_tool_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse_response(openai_turn_body()))
        .mount(&server)
        .await;
    let provider = openai_at(
        &format!("{}/v1", server.uri()),
        Some("sk-test"),
        fast_retry(3),
    );
    assert_eq!(
        provider.label(),
        format!(
            "openai-compatible gpt-test @ {}",
            server.uri().trim_start_matches("http://")
        )
    );

    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Let me look".into()),
            StreamEvent::TextDelta(" that up.".into()),
            StreamEvent::ToolUseStarted {
                id: "call_a".into(),
                name: "mcp__docs__search".into()
            },
            StreamEvent::ToolUseStarted {
                id: "call_b".into(),
                name: "mcp__docs__get_version".into()
            },
            StreamEvent::ToolUse {
                id: "call_a".into(),
                name: "mcp__docs__search".into(),
                input: json!({"query": "deploy"})
            },
            StreamEvent::ToolUse {
                id: "call_b".into(),
                name: "mcp__docs__get_version".into(),
                input: json!({})
            },
            StreamEvent::Usage(Usage {
                input_tokens: 50,
                output_tokens: 20,
                ..Default::default()
            }),
            StreamEvent::Stop(StopReason::ToolUse),
        ]
    );

    let requests = server.received_requests().await.expect("recording on");
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        "Bearer sk-test"
    );
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "mcp__docs__search", "description": "Search the docs",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are toolgate's agent."},
            {"role": "user", "content": "deploy web"},
            {"role": "assistant", "content": "Checking status.", "tool_calls": [
                {"id": "toolu_1", "type": "function",
                 "function": {"name": "mcp__deploy__status", "arguments": "{\"service\":\"web\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "Error: server not connected"}
        ])
    );
}

#[tokio::test]
async fn openai_compatible_local_server_gets_no_authorization_header() {
    let server = MockServer::start().await;
    let body = openai_chunks(&[
        json!({"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1", server.uri()), None, fast_retry(1));
    let (events, error) = collect(
        provider.as_ref(),
        ModelRequest {
            system: String::new(),
            messages: vec![Message::user_text("hello")],
            tools: vec![],
            max_tokens: 0,
            sampling: Default::default(),
        },
    )
    .await;
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("hi".into()),
            StreamEvent::Stop(StopReason::EndTurn)
        ]
    );
    let requests = server.received_requests().await.unwrap();
    assert!(requests[0].headers.get("authorization").is_none());
    let body: Value = requests[0].body_json().unwrap();
    assert!(body.get("tools").is_none(), "no empty tools list: {body}");
}

#[tokio::test]
async fn anthropic_529_then_success_is_retried_honouring_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(529)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_response(anthropic_turn_body()))
        .with_priority(2)
        .mount(&server)
        .await;
    // A base delay of an hour: only `retry-after: 0` lets this test finish in time.
    let retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_secs(3600),
        max_delay: Duration::from_secs(3600),
        ..RetryPolicy::default()
    };
    let provider = anthropic_at(&server.uri(), retry);
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(error, None);
    let StreamEvent::Retrying(notice) = &events[0] else {
        panic!("the retry is announced first: {events:?}");
    };
    assert_eq!(
        (
            notice.attempt,
            notice.max_attempts,
            notice.wait,
            notice.reason
        ),
        (2, 4, Duration::ZERO, RetryReason::Overloaded)
    );
    assert_eq!(notice.detail, "HTTP 529: Overloaded");
    assert_eq!(events[1..], expected_anthropic_turn());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn openai_429_storm_gives_up_with_a_clear_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).set_body_json(
            json!({"error":{"message":"Rate limit reached for gpt-test","type":"requests"}}),
        ))
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1", server.uri()), Some("sk"), fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        retries(&events),
        [(2, RetryReason::RateLimited), (3, RetryReason::RateLimited)]
    );
    assert!(after_last_retry(&events).is_empty());
    let error = error.expect("an error");
    assert!(matches!(error, ModelError::Unavailable { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "openai: gave up after 3 attempts (at most 3 attempts within 60s); last error: HTTP 429: Rate limit reached for gpt-test"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn anthropic_401_is_a_clean_error_with_the_apis_message_and_no_retry() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}),
        ))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(4));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert!(events.is_empty());
    assert_eq!(
        error,
        Some(ModelError::Api {
            provider: "anthropic".into(),
            status: 401,
            message: "invalid x-api-key".into()
        })
    );
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic API error 401: invalid x-api-key"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn openai_400_shows_the_apis_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error":{"message":"model 'nope' not found, try pulling it first"}}),
        ))
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1", server.uri()), None, fast_retry(4));
    let (_, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        error.unwrap().to_string(),
        "openai API error 400: model 'nope' not found, try pulling it first"
    );
}

#[tokio::test]
async fn anthropic_stream_without_message_stop_is_retried_then_reported() {
    let full = anthropic_turn_body();
    // Cut after the first text delta, at an event boundary.
    let cut_at = full.find("event: content_block_delta").unwrap();
    let cut_at = cut_at + full[cut_at..].find("\n\n").unwrap() + 2;
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(full[..cut_at].to_string()))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    // Each attempt shows its text; each cut voids it and sends the request again.
    assert_eq!(
        retries(&events),
        [(2, RetryReason::Cut), (3, RetryReason::Cut)]
    );
    assert_eq!(
        after_last_retry(&events),
        vec![StreamEvent::TextDelta("Let me look".into())]
    );
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic: gave up after 3 attempts (at most 3 attempts within 60s); last error: stream ended before message_stop"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn openai_stream_without_finish_is_retried_then_reported() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half a\"},\"finish_reason\":null}]}\n\n";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(body.to_string()))
        .mount(&server)
        .await;
    let provider = openai_at(&format!("{}/v1", server.uri()), None, fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        retries(&events),
        [(2, RetryReason::Cut), (3, RetryReason::Cut)]
    );
    assert_eq!(
        after_last_retry(&events),
        vec![StreamEvent::TextDelta("Half a".into())]
    );
    let error = error.unwrap();
    assert!(matches!(error, ModelError::Unavailable { .. }), "{error:?}");
    assert!(error.to_string().contains("stream ended before"), "{error}");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

/// Accepts one connection and reads the request (headers and its small JSON body).
async fn accept_request(listener: &tokio::net::TcpListener) -> tokio::net::TcpStream {
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut seen = Vec::new();
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        seen.extend_from_slice(&buf[..n]);
        if n == 0 || (seen.windows(4).any(|w| w == b"\r\n\r\n") && seen.ends_with(b"}")) {
            return socket;
        }
    }
}

fn http_chunk(data: &str) -> String {
    format!("{:x}\r\n{data}\r\n", data.len())
}

/// The first text reaches the caller while the server still holds back the rest of the
/// message: the provider streams, it does not buffer the response.
#[tokio::test]
async fn anthropic_text_arrives_before_the_response_is_complete() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let full = anthropic_turn_body();
    let split = full.find("event: content_block_delta").unwrap();
    let split = split + full[split..].find("\n\n").unwrap() + 2;
    let (first, rest) = (full[..split].to_string(), full[split..].to_string());
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let mut socket = accept_request(&listener).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        socket
            .write_all(http_chunk(&first).as_bytes())
            .await
            .unwrap();
        socket.flush().await.unwrap();
        // Hold the rest until the client has shown the first text.
        release_rx.await.unwrap();
        socket
            .write_all(http_chunk(&rest).as_bytes())
            .await
            .unwrap();
        socket.write_all(b"0\r\n\r\n").await.unwrap();
        socket.flush().await.unwrap();
    });
    let provider = anthropic_at(&format!("http://{addr}"), fast_retry(1));
    let mut stream = provider.stream(request_after_tool_round());
    let first_event = tokio::time::timeout(TIMEOUT, stream.next())
        .await
        .expect("first event within the timeout")
        .expect("an item")
        .expect("no error");
    assert_eq!(first_event, StreamEvent::TextDelta("Let me look".into()));
    release_tx.send(()).unwrap();
    let mut events = vec![first_event];
    while let Some(item) = tokio::time::timeout(TIMEOUT, stream.next()).await.unwrap() {
        events.push(item.unwrap());
    }
    assert_eq!(events, expected_anthropic_turn());
    server.await.unwrap();
}

/// A server that promises a long body, sends part of it and closes the socket.
#[tokio::test]
async fn connection_cut_mid_body_with_no_retry_left_is_reported() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let partial = anthropic_turn_body();
    let partial = partial[..partial.find("event: content_block_stop").unwrap()].to_string();
    let server = tokio::spawn(async move {
        let mut socket = accept_request(&listener).await;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
            partial.len() + 10_000
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(partial.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        drop(socket);
    });
    // One attempt only: the cut is the final error (stream_cuts retries it).
    let provider = anthropic_at(&format!("http://{addr}"), fast_retry(1));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Let me look".into()),
            StreamEvent::TextDelta(" that up.".into())
        ]
    );
    let error = error.unwrap();
    assert!(matches!(error, ModelError::Unavailable { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with(
            "anthropic: gave up after 1 attempt (at most 1 attempt within 60s); last error: connection lost mid-response"
        ),
        "{error}"
    );
    server.await.unwrap();
}

#[tokio::test]
async fn malformed_sse_data_is_a_clear_error() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\nevent: content_block_delta\ndata: {not json at all\n\n";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(body.to_string()))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert!(events.is_empty());
    let message = error.unwrap().to_string();
    assert!(
        message.starts_with(
            "anthropic stream broken: malformed SSE data in 'content_block_delta' event"
        ),
        "{message}"
    );
    assert!(message.contains("{not json at all"), "{message}");

    let openai = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response("data: {\"choices\": [\n\n".to_string()))
        .mount(&openai)
        .await;
    let provider = openai_at(&format!("{}/v1", openai.uri()), None, fast_retry(3));
    let (_, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    let message = error.unwrap().to_string();
    assert!(
        message.starts_with("openai stream broken: malformed SSE data"),
        "{message}"
    );
}

fn overloaded_event() -> (&'static str, Value) {
    (
        "error",
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    )
}

#[tokio::test]
async fn anthropic_overloaded_event_before_any_content_is_retried() {
    let message_start = (
        "message_start",
        json!({"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":0}}}),
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(sse(&[
            message_start.clone(),
            overloaded_event(),
        ])))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_response(anthropic_turn_body()))
        .with_priority(2)
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(error, None);
    assert_eq!(retries(&events), [(2, RetryReason::Overloaded)]);
    assert_eq!(after_last_retry(&events), expected_anthropic_turn());
    assert_eq!(server.received_requests().await.unwrap().len(), 2);

    // Always overloaded: the budget runs out with the API's words in the error.
    let storm = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(sse(&[message_start, overloaded_event()])))
        .mount(&storm)
        .await;
    let provider = anthropic_at(&storm.uri(), fast_retry(3));
    let (_, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic: gave up after 3 attempts (at most 3 attempts within 60s); last error: overloaded_error during the response: Overloaded"
    );
    assert_eq!(storm.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn anthropic_error_event_after_text_starts_the_reply_over() {
    let body = sse(&[
        (
            "message_start",
            json!({"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":0}}}),
        ),
        (
            "content_block_start",
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Starting"}}),
        ),
        overloaded_event(),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(body))
        .mount(&server)
        .await;
    let provider = anthropic_at(&server.uri(), fast_retry(3));
    let (events, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    assert_eq!(
        retries(&events),
        [(2, RetryReason::Overloaded), (3, RetryReason::Overloaded)]
    );
    assert_eq!(
        after_last_retry(&events),
        vec![StreamEvent::TextDelta("Starting".into())]
    );
    assert_eq!(
        error.unwrap().to_string(),
        "anthropic: gave up after 3 attempts (at most 3 attempts within 60s); last error: overloaded_error during the response: Overloaded"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn refused_connections_are_retried_then_reported() {
    // Bind and drop to get a port nobody listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = anthropic_at(&format!("http://127.0.0.1:{port}"), fast_retry(2));
    let (_, error) = collect(provider.as_ref(), request_after_tool_round()).await;
    let message = error.unwrap().to_string();
    assert!(
        message.starts_with(
            "anthropic: gave up after 2 attempts (at most 2 attempts within 60s); last error: connection failed"
        ),
        "{message}"
    );
}

mod resilience;
mod scripted;
