//! Rich MCP content and task tools end to end: the real binary (`toolgate -p`) connects the
//! fixture server (tests/fixtures/fixture_server.py), whose tools return an image, an image
//! type the model APIs refuse, audio, embedded resources (text, image blob, PDF blob), a
//! resource link and a structuredContent-only result, and whose `task_job` must run as an
//! MCP task; mock Anthropic and OpenAI servers on 127.0.0.1 script the model and record
//! what reaches them on the wire.

use crate::support::fixture_server::fixture_file;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const RICH_TOOLS: [&str; 6] = [
    "rich_image",
    "rich_svg",
    "rich_audio",
    "rich_resource",
    "rich_link",
    "rich_structured",
];

/// What each rich tool's result reads as for the model, besides its images.
fn expected_text(tool: &str) -> &'static str {
    match tool {
        "rich_image" => "",
        "rich_svg" => {
            "a drawing\n[image image/svg+xml (6 bytes) not shown: model APIs take png, jpeg, gif and webp]"
        }
        "rich_audio" => {
            "a recording\n[audio audio/wav (12 bytes) not shown: the model takes no audio]"
        }
        "rich_resource" => {
            "[resource file:///notes.txt (text/plain)]\nremember the milk\n\
             [resource file:///dot.png (image/png): the image follows]\n\
             [binary resource file:///report.pdf (application/pdf, 9 bytes) not shown]"
        }
        "rich_link" => {
            "[resource link file:///big.log (name: big.log, type: text/plain, 1048576 bytes, description: the full build log)]"
        }
        "rich_structured" => r#"{"temperature":21.5,"unit":"C"}"#,
        other => panic!("no expectation for {other}"),
    }
}

fn has_image(tool: &str) -> bool {
    matches!(tool, "rich_image" | "rich_resource")
}

struct Case {
    dir: tempfile::TempDir,
    ws: PathBuf,
}

impl Case {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let script = fixture_file("fixture_server.py");
        let config = json!({"mcpServers": {"fx": {
            "command": "python3",
            "args": [script],
            "env": {"FIXTURE_TOOLS": serde_json::to_string(
                &RICH_TOOLS.iter().chain(&["task_job"]).collect::<Vec<_>>()
            ).unwrap()},
        }}});
        std::fs::write(ws.join(".mcp.json"), config.to_string()).unwrap();
        Case { dir, ws }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args)
            .args([
                "--trust-project",
                "--allow",
                "mcp__fx",
                "--output-format",
                "jsonl",
            ])
            .current_dir(&self.ws)
            .env("TOOLGATE_STATE_DIR", self.state())
            .env("TOOLGATE_CONFIG_DIR", self.dir.path().join("config"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("TOOLGATE_OPENAI_IMAGES");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "toolgate failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// Answers the model calls in order with the given bodies (the last one repeats).
struct Script {
    bodies: Vec<ResponseTemplate>,
    next: Arc<AtomicUsize>,
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        self.bodies[i.min(self.bodies.len() - 1)].clone()
    }
}

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn anthropic_reply(blocks: &[Value], stop: &str) -> ResponseTemplate {
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg","type":"message",
        "role":"assistant","content":[],"model":"claude-test","stop_reason":null,
        "usage":{"input_tokens":10,"output_tokens":1}}}),
    ];
    for (i, block) in blocks.iter().enumerate() {
        events.push(json!({"type":"content_block_start","index":i,"content_block":block}));
        events.push(json!({"type":"content_block_stop","index":i}));
    }
    events.push(
        json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":5}}),
    );
    events.push(json!({"type":"message_stop"}));
    sse_response(anthropic_sse(&events))
}

fn anthropic_tool_uses(calls: &[(&str, &str, Value)]) -> ResponseTemplate {
    let blocks: Vec<Value> = calls
        .iter()
        .map(|(id, name, input)| json!({"type":"tool_use","id":id,"name":name,"input":input}))
        .collect();
    anthropic_reply(&blocks, "tool_use")
}

fn anthropic_text(text: &str) -> ResponseTemplate {
    anthropic_reply(&[json!({"type":"text","text":text})], "end_turn")
}

fn rich_calls() -> Vec<(String, String, Value)> {
    RICH_TOOLS
        .iter()
        .map(|t| (format!("call_{t}"), format!("mcp__fx__{t}"), json!({})))
        .collect()
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

fn anthropic_image() -> Value {
    json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":PNG}})
}

/// The tool_result blocks of the last user message of a Messages API request.
fn anthropic_results(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

fn check_anthropic_results(results: &[Value]) {
    assert_eq!(results.len(), RICH_TOOLS.len(), "{results:#?}");
    for (tool, result) in RICH_TOOLS.iter().zip(results) {
        assert_eq!(result["tool_use_id"], format!("call_{tool}"));
        assert_eq!(result["is_error"], false, "{tool}: {result}");
        let text = expected_text(tool);
        let expected = if has_image(tool) {
            let mut parts = Vec::new();
            if !text.is_empty() {
                parts.push(json!({"type": "text", "text": text}));
            }
            parts.push(anthropic_image());
            json!(parts)
        } else {
            json!(text)
        };
        assert_eq!(result["content"], expected, "{tool}");
    }
}

fn session_log(state: &Path) -> String {
    let dir = state.join("sessions");
    let log = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    std::fs::read_to_string(log).unwrap()
}

#[tokio::test]
async fn anthropic_gets_images_as_image_blocks_and_the_rest_as_text_also_after_resume() {
    let case = Case::new();
    let server = MockServer::start().await;
    let calls = rich_calls();
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, name, input)| (id.as_str(), name.as_str(), input.clone()))
        .collect();
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Script {
            bodies: vec![
                anthropic_tool_uses(&[("call_connect", "connect_mcp", json!({"server": "fx"}))]),
                anthropic_tool_uses(&calls),
                anthropic_text("I saw a dot."),
            ],
            next: Arc::default(),
        })
        .mount(&server)
        .await;
    let uri = server.uri();
    let env = [
        ("ANTHROPIC_API_KEY", "test-key"),
        ("ANTHROPIC_BASE_URL", uri.as_str()),
    ];
    let out = case.run(&["-p", "show me", "--provider", "anthropic"], &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("I saw a dot."), "{stdout}");
    // The script sees that the image call returned an image, not its data.
    let image_line: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "tool_images")
        .expect("a tool_images line");
    assert_eq!(image_line["call_id"], "call_rich_image", "{image_line}");
    assert_eq!(
        image_line["images"][0]["media_type"], "image/png",
        "{image_line}"
    );
    assert!(!stdout.contains(PNG), "the JSONL carries image data");
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 3, "{sent:#?}");
    check_anthropic_results(&anthropic_results(&sent[2]));

    // The log names the image's file instead of carrying it; a resumed session sends it
    // again, as an image.
    let log = session_log(&case.state());
    assert!(!log.contains(PNG), "the session log carries image data");
    assert!(log.contains(r#""file":""#), "{log}");
    server.reset().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(anthropic_text("Still a dot."))
        .mount(&server)
        .await;
    let out = case.run(
        &["-p", "and now?", "--continue", "--provider", "anthropic"],
        &env,
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Still a dot."));
    let sent = bodies(&server).await;
    let messages = sent[0]["messages"].as_array().unwrap();
    let results_message = messages
        .iter()
        .find(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["tool_use_id"] == "call_rich_image"))
        })
        .expect("the rich results are in the resumed conversation");
    let results: Vec<Value> = results_message["content"].as_array().unwrap().clone();
    check_anthropic_results(&results);
}

fn openai_reply(delta: Value, finish: &str) -> ResponseTemplate {
    let chunk = |delta: Value, finish: Value| {
        json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-test",
               "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    };
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(delta, Value::Null),
        chunk(json!({}), json!(finish))
    );
    sse_response(body)
}

fn openai_tool_calls(calls: &[(String, String, Value)]) -> ResponseTemplate {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, input))| {
            json!({"index": i, "id": id, "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    openai_reply(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

/// A text-only model behind an OpenAI-compatible server: image parts get a 400, as vLLM
/// and llama.cpp answer them; everything else follows the script.
struct TextOnlyModel {
    script: Script,
}

impl Respond for TextOnlyModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if String::from_utf8_lossy(&request.body).contains("image_url") {
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "Invalid content type: image_url is only supported by multimodal models",
                "type": "invalid_request_error",
            }}));
        }
        self.script.respond(request)
    }
}

fn placeholder(bytes_base64: usize) -> String {
    format!(
        "[image image/png ({bytes_base64} bytes base64) not shown: this model endpoint takes no images]"
    )
}

#[tokio::test]
async fn openai_compatible_gets_image_parts_and_falls_back_to_text_when_refused() {
    let case = Case::new();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(TextOnlyModel {
            script: Script {
                bodies: vec![
                    openai_tool_calls(&[(
                        "call_connect".into(),
                        "connect_mcp".into(),
                        json!({"server": "fx"}),
                    )]),
                    openai_tool_calls(&rich_calls()),
                    openai_reply(json!({"content": "I was told of a dot."}), "stop"),
                ],
                next: Arc::default(),
            },
        })
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    let out = case.run(
        &["-p", "show me", "--provider", "openai"],
        &[("OPENAI_API_KEY", "test-key"), ("OPENAI_BASE_URL", &base)],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("I was told of a dot."));
    let sent = bodies(&server).await;
    assert_eq!(
        sent.len(),
        4,
        "connect, rich calls, refused images, retry: {sent:#?}"
    );

    // First the images went as image parts in a user message after the tool messages.
    let with_images = sent[2]["messages"].as_array().unwrap();
    let image_message = with_images.last().unwrap();
    assert_eq!(image_message["role"], "user");
    let url = format!("data:image/png;base64,{PNG}");
    let parts = image_message["content"].as_array().unwrap();
    let image_urls: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "image_url")
        .map(|p| &p["image_url"]["url"])
        .collect();
    assert_eq!(image_urls, vec![&json!(url), &json!(url)], "{parts:#?}");
    assert!(parts.contains(
        &json!({"type": "text", "text": "Images returned by tool call call_rich_image:"})
    ));

    // After the 400 the same conversation went again, the images as placeholder text.
    let retried = sent[3]["messages"].as_array().unwrap();
    assert!(!sent[3].to_string().contains("image_url"));
    let tool_messages: Vec<&Value> = retried.iter().filter(|m| m["role"] == "tool").collect();
    let content_of = |id: &str| {
        tool_messages
            .iter()
            .find(|m| m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no tool message for {id}"))["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for tool in RICH_TOOLS {
        let mut expected = expected_text(tool).to_string();
        if has_image(tool) {
            if !expected.is_empty() {
                expected.push('\n');
            }
            expected.push_str(&placeholder(PNG.len()));
        }
        assert_eq!(content_of(&format!("call_{tool}")), expected, "{tool}");
    }
}

/// A task-required tool through the whole agent: called as a task, its status messages
/// reach the front end as progress (`tool_progress` lines), its result reaches the model.
#[tokio::test]
async fn a_task_tool_runs_through_the_agent_with_progress() {
    let case = Case::new();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Script {
            bodies: vec![
                anthropic_tool_uses(&[("call_connect", "connect_mcp", json!({"server": "fx"}))]),
                anthropic_tool_uses(&[(
                    "call_job",
                    "mcp__fx__task_job",
                    json!({"steps": 3, "delay_ms": 150}),
                )]),
                anthropic_text("The job is done."),
            ],
            next: Arc::default(),
        })
        .mount(&server)
        .await;
    let uri = server.uri();
    let out = case.run(
        &["-p", "run the job", "--provider", "anthropic"],
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", &uri),
        ],
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let progress: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress" && e["call_id"] == "call_job")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert_eq!(progress.first(), Some(&"queued"), "{events:#?}");
    assert!(
        progress.iter().any(|m| m.starts_with("step ")),
        "{progress:?}"
    );
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_finished" && e["call_id"] == "call_job")
        .unwrap();
    assert_eq!(finished["outcome"], "ok", "{finished}");
    let sent = bodies(&server).await;
    let results = anthropic_results(&sent[2]);
    assert_eq!(results[0]["content"], "job done after 3 steps");
}
