//! Per-server tool filters, `"enabled"`, and pinned tool definitions, through the agent's
//! channels with a scripted model and the real fixture MCP server as a child process:
//! what the model gets in its requests, and what the person is asked.

use crate::support::fixture_server::fixture_file;
use crate::support::replay_model::{ReplayModel, Requests, call};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use toolgate::agent::{self, AgentConfig, AgentHandle};
use toolgate::mcp::{HubOptions, McpHub};
use toolgate::model::{ModelRequest, StopReason, StreamEvent};
use toolgate::policy::{Decider, Decision, PersonAnswer, Policy, RuleSource, parse_permissions};
use toolgate::protocol::questions::{Card, DefinitionNews, HostRequest, Kind};
use toolgate::protocol::{AgentEvent, DefinitionMark, PoolUpdate, ToolOutcome, UiCommand};
use toolgate::protocol::{Event, PermissionLine, View};

fn done() -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta("done".into()),
        StreamEvent::Stop(StopReason::EndTurn),
    ]
}

struct Harness {
    handle: AgentHandle,
    requests: Requests,
    workspace: tempfile::TempDir,
    state: tempfile::TempDir,
    mcp_json: PathBuf,
}

/// A `.mcp.json` (given with --mcp-config) whose server `fx` is the fixture server with
/// `extra` merged into its entry.
fn write_mcp_json(dir: &Path, env: Value, extra: Value) -> PathBuf {
    let script = fixture_file("fixture_server.py");
    let mut entry = json!({"command": "python3", "args": [script], "env": env});
    for (k, v) in extra.as_object().unwrap() {
        entry[k] = v.clone();
    }
    let path = dir.join("servers.json");
    let text = serde_json::to_string_pretty(&json!({"mcpServers": {"fx": entry}})).unwrap();
    std::fs::write(&path, format!("{text}\n")).unwrap();
    path
}

fn start(
    replies: Vec<Vec<StreamEvent>>,
    env: Value,
    extra: Value,
    allow: &[&str],
    headless: bool,
) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mcp_json = write_mcp_json(state.path(), env, extra);
    let loaded = toolgate::settings::load_servers(&toolgate::settings::LoadOptions {
        workspace: workspace.path().to_path_buf(),
        flag_files: vec![mcp_json.clone()],
        ..Default::default()
    });
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        loaded.servers,
        hub_tx,
        HubOptions {
            workspace: workspace.path().to_path_buf(),
            builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
            ..Default::default()
        },
    );
    let mut policy = Policy::default();
    let rules = format!(
        "[permissions]\nallow = [{}]\n",
        allow
            .iter()
            .map(|r| format!("\"{r}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let config_file = workspace.path().join(".toolgate/config.toml");
    let (rules, _, diags) = parse_permissions(
        &rules,
        "config.toml",
        RuleSource::ProjectConfig(config_file),
    );
    assert!(diags.is_empty(), "{diags:?}");
    policy.add_rules(rules);
    let requests: Requests = Arc::default();
    let model = ReplayModel {
        replies: Mutex::new(replies.into()),
        requests: requests.clone(),
    };
    let mut cfg = AgentConfig::new(
        Box::new(model),
        hub,
        hub_rx,
        policy,
        workspace.path().to_path_buf(),
    );
    cfg.sessions_dir = None;
    cfg.checkpoints_dir = None;
    cfg.pins_dir = Some(state.path().join("pins"));
    cfg.headless = headless;
    Harness {
        handle: agent::spawn(cfg),
        requests,
        workspace,
        state,
        mcp_json,
    }
}

const WAIT: Duration = Duration::from_secs(30);

/// A question as the person saw it.
struct Asked {
    kind: &'static str,
    card: Card,
    news: Option<DefinitionNews>,
}

impl Harness {
    async fn submit(&self, text: &str) {
        let command = UiCommand::Submit(text.into());
        self.handle.commands.send(command).await.unwrap();
    }

    /// Events until `stop` (inclusive); every question is recorded and answered with
    /// `answer`.
    async fn until(
        &mut self,
        answer: PersonAnswer,
        asked: &mut Vec<Asked>,
        mut stop: impl FnMut(&AgentEvent) -> bool,
    ) -> Vec<AgentEvent> {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("an agent event within the wait")
                .expect("agent running");
            match event {
                AgentEvent::Request(HostRequest::ChangedDefinition(r)) => {
                    asked.push(Asked {
                        kind: "changed definition",
                        card: r.payload.card(),
                        news: Some(r.payload.news.clone()),
                    });
                    r.answer(answer.clone());
                }
                AgentEvent::Request(HostRequest::ToolCall(r)) => {
                    asked.push(Asked {
                        kind: "tool call",
                        card: r.payload.card(),
                        news: None,
                    });
                    r.answer(answer.clone());
                }
                AgentEvent::Request(other) => panic!("unexpected request {other:?}"),
                event => {
                    let last = stop(&event);
                    seen.push(event);
                    if last {
                        return seen;
                    }
                }
            }
        }
    }

    async fn turn(&mut self, answer: PersonAnswer, asked: &mut Vec<Asked>) -> Vec<AgentEvent> {
        self.until(answer, asked, |e| {
            matches!(e, AgentEvent::Fact(Event::TurnFinished { .. }))
        })
        .await
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn results(events: &[AgentEvent]) -> Vec<(ToolOutcome, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::ToolFinished {
                outcome, output, ..
            }) => Some((*outcome, output.clone())),
            _ => None,
        })
        .collect()
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

fn is_marked(event: &AgentEvent, tool: &str, want_changed: bool) -> bool {
    let AgentEvent::View(View::PoolChanged(PoolUpdate { marks, changed, .. })) = event else {
        return false;
    };
    if !changed.marks {
        return false;
    }
    marks.iter().any(|m| {
        m.tool == tool
            && match &m.mark {
                DefinitionMark::Changed { .. } => want_changed,
                DefinitionMark::New => !want_changed,
            }
    })
}

#[tokio::test]
async fn filtered_tools_never_reach_the_model_and_show_why() {
    let mut h = start(
        vec![
            call("c1", "connect_mcp", json!({"name": "fx"})),
            call("e1", "mcp__fx__echo", json!({"text": "hi"})),
            done(),
        ],
        json!({"FIXTURE_TOOLS": "[\"echo\", \"delete_all\", \"get_secret\"]"}),
        json!({"includeTools": ["echo", "delete_*"], "excludeTools": ["delete_*"]}),
        &["mcp__fx__*"],
        false,
    );
    h.submit("use fx").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    let results = results(&events);
    assert_eq!(results[0].0, ToolOutcome::Ok, "{}", results[0].1);
    assert_eq!(
        results[0].1,
        "Connected to MCP server 'fx'. Discovered 1 tool: echo"
    );
    assert_eq!(results[1], (ToolOutcome::Ok, "echo: hi".to_string()));
    let requests = h.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        let names = tool_names(request);
        assert!(
            !names
                .iter()
                .any(|n| n.contains("delete_all") || n.contains("get_secret")),
            "{names:?}"
        );
        for message in &request.messages {
            let text = serde_json::to_string(message).unwrap();
            assert!(
                !text.contains("delete_all") && !text.contains("get_secret"),
                "{text}"
            );
        }
    }
    assert!(tool_names(&requests[1]).contains(&"mcp__fx__echo".to_string()));
    // The panel gets the excluded tools with the reason.
    let excluded = events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::View(View::PoolChanged(PoolUpdate {
                excluded, changed, ..
            })) if changed.marks && !excluded.is_empty() => Some(excluded),
            _ => None,
        })
        .expect("excluded tools reported to the panel");
    let shown: Vec<(&str, &str)> = excluded
        .iter()
        .map(|e| (e.tool.as_str(), e.why.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("delete_all", "excludeTools \"delete_*\""),
            ("get_secret", "not in includeTools")
        ]
    );
}

#[tokio::test]
async fn a_disabled_server_is_refused_until_enabled_and_saving_keeps_the_file() {
    let mut h = start(
        vec![
            call("c1", "connect_mcp", json!({"name": "fx"})),
            done(),
            call("c2", "connect_mcp", json!({"name": "fx"})),
            done(),
        ],
        json!({"FIXTURE_TOOLS": "[\"echo\"]"}),
        json!({"enabled": false}),
        &[],
        false,
    );
    h.submit("connect fx").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    let file = h.mcp_json.display().to_string();
    assert_eq!(
        results(&events)[0],
        (
            ToolOutcome::Error,
            format!(
                "MCP server 'fx' is disabled (\"enabled\": false in {file}); the user can enable it with /mcp enable fx in the console (this session) or /mcp enable fx --save (which writes \"enabled\": true there)."
            )
        )
    );
    // The model is not offered the disabled server.
    let first = &h.requests()[0];
    assert!(
        first
            .system
            .contains("MCP servers you can connect: docs, deploy, fs.\n")
            || first
                .system
                .ends_with("MCP servers you can connect: docs, deploy, fs."),
        "{}",
        first.system
    );
    let connect = first
        .tools
        .iter()
        .find(|t| t.name == "connect_mcp")
        .unwrap();
    assert!(!connect.input_schema.to_string().contains("\"fx\""));

    let before = std::fs::read_to_string(&h.mcp_json).unwrap();
    h.handle
        .commands
        .send(UiCommand::SetServerEnabled {
            server: "fx".into(),
            enabled: true,
            save: true,
        })
        .await
        .unwrap();
    let events = h
        .until(
            PersonAnswer::Deny,
            &mut asked,
            |e| matches!(e, AgentEvent::Fact(Event::Notice { message: n }) if n.contains("wrote")),
        )
        .await;
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::View(View::ServerEnabled { server, enabled: true }) if server == "fx"
    )));
    let after = std::fs::read_to_string(&h.mcp_json).unwrap();
    assert_eq!(
        after,
        before.replace("\"enabled\": false", "\"enabled\": true")
    );

    h.submit("connect fx again").await;
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    assert_eq!(
        results(&events)[0],
        (
            ToolOutcome::Ok,
            "Connected to MCP server 'fx'. Discovered 1 tool: echo".to_string()
        )
    );
    assert!(asked.is_empty());
}

/// Turn 1: connect, echo (allowed by `mcp__fx__*`, so pinned), then the server changes
/// echo's description and schema; the turn ends once the panel marks echo changed.
async fn pin_then_redefine(h: &mut Harness) {
    h.submit("use fx").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    let results = results(&events);
    assert!(
        results.iter().all(|r| r.0 == ToolOutcome::Ok),
        "{results:?}"
    );
    assert!(asked.is_empty(), "nothing asked while the rule covers it");
    // A rule's first use pins in the state directory, never in the workspace.
    let pin_files: Vec<PathBuf> = std::fs::read_dir(h.state.path().join("pins"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(pin_files.len(), 1);
    let pins = std::fs::read_to_string(&pin_files[0]).unwrap();
    assert!(
        pins.contains("\"fx/echo\"") && pins.contains("rule mcp__fx__*"),
        "{pins}"
    );
    assert!(!h.workspace.path().join(".toolgate").exists());
    let mut events = events;
    if !events.iter().any(|e| is_marked(e, "mcp__fx__echo", true)) {
        let more = h
            .until(PersonAnswer::Deny, &mut asked, |e| {
                is_marked(e, "mcp__fx__echo", true)
            })
            .await;
        events.extend(more);
    }
    // The panel's badge for it asks now, whatever the rule says.
    let badge = events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::View(View::PoolChanged(PoolUpdate { snapshot, .. })) => snapshot
                .iter()
                .find(|entry| entry.tool.name == "mcp__fx__echo")
                .map(|entry| entry.verdict.decision.clone()),
            _ => None,
        })
        .expect("echo in the last pool");
    assert_eq!(
        badge,
        Decision::Ask {
            why: "its definition changed since it was allowed".into()
        }
    );
}

fn redefine_script() -> Vec<Vec<StreamEvent>> {
    vec![
        call("c1", "connect_mcp", json!({"name": "fx"})),
        call("e1", "mcp__fx__echo", json!({"text": "one"})),
        call(
            "r1",
            "mcp__fx__redefine",
            json!({"name": "echo", "description": "Echoes text. Also uploads it.", "property": "upload_to"}),
        ),
        done(),
        call("e2", "mcp__fx__echo", json!({"text": "two"})),
        done(),
    ]
}

#[tokio::test]
async fn a_changed_definition_asks_again_with_its_diff() {
    let mut h = start(
        redefine_script(),
        json!({"FIXTURE_TOOLS": "[\"echo\"]", "FIXTURE_REDEFINE": "1"}),
        json!({}),
        &["mcp__fx__*"],
        false,
    );
    pin_then_redefine(&mut h).await;

    h.submit("echo again").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    assert_eq!(asked.len(), 1);
    let question = &asked[0];
    assert_eq!(question.kind, "changed definition");
    assert_eq!(question.card.title, "Tool definition changed");
    assert!(matches!(
        &question.news,
        Some(DefinitionNews::Changed { pinned_by, .. }) if pinned_by == "rule mcp__fx__*"
    ));
    let details = &question.card.details;
    assert!(
        details.starts_with(
            "description:\n-fixture tool echo\n+Echoes text. Also uploads it.\ninput schema:\n"
        ),
        "{details}"
    );
    assert!(details.contains("+    \"upload_to\": {"), "{details}");
    assert!(
        details.contains("arguments:\n{\n  \"text\": \"two\"\n}"),
        "{details}"
    );
    assert_eq!(
        results(&events),
        [(
            ToolOutcome::Denied,
            "Permission denied: the user did not accept the changed definition of mcp__fx__echo"
                .to_string()
        )]
    );
}

#[tokio::test]
async fn headless_refuses_a_changed_definition_saying_why() {
    let mut h = start(
        redefine_script(),
        json!({"FIXTURE_TOOLS": "[\"echo\"]", "FIXTURE_REDEFINE": "1"}),
        json!({}),
        &["mcp__fx__*"],
        true,
    );
    pin_then_redefine(&mut h).await;
    h.submit("echo again").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::AllowOnce, &mut asked).await;
    assert!(asked.is_empty());
    assert_eq!(
        results(&events),
        [(
            ToolOutcome::Denied,
            "Permission denied: the definition of mcp__fx__echo changed since it was allowed (rule mcp__fx__*); grants and rules cover only the definition they were given for; approval is unavailable in non-interactive mode (review it in the console)"
                .to_string()
        )]
    );
    let record = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Fact(Event::PermissionDecided(PermissionLine { record, .. })) => {
                Some(record)
            }
            _ => None,
        })
        .expect("a permission record");
    assert!(matches!(
        &record.decider,
        Decider::Headless { asked_by } if asked_by == "pinned definition: changed"
    ));
}

#[tokio::test]
async fn a_tool_that_appears_mid_session_asks_despite_a_server_wide_rule() {
    let mut h = start(
        vec![
            call("c1", "connect_mcp", json!({"name": "fx"})),
            call("a1", "mcp__fx__add_tool", json!({"name": "fresh"})),
            done(),
            call("f1", "mcp__fx__fresh", json!({})),
            call("f2", "mcp__fx__fresh", json!({})),
            done(),
        ],
        json!({"FIXTURE_TOOLS": "[\"echo\", \"add_tool\"]"}),
        json!({}),
        &["mcp__fx__*"],
        false,
    );
    h.submit("add a tool").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::Deny, &mut asked).await;
    assert!(
        asked.is_empty(),
        "tools of the first listing follow the rule"
    );
    if !events.iter().any(|e| is_marked(e, "mcp__fx__fresh", false)) {
        h.until(PersonAnswer::Deny, &mut asked, |e| {
            is_marked(e, "mcp__fx__fresh", false)
        })
        .await;
    }

    h.submit("use it").await;
    let events = h.turn(PersonAnswer::AllowOnce, &mut asked).await;
    assert_eq!(asked.len(), 1, "only the first call asks");
    assert_eq!(asked[0].card.title, "New tool");
    assert_eq!(asked[0].news, Some(DefinitionNews::New));
    assert!(
        asked[0]
            .card
            .details
            .starts_with("description:\nfixture tool fresh\ninput schema:\n"),
        "{}",
        asked[0].card.details
    );
    let results = results(&events);
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r.0 == ToolOutcome::Ok),
        "{results:?}"
    );
}

#[tokio::test]
async fn accepting_a_changed_definition_for_good_repins_it() {
    let mut script = redefine_script();
    script.truncate(4);
    script.push(call("e2", "mcp__fx__echo", json!({"text": "two"})));
    script.push(call("e3", "mcp__fx__echo", json!({"text": "three"})));
    script.push(done());
    let mut h = start(
        script,
        json!({"FIXTURE_TOOLS": "[\"echo\"]", "FIXTURE_REDEFINE": "1"}),
        json!({}),
        &["mcp__fx__*"],
        false,
    );
    pin_then_redefine(&mut h).await;
    h.submit("echo twice").await;
    let mut asked = Vec::new();
    let events = h.turn(PersonAnswer::AllowAlways, &mut asked).await;
    assert_eq!(asked.len(), 1, "only the first call after the change asks");
    assert_eq!(
        results(&events),
        [
            (ToolOutcome::Ok, "echo: two".to_string()),
            (ToolOutcome::Ok, "echo: three".to_string())
        ]
    );
    let pins = std::fs::read_to_string(h.workspace.path().join(".toolgate/pins.json")).unwrap();
    assert!(pins.contains("Echoes text. Also uploads it."), "{pins}");
    assert!(pins.contains("\"pinnedBy\": \"always grant\""), "{pins}");
    // The rule already allowed it: accepting the definition writes no second rule.
    assert!(!h.workspace.path().join(".toolgate/config.toml").exists());
    // The panel no longer marks it, and its badge follows the rule again.
    let marks = events.iter().rev().find_map(|e| match e {
        AgentEvent::View(View::PoolChanged(PoolUpdate { marks, changed, .. })) if changed.marks => {
            Some(marks.clone())
        }
        _ => None,
    });
    assert_eq!(marks, Some(Vec::new()));
}
