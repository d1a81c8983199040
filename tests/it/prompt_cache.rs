//! Prompt caching on the wire: a scripted 30-turn session with 10 MCP servers (the Python
//! fixture as child processes) through the real agent and the real Anthropic provider,
//! against a mock Messages API on 127.0.0.1 that simulates Anthropic's prompt cache from
//! the `cache_control` breakpoints it receives and reports the cache figures in `usage`.
//!
//! Printed: the share of input tokens a prompt cache serves, for the requests as sent now
//! (breakpoints) and for the same requests without breakpoints (before: nothing is cached),
//! plus what an automatic prefix cache could serve at most, with and without `search_tools`
//! and, for the deferred run, with the loaded tools placed in pool order instead of at the end.
//! `cargo test --test prompt_cache -- --nocapture` shows the table.

use crate::support::fixture_server;

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use toolgate::agent::{self, AgentConfig};
use toolgate::model::{ProviderOptions, RetryPolicy, Usage, select};
use toolgate::policy::{PersonAnswer, Policy};
use toolgate::protocol::Event;
use toolgate::protocol::questions::HostRequest;
use toolgate::protocol::{AgentEvent, UiCommand};
use toolgate::settings::{SearchMode, SearchSettings};

const SERVERS: usize = 10;
const TURNS: usize = 30;
/// Anthropic caches no prefix shorter than this (Sonnet-class models).
const MIN_CACHEABLE_TOKENS: usize = 1024;
/// How far before a breakpoint the API looks for an earlier cached prefix.
const LOOKBACK_BLOCKS: usize = 20;

/// A request as the cache sees it: blocks in prefix order (tools, system, messages), each
/// with its estimated tokens, the hash of the prefix ending with it, and its breakpoint.
struct Blocks {
    tokens: Vec<usize>,
    prefix_hash: Vec<u64>,
    breakpoint: Vec<bool>,
}

fn blocks(body: &Value) -> Blocks {
    let mut items: Vec<(String, bool)> = Vec::new();
    let mut push = |role: &str, block: &Value| {
        let mut block = block.clone();
        let marked = block
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        items.push((format!("{role}{block}"), marked));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push("tool", tool);
    }
    match &body["system"] {
        Value::String(text) => push("system", &json!({"type": "text", "text": text})),
        Value::Array(parts) => parts.iter().for_each(|p| push("system", p)),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("");
        match &message["content"] {
            Value::String(text) => push(role, &json!({"type": "text", "text": text})),
            Value::Array(parts) => parts.iter().for_each(|p| push(role, p)),
            _ => {}
        }
    }
    let mut hasher = DefaultHasher::new();
    let mut out = Blocks {
        tokens: Vec::new(),
        prefix_hash: Vec::new(),
        breakpoint: Vec::new(),
    };
    for (text, marked) in items {
        text.hash(&mut hasher);
        out.tokens.push(toolgate::tokens::estimate(&text));
        out.prefix_hash.push(hasher.finish());
        out.breakpoint.push(marked);
    }
    out
}

/// Anthropic's prompt cache, simplified: a breakpoint writes the prefix ending there (if
/// long enough); a request reads the longest written prefix that ends at one of its block
/// boundaries within the lookback window of one of its breakpoints. No expiry (the
/// session takes seconds).
#[derive(Default)]
struct CacheSim {
    written: HashSet<u64>,
    /// Every prefix seen, for the automatic-prefix bound.
    seen: HashSet<u64>,
}

#[derive(Default, Clone, Copy, Debug)]
struct Served {
    total: usize,
    read: usize,
    written: usize,
    /// What a cache of every earlier request's every prefix could serve (no breakpoints).
    automatic: usize,
}

impl CacheSim {
    fn serve(&mut self, body: &Value) -> Served {
        let b = blocks(body);
        let prefix_tokens: Vec<usize> = b
            .tokens
            .iter()
            .scan(0, |sum, t| {
                *sum += t;
                Some(*sum)
            })
            .collect();
        let total = prefix_tokens.last().copied().unwrap_or(0);
        let mut read = 0;
        for (at, _) in b.breakpoint.iter().enumerate().filter(|(_, m)| **m) {
            let from = at.saturating_sub(LOOKBACK_BLOCKS - 1);
            if let Some(hit) = (from..=at)
                .rev()
                .find(|&j| self.written.contains(&b.prefix_hash[j]))
            {
                read = read.max(prefix_tokens[hit]);
            }
        }
        let mut written_to = read;
        for (at, _) in b.breakpoint.iter().enumerate().filter(|(_, m)| **m) {
            if prefix_tokens[at] >= MIN_CACHEABLE_TOKENS && self.written.insert(b.prefix_hash[at]) {
                written_to = written_to.max(prefix_tokens[at]);
            }
        }
        let automatic = (0..b.prefix_hash.len())
            .rev()
            .find(|&j| self.seen.contains(&b.prefix_hash[j]))
            .map_or(0, |j| prefix_tokens[j]);
        self.seen.extend(b.prefix_hash.iter().copied());
        Served {
            total,
            read,
            written: written_to - read,
            automatic,
        }
    }
}

fn share(part: usize, whole: usize) -> f64 {
    part as f64 / whole.max(1) as f64
}

/// The scripted model behind the mock API: turn 1 connects every server; each later turn
/// calls one tool and then answers. A tool that is not in the request's tools is found with
/// `search_tools` first (by its name), as a model would.
struct MockApi {
    working_set: usize,
    cache: Mutex<CacheSim>,
    bodies: Arc<Mutex<Vec<Value>>>,
}

/// The tool turn `turn` needs: one of `working_set` tools, in turn; with a working set of
/// 70 (every task tool of every server) each turn needs another tool.
fn tool_for(turn: usize, working_set: usize) -> String {
    let pick = turn % working_set;
    format!("mcp__s{}__task_{}", pick % SERVERS, pick / SERVERS % 7)
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

impl MockApi {
    fn reply(&self, body: &Value) -> Vec<Value> {
        let messages = body["messages"].as_array().unwrap();
        let turn = messages
            .iter()
            .filter(|m| m["role"] == "user" && m["content"][0]["type"] == "text")
            .count();
        let last = messages.last().unwrap();
        let last_result = last["content"]
            .as_array()
            .and_then(|c| c.iter().rev().find(|b| b["type"] == "tool_result"))
            .and_then(|b| b["tool_use_id"].as_str())
            .unwrap_or("");
        let text = |t: String| vec![json!({"type": "text", "text": t})];
        if turn == 1 {
            return if last_result.is_empty() {
                (0..SERVERS)
                    .map(|i| {
                        tool_use(
                            &format!("c{i}"),
                            "connect_mcp",
                            json!({"name": format!("s{i}")}),
                        )
                    })
                    .collect()
            } else {
                text("All ten servers are connected.".into())
            };
        }
        let name = tool_for(turn, self.working_set);
        let offered = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == name.as_str()));
        if last_result.is_empty() {
            if !offered {
                vec![tool_use(
                    &format!("s{turn}"),
                    "search_tools",
                    json!({"query": name}),
                )]
            } else {
                vec![tool_use(&format!("t{turn}"), &name, json!({}))]
            }
        } else if last_result.starts_with('s') {
            vec![tool_use(&format!("t{turn}"), &name, json!({}))]
        } else {
            text(format!("Turn {turn}: {name} answered."))
        }
    }
}

fn sse(blocks: &[Value], usage: Served) -> String {
    let uncached = usage.total - usage.read - usage.written;
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-test",
        "usage": {"input_tokens": uncached, "cache_read_input_tokens": usage.read,
                  "cache_creation_input_tokens": usage.written, "output_tokens": 1}}})];
    let mut tool = false;
    for (index, block) in blocks.iter().enumerate() {
        tool |= block["type"] == "tool_use";
        events.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    let stop = if tool { "tool_use" } else { "end_turn" };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 20}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

impl Respond for MockApi {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let served = self.cache.lock().unwrap().serve(&body);
        let reply = self.reply(&body);
        self.bodies.lock().unwrap().push(body);
        ResponseTemplate::new(200).set_body_raw(sse(&reply, served), "text/event-stream")
    }
}

fn servers() -> Vec<toolgate::settings::ServerConfig> {
    // Each server: 7 task tools it answers, and 8 more with a typical schema (~120 tokens).
    let schema = json!({"type": "object", "properties": {
        "repository": {"type": "string", "description": "owner/name of the repository"},
        "query": {"type": "string", "description": "what to look for, in the service's search syntax"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "how many results"},
        "cursor": {"type": "string", "description": "the page to continue from"}},
        "required": ["repository"]})
    .to_string();
    let tasks =
        serde_json::to_string(&(0..7).map(|i| format!("task_{i}")).collect::<Vec<_>>()).unwrap();
    (0..SERVERS)
        .map(|i| {
            fixture_server::fixture(
                &format!("s{i}"),
                &[
                    ("FIXTURE_TOOLS", "[]"),
                    ("FIXTURE_ECHO_TOOLS", &tasks),
                    ("FIXTURE_TOOL_COUNT", "8"),
                    ("FIXTURE_SCHEMA", &schema),
                ],
            )
        })
        .collect()
}

/// Runs the session; returns the request bodies and the usage the agent summed up.
async fn session(deferred: bool, working_set: usize) -> (Vec<Value>, Usage) {
    let api = MockServer::start().await;
    let bodies = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(MockApi {
            working_set,
            cache: Mutex::default(),
            bodies: bodies.clone(),
        })
        .mount(&api)
        .await;
    let model = select(&ProviderOptions {
        provider_flag: Some("anthropic".into()),
        anthropic_api_key: Some("test-key".into()),
        anthropic_base_url: Some(api.uri()),
        model: Some("claude-test".into()),
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        },
        ..Default::default()
    })
    .unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (hub, hub_rx) = fixture_server::hub_with(servers());
    let mut config = AgentConfig::new(
        model,
        hub,
        hub_rx,
        Policy::default(),
        workspace.path().to_path_buf(),
    );
    config.sessions_dir = None;
    config.checkpoints_dir = None;
    config.tool_search = SearchSettings {
        mode: if deferred {
            SearchMode::On
        } else {
            SearchMode::Off
        },
        ..SearchSettings::default()
    };
    let mut handle = agent::spawn(config);
    let mut usage = Usage::default();
    for turn in 1..=TURNS {
        handle
            .commands
            .send(UiCommand::Submit(format!("task {turn}")))
            .await
            .unwrap();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(30), handle.events.recv())
                .await
                .expect("agent event within the wait")
                .expect("agent still running");
            match event {
                AgentEvent::Request(HostRequest::ToolCall(r)) => {
                    assert!(r.answer(PersonAnswer::AllowOnce));
                }
                AgentEvent::Fact(Event::Error { message: e }) => panic!("turn {turn}: {e}"),
                AgentEvent::Fact(Event::TurnFinished {
                    usage: turn_usage, ..
                }) => {
                    usage.add(&turn_usage);
                    break;
                }
                _ => {}
            }
        }
    }
    let _ = handle.commands.send(UiCommand::Shutdown).await;
    let bodies = bodies.lock().unwrap().clone();
    (bodies, usage)
}

/// The same bodies with every `cache_control` removed: the requests as sent before.
fn without_breakpoints(body: &Value) -> Value {
    let mut body = body.clone();
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("cache_control");
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut body);
    body
}

/// The tools of a body in pool order (by server, then as listed) with the breakpoint on the
/// last one: where loaded tools would sit if they were not appended.
fn in_pool_order(body: &Value) -> Value {
    let mut body = without_breakpoints(body);
    if let Some(tools) = body["tools"].as_array_mut() {
        let builtin = |t: &Value| !t["name"].as_str().unwrap_or("").starts_with("mcp__");
        let mut mcp: Vec<Value> = tools.iter().filter(|t| !builtin(t)).cloned().collect();
        mcp.sort_by_key(|t| {
            let name = t["name"].as_str().unwrap_or("").to_string();
            let server: usize = name[6..]
                .split("__")
                .next()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            (server, name)
        });
        let mut ordered: Vec<Value> = tools.iter().filter(|t| builtin(t)).cloned().collect();
        ordered.extend(mcp);
        if let Some(last) = ordered.last_mut() {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        *tools = ordered;
    }
    if let Some(system) = body["system"].as_array_mut().and_then(|s| s.last_mut()) {
        system["cache_control"] = json!({"type": "ephemeral"});
    }
    if let Some(block) = body["messages"]
        .as_array_mut()
        .and_then(|m| m.last_mut())
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    body
}

fn replay(bodies: &[Value], transform: impl Fn(&Value) -> Value) -> Served {
    let mut cache = CacheSim::default();
    bodies.iter().fold(Served::default(), |sum, body| {
        let s = cache.serve(&transform(body));
        Served {
            total: sum.total + s.total,
            read: sum.read + s.read,
            written: sum.written + s.written,
            automatic: sum.automatic + s.automatic,
        }
    })
}

/// Input tokens as billed relative to uncached ones: cache reads cost 0.1, writes 1.25.
fn billed(s: &Served) -> f64 {
    (s.total - s.read - s.written) as f64 + 0.1 * s.read as f64 + 1.25 * s.written as f64
}

fn row(label: &str, requests: usize, s: &Served) {
    println!(
        "{:<52} {:>8} {:>10} {:>8.1}% {:>9.1}% {:>10.0}",
        label,
        requests,
        s.total,
        100.0 * share(s.read, s.total),
        100.0 * share(s.automatic, s.total),
        billed(s),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_turn_session_with_10_servers_is_mostly_served_from_the_prompt_cache() {
    println!(
        "{:<52} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "30 turns, 10 servers, 150 tools", "requests", "input tok", "cached", "automatic", "billed"
    );
    // (search_tools, tools the session uses, floor for the cached share)
    for (deferred, working_set, floor) in [(false, 8, 0.9), (true, 8, 0.8), (true, 70, 0.6)] {
        let (bodies, usage) = session(deferred, working_set).await;
        let label = match (deferred, working_set) {
            (false, _) => "search off, 8 tools used".to_string(),
            (true, 70) => "search on, a new tool every turn".to_string(),
            (true, n) => format!("search on, {n} tools used"),
        };
        let now = replay(&bodies, Value::clone);
        let before = replay(&bodies, without_breakpoints);
        row(
            &format!("{label}: before (no breakpoints)"),
            bodies.len(),
            &before,
        );
        row(&format!("{label}: after (breakpoints)"), bodies.len(), &now);
        // What the agent reported (the status line's and the JSONL's figures) is what the
        // API said about the requests as sent.
        assert_eq!(usage.cache_read_input_tokens as usize, now.read);
        assert_eq!(usage.cache_creation_input_tokens as usize, now.written);
        assert_eq!(
            (usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens)
                as usize,
            now.total
        );
        assert_eq!(before.read, 0, "no breakpoints, nothing cached");
        // That baseline is empty by construction; what makes the difference is that the
        // requests as sent carry breakpoints, every one of them.
        for (i, body) in bodies.iter().enumerate() {
            assert!(
                body.to_string().contains("\"cache_control\""),
                "{label}: request {i} has no cache breakpoint"
            );
        }
        assert!(
            now.read > before.read,
            "{label}: the breakpoints are what is served"
        );
        assert!(
            share(now.read, now.total) > floor,
            "{label}: only {:.3} served from the cache",
            share(now.read, now.total)
        );
        if deferred {
            let pool_order = replay(&bodies, in_pool_order);
            row(
                &format!("{label}: loaded tools in pool order"),
                bodies.len(),
                &pool_order,
            );
            assert!(
                pool_order.read < now.read,
                "appending keeps more of the prefix"
            );
        }
    }
}
