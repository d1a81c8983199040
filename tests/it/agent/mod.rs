//! The agent loop through its channels, with a test model that replays fixed replies and
//! records every request it gets. Tools are the real built-ins (and, where noted, the real
//! hub with toolgate's own servers as child processes).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use toolgate::agent::{self, AgentConfig, AgentHandle};
use toolgate::mcp::McpHub;
use toolgate::model::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, Role, StopReason, StreamEvent,
    Usage,
};
use toolgate::policy::Policy;
use toolgate::policy::{Decider, Permit, PersonAnswer as UserDecision};
use toolgate::protocol::questions::{
    HostRequest, ProjectServerAnswer, RestoreAnswer, SignInAnswer, TrustAnswer,
};
use toolgate::protocol::{AgentEvent, PoolUpdate, ToolOutcome, UiCommand};
use toolgate::protocol::{Event, Live, PermissionLine, ToolCallStart, View};

/// One reply: the events to stream, and whether the stream then hangs (to cancel it).
#[derive(Clone)]
struct Reply {
    events: Vec<Result<StreamEvent, ModelError>>,
    hang: bool,
}

fn reply(events: Vec<StreamEvent>) -> Reply {
    Reply {
        events: events.into_iter().map(Ok).collect(),
        hang: false,
    }
}

fn text(t: &str) -> StreamEvent {
    StreamEvent::TextDelta(t.into())
}

fn tool(id: &str, name: &str, input: Value) -> StreamEvent {
    StreamEvent::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
    }
}

fn stop(reason: StopReason) -> StreamEvent {
    StreamEvent::Stop(reason)
}

fn final_text(t: &str) -> Reply {
    reply(vec![
        text(t),
        StreamEvent::Usage(Usage {
            input_tokens: 10,
            output_tokens: 3,
            ..Default::default()
        }),
        stop(StopReason::EndTurn),
    ])
}

type Requests = Arc<Mutex<Vec<ModelRequest>>>;

/// Replays the given replies in order; past the end it answers with a model error.
struct ReplayModel {
    replies: Mutex<VecDeque<Reply>>,
    requests: Requests,
}

impl ModelProvider for ReplayModel {
    fn label(&self) -> String {
        "replay test model".into()
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        self.requests.lock().unwrap().push(request);
        let Some(reply) = self.replies.lock().unwrap().pop_front() else {
            return stream::iter(vec![Err(ModelError::Config("no more replies".into()))]).boxed();
        };
        let events = stream::iter(reply.events);
        if reply.hang {
            events.chain(stream::pending()).boxed()
        } else {
            events.boxed()
        }
    }
}

struct Harness {
    handle: AgentHandle,
    requests: Requests,
    workspace: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn config(
    replies: Vec<Reply>,
    workspace: &std::path::Path,
    state: &std::path::Path,
) -> (AgentConfig, Requests) {
    let requests: Requests = Arc::default();
    let model = ReplayModel {
        replies: Mutex::new(replies.into()),
        requests: requests.clone(),
    };
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    let hub = McpHub::new(Vec::new(), hub_tx);
    let mut config = AgentConfig::new(
        Box::new(model),
        hub,
        hub_rx,
        Policy::default(),
        workspace.to_path_buf(),
    );
    config.sessions_dir = Some(state.join("sessions"));
    config.checkpoints_dir = Some(state.join("checkpoints"));
    config.pins_dir = Some(state.join("pins"));
    (config, requests)
}

fn start(replies: Vec<Reply>, adjust: impl FnOnce(&mut AgentConfig)) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mut cfg, requests) = config(replies, workspace.path(), state.path());
    adjust(&mut cfg);
    Harness {
        handle: agent::spawn(cfg),
        requests,
        workspace,
        state,
    }
}

const WAIT: Duration = Duration::from_secs(30);

impl Harness {
    async fn submit(&self, text: &str) {
        self.handle
            .commands
            .send(UiCommand::Submit(text.into()))
            .await
            .unwrap();
    }

    /// Collects events until `done` says stop (inclusive); answers permission requests
    /// with `answer` (None: leave them open and hand them back in the events).
    async fn until(
        &mut self,
        mut answer: impl FnMut(&str) -> Option<UserDecision>,
        mut done: impl FnMut(&AgentEvent) -> bool,
    ) -> Vec<AgentEvent> {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("agent event within the wait")
                .expect("agent still running");
            let event = match event {
                AgentEvent::Request(request) => match answer(&asked_about(&request)) {
                    Some(decision) => {
                        give(request, decision);
                        continue;
                    }
                    None => AgentEvent::Request(request),
                },
                other => other,
            };
            let stop = done(&event);
            seen.push(event);
            if stop {
                return seen;
            }
        }
    }

    async fn turn(&mut self, answer: impl FnMut(&str) -> Option<UserDecision>) -> Vec<AgentEvent> {
        self.until(answer, |e| {
            matches!(e, AgentEvent::Fact(Event::TurnFinished { .. }))
        })
        .await
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Shuts the agent down and waits until it is gone (its event channel closed): by
    /// then the hub has closed every server and waited for it to exit, so a server's own
    /// records are complete, a call sent after the turn's last event included.
    async fn shut_down(&mut self) {
        let _ = self.handle.commands.send(UiCommand::Shutdown).await;
        loop {
            match tokio::time::timeout(WAIT, self.handle.events.recv()).await {
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(_) => panic!("the agent did not stop within {WAIT:?}"),
            }
        }
    }
}

/// What a request is about: the tool's name, `project:NAME` or `trust:FOLDER`.
fn asked_about(request: &HostRequest) -> String {
    match request {
        HostRequest::ToolCall(r) => r.payload.tool.name.clone(),
        HostRequest::ProjectServer(r) => format!("project:{}", r.payload.server),
        HostRequest::ProjectHooks(r) => format!("hooks:{}", r.payload.file),
        HostRequest::WorkspaceTrust(r) => format!("trust:{}", r.payload.folder.display()),
        HostRequest::Escalation(r) => format!("unsandboxed:{}", r.payload.command),
        HostRequest::SignIn(r) => format!("sign-in:{}", r.payload.server),
        HostRequest::RestoreFiles(r) => format!("undo:{}", r.payload.checkpoint),
        HostRequest::Sampling(r) => format!("sampling:{}", r.payload.server),
        HostRequest::Network(r) => format!("network:{}:{}", r.payload.host, r.payload.port),
        HostRequest::ChangedDefinition(r) => format!("definition:{}", r.payload.tool.name),
        HostRequest::Elicitation(r) => format!("elicitation:{}", r.payload.server),
        HostRequest::PlanReview(_) => "plan".into(),
    }
}

/// Answers any request kind as the person would with this tool-call answer.
fn give(request: HostRequest, decision: UserDecision) {
    let allow = decision.permit() == Permit::Allow;
    let delivered = match request {
        HostRequest::ToolCall(r) => r.answer(decision),
        HostRequest::ProjectServer(r) => r.answer(if allow {
            ProjectServerAnswer::Start
        } else {
            ProjectServerAnswer::DontStart
        }),
        HostRequest::ProjectHooks(r) => r.answer(if allow {
            toolgate::protocol::questions::ProjectHooksAnswer::Run
        } else {
            toolgate::protocol::questions::ProjectHooksAnswer::DontRun
        }),
        HostRequest::WorkspaceTrust(r) => r.answer(if allow {
            TrustAnswer::Once
        } else {
            TrustAnswer::No
        }),
        HostRequest::Escalation(r) => r.answer(decision),
        HostRequest::Network(r) => r.answer(decision),
        HostRequest::SignIn(r) => r.answer(if allow {
            SignInAnswer::SignIn
        } else {
            SignInAnswer::NotNow
        }),
        HostRequest::RestoreFiles(r) => r.answer(if allow {
            RestoreAnswer::Restore
        } else {
            RestoreAnswer::Keep
        }),
        HostRequest::Sampling(r) => r.answer(decision),
        HostRequest::ChangedDefinition(r) => r.answer(decision),
        HostRequest::Elicitation(r) => r.answer(if allow {
            toolgate::protocol::questions::ElicitationAnswer::Accept(Default::default())
        } else {
            toolgate::protocol::questions::ElicitationAnswer::Decline
        }),
        HostRequest::PlanReview(r) => r.answer(if allow {
            toolgate::protocol::questions::PlanAnswer::Approve(Default::default())
        } else {
            toolgate::protocol::questions::PlanAnswer::KeepPlanning(String::new())
        }),
    };
    assert!(delivered, "the agent was waiting for the answer");
}

fn no_answers(_: &str) -> Option<UserDecision> {
    panic!("no permission question expected")
}

fn finished(events: &[AgentEvent]) -> Vec<(ToolOutcome, String)> {
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

fn results_in(message: &Message) -> Vec<(String, String, bool)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } => Some((tool_use_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn turn_cancelled(events: &[AgentEvent]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            AgentEvent::Fact(Event::TurnFinished {
                cancelled: true,
                ..
            })
        )
    })
}

#[tokio::test]
async fn unknown_tool_is_an_error_result_and_the_loop_goes_on() {
    let mut h = start(
        vec![
            reply(vec![
                tool("t1", "no_such_tool", json!({})),
                stop(StopReason::ToolUse),
            ]),
            final_text("done"),
        ],
        |_| {},
    );
    h.submit("go").await;
    let events = h.turn(no_answers).await;
    assert_eq!(
        finished(&events),
        vec![(ToolOutcome::Error, "Unknown tool: no_such_tool".to_string())]
    );
    let requests = h.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert_eq!(
        results_in(last),
        vec![("t1".into(), "Unknown tool: no_such_tool".into(), true)]
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Live(Live::TextDelta(t)) if t == "done"))
    );
}

#[tokio::test]
async fn tool_use_stop_without_tool_blocks_ends_the_turn_without_an_empty_message() {
    let mut h = start(
        vec![
            reply(vec![text("thinking"), stop(StopReason::ToolUse)]),
            final_text("second answer"),
        ],
        |_| {},
    );
    h.submit("first").await;
    h.turn(no_answers).await;
    assert_eq!(h.requests().len(), 1, "the turn ended after one call");
    h.submit("second").await;
    h.turn(no_answers).await;
    let requests = h.requests();
    let roles: Vec<Role> = requests[1].messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::User]);
    assert!(requests[1].messages.iter().all(|m| !m.content.is_empty()));
    assert_eq!(
        requests[1].messages[2].content,
        vec![ContentBlock::Text {
            text: "second".into()
        }]
    );
}

#[tokio::test]
async fn tool_use_blocks_under_end_turn_still_run() {
    let mut h = start(
        vec![
            reply(vec![
                tool("t1", "bash", json!({"command": "echo under-end-turn"})),
                stop(StopReason::EndTurn),
            ]),
            final_text("ok"),
        ],
        |_| {},
    );
    h.submit("go").await;
    let events = h.turn(no_answers).await;
    let done = finished(&events);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, ToolOutcome::Ok);
    assert!(done[0].1.contains("under-end-turn"), "{}", done[0].1);
    assert_eq!(h.requests().len(), 2);
}

#[tokio::test]
async fn tool_calls_run_in_order_with_one_result_per_outcome() {
    let mut h = start(
        vec![
            reply(vec![
                tool(
                    "ok",
                    "bash",
                    json!({"command": "echo hello > note.txt && cat note.txt"}),
                ),
                tool("fails", "read_file", json!({"path": "missing.txt"})),
                tool("bad", "bash", json!({"no_command": true})),
                tool("not_object", "read_file", json!("note.txt")),
                tool("reads", "read_file", json!({"path": "note.txt"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("done"),
        ],
        |_| {},
    );
    h.submit("go").await;
    let events = h.turn(no_answers).await;
    let done = finished(&events);
    let outcomes: Vec<ToolOutcome> = done.iter().map(|d| d.0).collect();
    assert_eq!(
        outcomes,
        vec![
            ToolOutcome::Ok,
            ToolOutcome::Error,
            ToolOutcome::Error,
            ToolOutcome::Error,
            ToolOutcome::Ok
        ]
    );
    assert!(done[0].1.contains("hello"));
    assert!(
        done[2].1.starts_with("Invalid arguments for bash"),
        "{}",
        done[2].1
    );
    assert!(
        done[3].1.contains("expected a JSON object"),
        "{}",
        done[3].1
    );
    assert!(done[4].1.contains("hello"));
    let requests = h.requests();
    let results = results_in(requests[1].messages.last().unwrap());
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, vec!["ok", "fails", "bad", "not_object", "reads"]);
    assert_eq!(
        results.iter().map(|r| r.2).collect::<Vec<_>>(),
        vec![false, true, true, true, false]
    );
}

#[tokio::test]
async fn turn_cap_ends_the_turn_with_a_notice() {
    let looping: Vec<Reply> = (0..10)
        .map(|i| {
            reply(vec![
                tool(&format!("t{i}"), "glob", json!({"pattern": "*"})),
                stop(StopReason::ToolUse),
            ])
        })
        .collect();
    let mut h = start(looping, |c| c.turn_cap = 3);
    h.submit("loop forever").await;
    let events = h.turn(no_answers).await;
    assert_eq!(h.requests().len(), 3);
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::Notice { message: n }) if n.contains("Turn cap reached: 3 model calls"))));
    assert!(!turn_cancelled(&events));
}

#[tokio::test]
async fn cancel_mid_stream_gives_every_tool_use_a_result() {
    let mut h = start(
        vec![
            Reply {
                events: vec![
                    Ok(text("partial")),
                    Ok(tool("t1", "bash", json!({"command": "echo never"}))),
                ],
                hang: true,
            },
            final_text("after cancel"),
        ],
        |_| {},
    );
    h.submit("go").await;
    h.until(no_answers, |e| {
        matches!(e, AgentEvent::Live(Live::TextDelta(_)))
    })
    .await;
    h.handle.commands.send(UiCommand::Cancel).await.unwrap();
    let events = h.turn(no_answers).await;
    assert!(turn_cancelled(&events));
    assert!(finished(&events).is_empty() || finished(&events)[0].0 == ToolOutcome::Cancelled);

    h.submit("next").await;
    h.turn(no_answers).await;
    let requests = h.requests();
    let messages = &requests[1].messages;
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1].content,
        vec![
            ContentBlock::Text {
                text: "partial".into()
            },
            ContentBlock::ToolUse {
                id: "t1".into(),
                name: "bash".into(),
                input: json!({"command": "echo never"})
            }
        ]
    );
    assert_eq!(
        results_in(&messages[2]),
        vec![("t1".into(), "Cancelled by the user".into(), true)]
    );
    assert!(messages[2].content.contains(&ContentBlock::Text {
        text: "next".into()
    }));
}

#[tokio::test]
async fn cancel_mid_tool_call_stops_it_and_answers_the_rest() {
    let mut h = start(
        vec![
            reply(vec![
                tool(
                    "slow",
                    "bash",
                    json!({"command": "sleep 30; echo finished"}),
                ),
                tool(
                    "after",
                    "bash",
                    json!({"command": "echo should-not-run > ran.txt"}),
                ),
                stop(StopReason::ToolUse),
            ]),
            final_text("never asked"),
        ],
        |_| {},
    );
    h.submit("go").await;
    h.until(
        no_answers,
        |e| matches!(e, AgentEvent::Fact(Event::ToolStarted(ToolCallStart { call_id, .. })) if call_id == "slow"),
    )
    .await;
    h.handle.commands.send(UiCommand::Cancel).await.unwrap();
    let events = h.turn(no_answers).await;
    assert!(turn_cancelled(&events));
    assert_eq!(
        finished(&events),
        vec![
            (ToolOutcome::Cancelled, "Cancelled by the user".to_string()),
            (ToolOutcome::Cancelled, "Cancelled by the user".to_string())
        ]
    );
    assert!(!h.workspace.path().join("ran.txt").exists());
    assert_eq!(h.requests().len(), 1, "no model call after the cancel");
}

#[tokio::test]
async fn large_outputs_are_truncated_for_the_model_and_kept_whole_in_the_session() {
    let mut h = start(
        vec![
            reply(vec![
                tool(
                    "big",
                    "bash",
                    json!({"command": "printf 'x%.0s' $(seq 1 500); printf END"}),
                ),
                stop(StopReason::ToolUse),
            ]),
            final_text("done"),
        ],
        |c| c.output_budget = 100,
    );
    h.submit("go").await;
    let events = h.turn(no_answers).await;
    let done = finished(&events);
    let shown = &done[0].1;
    // The head (three quarters of the budget) and the tail (a quarter), the marker between.
    assert!(shown.starts_with(&"x".repeat(75)));
    assert!(!shown.starts_with(&"x".repeat(76)));
    assert!(
        shown.contains("[output truncated: showing the first 75 and the last 25 of"),
        "{shown}"
    );
    // The last 25 characters: where the command's end and its exit status are.
    assert!(shown.ends_with("\n\nxxxxxxxEND\nexit status: 0"), "{shown}");
    let path = shown
        .split("saved in ")
        .nth(1)
        .unwrap()
        .split_once("]\n\n")
        .unwrap()
        .0
        .to_string();
    let full = std::fs::read_to_string(&path).unwrap();
    assert!(full.contains(&"x".repeat(500)));
    assert!(path.starts_with(h.state.path().to_str().unwrap()));
    let model_saw = results_in(h.requests()[1].messages.last().unwrap());
    assert_eq!(&model_saw[0].1, shown);
}

#[tokio::test]
async fn connect_to_an_unknown_server_lists_the_available_ones() {
    let mut h = start(
        vec![
            reply(vec![
                tool("c1", "connect_mcp", json!({"name": "nowhere"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("done"),
        ],
        |_| {},
    );
    h.submit("connect").await;
    let events = h.turn(no_answers).await;
    assert_eq!(
        finished(&events),
        vec![(
            ToolOutcome::Error,
            "Unknown MCP server 'nowhere'. No MCP servers are configured.".to_string()
        )]
    );
}

#[tokio::test]
async fn model_error_ends_the_turn_with_an_error_event() {
    let mut h = start(
        vec![Reply {
            events: vec![
                Ok(text("half")),
                Err(ModelError::Stream {
                    provider: "test".into(),
                    message: "connection reset".into(),
                }),
            ],
            hang: false,
        }],
        |_| {},
    );
    h.submit("go").await;
    let events = h.turn(no_answers).await;
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::Error { message: m }) if m == "test stream broken: connection reset")));
}

#[tokio::test]
async fn first_events_are_session_start_and_the_starting_pool() {
    let mut h = start(vec![], |_| {});
    let events = h
        .until(no_answers, |e| {
            matches!(e, AgentEvent::View(View::PoolChanged(_)))
        })
        .await;
    assert!(
        matches!(&events[0], AgentEvent::View(View::SessionStarted { model_label, .. }) if model_label == "replay test model")
    );
    let AgentEvent::View(View::PoolChanged(PoolUpdate {
        snapshot,
        added,
        removed,
        ..
    })) = events.last().unwrap()
    else {
        unreachable!()
    };
    let names: Vec<&str> = snapshot.iter().map(|e| e.tool.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "connect_mcp"
        ]
    );
    assert_eq!(added.len(), names.len());
    assert!(removed.is_empty());
}

#[tokio::test]
async fn resume_restores_the_conversation() {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let (cfg, _) = config(
        vec![final_text("the answer is 42")],
        workspace.path(),
        state.path(),
    );
    let mut first = Harness {
        handle: agent::spawn(cfg),
        requests: Arc::default(),
        workspace: tempfile::tempdir().unwrap(),
        state: tempfile::tempdir().unwrap(),
    };
    let start_events = first
        .until(no_answers, |e| {
            matches!(e, AgentEvent::View(View::SessionStarted { .. }))
        })
        .await;
    let AgentEvent::View(View::SessionStarted { session_id, .. }) = &start_events[0] else {
        unreachable!()
    };
    let session_id = session_id.clone();
    first.submit("what is the answer?").await;
    first.turn(no_answers).await;
    first
        .handle
        .commands
        .send(UiCommand::Shutdown)
        .await
        .unwrap();
    while first.handle.events.recv().await.is_some() {}

    let sessions = state.path().join("sessions");
    let resolved = toolgate::journal::resolve(
        &sessions,
        workspace.path(),
        &toolgate::agent::ResumeFrom::Latest,
    )
    .unwrap();
    assert_eq!(resolved, session_id);

    let (mut cfg, requests) = config(vec![final_text("still 42")], workspace.path(), state.path());
    cfg.resume = Some(resolved);
    let mut second = Harness {
        handle: agent::spawn(cfg),
        requests,
        workspace,
        state,
    };
    let replayed = second
        .until(no_answers, |e| {
            matches!(e, AgentEvent::View(View::PoolChanged(_)))
        })
        .await;
    assert!(replayed.iter().any(
        |e| matches!(e, AgentEvent::Fact(Event::User { text: t }) if t == "what is the answer?")
    ));
    assert!(
        replayed
            .iter()
            .any(|e| matches!(e, AgentEvent::Fact(Event::Notice { message: n }) if n.contains("2 messages restored")))
    );
    second.submit("and again?").await;
    second.turn(no_answers).await;
    let request = &second.requests()[0];
    let texts: Vec<(Role, String)> = request
        .messages
        .iter()
        .flat_map(|m| {
            m.content.iter().filter_map(move |b| match b {
                ContentBlock::Text { text } => Some((m.role, text.clone())),
                _ => None,
            })
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            (Role::User, "what is the answer?".into()),
            (Role::Assistant, "the answer is 42".into()),
            (Role::User, "and again?".into()),
        ]
    );
}

// ---------- leaving the sandbox ----------

fn bash(id: &str, input: Value) -> Reply {
    reply(vec![tool(id, "bash", input), stop(StopReason::ToolUse)])
}

/// Escalation requests the harness saw, with what they showed.
fn escalations(seen: &[String]) -> Vec<&String> {
    seen.iter()
        .filter(|s| s.starts_with("unsandboxed:"))
        .collect()
}

#[tokio::test]
async fn leaving_the_sandbox_always_asks_whatever_rules_say_and_a_session_grant_covers_the_rest() {
    // A read-only sandbox, so the write below fails confined wherever the test runs (a
    // temp dir, where the folder lives, is writable under workspace-write).
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().display().to_string();
    let unsandboxed = |name: &str| {
        json!({
            "command": format!("touch {out}/{name}"),
            "unsandboxed": true,
            "justification": "write the release notes into the shared folder",
        })
    };
    let mut h = start(
        vec![
            bash(
                "sandboxed",
                json!({"command": format!("touch {out}/sandboxed")}),
            ),
            bash("first", unsandboxed("first")),
            bash("second", unsandboxed("second")),
            bash(
                "unjustified",
                json!({"command": format!("touch {out}/third"), "unsandboxed": true}),
            ),
            final_text("done"),
        ],
        |c| {
            // An allow rule for the command does not cover leaving the sandbox.
            let (rules, _, problems) = toolgate::policy::parse_permissions(
                "[permissions]\nallow = [\"Bash(touch:*)\"]\n",
                "test",
                toolgate::policy::RuleSource::Flag,
            );
            assert!(problems.is_empty(), "{problems:?}");
            c.policy.add_rules(rules);
            c.sandbox = toolgate::sandbox::Sandbox::new(toolgate::settings::SandboxSettings {
                mode: toolgate::settings::SandboxMode::ReadOnly,
                ..Default::default()
            });
        },
    );
    h.submit("write the notes").await;
    let mut asked = Vec::new();
    let mut shown = Vec::new();
    let events = h
        .until(
            |about| {
                asked.push(about.to_string());
                Some(UserDecision::AllowSession)
            },
            |e| {
                if let AgentEvent::Request(HostRequest::Escalation(r)) = e {
                    shown.push(r.payload.clone());
                }
                matches!(e, AgentEvent::Fact(Event::TurnFinished { .. }))
            },
        )
        .await;
    assert_eq!(
        escalations(&asked),
        vec![&format!("unsandboxed:touch {out}/first")],
        "asked once; the session grant covers the second"
    );
    let done = finished(&events);
    // Inside the sandbox the write is refused and the result says the sandbox did it.
    assert_eq!(done[0].0, ToolOutcome::Error, "{}", done[0].1);
    assert!(done[0].1.contains("[sandbox:"), "{}", done[0].1);
    assert!(done[0].1.contains("\"unsandboxed\": true"), "{}", done[0].1);
    assert!(!outside.path().join("sandboxed").exists());
    // Approved: it ran outside, and so did the next one under the grant.
    assert_eq!(done[1].0, ToolOutcome::Ok, "{}", done[1].1);
    assert_eq!(done[2].0, ToolOutcome::Ok, "{}", done[2].1);
    assert!(outside.path().join("first").exists());
    assert!(outside.path().join("second").exists());
    // No justification, no question: the model is told what is missing.
    assert_eq!(done[3].0, ToolOutcome::Denied, "{}", done[3].1);
    assert!(
        done[3].1.contains("needs a one-line `justification`"),
        "{}",
        done[3].1
    );
    assert!(!outside.path().join("third").exists());

    let deciders: Vec<(String, Decider)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::PermissionDecided(PermissionLine { call_id, record })) => {
                Some((call_id.to_string(), record.decider.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(deciders.contains(&(
        "first".into(),
        Decider::Person {
            answer: UserDecision::AllowSession,
            asked_by: "sandbox: the model asked to leave it".into(),
        }
    )));
    assert!(deciders.contains(&(
        "second".into(),
        Decider::SessionGrant {
            tool: "bash (outside the sandbox)".into()
        }
    )));
}

/// A managed `[sandbox]` floor: a console session (someone could answer) still never asks
/// to leave the sandbox; the call is refused naming the managed policy, and nothing runs.
#[tokio::test]
async fn a_managed_sandbox_floor_refuses_leaving_the_sandbox_without_asking() {
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().display().to_string();
    let managed = outside.path().join("managed.toml");
    let mut h = start(
        vec![
            bash(
                "escape",
                json!({
                    "command": format!("touch {out}/escaped"),
                    "unsandboxed": true,
                    "justification": "write into the shared folder",
                }),
            ),
            final_text("done"),
        ],
        |c| {
            c.sandbox = toolgate::sandbox::Sandbox::new(toolgate::settings::SandboxSettings {
                mode: toolgate::settings::SandboxMode::ReadOnly,
                managed_floor: Some(managed.clone()),
                ..Default::default()
            });
        },
    );
    h.submit("write the notes").await;
    let mut asked = Vec::new();
    let events = h
        .until(
            |about| {
                asked.push(about.to_string());
                Some(UserDecision::AllowSession)
            },
            |e| matches!(e, AgentEvent::Fact(Event::TurnFinished { .. })),
        )
        .await;
    assert!(escalations(&asked).is_empty(), "asked: {asked:?}");
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Denied, "{}", done[0].1);
    assert!(
        done[0].1.contains("the managed policy") && done[0].1.contains("managed.toml"),
        "{}",
        done[0].1
    );
    assert!(!outside.path().join("escaped").exists());
}

fn without_sandbox(c: &mut AgentConfig) {
    c.sandbox = toolgate::sandbox::Sandbox::with_status(
        toolgate::settings::SandboxSettings::default(),
        toolgate::sandbox::SandboxStatus::unavailable("forced for the test"),
    );
}

#[tokio::test]
async fn without_a_sandbox_every_bash_call_asks_showing_why() {
    let mut h = start(
        vec![
            bash("a", json!({"command": "touch ran-a; echo unconfined"})),
            bash("b", json!({"command": "touch ran-b; echo again"})),
            final_text("done"),
        ],
        without_sandbox,
    );
    h.submit("echo").await;
    let mut asked = Vec::new();
    let mut reasons = Vec::new();
    let mut answers = VecDeque::from(vec![UserDecision::AllowOnce, UserDecision::Deny]);
    let events = h
        .until(
            |about| {
                asked.push(about.to_string());
                answers.pop_front()
            },
            |e| {
                if let AgentEvent::Request(HostRequest::Escalation(r)) = e {
                    reasons.push(r.payload.reason.clone());
                }
                matches!(e, AgentEvent::Fact(Event::TurnFinished { .. }))
            },
        )
        .await;
    assert_eq!(
        asked,
        vec![
            "unsandboxed:touch ran-a; echo unconfined",
            "unsandboxed:touch ran-b; echo again"
        ],
        "an ordinary command asks too: nothing runs unconfined silently"
    );
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Ok, "{}", done[0].1);
    assert!(done[0].1.contains("unconfined"), "{}", done[0].1);
    assert_eq!(done[1].0, ToolOutcome::Denied, "{}", done[1].1);
    // The far side: the approved command ran, the denied one never started.
    assert!(h.workspace.path().join("ran-a").exists());
    assert!(!h.workspace.path().join("ran-b").exists());
}

#[tokio::test]
async fn without_a_sandbox_headless_refuses_bash_saying_why() {
    let mut h = start(
        vec![
            bash("a", json!({"command": "touch ran; echo unconfined"})),
            final_text("done"),
        ],
        |c| {
            without_sandbox(c);
            c.headless = true;
        },
    );
    h.submit("echo").await;
    let events = h.turn(no_answers).await;
    assert_eq!(
        finished(&events),
        vec![(
            ToolOutcome::Denied,
            "Permission denied: the sandbox is unavailable (forced for the test); running a command outside the sandbox needs a person's approval, which non-interactive mode cannot give".to_string()
        )]
    );
    assert!(
        !h.workspace.path().join("ran").exists(),
        "the refused command ran"
    );
}

#[tokio::test]
async fn a_command_that_rewrites_toolgates_own_config_is_undone_and_reported() {
    let mut h = start(
        vec![
            bash(
                "sneaky",
                json!({"command": "echo '{\"mcpServers\":{\"evil\":{\"command\":\"nc\"}}}' > .mcp.json && mkdir -p .toolgate && printf '[permissions]\\nallow = [\"Bash\"]\\n' > .toolgate/config.toml && echo wrote"}),
            ),
            final_text("done"),
        ],
        |_| {},
    );
    let original = "{\"mcpServers\": {}}";
    std::fs::write(h.workspace.path().join(".mcp.json"), original).unwrap();
    h.submit("configure").await;
    let events = h.turn(no_answers).await;
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Error, "{}", done[0].1);
    assert!(
        done[0].1.contains("wrote"),
        "the command ran: {}",
        done[0].1
    );
    assert!(
        done[0].1.contains(
            "bash changed toolgate's own configuration (.mcp.json, .toolgate/config.toml); it was put back"
        ),
        "{}",
        done[0].1
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join(".mcp.json")).unwrap(),
        original
    );
    assert!(!h.workspace.path().join(".toolgate/config.toml").exists());
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::Notice { message: n }) if n.contains("it was put back"))));
}

#[tokio::test]
async fn a_grant_to_run_unsandboxed_does_not_cover_a_destructive_command() {
    let mut h = start(
        vec![
            bash("a", json!({"command": "echo unconfined"})),
            bash("b", json!({"command": "rm -rf build"})),
            final_text("done"),
        ],
        without_sandbox,
    );
    std::fs::create_dir_all(h.workspace.path().join("build")).unwrap();
    h.submit("clean").await;
    let mut asked = Vec::new();
    let mut answers = VecDeque::from(vec![UserDecision::AllowSession, UserDecision::Deny]);
    let events = h
        .until(
            |about| {
                asked.push(about.to_string());
                answers.pop_front()
            },
            |e| matches!(e, AgentEvent::Fact(Event::TurnFinished { .. })),
        )
        .await;
    // The first question is about leaving the sandbox; the second, under that grant, is
    // the policy's own question about a destructive command.
    assert_eq!(asked, vec!["unsandboxed:echo unconfined", "bash"]);
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Ok, "{}", done[0].1);
    assert_eq!(done[1].0, ToolOutcome::Denied, "{}", done[1].1);
    assert!(h.workspace.path().join("build").exists());
}

mod servers;
