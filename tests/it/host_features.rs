//! The MCP host side of a session: sampling gated by the host (headless denial, a policy
//! rule, the token cap, the bound on waiting requests), roots with `list_changed`, server
//! log messages and server instructions. The agent runs on the scripted model; the server
//! is the fixture (a real child process speaking JSON-RPC on stdio).

use crate::support::fixture_server;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use serde_json::Value;
use tokio::sync::mpsc;

use toolgate::agent::{self, AgentConfig};
use toolgate::headless::{self, OutputFormat};
use toolgate::mcp::{HubOptions, LogLevel, McpHub, file_uri};
use toolgate::model::scripted::{Scenario, ScriptedProvider};
use toolgate::model::{ModelError, ModelProvider, ModelRequest, StreamEvent};
use toolgate::policy::{Decider, PersonAnswer, Policy, PolicyRule, Rule, RuleList, RuleSource};
use toolgate::protocol::SamplingOutcome;
use toolgate::protocol::questions::HostRequest;
use toolgate::protocol::{AgentEvent, UiCommand};
use toolgate::protocol::{Event, ServerLogLine, ToolCallStart, View};

const WAIT: Duration = Duration::from_secs(30);

/// The model's side: a summary for any sampling request ("…summarize…"); a user message
/// names which fixture tool to call after connecting the server.
fn scenario(tool_input: &str) -> String {
    format!(
        r#"{{"name": "host", "steps": [
  {{"id": "summary", "user": "(?i)summari[sz]e", "say": "SCRIPTED SUMMARY"}},
  {{"id": "go", "user": "(?i)^go", "tools": [{{"name": "connect_mcp", "input": {{"name": "fix"}}}}]}},
  {{"id": "call", "after": "go", "on": "ok", "tools": [{tool_input}]}},
  {{"id": "done", "after": "call", "say": "Server said: {{{{result_line}}}}"}}
]}}"#
    )
}

/// Records what the model received, then answers as the scripted model does.
struct Recording {
    inner: ScriptedProvider,
    seen: Arc<Mutex<Vec<ModelRequest>>>,
}

impl ModelProvider for Recording {
    fn label(&self) -> String {
        self.inner.label()
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        self.seen.lock().unwrap().push(request.clone());
        self.inner.stream(request)
    }
}

struct Setup {
    workspace: tempfile::TempDir,
    state: tempfile::TempDir,
    seen: Arc<Mutex<Vec<ModelRequest>>>,
}

fn rule(text: &str, list: RuleList) -> PolicyRule {
    PolicyRule {
        rule: Rule::parse(text).unwrap(),
        list,
        source: RuleSource::Flag,
    }
}

/// An agent with the fixture configured as `fix` (host tools on), the scripted model on
/// `tool_input`, and `allow` rules given as flags.
fn setup(tool_input: &str, env: &[(&str, &str)], allow: &[&str]) -> (AgentConfig, Setup) {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let seen = Arc::default();
    let config = config_in(
        workspace.path(),
        state.path(),
        (tool_input, env, allow),
        Arc::clone(&seen),
    );
    (
        config,
        Setup {
            workspace,
            state,
            seen,
        },
    )
}

/// An agent over the fixture server `fix` in `workspace`, its sessions under `state`;
/// `(tool_input, env, allow)` as for [`setup`].
fn config_in(
    workspace: &Path,
    state: &Path,
    (tool_input, env, allow): (&str, &[(&str, &str)], &[&str]),
    seen: Arc<Mutex<Vec<ModelRequest>>>,
) -> AgentConfig {
    let mut env = env.to_vec();
    env.push(("FIXTURE_HOST_TOOLS", "1"));
    let server = fixture_server::fixture("fix", &env);
    let (tx, rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        vec![server],
        tx,
        HubOptions {
            workspace: workspace.to_path_buf(),
            builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
            probe_timeout: Duration::from_millis(300),
            ..HubOptions::default()
        },
    );
    let mut policy = Policy::default();
    policy.add_rules(allow.iter().map(|r| rule(r, RuleList::Allow)));
    let model = Recording {
        inner: ScriptedProvider::new(Scenario::parse("host", &scenario(tool_input)).unwrap()),
        seen,
    };
    let mut config = AgentConfig::new(Box::new(model), hub, rx, policy, workspace.to_path_buf());
    config.sessions_dir = Some(state.join("sessions"));
    config.checkpoints_dir = None;
    config
}

const SAMPLE: &str = r#"{"name": "mcp__fix__sample", "input": {"text": "Please summarize: apples and pears", "max_tokens": 100, "system": "You are terse.", "temperature": 0.25, "stop": ["END"]}}"#;

async fn headless_jsonl(config: AgentConfig) -> Vec<Value> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result =
        headless::run_with(config, "go".into(), OutputFormat::Jsonl, &mut out, &mut err).await;
    let out = String::from_utf8(out).unwrap();
    assert!(
        result.is_ok(),
        "stderr: {}\nstdout: {out}",
        String::from_utf8_lossy(&err)
    );
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn tool_output(events: &[Value], name: &str) -> String {
    of_type(events, "tool_finished")
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {events:#?}"))["output"]
        .as_str()
        .unwrap()
        .to_string()
}

fn session_records(state: &Path) -> Vec<Value> {
    let dir = state.join("sessions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .unwrap()
        .path();
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn headless_denies_sampling_and_the_server_hears_why() {
    let (config, setup) = setup(SAMPLE, &[], &["mcp__fix__sample"]);
    let events = headless_jsonl(config).await;

    let sampling = of_type(&events, "sampling");
    assert_eq!(sampling.len(), 1, "{events:#?}");
    assert_eq!(sampling[0]["server"], "fix");
    assert_eq!(sampling[0]["outcome"]["kind"], "refused");
    assert_eq!(sampling[0]["decision"]["decider"]["by"], "headless");
    assert_eq!(sampling[0]["decision"]["tool"], "sampling(fix)");
    let output = tool_output(&events, "mcp__fix__sample");
    assert!(
        output.starts_with("sampling refused (-1): sampling denied by the host:")
            && output.contains("--allow 'sampling(fix)'"),
        "{output}"
    );
    assert!(of_type(&events, "request_dismissed").is_empty());
    // The model was never asked on the server's behalf.
    let seen = setup.seen.lock().unwrap();
    assert!(seen.iter().all(|r| r.system != "You are terse."));
    let records = session_records(setup.state.path());
    assert!(
        records
            .iter()
            .any(|r| r["type"] == "sampling" && r["outcome"]["kind"] == "refused")
    );
}

#[tokio::test]
async fn a_policy_rule_allows_sampling_without_a_question() {
    let (config, setup) = setup(SAMPLE, &[], &["mcp__fix__sample", "sampling(fix)"]);
    let events = headless_jsonl(config).await;

    let output = tool_output(&events, "mcp__fix__sample");
    assert_eq!(
        output,
        "sampled: SCRIPTED SUMMARY (model scripted demo, stop endTurn)"
    );
    let sampling = of_type(&events, "sampling");
    assert_eq!(sampling.len(), 1, "{events:#?}");
    assert_eq!(sampling[0]["decision"]["decider"]["by"], "rule");
    assert_eq!(sampling[0]["decision"]["decider"]["rule"], "sampling(fix)");
    assert_eq!(sampling[0]["outcome"]["kind"], "answered");
    assert_eq!(sampling[0]["outcome"]["text"], "SCRIPTED SUMMARY");
    assert!(
        sampling[0]["outcome"]["usage"]["output_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(of_type(&events, "request_dismissed").is_empty());
    // Exactly the server's system prompt and message went to the model, without tools,
    // and within the server's token limit.
    let seen = setup.seen.lock().unwrap();
    let sampled = seen.iter().find(|r| r.system == "You are terse.").unwrap();
    assert!(sampled.tools.is_empty());
    assert_eq!(sampled.max_tokens, 100);
    // The server's temperature and stop sequences go to the provider with the request.
    assert_eq!(sampled.sampling.temperature, Some(0.25));
    assert_eq!(sampled.sampling.stop_sequences, ["END"]);
    assert_eq!(sampled.messages.len(), 1);
    let records = session_records(setup.state.path());
    let logged = records.iter().find(|r| r["type"] == "sampling").unwrap();
    assert_eq!(logged["outcome"]["kind"], "answered");
    assert_eq!(
        logged["outcome"]["usage"], sampling[0]["outcome"]["usage"],
        "the session log records the tokens it used"
    );
    assert_eq!(
        logged["messages"][0]["text"],
        "Please summarize: apples and pears"
    );
    // The new records read back: resuming this session skips no line.
    let sessions = setup.state.path().join("sessions");
    let id = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .unwrap();
    let restored = toolgate::journal::load(&sessions, &id).unwrap();
    assert_eq!(restored.skipped_lines, 0);
}

#[tokio::test]
async fn a_request_over_the_token_cap_is_refused_naming_the_cap() {
    let (mut config, _setup) = setup(SAMPLE, &[], &["mcp__fix__sample", "sampling(fix)"]);
    config.sampling_max_tokens = 50;
    let events = headless_jsonl(config).await;
    let output = tool_output(&events, "mcp__fix__sample");
    assert!(
        output.starts_with("sampling refused (-32602): the request asks for up to 100 tokens, over toolgate's sampling cap of 50 tokens"),
        "{output}"
    );
    let sampling = of_type(&events, "sampling");
    assert_eq!(sampling[0]["outcome"]["kind"], "refused");
    assert!(sampling[0].get("decision").is_none());
}

/// `[sampling] max_tokens` and the `sampling(...)` rules come from `config.toml`; saved while
/// the console runs, they decide the next request (the real file watcher, the real agent).
#[tokio::test]
async fn a_sampling_cap_saved_while_the_session_runs_decides_the_next_request() {
    let (mut config, setup) = setup(SAMPLE, &[], &[]);
    let workspace = setup.workspace.path().to_path_buf();
    config.reload = Some(agent::ConfigReload {
        options: toolgate::settings::LoadOptions {
            workspace: workspace.clone(),
            user_config_dir: None,
            flag_files: Vec::new(),
            trust_project: true,
            ..Default::default()
        },
        known_problems: Vec::new(),
        watch: true,
        rules: Some(agent::RulesReload {
            known_problems: Vec::new(),
            settings_seen: Some(toolgate::settings::reload::SettingsSeen::at_start(
                Default::default(),
                Default::default(),
            )),
        }),
    });
    let mut handle = agent::spawn(config);
    // Wait for the agent to start (and its watcher with it) before saving.
    loop {
        let event = next_event(&mut handle.events).await;
        if matches!(event, AgentEvent::View(View::PoolChanged(_))) {
            break;
        }
    }
    let dir = workspace.join(".toolgate");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[permissions]\nallow = [\"mcp__fix__sample\", \"sampling(fix)\"]\n[sampling]\nmax_tokens = 50\n",
    )
    .unwrap();
    loop {
        let event = next_event(&mut handle.events).await;
        if let AgentEvent::Fact(Event::Notice { message: text }) = &event
            && text.contains("Permission rules reloaded")
        {
            assert!(
                text.contains("+ allow sampling(fix)")
                    && text.contains(
                        "[sampling] max_tokens = 50: in force from the next sampling request"
                    ),
                "{text}"
            );
            break;
        }
    }
    handle
        .commands
        .send(UiCommand::Submit("go".into()))
        .await
        .unwrap();
    // The scenario connects `fix`, then calls its sample tool.
    let mut sample_call = None;
    let output = loop {
        let event = next_event(&mut handle.events).await;
        match event {
            AgentEvent::Fact(Event::ToolStarted(ToolCallStart { call_id, name, .. }))
                if name == "mcp__fix__sample" =>
            {
                sample_call = Some(call_id);
            }
            AgentEvent::Fact(Event::ToolFinished {
                call_id, output, ..
            }) if Some(&call_id) == sample_call.as_ref() => break output,
            _ => {}
        }
    };
    assert!(
        output.contains("sampling refused (-32602): the request asks for up to 100 tokens, over toolgate's sampling cap of 50 tokens"),
        "{output}"
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}

#[tokio::test]
async fn a_burst_of_sampling_requests_is_bounded_and_never_hangs() {
    let burst = r#"{"name": "mcp__fix__sample_burst", "input": {"count": 6}}"#;
    let (config, _setup) = setup(burst, &[], &["mcp__fix__sample_burst"]);
    let mut handle = agent::spawn(config);
    handle
        .commands
        .send(UiCommand::Submit("go".into()))
        .await
        .unwrap();
    let mut waiting = Vec::new();
    let mut refused = Vec::new();
    let mut output = None;
    let mut burst_call = None;
    while output.is_none() {
        let event = tokio::time::timeout(WAIT, handle.events.recv())
            .await
            .expect("an event within the wait")
            .expect("agent running");
        match event {
            AgentEvent::Request(HostRequest::Sampling(request)) => {
                let card = toolgate::protocol::questions::Kind::card(&request.payload);
                assert_eq!(card.title, "Sampling request");
                assert!(card.asker.contains("MCP server 'fix'"), "{card:?}");
                assert!(card.details.contains("burst"), "{card:?}");
                waiting.push(request);
                // Answer only once the excess has been refused: the person is slow.
                if waiting.len() == 4 && refused.len() == 2 {
                    for request in waiting.drain(..) {
                        assert!(request.answer(PersonAnswer::Deny));
                    }
                }
            }
            AgentEvent::Fact(Event::Sampling(report)) => match &report.outcome {
                SamplingOutcome::Refused { reason } if report.decision.is_none() => {
                    assert!(reason.contains("too many sampling requests"), "{reason}");
                    refused.push(reason.clone());
                    if waiting.len() == 4 && refused.len() == 2 {
                        for request in waiting.drain(..) {
                            assert!(request.answer(PersonAnswer::Deny));
                        }
                    }
                }
                SamplingOutcome::Refused { .. } => {
                    let decider = &report.decision.as_ref().unwrap().decider;
                    assert!(matches!(decider, Decider::Person { .. }), "{decider:?}");
                }
                other => panic!("unexpected sampling outcome {other:?}"),
            },
            AgentEvent::Fact(Event::ToolStarted(ToolCallStart { call_id, name, .. }))
                if name == "mcp__fix__sample_burst" =>
            {
                burst_call = Some(call_id)
            }
            AgentEvent::Fact(Event::ToolFinished {
                call_id,
                output: text,
                ..
            }) if burst_call.as_ref() == Some(&call_id) => output = Some(text),
            _ => {}
        }
    }
    let output = output.unwrap();
    assert_eq!(refused.len(), 2, "{output}");
    assert_eq!(
        output.matches("too many sampling requests").count(),
        2,
        "{output}"
    );
    assert_eq!(
        output
            .matches("sampling refused (-1): sampling denied by the host: the user denied it")
            .count(),
        4,
        "{output}"
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}

/// The agent's next event (the test fails when none comes within [`WAIT`]).
async fn next_event(events: &mut mpsc::Receiver<AgentEvent>) -> AgentEvent {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("an agent event within the wait")
        .expect("the agent runs")
}

/// Waits for a server log message containing `needle`; returns it.
async fn log_containing(
    events: &mut mpsc::Receiver<AgentEvent>,
    needle: &str,
) -> (LogLevel, String) {
    loop {
        let event = tokio::time::timeout(WAIT, events.recv())
            .await
            .unwrap_or_else(|_| panic!("no log message with {needle:?}"))
            .expect("agent running");
        if let AgentEvent::Fact(Event::ServerLog(ServerLogLine { level, message, .. })) = event
            && message.contains(needle)
        {
            return (level, message);
        }
    }
}

#[tokio::test]
async fn roots_logs_and_instructions_reach_the_server_the_person_and_the_model() {
    let log_tool = r#"{"name": "mcp__fix__log", "input": {"level": "debug", "text": "too chatty"}}, {"name": "mcp__fix__log", "input": {"level": "error", "text": "disk on fire"}}"#;
    let (config, setup) = setup(
        log_tool,
        &[("FIXTURE_INSTRUCTIONS", "Call log before anything else.")],
        &["mcp__fix__log"],
    );
    let workspace = std::fs::canonicalize(setup.workspace.path()).unwrap();
    let extra = workspace.join("extra dir");
    std::fs::create_dir(&extra).unwrap();
    let mut handle = agent::spawn(config);
    handle
        .commands
        .send(UiCommand::Connect("fix".into()))
        .await
        .unwrap();
    // The server asks for the roots once it is initialized: the workspace only.
    let (_, first) = log_containing(&mut handle.events, "roots at start").await;
    assert_eq!(
        first,
        format!("fixture: roots at start: {}", file_uri(&workspace))
    );

    handle
        .commands
        .send(UiCommand::AddRoot("extra dir".into()))
        .await
        .unwrap();
    let (_, changed) = log_containing(&mut handle.events, "roots changed").await;
    assert_eq!(
        changed,
        format!(
            "fixture: roots changed: {} {}",
            file_uri(&workspace),
            file_uri(&extra)
        )
    );
    assert!(changed.contains("extra%20dir"), "{changed}");

    handle
        .commands
        .send(UiCommand::Submit("go".into()))
        .await
        .unwrap();
    // Log notifications travel beside the tool results, so either may come first; the
    // server sent the debug message before the error one, and they arrive in that order.
    let (mut logs, mut finished) = (Vec::new(), false);
    while !finished || logs.is_empty() {
        let event = next_event(&mut handle.events).await;
        match event {
            AgentEvent::Fact(Event::ServerLog(ServerLogLine { level, message, .. })) => {
                logs.push((level, message))
            }
            AgentEvent::Fact(Event::TurnFinished { .. }) => finished = true,
            _ => {}
        }
    }
    // logging/setLevel asked for `info`: the debug message never came.
    assert_eq!(
        logs,
        vec![(LogLevel::Error, "fixture: disk on fire".to_string())]
    );
    let seen = setup.seen.lock().unwrap().clone();
    let last = seen.last().unwrap();
    assert!(
        last.system
            .contains("Instructions from MCP server 'fix' — the server's own words")
            && last.system.contains("Call log before anything else."),
        "{}",
        last.system
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
    while handle.events.recv().await.is_some() {}
    let records = session_records(setup.state.path());
    let logged: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["type"] == "server_log")
        .map(|r| (r["level"].as_str().unwrap(), r["message"].as_str().unwrap()))
        .collect();
    assert!(
        logged.contains(&("error", "fixture: disk on fire")),
        "{logged:?}"
    );
    assert!(
        logged.iter().any(|(_, m)| m.contains("roots changed")),
        "{logged:?}"
    );

    // Resumed, the session has the added root again: the server hears both at its start.
    let root_added: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "root_added")
        .collect();
    assert_eq!(root_added.len(), 1, "{records:?}");
    let id = records[0]["session_id"].as_str().unwrap().to_string();
    let mut config = config_in(
        setup.workspace.path(),
        setup.state.path(),
        (log_tool, &[], &["mcp__fix__log"]),
        Arc::default(),
    );
    config.resume = Some(id);
    let mut handle = agent::spawn(config);
    loop {
        let event = next_event(&mut handle.events).await;
        if let AgentEvent::Fact(Event::Notice { message: text }) = &event
            && text.starts_with("Resumed session")
        {
            assert!(
                text.contains("1 root added with /roots add restored"),
                "{text}"
            );
            break;
        }
    }
    handle
        .commands
        .send(UiCommand::Connect("fix".into()))
        .await
        .unwrap();
    let (_, first) = log_containing(&mut handle.events, "roots at start").await;
    assert_eq!(
        first,
        format!(
            "fixture: roots at start: {} {}",
            file_uri(&workspace),
            file_uri(&extra)
        )
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}

/// A finished Anthropic text reply as server-sent events.
fn anthropic_text(text: &str) -> String {
    let events = [
        (
            "message_start",
            serde_json::json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":21,"output_tokens":1}}}),
        ),
        (
            "content_block_start",
            serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        (
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        ),
        (
            "content_block_stop",
            serde_json::json!({"type":"content_block_stop","index":0}),
        ),
        (
            "message_delta",
            serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}),
        ),
        ("message_stop", serde_json::json!({"type":"message_stop"})),
    ];
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

#[tokio::test]
async fn the_sessions_provider_answers_sampling_and_sees_server_instructions() {
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    // A mock Anthropic API on a real socket: the server's sampling request gets one answer,
    // the agent's own turn another.
    let api = MockServer::start().await;
    let reply = |text: &str| {
        ResponseTemplate::new(200).set_body_raw(anthropic_text(text), "text/event-stream")
    };
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(body_string_contains("You are terse."))
        .respond_with(reply("WIRE SUMMARY"))
        .with_priority(1)
        .mount(&api)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(reply("Hello."))
        .with_priority(2)
        .mount(&api)
        .await;

    let (mut config, _setup) = setup(
        SAMPLE,
        &[("FIXTURE_INSTRUCTIONS", "Call log before anything else.")],
        &["sampling(fix)"],
    );
    config.model = toolgate::model::select(&toolgate::model::ProviderOptions {
        provider_flag: Some("anthropic".into()),
        anthropic_api_key: Some("test-key".into()),
        anthropic_base_url: Some(api.uri()),
        model: Some("claude-test".into()),
        ..Default::default()
    })
    .unwrap();
    let hub = config.hub.clone();
    let mut handle = agent::spawn(config);
    handle
        .commands
        .send(UiCommand::Connect("fix".into()))
        .await
        .unwrap();
    log_containing(&mut handle.events, "roots at start").await;

    // The server samples (as it would inside a tool call); the rule allows it.
    let called = hub.call(
        "fix",
        "sample",
        serde_json::json!({"text": "Please summarize: apples and pears", "max_tokens": 100, "system": "You are terse."}),
        None,
        tokio_util::sync::CancellationToken::new(),
    );
    let output = tokio::time::timeout(WAIT, called).await.unwrap().unwrap();
    assert_eq!(
        output.text,
        "sampled: WIRE SUMMARY (model anthropic claude-test, stop endTurn)"
    );
    assert!(!output.is_error);

    handle
        .commands
        .send(UiCommand::Submit("hello".into()))
        .await
        .unwrap();
    loop {
        let event = next_event(&mut handle.events).await;
        if matches!(event, AgentEvent::Fact(Event::TurnFinished { .. })) {
            break;
        }
    }
    let bodies: Vec<Value> = api
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect();
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    // The system prompt is a string or text blocks (with cache markers), as the API allows.
    let system_text = |body: &Value| match &body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("unexpected system {other}"),
    };
    let sampled = &bodies[0];
    assert_eq!(system_text(sampled), "You are terse.");
    assert_eq!(sampled["max_tokens"], 100);
    let messages = sampled["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{sampled}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[0]["content"][0]["text"],
        "Please summarize: apples and pears"
    );
    assert!(
        sampled
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{sampled}"
    );
    let turn = &bodies[1];
    let system = system_text(turn);
    assert!(
        system.contains("<server-instructions server=\"fix\">\nCall log before anything else.\n</server-instructions>"),
        "{system}"
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}

/// Runs the fixture's `sample` tool through the hub (as during a tool call) while the test
/// answers the sampling question, if one comes, with `answer`. Returns the tool's text and
/// who decided.
async fn sample_once(
    hub: &McpHub,
    events: &mut mpsc::Receiver<AgentEvent>,
    answer: Option<PersonAnswer>,
) -> (String, Decider) {
    let hub = hub.clone();
    let call = tokio::spawn(async move {
        hub.call(
            "fix",
            "sample",
            serde_json::json!({"text": "Please summarize: the plan"}),
            None,
            tokio_util::sync::CancellationToken::new(),
        )
        .await
    });
    let mut answer = answer;
    let decider = loop {
        let event = tokio::time::timeout(WAIT, events.recv())
            .await
            .expect("an event within the wait")
            .expect("agent running");
        match event {
            AgentEvent::Request(HostRequest::Sampling(request)) => {
                let given = answer.take().expect("no question expected");
                assert!(request.answer(given));
            }
            AgentEvent::Fact(Event::Sampling(report)) => break report.decision.unwrap().decider,
            _ => {}
        }
    };
    let output = call.await.unwrap().unwrap();
    (output.text, decider)
}

#[tokio::test]
async fn allowing_for_the_session_stops_the_questions_until_revoked() {
    let (config, _setup) = setup(SAMPLE, &[], &[]);
    let hub = config.hub.clone();
    let mut handle = agent::spawn(config);
    handle
        .commands
        .send(UiCommand::Connect("fix".into()))
        .await
        .unwrap();
    log_containing(&mut handle.events, "roots at start").await;

    let (text, decider) =
        sample_once(&hub, &mut handle.events, Some(PersonAnswer::AllowSession)).await;
    assert!(text.starts_with("sampled: SCRIPTED SUMMARY"), "{text}");
    assert!(
        matches!(
            decider,
            Decider::Person {
                answer: PersonAnswer::AllowSession,
                ..
            }
        ),
        "{decider:?}"
    );

    let (text, decider) = sample_once(&hub, &mut handle.events, None).await;
    assert!(text.starts_with("sampled: SCRIPTED SUMMARY"), "{text}");
    assert_eq!(
        decider,
        Decider::SessionGrant {
            tool: "sampling(fix)".into()
        }
    );

    handle
        .commands
        .send(UiCommand::RevokeGrant("sampling(fix)".into()))
        .await
        .unwrap();
    loop {
        let event = next_event(&mut handle.events).await;
        if let AgentEvent::Fact(Event::Notice { message: text }) = event {
            assert_eq!(text, "Session grant for sampling(fix) revoked.");
            break;
        }
    }
    let (text, decider) = sample_once(&hub, &mut handle.events, Some(PersonAnswer::Deny)).await;
    assert!(
        text.starts_with("sampling refused (-1): sampling denied by the host: the user denied it"),
        "{text}"
    );
    assert!(
        matches!(
            decider,
            Decider::Person {
                answer: PersonAnswer::Deny,
                ..
            }
        ),
        "{decider:?}"
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}

#[tokio::test]
async fn an_unanswered_sampling_question_expires_into_a_denial() {
    let (mut config, _setup) = setup(SAMPLE, &[], &[]);
    config.ask_timeout = Some(Duration::from_secs(1));
    let hub = config.hub.clone();
    let mut handle = agent::spawn(config);
    handle
        .commands
        .send(UiCommand::Connect("fix".into()))
        .await
        .unwrap();
    log_containing(&mut handle.events, "roots at start").await;
    let hub_call = hub.clone();
    let call = tokio::spawn(async move {
        hub_call
            .call(
                "fix",
                "sample",
                serde_json::json!({"text": "Please summarize: nobody is here"}),
                None,
                tokio_util::sync::CancellationToken::new(),
            )
            .await
    });
    // The question comes; this front end never shows it to anyone (nor expires it).
    let mut held = Vec::new();
    let decider = loop {
        let event = next_event(&mut handle.events).await;
        match event {
            AgentEvent::Request(request) => held.push(request),
            AgentEvent::Fact(Event::Sampling(report)) => break report.decision.unwrap().decider,
            _ => {}
        }
    };
    assert_eq!(held.len(), 1);
    assert!(matches!(decider, Decider::Expired { .. }), "{decider:?}");
    let output = call.await.unwrap().unwrap();
    assert_eq!(
        output.text,
        "sampling refused (-1): sampling denied by the host: nobody answered the sampling request in time"
    );
    let _ = handle.commands.send(UiCommand::Shutdown).await;
}
