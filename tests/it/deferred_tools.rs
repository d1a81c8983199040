//! Deferred tools and `search_tools` through the real agent: real MCP servers (the Python
//! fixture as child processes), the real hub and gate, and a model that replays fixed
//! replies and records every request, so the tests see exactly what the model was sent.

use crate::support::fixture_server;
use crate::support::replay_model::{ReplayModel, Requests};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use toolgate::agent::{self, AgentConfig, AgentHandle};
use toolgate::model::{ContentBlock, ModelRequest, StopReason, StreamEvent};
use toolgate::policy::{PersonAnswer, Policy};
use toolgate::protocol::questions::HostRequest;
use toolgate::protocol::{AgentEvent, PoolUpdate, UiCommand};
use toolgate::protocol::{Event, View};
use toolgate::settings::ServerConfig;
use toolgate::settings::{SearchMode, SearchSettings};

fn calls(calls: &[(&str, &str, Value)]) -> Vec<StreamEvent> {
    let mut events: Vec<StreamEvent> = calls
        .iter()
        .map(|(id, name, input)| StreamEvent::ToolUse {
            id: id.to_string(),
            name: name.to_string(),
            input: input.clone(),
        })
        .collect();
    events.push(StreamEvent::Stop(StopReason::ToolUse));
    events
}

fn done() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta("done".into()),
        StreamEvent::Stop(StopReason::EndTurn),
    ]
}

/// A fixture server whose tools answer "called as: <name>".
fn server(name: &str, tools: &[&str], always_load: bool) -> ServerConfig {
    let tools = serde_json::to_string(tools).unwrap();
    let mut config = fixture_server::fixture(
        name,
        &[
            ("FIXTURE_TOOLS", "[\"big\"]"),
            ("FIXTURE_ECHO_TOOLS", &tools),
        ],
    );
    config.always_load = always_load;
    config
}

struct Harness {
    handle: AgentHandle,
    requests: Requests,
    _workspace: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn start(
    servers: Vec<ServerConfig>,
    replies: Vec<Vec<StreamEvent>>,
    adjust: impl FnOnce(&mut AgentConfig),
) -> Harness {
    start_in(tempfile::tempdir().unwrap(), servers, replies, adjust)
}

/// [`start`] with a given state folder (its sessions can be resumed).
fn start_in(
    state: tempfile::TempDir,
    servers: Vec<ServerConfig>,
    replies: Vec<Vec<StreamEvent>>,
    adjust: impl FnOnce(&mut AgentConfig),
) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    let requests: Requests = Arc::default();
    let model = ReplayModel {
        replies: Mutex::new(replies.into()),
        requests: requests.clone(),
    };
    let (hub, hub_rx) = fixture_server::hub_with(servers);
    let mut config = AgentConfig::new(
        Box::new(model),
        hub,
        hub_rx,
        Policy::default(),
        workspace.path().to_path_buf(),
    );
    config.sessions_dir = Some(state.path().join("sessions"));
    config.checkpoints_dir = None;
    adjust(&mut config);
    Harness {
        handle: agent::spawn(config),
        requests,
        _workspace: workspace,
        state,
    }
}

impl Harness {
    /// Runs one turn, allowing every tool call that asks; returns its events.
    async fn turn(&mut self, text: &str) -> Vec<AgentEvent> {
        self.handle
            .commands
            .send(UiCommand::Submit(text.into()))
            .await
            .unwrap();
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(30), self.handle.events.recv())
                .await
                .expect("agent event within the wait")
                .expect("agent still running");
            match event {
                AgentEvent::Request(HostRequest::ToolCall(request)) => {
                    assert!(request.answer(PersonAnswer::AllowOnce));
                }
                AgentEvent::Request(other) => panic!("unexpected question: {other:?}"),
                AgentEvent::Fact(Event::TurnFinished { .. }) => {
                    seen.push(event);
                    return seen;
                }
                other => seen.push(other),
            }
        }
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

/// The tool results the model got back in the request after a tool round, by call id.
fn result_of(request: &ModelRequest, call_id: &str) -> (String, bool) {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } if tool_use_id == call_id => Some((content.clone(), *is_error)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

fn last_deferred(events: &[AgentEvent]) -> Option<Vec<String>> {
    events.iter().rev().find_map(|e| match e {
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            deferred, changed, ..
        })) if changed.deferred => Some(deferred.iter().map(|d| d.tool.name.clone()).collect()),
        _ => None,
    })
}

const TRACKER: [&str; 5] = [
    "create_issue",
    "list_issues",
    "close_issue",
    "add_comment",
    "search_code",
];

#[tokio::test]
async fn search_tools_loads_what_it_finds_into_the_next_request_and_always_load_stays() {
    let mut h = start(
        vec![
            server("tracker", &TRACKER, false),
            server("chat", &["post_message", "list_channels"], true),
        ],
        vec![
            calls(&[
                ("c1", "connect_mcp", json!({"name": "tracker"})),
                ("c2", "connect_mcp", json!({"name": "chat"})),
            ]),
            calls(&[
                (
                    "s1",
                    "search_tools",
                    json!({"query": "open a new issue", "limit": 2}),
                ),
                // Not loaded yet: the model is told how to load it.
                ("x1", "mcp__tracker__close_issue", json!({})),
            ]),
            calls(&[
                ("t1", "mcp__tracker__create_issue", json!({})),
                (
                    "s2",
                    "search_tools",
                    json!({"query": "mcp__tracker__close_issue"}),
                ),
            ]),
            calls(&[("t2", "mcp__tracker__close_issue", json!({}))]),
            done(),
        ],
        |config| {
            config.tool_search = SearchSettings {
                mode: SearchMode::On,
                ..SearchSettings::default()
            }
        },
    );
    let events = h.turn("file an issue, then close it").await;
    let requests = h.requests();
    assert_eq!(requests.len(), 5);

    // Before anything is connected nothing is deferred and there is nothing to search.
    assert!(!tool_names(&requests[0]).contains(&"search_tools".to_string()));

    // Connected: tracker's tools wait; chat's are in (alwaysLoad), after search_tools.
    let after_connect = tool_names(&requests[1]);
    assert_eq!(
        after_connect[after_connect.len() - 4..],
        [
            "search_tools",
            "mcp__chat__big",
            "mcp__chat__post_message",
            "mcp__chat__list_channels"
        ]
    );
    assert!(
        !after_connect
            .iter()
            .any(|n| n.starts_with("mcp__tracker__")),
        "{after_connect:?}"
    );
    let system = &requests[1].system;
    assert!(
        system.contains("Connected MCP servers: tracker, chat"),
        "{system}"
    );
    assert!(
        system.contains("6 are deferred") && system.contains("call search_tools"),
        "{system}"
    );

    // The search answers with names, servers and descriptions, and says they are loaded.
    let (found, is_error) = result_of(&requests[2], "s1");
    assert!(!is_error, "{found}");
    let mut lines = found.lines();
    assert_eq!(
        lines.next(),
        Some("Loaded 2 tools for \"open a new issue\"; callable from your next step:")
    );
    assert_eq!(
        lines.next(),
        Some("- mcp__tracker__create_issue (server tracker): fixture tool create_issue")
    );
    let (refused, is_error) = result_of(&requests[2], "x1");
    assert!(is_error);
    assert!(
        refused.starts_with(
            "mcp__tracker__close_issue is deferred and not loaded yet: call search_tools"
        ),
        "{refused}"
    );

    // The next request carries the found tools at the end: the earlier tools are a prefix.
    let after_search = tool_names(&requests[2]);
    assert_eq!(after_search[..after_connect.len()], after_connect[..]);
    assert_eq!(
        after_search[after_connect.len()],
        "mcp__tracker__create_issue"
    );
    assert_eq!(after_search.len(), after_connect.len() + 2);
    assert_eq!(
        result_of(&requests[3], "t1"),
        ("called as: create_issue".to_string(), false)
    );

    // An exact name loads that tool; loaded tools stay, appended in load order.
    let (exact, _) = result_of(&requests[3], "s2");
    assert!(
        exact.contains("- mcp__tracker__close_issue (server tracker): fixture tool close_issue"),
        "{exact}"
    );
    let last = tool_names(&requests[4]);
    assert_eq!(last[..after_search.len()], after_search[..]);
    assert_eq!(last.len(), after_search.len() + 1);
    assert_eq!(
        last.last().map(String::as_str),
        Some("mcp__tracker__close_issue")
    );
    assert_eq!(
        result_of(&requests[4], "t2"),
        ("called as: close_issue".to_string(), false)
    );

    // The front end was told what stays deferred.
    let deferred = last_deferred(&events).expect("a ToolsDeferred event");
    assert!(!deferred.contains(&"mcp__tracker__create_issue".to_string()));
    assert!(!deferred.contains(&"mcp__tracker__close_issue".to_string()));
    assert!(
        deferred.contains(&"mcp__tracker__big".to_string()),
        "{deferred:?}"
    );
}

#[tokio::test]
async fn auto_defers_only_above_its_threshold_and_off_never() {
    let tools: Vec<String> = (0..40).map(|i| format!("action_number_{i}")).collect();
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    for (settings, deferred) in [
        // 41 small definitions are about 1,000 estimated tokens.
        (
            SearchSettings {
                mode: SearchMode::Auto,
                auto_threshold_tokens: 500,
            },
            true,
        ),
        (SearchSettings::default(), false),
        (
            SearchSettings {
                mode: SearchMode::Off,
                auto_threshold_tokens: 0,
            },
            false,
        ),
    ] {
        let mut h = start(
            vec![server("many", &tools, false)],
            vec![
                calls(&[("c1", "connect_mcp", json!({"name": "many"}))]),
                done(),
            ],
            |config| config.tool_search = settings,
        );
        h.turn("connect").await;
        let names = tool_names(&h.requests()[1]);
        assert_eq!(
            names.contains(&"search_tools".to_string()),
            deferred,
            "{settings:?}: {names:?}"
        );
        assert_eq!(
            names
                .iter()
                .filter(|n| n.starts_with("mcp__many__"))
                .count(),
            if deferred { 0 } else { 41 },
            "{settings:?}"
        );
    }
}

#[tokio::test]
async fn a_big_mcp_result_is_cut_to_the_token_budget_and_kept_whole_on_disk() {
    let mut h = start(
        vec![server("tracker", &TRACKER, false)],
        vec![
            calls(&[("c1", "connect_mcp", json!({"name": "tracker"}))]),
            calls(&[("b1", "mcp__tracker__big", json!({"bytes": 20_000}))]),
            done(),
        ],
        |config| {
            config.tool_search = SearchSettings {
                mode: SearchMode::Off,
                ..SearchSettings::default()
            };
            config.mcp_output_tokens = 1_000;
        },
    );
    h.turn("get the big thing").await;
    let (shown, is_error) = result_of(&h.requests()[2], "b1");
    assert!(!is_error);
    let (kept, marker) = shown.split_once("\n\n[").expect("a truncation marker");
    // 750 estimated tokens of ASCII (three quarters of 1,000) are 3,000 characters, and
    // the last 250 tokens are the tail.
    assert_eq!(kept, "x".repeat(3_000));
    let (marker, tail) = marker
        .split_once("]\n\n")
        .expect("the tail after the marker");
    assert_eq!(tail, "x".repeat(1_000));
    let saved = marker
        .strip_prefix(
            "output truncated: showing about the first 750 and the last 250 of about 5000 tokens (MAX_MCP_OUTPUT_TOKENS); the full output is saved in ",
        )
        .unwrap_or_else(|| panic!("marker: {marker}"));
    assert!(saved.starts_with(&h.state.path().display().to_string()));
    assert_eq!(std::fs::read_to_string(saved).unwrap(), "x".repeat(20_000));
}

/// The real binary, headless: `[tools] search = "on"` in the user's config.toml defers the
/// docs server's tools, the JSONL says which, and a search loads one into the pool.
#[test]
fn headless_jsonl_reports_deferred_tools_from_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(config.join("config.toml"), "[tools]\nsearch = \"on\"\n").unwrap();
    let scenario = dir.path().join("scenario.json");
    std::fs::write(
        &scenario,
        json!({"name": "search", "description": "connect docs, find a tool", "steps": [
            {"id": "c", "say": "Connecting.", "tools": [{"name": "connect_mcp", "input": {"name": "docs"}}]},
            {"id": "s", "after": "c", "say": "Searching.", "tools": [{"name": "search_tools", "input": {"query": "mcp__docs__get_version"}}]},
            {"id": "d", "after": "s", "say": "Found: {{result_line}}"}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["-p", "find the version tool", "--provider", "scripted"])
        .args(["--output-format", "jsonl"])
        .current_dir(&workspace)
        .env("TOOLGATE_STATE_DIR", dir.path().join("state"))
        .env("TOOLGATE_CONFIG_DIR", &config)
        .env("TOOLGATE_SCENARIO", &scenario)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let deferred: Vec<Vec<String>> = events
        .iter()
        .filter(|e| e["type"] == "tools_deferred")
        .map(|e| serde_json::from_value(e["deferred"].clone()).unwrap())
        .collect();
    // One line when the connect deferred docs' tools, one when the search loaded one; none
    // before anything was deferred.
    assert_eq!(deferred.len(), 2, "{stdout}");
    let first = &deferred[0];
    assert!(
        first.contains(&"mcp__docs__get_version".to_string()),
        "{first:?}"
    );
    let last = deferred.last().unwrap();
    assert!(
        !last.contains(&"mcp__docs__get_version".to_string()),
        "{last:?}"
    );
    assert!(last.contains(&"mcp__docs__search".to_string()), "{last:?}");
    let pool: Vec<String> = events
        .iter()
        .rev()
        .find(|e| e["type"] == "pool_changed")
        .map(|e| serde_json::from_value(e["pool"].clone()).unwrap())
        .unwrap();
    let tail: Vec<&str> = pool.iter().rev().take(2).map(String::as_str).collect();
    assert_eq!(tail, ["mcp__docs__get_version", "search_tools"], "{pool:?}");
}

#[tokio::test]
async fn tools_loaded_by_a_search_are_loaded_again_when_the_session_is_resumed() {
    let on = |config: &mut AgentConfig| {
        config.tool_search = SearchSettings {
            mode: SearchMode::On,
            ..SearchSettings::default()
        }
    };
    let mut first = start(
        vec![server("tracker", &TRACKER, false)],
        vec![
            calls(&[("c1", "connect_mcp", json!({"name": "tracker"}))]),
            calls(&[(
                "s1",
                "search_tools",
                json!({"query": "mcp__tracker__add_comment"}),
            )]),
            done(),
        ],
        on,
    );
    let events = first.turn("load the comment tool").await;
    let session_id = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::View(View::SessionStarted { session_id, .. }) => Some(session_id.clone()),
            _ => None,
        })
        .expect("a SessionStarted event");
    first
        .handle
        .commands
        .send(UiCommand::Shutdown)
        .await
        .unwrap();
    while first.handle.events.recv().await.is_some() {}
    let state = first.state;

    let mut resumed = start_in(
        state,
        vec![server("tracker", &TRACKER, false)],
        vec![done()],
        |config| {
            on(config);
            config.resume = Some(session_id);
        },
    );
    resumed.turn("and now?").await;
    let names = tool_names(&resumed.requests()[0]);
    assert_eq!(
        names.last().map(String::as_str),
        Some("mcp__tracker__add_comment"),
        "{names:?}"
    );
    assert!(names.contains(&"search_tools".to_string()));
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("mcp__tracker__"))
            .count(),
        1,
        "{names:?}"
    );
}

/// Issue 28: a task with two steps is searched part by part (`queries`, or one query the host
/// splits), each part's best match is loaded, and the best match's siblings on its server are
/// named, not loaded.
#[tokio::test]
async fn search_tools_loads_the_best_tool_of_each_part_and_names_siblings() {
    let mut h = start(
        vec![
            server("tracker", &TRACKER, false),
            server("chat", &["post_message", "list_channels"], false),
        ],
        vec![
            calls(&[
                ("c1", "connect_mcp", json!({"name": "tracker"})),
                ("c2", "connect_mcp", json!({"name": "chat"})),
            ]),
            calls(&[
                (
                    "s1",
                    "search_tools",
                    json!({"queries": ["open a new issue", "post a message"], "limit": 2}),
                ),
                ("bad", "search_tools", json!({"queries": "post a message"})),
            ]),
            calls(&[
                ("t1", "mcp__tracker__create_issue", json!({})),
                ("t2", "mcp__chat__post_message", json!({})),
                (
                    "s2",
                    "search_tools",
                    json!({"query": "list the channels and then close the issue", "limit": 3}),
                ),
            ]),
            done(),
        ],
        |config| {
            config.tool_search = SearchSettings {
                mode: SearchMode::On,
                ..SearchSettings::default()
            }
        },
    );
    h.turn("file an issue and tell the chat").await;
    let requests = h.requests();
    assert_eq!(requests.len(), 4);

    let (text, is_error) = result_of(&requests[2], "s1");
    assert!(!is_error, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "Loaded 2 tools for \"open a new issue\", \"post a message\"; callable from your next step:"
    );
    assert_eq!(
        lines[1..3],
        [
            "- mcp__tracker__create_issue (server tracker): fixture tool create_issue",
            "- mcp__chat__post_message (server chat): fixture tool post_message",
        ]
    );
    // Siblings by name only, after the loaded tools.
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[3].starts_with("Same resource, not loaded"), "{text}");
    assert!(
        lines[3].contains("mcp__tracker__list_issues")
            && lines[3].contains("mcp__tracker__close_issue"),
        "{text}"
    );
    let (bad, is_error) = result_of(&requests[2], "bad");
    assert!(is_error && bad.contains("queries"), "{bad}");

    // The next request carries the two loaded tools, not the siblings, and both can be called.
    let names = tool_names(&requests[2]);
    assert!(names.contains(&"mcp__tracker__create_issue".to_string()));
    assert!(names.contains(&"mcp__chat__post_message".to_string()));
    assert!(
        !names.contains(&"mcp__tracker__list_issues".to_string()),
        "{names:?}"
    );
    assert_eq!(
        result_of(&requests[3], "t1"),
        ("called as: create_issue".to_string(), false)
    );
    assert_eq!(
        result_of(&requests[3], "t2"),
        ("called as: post_message".to_string(), false)
    );

    // One query with two steps is split by the host: both steps' tools are loaded.
    let (text, _) = result_of(&requests[3], "s2");
    assert!(
        text.contains("for \"list the channels\", \"close the issue\";"),
        "{text}"
    );
    assert!(
        text.contains("- mcp__chat__list_channels (server chat)"),
        "{text}"
    );
    assert!(
        text.contains("- mcp__tracker__close_issue (server tracker)"),
        "{text}"
    );
}
