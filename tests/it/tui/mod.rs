//! The console's views (TestBackend + insta snapshots) and key handling (feeding `update`).
//! Time is `App::now`, moved by hand, so nothing here depends on wall-clock timing.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
// crossterm's `Event` is the terminal's in this file; the agent's facts are `Fact`.
use ratatui::style::Color;
use serde_json::json;
use tokio::sync::oneshot;
use toolgate::protocol::Event as Fact;

use crate::support::console_view::{colours_of, render, resize, screen, screen_of};
use crate::support::real_tools;
use toolgate::builtin::{BuiltinId, tools};
use toolgate::mcp::ServerStatus;
use toolgate::model::Usage;
use toolgate::policy::{
    AuditRecord, Decider, Decision, Permit, PersonAnswer as UserDecision, RuleSource, Verdict,
};
use toolgate::protocol::questions::{
    HostRequest, Origin, ProjectServer, ProjectServerAnswer, Reply, Request, ToolCall, TrustAnswer,
    WorkspaceTrust,
};
use toolgate::protocol::{AgentEvent, Containment, PoolEntry, PoolUpdate, ToolOutcome, UiCommand};
use toolgate::protocol::{GrantLine, Live, PermissionLine, ServerLogLine, ToolCallStart, View};
use toolgate::protocol::{PoolTool, ToolClaims, ToolOrigin};
use toolgate::tui::{
    App, CHANGE_HIGHLIGHT, ConsoleInfo, Effect, FRAME_INTERVAL, Focus, FrameLimiter, GUARD_WINDOW,
    Msg, Overlay, ServerInfo, update,
};

// ---------- fixtures ----------

fn info() -> ConsoleInfo {
    ConsoleInfo {
        workspace: "/home/dev/project".into(),
        servers: ["docs", "deploy", "fs"]
            .iter()
            .map(|n| ServerInfo {
                name: n.to_string(),
                command_line: format!("toolgate serve {n}"),
                containment: Containment::Confined {
                    profile: "read-only, no network".into(),
                },
                enabled: true,
            })
            .collect(),
        no_color: false,
        managed: Vec::new(),
        notify: Default::default(),
    }
}

fn allow(rule: &str) -> Verdict {
    Verdict {
        decision: Decision::Allow,
        rule: rule.into(),
        source: RuleSource::Default,
    }
}

fn ask(rule: &str, why: &str) -> Verdict {
    Verdict {
        decision: Decision::Ask { why: why.into() },
        rule: rule.into(),
        source: RuleSource::Default,
    }
}

fn object_schema(props: serde_json::Value) -> serde_json::Value {
    json!({"type": "object", "properties": props})
}

fn builtin_entries() -> Vec<PoolEntry> {
    let mut out: Vec<PoolEntry> = [
        (tools::bash::ID, "Run a shell command in the workspace"),
        (tools::read_file::ID, "Read a file"),
        (tools::write_file::ID, "Write a file"),
        (tools::edit_file::ID, "Replace text in a file"),
        (tools::glob::ID, "List files matching a pattern"),
    ]
    .iter()
    .map(|(kind, desc)| PoolEntry {
        tool: PoolTool::builtin(kind.name(), desc, object_schema(json!({}))),
        verdict: allow("default: built-in"),
    })
    .collect();
    let connect = PoolTool {
        origin: ToolOrigin::Builtin { connector: true },
        ..PoolTool::builtin(
            tools::connect_mcp::ID.name(),
            "Connect a configured MCP server and add its tools",
            object_schema(json!({"server": {"type": "string", "enum": ["docs", "deploy", "fs"]}})),
        )
    };
    out.push(PoolEntry {
        tool: connect,
        verdict: allow("default: connector"),
    });
    out
}

fn mcp_entry(server: &str, tool: &str, verdict: Verdict, claims: ToolClaims) -> PoolEntry {
    PoolEntry {
        tool: PoolTool {
            name: format!("mcp__{server}__{tool}"),
            origin: ToolOrigin::Mcp {
                server: server.into(),
                tool: tool.into(),
            },
            description: format!("{tool} on {server}"),
            input_schema: object_schema(json!({"query": {"type": "string"}})).into(),
            claims,
            shortened: false,
        },
        verdict,
    }
}

fn docs_entries() -> Vec<PoolEntry> {
    let read_only = ToolClaims {
        read_only: Some(true),
        ..ToolClaims::default()
    };
    vec![
        mcp_entry(
            "docs",
            "search",
            allow("mcp__docs__search"),
            read_only.clone(),
        ),
        mcp_entry(
            "docs",
            "get_version",
            allow("mcp__docs__get_version"),
            read_only,
        ),
    ]
}

fn started_app() -> App {
    let now = Instant::now();
    let mut app = App::new(info(), now);
    agent(
        &mut app,
        AgentEvent::View(View::SessionStarted {
            session_id: "5f3a9c1e-0000-4000-8000-000000000000".into(),
            model_label: "scripted demo".into(),
            workspace: "/home/dev/project".into(),
            servers: info().servers,
            sandbox_problem: None,
        }),
    );
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot: builtin_entries(),
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    app
}

fn agent(app: &mut App, event: AgentEvent) -> Vec<Effect> {
    update(app, Msg::Agent(event)).effects
}

fn key_mod(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    update(app, Msg::Terminal(Event::Key(KeyEvent::new(code, mods)))).effects
}

/// A deadline the app asked for fell due.
fn tick(app: &mut App) {
    let _ = update(app, Msg::Tick);
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    key_mod(app, code, KeyModifiers::NONE)
}

fn ch(app: &mut App, c: char) -> Vec<Effect> {
    key(app, KeyCode::Char(c))
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        ch(app, c);
    }
}

fn ctrl_c(app: &mut App) -> Vec<Effect> {
    key_mod(app, KeyCode::Char('c'), KeyModifiers::CONTROL)
}

fn advance(app: &mut App, by: Duration) {
    app.now += by;
}

/// A tool-call request as the gate sends it, with the receiver the agent waits on.
fn tool_request(
    call_id: &str,
    entry: &PoolEntry,
    input: serde_json::Value,
    now: Instant,
    deadline: Option<Instant>,
) -> (AgentEvent, oneshot::Receiver<Reply<UserDecision>>) {
    previewed_request(call_id, entry, input, None, now, deadline)
}

/// [`tool_request`] carrying the gate's preview (a diff, a command).
fn previewed_request(
    call_id: &str,
    entry: &PoolEntry,
    input: serde_json::Value,
    preview: Option<toolgate::protocol::questions::Preview>,
    now: Instant,
    deadline: Option<Instant>,
) -> (AgentEvent, oneshot::Receiver<Reply<UserDecision>>) {
    let why = match &entry.verdict.decision {
        Decision::Ask { why } => why.clone(),
        _ => "asked".into(),
    };
    let (request, rx) = Request::new(
        Origin::Tool {
            tool: entry.tool.name.clone(),
            server: entry.tool.server().map(str::to_string),
        },
        ToolCall {
            call_id: call_id.into(),
            tool: entry.tool.clone(),
            input,
            why,
            verdict: entry.verdict.clone(),
            preview,
        },
        now,
        deadline,
    );
    (AgentEvent::Request(HostRequest::from(request)), rx)
}

fn permission(
    call_id: &str,
    entry: &PoolEntry,
    input: serde_json::Value,
) -> (AgentEvent, oneshot::Receiver<Reply<UserDecision>>) {
    tool_request(call_id, entry, input, Instant::now(), None)
}

/// The deploy server's `trigger` as the shipped server lists it (asked once per test
/// run): its real description, input schema and claims.
fn trigger_definition() -> &'static serde_json::Value {
    static DEFINITION: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
    DEFINITION.get_or_init(|| real_tools::definition("deploy", "trigger"))
}

fn trigger_entry() -> PoolEntry {
    let real = trigger_definition();
    let claim = |hint: &str| real["annotations"][hint].as_bool();
    let mut entry = mcp_entry(
        "deploy",
        "trigger",
        ask(
            "mcp__deploy__trigger",
            "rule mcp__deploy__trigger asks before every deploy",
        ),
        ToolClaims {
            title: real["annotations"]["title"].as_str().map(str::to_string),
            read_only: claim("readOnlyHint"),
            destructive: claim("destructiveHint"),
            idempotent: claim("idempotentHint"),
            open_world: claim("openWorldHint"),
            ..ToolClaims::default()
        },
    );
    entry.tool.description = real["description"].as_str().unwrap().to_string();
    entry.tool.input_schema = real["inputSchema"].clone().into();
    entry
}

/// A trigger call the real server accepts (checked against its schema).
fn trigger_input() -> serde_json::Value {
    real_tools::valid_input(trigger_definition(), json!({"service": "web"}))
}

/// Opens the trigger dialog and waits out the guard window.
fn open_trigger_modal(app: &mut App) -> oneshot::Receiver<Reply<UserDecision>> {
    let (ev, rx) = permission("call-7", &trigger_entry(), trigger_input());
    agent(app, ev);
    advance(app, GUARD_WINDOW + Duration::from_millis(1));
    rx
}

/// Carries out the effects like the runtime does and returns the commands sent.
fn perform(effects: Vec<Effect>) -> (Vec<UiCommand>, bool) {
    let mut commands = Vec::new();
    let mut quit = false;
    for e in effects {
        match e {
            Effect::SendCommand(c) => commands.push(c),
            Effect::Quit => quit = true,
            // The history file and the editor are the runtime's (tests/it/e2e_composer.rs).
            Effect::Remember(_) | Effect::Edit(_) | Effect::Notify { .. } => {}
        }
    }
    (commands, quit)
}

/// The person's answer as the asker receives it (None: not answered yet).
fn answer_of<A: std::fmt::Debug>(mut rx: oneshot::Receiver<Reply<A>>) -> Option<A> {
    match rx.try_recv().ok()? {
        Reply::Person(answer) => Some(answer),
        other => panic!("expected the person's answer, got {other:?}"),
    }
}

// ---------- snapshots ----------

#[test]
fn start_screen_shows_six_tools() {
    let mut app = started_app();
    let text = screen(&mut app, 110, 30);
    for tool in [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "connect_mcp",
    ] {
        assert!(text.contains(tool), "{tool} missing:\n{text}");
    }
    assert!(text.contains("scripted demo"));
    assert!(text.contains("Tool pool · 6"));
    insta::assert_snapshot!("start_screen", text);
}

#[test]
fn pool_after_connecting_docs_highlights_new_tools_then_settles() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "docs".into(),
            status: ServerStatus::Ready {
                tools: 2,
                protocol: "2025-11-25".into(),
            },
        }),
    );
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec!["mcp__docs__search".into(), "mcp__docs__get_version".into()],
            removed: vec![],
            ..Default::default()
        })),
    );
    let terminal = render(&mut app, 110, 30);
    let text = screen_of(&terminal);
    assert!(text.contains("docs ● ready · 2 tools"), "{text}");
    assert!(text.contains("mcp__docs__search new"), "{text}");
    // The new name is drawn highlighted (green background).
    let buf = terminal.backend().buffer();
    let highlighted = (0..buf.area.height).any(|y| {
        (0..buf.area.width).any(|x| buf[(x, y)].symbol() == "m" && buf[(x, y)].bg == Color::Green)
    });
    assert!(highlighted, "new tools are not highlighted");
    insta::assert_snapshot!("pool_after_connect_docs", text);

    // The highlight ends by itself, and the app asks to be woken for exactly that.
    let deadline = app
        .next_deadline()
        .expect("a wake-up for the highlight end");
    assert_eq!(deadline, app.now + CHANGE_HIGHLIGHT);
    advance(&mut app, CHANGE_HIGHLIGHT);
    tick(&mut app);
    let text = screen(&mut app, 110, 30);
    assert!(!text.contains("mcp__docs__search new"), "{text}");
    assert!(text.contains("mcp__docs__search"));
    assert_eq!(app.next_deadline(), None, "idle console keeps a timer");
}

#[test]
fn removed_tools_are_struck_through_briefly() {
    let mut app = started_app();
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    let mut without_version = builtin_entries();
    without_version.push(docs_entries().remove(0));
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot: without_version,
            added: vec![],
            removed: vec!["mcp__docs__get_version".into()],
            ..Default::default()
        })),
    );
    let terminal = render(&mut app, 110, 30);
    let buf = terminal.backend().buffer();
    let struck = (0..buf.area.height).any(|y| {
        let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
        row.contains("mcp__docs__get_version")
            && (0..buf.area.width).any(|x| {
                buf[(x, y)]
                    .modifier
                    .contains(ratatui::style::Modifier::CROSSED_OUT)
            })
    });
    assert!(struck, "removed tool not shown struck through");
    advance(&mut app, CHANGE_HIGHLIGHT);
    tick(&mut app);
    assert!(!screen(&mut app, 110, 30).contains("get_version"));
}

#[test]
fn modal_for_deploy_trigger() {
    let mut app = started_app();
    let _rx = open_trigger_modal(&mut app);
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("Permission required"), "{text}");
    assert!(text.contains("mcp__deploy__trigger"));
    assert!(text.contains("asked by: mcp__deploy__trigger (MCP server 'deploy')"));
    assert!(text.contains("MCP server 'deploy' runs its tool 'trigger' with the arguments below."));
    assert!(text.contains("rule: mcp__deploy__trigger (default)"));
    assert!(text.contains("why: rule mcp__deploy__trigger asks before every deploy"));
    // The real tool's claims, all of them, marked as the server's word.
    assert!(
        text.contains("server claims (not verified): title=\"Trigger a deployment\",")
            && text.contains("readOnlyHint=false, destructiveHint=true, idempotentHint=false"),
        "{text}"
    );
    assert!(text.contains("\"service\": \"web\""), "{text}");
    assert!(text.contains("[y] Allow once"));
    insta::assert_snapshot!("modal_deploy_trigger", text);
}

#[test]
fn failed_server_shows_reason() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "fs".into(),
            status: ServerStatus::Failed {
                reason: "process exited with status 1 before the handshake".into(),
                stderr_tail: vec!["error: root /nope does not exist".into()],
            },
        }),
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("fs ✗ failed"), "{text}");
    assert!(text.contains("process exited with status 1"), "{text}");
    insta::assert_snapshot!("failed_server", text);

    // /mcp shows the last error and the stderr tail of the selected server.
    type_text(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("command: toolgate serve fs"), "{text}");
    assert!(text.contains("last error: process exited"), "{text}");
    assert!(text.contains("error: root /nope does not exist"), "{text}");
    // r reconnects the selected server.
    let (commands, _) = perform(ch(&mut app, 'r'));
    assert!(matches!(&commands[..], [UiCommand::Connect(n)] if n == "fs"));
}

#[test]
fn server_logs_instructions_sampling_and_roots_in_the_console() {
    use toolgate::mcp::{LogLevel, SamplingRequest, SamplingTurn};
    use toolgate::protocol::{SamplingOutcome, SamplingReport};
    let mut app = started_app();
    let ready = ServerStatus::Ready {
        tools: 2,
        protocol: "2025-11-25".into(),
    };
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "docs".into(),
            status: ready,
        }),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerInstructions {
            server: "docs".into(),
            text: "Search before you read.".into(),
        }),
    );
    for (level, message) in [
        (LogLevel::Info, "indexed 12 pages"),
        (LogLevel::Error, "index corrupt"),
    ] {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ServerLog(ServerLogLine {
                server: "docs".into(),
                level,
                message: message.into(),
            })),
        );
    }
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("docs ● ready · 0 tools !log"), "{text}");

    // A tool of that server shows the server's latest log messages in its details.
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    key(&mut app, KeyCode::Tab);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 110, 40);
    assert!(text.contains("mcp__docs__search"), "{text}");
    assert!(text.contains("server log (2 messages"), "{text}");
    assert!(text.contains("[error] index corrupt"), "{text}");
    key(&mut app, KeyCode::Tab);

    type_text(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    let text = screen(&mut app, 110, 40);
    assert!(
        text.contains("instructions (the server's own words):"),
        "{text}"
    );
    assert!(text.contains("Search before you read."), "{text}");
    assert!(
        text.contains("log: 2 messages, 1 at error level or worse"),
        "{text}"
    );
    assert!(text.contains("[info] indexed 12 pages"), "{text}");
    assert!(text.contains("[error] index corrupt"), "{text}");
    key(&mut app, KeyCode::Esc);

    type_text(&mut app, "/roots add ../shared notes");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(
        matches!(&commands[..], [UiCommand::AddRoot(dir)] if dir.as_os_str() == "../shared notes"),
        "{commands:?}"
    );
    type_text(&mut app, "/roots");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(
        matches!(&commands[..], [UiCommand::ListRoots]),
        "{commands:?}"
    );

    // A sampling request: who asks, the system prompt, the messages, the limits.
    let (request, rx) = Request::new(
        Origin::Server {
            server: "docs".into(),
        },
        toolgate::protocol::questions::Sampling {
            server: "docs".into(),
            request: SamplingRequest {
                system_prompt: Some("You are terse.".into()),
                messages: vec![SamplingTurn {
                    role: toolgate::model::Role::User,
                    text: "Summarize the permissions page".into(),
                }],
                max_tokens: 300,
                model_hints: vec!["claude".into()],
                ..Default::default()
            },
            model: "scripted demo".into(),
            cap: 4096,
            verdict: ask(
                "default: sampling asks",
                "no rule mentions sampling by 'docs'",
            ),
        },
        app.now,
        None,
    );
    agent(&mut app, AgentEvent::Request(HostRequest::from(request)));
    let text = screen(&mut app, 110, 36);
    assert!(text.contains("Sampling request"), "{text}");
    assert!(
        text.contains("MCP server 'docs' asks to use your model (scripted demo)"),
        "{text}"
    );
    assert!(
        text.contains("max tokens: 300 (toolgate's cap: 4096)"),
        "{text}"
    );
    assert!(text.contains("model preferences: hints claude"), "{text}");
    assert!(text.contains("You are terse."), "{text}");
    assert!(text.contains("Summarize the permissions page"), "{text}");
    assert!(text.contains("[a] Allow for this session"), "{text}");
    advance(&mut app, GUARD_WINDOW + Duration::from_millis(10));
    tick(&mut app);
    ch(&mut app, 'a');
    assert_eq!(answer_of(rx), Some(UserDecision::AllowSession));

    agent(
        &mut app,
        AgentEvent::Fact(Fact::Sampling(SamplingReport {
            server: "docs".into(),
            max_tokens: 300,
            system_prompt: None,
            messages: vec![],
            decision: Some(AuditRecord::new(
                "sampling(docs)",
                &json!({}),
                Permit::Allow,
                None,
                Decider::Person {
                    answer: UserDecision::AllowSession,
                    asked_by: "default: sampling asks".into(),
                },
            )),
            outcome: SamplingOutcome::Answered {
                model: "scripted demo".into(),
                stop_reason: toolgate::model::StopReason::EndTurn,
                usage: Usage {
                    input_tokens: 12,
                    output_tokens: 5,
                    ..Default::default()
                },
                text: "short".into(),
            },
        })),
    );
    // The gate reports the grant the answer made.
    agent(
        &mut app,
        AgentEvent::View(View::GrantsChanged(vec![GrantLine::session(
            "sampling(docs)",
        )])),
    );
    let text = screen(&mut app, 110, 30);
    assert!(
        text.contains("sampling for 'docs' answered by scripted demo: 12 in / 5 out tokens,"),
        "{text}"
    );
    // The tokens count towards the session's total on the status line.
    assert!(text.contains("↑12 ↓5 tok"), "{text}");
    // "For this session" is listed with the tool grants, and revocable there.
    type_text(&mut app, "/permissions");
    key(&mut app, KeyCode::Enter);
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("sampling(docs)"), "{text}");
    let (commands, _) = perform(ch(&mut app, 'x'));
    assert!(
        matches!(&commands[..], [UiCommand::RevokeGrant(g)] if g == "sampling(docs)"),
        "{commands:?}"
    );
}

#[test]
fn servers_the_agent_loaded_after_the_trust_question_are_listed_with_their_command() {
    // The console's own preview ran before the folder was trusted, so it lacks the
    // project's server; the agent's SessionStarted brings the full list.
    let now = Instant::now();
    let mut app = App::new(info(), now);
    let mut servers = info().servers;
    servers.push(ServerInfo {
        name: "tracker".into(),
        command_line: "npx -y @acme/tracker-mcp --token-env ACME_TOKEN".into(),
        containment: Containment::Unsandboxed,
        enabled: true,
    });
    agent(
        &mut app,
        AgentEvent::View(View::SessionStarted {
            session_id: "5f3a9c1e-0000-4000-8000-000000000001".into(),
            model_label: "scripted demo".into(),
            workspace: "/home/dev/project".into(),
            servers,
            sandbox_problem: None,
        }),
    );
    type_text(&mut app, "/mcp");
    key(&mut app, KeyCode::Enter);
    for _ in 0..3 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("tracker"), "{text}");
    assert!(
        text.contains("command: npx -y @acme/tracker-mcp --token-env ACME_TOKEN"),
        "{text}"
    );
    assert!(
        text.contains("NOT sandboxed: runs with your full rights"),
        "{text}"
    );
    let (commands, _) = perform(ch(&mut app, 'r'));
    // Closed again, the pool panel marks the unsandboxed server and the status line stays
    // quiet: bash itself is sandboxed here.
    key(&mut app, KeyCode::Esc);
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("tracker ○ not connected ⚠"), "{text}");
    assert!(!text.contains("docs ○ not connected ⚠"), "{text}");
    assert!(!text.contains("NO SANDBOX"), "{text}");
    assert!(
        matches!(&commands[..], [UiCommand::Connect(n)] if n == "tracker"),
        "{commands:?}"
    );
}

#[test]
fn mcp_reload_asks_the_agent_and_a_reloaded_list_updates_the_panel() {
    let mut app = started_app();
    type_text(&mut app, "/mcp reload");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(
        matches!(&commands[..], [UiCommand::ReloadConfig]),
        "{commands:?}"
    );
    assert_eq!(
        app.overlay,
        Overlay::None,
        "reload does not open the server list"
    );

    // deploy was removed from the file (and disconnected by the agent), tracker added.
    let mut servers = info().servers;
    servers.remove(1);
    servers.push(ServerInfo {
        name: "tracker".into(),
        command_line: "npx -y @acme/tracker-mcp".into(),
        containment: Containment::Unsandboxed,
        enabled: true,
    });
    agent(&mut app, AgentEvent::View(View::ServersChanged { servers }));
    // The removed server's last status arrives after the new list: it stays gone.
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "deploy".into(),
            status: ServerStatus::Disconnected { reason: None },
        }),
    );
    let text = screen(&mut app, 110, 30);
    // The pool panel is the right-hand column (the demo's welcome, on the left, names
    // `deploy web` as something to try).
    let panel: String = text
        .lines()
        .filter_map(|line| {
            line.char_indices()
                .find(|(_, c)| *c == '│')
                .map(|(at, _)| &line[at..])
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(panel.contains("tracker ○ not connected"), "{text}");
    assert!(panel.contains("docs ○ not connected"), "{text}");
    assert!(!panel.contains("deploy"), "{text}");
}

#[test]
fn small_terminal_80x24_with_conversation_and_dialog() {
    let mut app = started_app();
    type_text(&mut app, "deploy 1.4.2 please");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(matches!(&commands[..], [UiCommand::Submit(t)] if t == "deploy 1.4.2 please"));
    agent(
        &mut app,
        AgentEvent::Fact(Fact::User {
            text: "deploy 1.4.2 please".into(),
        }),
    );
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta("I will **trigger** the deploy.".into())),
    );
    agent(&mut app, AgentEvent::Live(Live::AssistantMessageDone));
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
            call_id: "call-7".into(),
            name: "mcp__deploy__trigger".into(),
            server: Some("deploy".into()),
            input: trigger_input(),
        })),
    );
    let text = screen(&mut app, 80, 24);
    assert_eq!(
        text.matches("deploy 1.4.2 please").count(),
        1,
        "user message shown twice:\n{text}"
    );
    assert!(text.contains("I will trigger the deploy."), "{text}");
    assert!(text.contains("mcp__deploy__trigger (deploy)"), "{text}");
    assert!(text.contains("running…"));
    insta::assert_snapshot!("conversation_80x24", text);

    let _rx = open_trigger_modal(&mut app);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("[n] Deny"), "{text}");
    insta::assert_snapshot!("modal_80x24", text);
}

// ---------- the permission dialog ----------

#[test]
fn y_allows_once_and_guard_window_swallows_early_keys() {
    let mut app = started_app();
    let (ev, rx) = permission("c1", &trigger_entry(), json!({}));
    agent(&mut app, ev);
    // Typed within 250 ms of the dialog opening: ignored, dialog stays.
    advance(&mut app, Duration::from_millis(100));
    assert!(perform(ch(&mut app, 'y')).0.is_empty());
    assert!(perform(key(&mut app, KeyCode::Enter)).0.is_empty());
    assert_eq!(app.inbox.len(), 1);
    // The dialog wants a redraw when the guard ends (its buttons light up).
    assert!(app.next_deadline().is_some());
    advance(&mut app, GUARD_WINDOW);
    let effects = ch(&mut app, 'y');
    assert!(
        effects.is_empty(),
        "the answer goes on the request's own channel"
    );
    assert_eq!(answer_of(rx), Some(UserDecision::AllowOnce));
    assert!(app.inbox.is_empty());
}

#[test]
fn a_and_s_answer_session_and_always_and_session_grants_are_revocable() {
    let mut app = started_app();
    let rx = open_trigger_modal(&mut app);
    perform(ch(&mut app, 'a'));
    assert_eq!(answer_of(rx), Some(UserDecision::AllowSession));
    // The agent reports the decision, and the gate the grant it made.
    agent(
        &mut app,
        AgentEvent::View(View::GrantsChanged(vec![GrantLine::session(
            "mcp__deploy__trigger",
        )])),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::PermissionDecided(PermissionLine {
            call_id: "call-7".into(),
            record: AuditRecord::new(
                "mcp__deploy__trigger",
                &json!({}),
                Permit::Allow,
                None,
                Decider::Person {
                    answer: UserDecision::AllowSession,
                    asked_by: "mcp__deploy__trigger".into(),
                },
            ),
        })),
    );

    let rx = open_trigger_modal(&mut app);
    perform(ch(&mut app, 's'));
    assert_eq!(answer_of(rx), Some(UserDecision::AllowAlways));

    type_text(&mut app, "/permissions");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay, Overlay::Permissions { selected: 0 });
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("allow mcp__deploy__trigger"), "{text}");
    assert!(text.contains("default: built-in"), "{text}");
    let (commands, _) = perform(ch(&mut app, 'x'));
    assert!(matches!(&commands[..], [UiCommand::RevokeGrant(t)] if t == "mcp__deploy__trigger"));
    assert!(app.session_grants.is_empty());
}

#[test]
fn n_and_esc_deny_and_enter_on_the_initial_highlight_denies() {
    let mut app = started_app();
    let rx = open_trigger_modal(&mut app);
    perform(ch(&mut app, 'n'));
    assert_eq!(answer_of(rx), Some(UserDecision::Deny));

    let rx = open_trigger_modal(&mut app);
    perform(key(&mut app, KeyCode::Esc));
    assert_eq!(answer_of(rx), Some(UserDecision::Deny));

    // Highlight starts on Deny: a stray Enter can never approve.
    let rx = open_trigger_modal(&mut app);
    perform(key(&mut app, KeyCode::Enter));
    assert_eq!(answer_of(rx), Some(UserDecision::Deny));
}

#[test]
fn d_types_a_note_inline_and_enter_sends_it() {
    let mut app = started_app();
    let rx = open_trigger_modal(&mut app);
    assert!(perform(ch(&mut app, 'd')).0.is_empty());
    // Letters that are answer keys elsewhere are just text now.
    type_text(&mut app, "use staging, yes");
    key(&mut app, KeyCode::Backspace);
    assert!(screen(&mut app, 100, 30).contains("note: use staging, ye"));
    assert_eq!(app.inbox.len(), 1);
    perform(key(&mut app, KeyCode::Enter));
    assert_eq!(
        answer_of(rx),
        Some(UserDecision::DenyWithNote("use staging, ye".into()))
    );
}

#[test]
fn queued_requests_show_position_and_each_gets_a_fresh_guard() {
    let mut app = started_app();
    let mut receivers = Vec::new();
    for i in 0..3 {
        let (ev, rx) = permission(&format!("c{i}"), &trigger_entry(), json!({"n": i}));
        agent(&mut app, ev);
        receivers.push(rx);
    }
    advance(&mut app, GUARD_WINDOW);
    assert!(screen(&mut app, 100, 30).contains("Permission required · 1 of 3"));
    perform(ch(&mut app, 'y'));
    // The next question just opened: an immediate second 'y' is ignored.
    perform(ch(&mut app, 'y'));
    assert_eq!(app.inbox.len(), 2);
    assert!(screen(&mut app, 100, 30).contains("1 of 2"));
    advance(&mut app, GUARD_WINDOW);
    perform(ch(&mut app, 'n'));
    advance(&mut app, GUARD_WINDOW);
    perform(ch(&mut app, 'y'));
    let answers: Vec<_> = receivers.into_iter().map(answer_of).collect();
    assert_eq!(
        answers,
        [
            Some(UserDecision::AllowOnce),
            Some(UserDecision::Deny),
            Some(UserDecision::AllowOnce)
        ]
    );
}

#[test]
fn streaming_continues_while_the_dialog_is_open_and_abandoned_requests_close() {
    let mut app = started_app();
    let rx = open_trigger_modal(&mut app);
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta("still streaming".into())),
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("still streaming"), "{text}");
    assert!(text.contains("Permission required"));
    // The agent gave up waiting (turn cancelled): the dialog goes away.
    drop(rx);
    tick(&mut app);
    assert!(app.inbox.is_empty());
    assert!(!screen(&mut app, 110, 30).contains("Permission required"));
}

#[test]
fn workspace_trust_uses_the_same_dialog() {
    let mut app = started_app();
    let (request, rx) = Request::new(
        Origin::Console {
            folder: "/home/dev/project".into(),
        },
        WorkspaceTrust {
            folder: "/home/dev/project".into(),
            files: vec!["/home/dev/project/.mcp.json".into()],
        },
        app.now,
        None,
    );
    agent(&mut app, AgentEvent::Request(request.into()));
    advance(&mut app, GUARD_WINDOW);
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("Trust this workspace?"), "{text}");
    assert!(text.contains("/home/dev/project/.mcp.json"), "{text}");
    assert!(text.contains("[s] Always trust"), "{text}");
    assert!(!text.contains("Deny with note"));
    // 'd' is not offered for trust questions.
    perform(ch(&mut app, 'd'));
    assert_eq!(app.inbox.len(), 1);
    perform(ch(&mut app, 's'));
    assert_eq!(answer_of(rx), Some(TrustAnswer::Always));
}

fn project_server_request(
    app: &App,
    deadline: Option<Instant>,
) -> (AgentEvent, oneshot::Receiver<Reply<ProjectServerAnswer>>) {
    let (request, rx) = Request::new(
        Origin::Project {
            server: "tools".into(),
        },
        ProjectServer {
            server: "tools".into(),
            command_line: "npx -y @acme/tools-server".into(),
            why: "server 'tools' is defined by this project".into(),
        },
        app.now,
        deadline,
    );
    (AgentEvent::Request(request.into()), rx)
}

#[test]
fn two_kinds_queued_answered_out_of_order_from_the_list() {
    let mut app = started_app();
    let (trigger, trigger_rx) =
        tool_request("c1", &trigger_entry(), trigger_input(), app.now, None);
    agent(&mut app, trigger);
    advance(&mut app, Duration::from_secs(3));
    let (server, server_rx) = project_server_request(&app, None);
    agent(&mut app, server);
    advance(&mut app, Duration::from_secs(2));
    // The head is shown; under it, the other request with kind, origin and age.
    let text = screen(&mut app, 100, 34);
    assert!(text.contains("Permission required · 1 of 2"), "{text}");
    assert!(text.contains("1 more waiting:"), "{text}");
    assert!(
        text.contains("project server · project server 'tools' · 2s"),
        "{text}"
    );
    assert!(text.contains("l list all"), "{text}");

    // Open the list, pick the second request, answer it first.
    perform(ch(&mut app, 'l'));
    let text = screen(&mut app, 100, 34);
    assert!(text.contains("Inbox · 2 waiting"), "{text}");
    assert!(
        text.contains("1. tool call · mcp__deploy__trigger (MCP server 'deploy') · 5s"),
        "{text}"
    );
    assert!(text.contains("2. project server"), "{text}");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    // A different request on screen gets a fresh guard window.
    perform(ch(&mut app, 'y'));
    assert_eq!(
        app.inbox.len(),
        2,
        "a key inside the guard window is ignored"
    );
    let text = screen(&mut app, 100, 34);
    assert!(text.contains("Start a project server? · 2 of 2"), "{text}");
    assert!(text.contains("npx -y @acme/tools-server"), "{text}");
    advance(&mut app, GUARD_WINDOW);
    perform(ch(&mut app, 'y'));
    assert_eq!(answer_of(server_rx), Some(ProjectServerAnswer::Start));

    // Back to the head, which is still waiting and still answerable.
    assert_eq!(app.inbox.len(), 1);
    assert!(screen(&mut app, 100, 34).contains("Permission required"));
    advance(&mut app, GUARD_WINDOW);
    perform(ch(&mut app, 'n'));
    assert_eq!(answer_of(trigger_rx), Some(UserDecision::Deny));
    assert!(app.inbox.is_empty());
}

#[test]
fn a_request_past_its_deadline_gets_its_safe_default_and_the_transcript_says_so() {
    let mut app = started_app();
    let deadline = app.now + Duration::from_secs(30);
    let (trigger, trigger_rx) = tool_request(
        "c1",
        &trigger_entry(),
        trigger_input(),
        app.now,
        Some(deadline),
    );
    agent(&mut app, trigger);
    let (server, mut server_rx) = project_server_request(&app, None);
    agent(&mut app, server);
    advance(&mut app, Duration::from_secs(10));
    // The countdown is on screen and the console wakes up for each second of it.
    let text = screen(&mut app, 100, 34);
    assert!(
        text.contains("answer within 20s, or it is answered: Deny"),
        "{text}"
    );
    assert!(
        app.next_deadline()
            .is_some_and(|d| d <= app.now + Duration::from_secs(1))
    );

    advance(&mut app, Duration::from_secs(20));
    // The runtime wakes at the deadline the app asked for.
    tick(&mut app);
    assert_eq!(
        trigger_rx.blocking_recv_or_now(),
        Some(Reply::Expired(UserDecision::Deny))
    );
    let text = screen(&mut app, 100, 34);
    assert!(
        text.contains("tool call from mcp__deploy__trigger (MCP server 'deploy')"),
        "{text}"
    );
    assert!(text.contains("expired after 30s unanswered"), "{text}");
    assert!(text.contains("mcp__deploy__trigger denied"), "{text}");
    // The other request moved to the head, untouched.
    assert!(text.contains("Start a project server?"), "{text}");
    assert!(server_rx.try_recv().is_err());
    assert_eq!(app.inbox.len(), 1);
}

/// `try_recv` that reads as what it checks: the reply is already there.
trait ReceivedNow<T> {
    fn blocking_recv_or_now(self) -> Option<T>;
}

impl<T> ReceivedNow<T> for oneshot::Receiver<T> {
    fn blocking_recv_or_now(mut self) -> Option<T> {
        self.try_recv().ok()
    }
}

mod approvals;
mod composer;
mod conversation;
mod keys;
mod queue;
