//! The console's views (TestBackend + insta snapshots) and key handling (feeding `update`).
//! Time is `App::now`, moved by hand, so nothing here depends on wall-clock timing.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;
use tokio::sync::oneshot;

use toolgate::agent::events::{AgentEvent, Containment, PoolEntry, ToolOutcome, UiCommand};
use toolgate::builtin::BuiltinTool;
use toolgate::inbox::{
    HostRequest, Origin, ProjectServer, ProjectServerAnswer, Reply, Request, ToolCall, TrustAnswer,
    WorkspaceTrust,
};
use toolgate::mcp::ServerStatus;
use toolgate::model::Usage;
use toolgate::policy::{
    AuditRecord, Decider, Decision, Permit, PersonAnswer as UserDecision, RuleSource, Verdict,
};
use toolgate::pool::{PoolTool, ToolClaims, ToolOrigin};
use toolgate::tui::{
    App, CHANGE_HIGHLIGHT, ConsoleInfo, Effect, FRAME_INTERVAL, Focus, FrameLimiter, GUARD_WINDOW,
    Msg, Overlay, ServerInfo, update, view,
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
        (BuiltinTool::Bash, "Run a shell command in the workspace"),
        (BuiltinTool::ReadFile, "Read a file"),
        (BuiltinTool::WriteFile, "Write a file"),
        (BuiltinTool::EditFile, "Replace text in a file"),
        (BuiltinTool::Glob, "List files matching a pattern"),
    ]
    .iter()
    .map(|(kind, desc)| PoolEntry {
        tool: PoolTool::builtin(*kind, desc, object_schema(json!({}))),
        verdict: allow("default: built-in"),
    })
    .collect();
    let connect = PoolTool::builtin(
        BuiltinTool::ConnectMcp,
        "Connect a configured MCP server and add its tools",
        object_schema(json!({"server": {"type": "string", "enum": ["docs", "deploy", "fs"]}})),
    );
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
        AgentEvent::SessionStarted {
            session_id: "5f3a9c1e-0000-4000-8000-000000000000".into(),
            model_label: "scripted demo".into(),
            workspace: "/home/dev/project".into(),
            servers: info().servers,
            sandbox_problem: None,
        },
    );
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot: builtin_entries(),
            added: vec![],
            removed: vec![],
        },
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

/// The terminal reports its size, as the runtime does at start and on every change.
fn resize(app: &mut App, width: u16, height: u16) {
    let _ = update(app, Msg::Terminal(Event::Resize(width, height)));
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

/// Draws the app on a terminal of this size, which first reports the size like a real one.
fn render(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    resize(app, width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| view(app, f)).expect("draw");
    terminal
}

/// The screen as text, trailing spaces trimmed (what a user reads).
fn screen(app: &mut App, width: u16, height: u16) -> String {
    screen_of(&render(app, width, height))
}

fn screen_of(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A tool-call request as the gate sends it, with the receiver the agent waits on.
fn tool_request(
    call_id: &str,
    entry: &PoolEntry,
    input: serde_json::Value,
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

fn trigger_entry() -> PoolEntry {
    mcp_entry(
        "deploy",
        "trigger",
        ask(
            "mcp__deploy__trigger",
            "rule mcp__deploy__trigger asks before every deploy",
        ),
        ToolClaims {
            destructive: Some(true),
            read_only: Some(false),
            ..ToolClaims::default()
        },
    )
}

/// Opens the trigger dialog and waits out the guard window.
fn open_trigger_modal(app: &mut App) -> oneshot::Receiver<Reply<UserDecision>> {
    let (ev, rx) = permission(
        "call-7",
        &trigger_entry(),
        json!({"environment": "production", "version": "1.4.2", "dry_run": false}),
    );
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
        AgentEvent::ServerStatus {
            server: "docs".into(),
            status: ServerStatus::Ready {
                tools: 2,
                protocol: "2025-11-25".into(),
            },
        },
    );
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec!["mcp__docs__search".into(), "mcp__docs__get_version".into()],
            removed: vec![],
        },
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
        AgentEvent::PoolChanged {
            snapshot,
            added: vec![],
            removed: vec![],
        },
    );
    let mut without_version = builtin_entries();
    without_version.push(docs_entries().remove(0));
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot: without_version,
            added: vec![],
            removed: vec!["mcp__docs__get_version".into()],
        },
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
    assert!(
        text.contains("server claims (not verified): readOnlyHint=false, destructiveHint=true")
    );
    assert!(text.contains("\"environment\": \"production\""));
    assert!(text.contains("[y] Allow once"));
    insta::assert_snapshot!("modal_deploy_trigger", text);
}

#[test]
fn failed_server_shows_reason() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::ServerStatus {
            server: "fs".into(),
            status: ServerStatus::Failed {
                reason: "process exited with status 1 before the handshake".into(),
                stderr_tail: vec!["error: root /nope does not exist".into()],
            },
        },
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
    use toolgate::agent::{SamplingOutcome, SamplingReport};
    use toolgate::mcp::{LogLevel, SamplingRequest, SamplingTurn};
    let mut app = started_app();
    let ready = ServerStatus::Ready {
        tools: 2,
        protocol: "2025-11-25".into(),
    };
    agent(
        &mut app,
        AgentEvent::ServerStatus {
            server: "docs".into(),
            status: ready,
        },
    );
    agent(
        &mut app,
        AgentEvent::ServerInstructions {
            server: "docs".into(),
            text: "Search before you read.".into(),
        },
    );
    for (level, message) in [
        (LogLevel::Info, "indexed 12 pages"),
        (LogLevel::Error, "index corrupt"),
    ] {
        agent(
            &mut app,
            AgentEvent::ServerLog {
                server: "docs".into(),
                level,
                message: message.into(),
            },
        );
    }
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("docs ● ready · 0 tools !log"), "{text}");

    // A tool of that server shows the server's latest log messages in its details.
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec![],
            removed: vec![],
        },
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
        toolgate::inbox::Sampling {
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
        AgentEvent::Sampling(SamplingReport {
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
        }),
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
        AgentEvent::SessionStarted {
            session_id: "5f3a9c1e-0000-4000-8000-000000000001".into(),
            model_label: "scripted demo".into(),
            workspace: "/home/dev/project".into(),
            servers,
            sandbox_problem: None,
        },
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
    agent(&mut app, AgentEvent::ServersChanged { servers });
    // The removed server's last status arrives after the new list: it stays gone.
    agent(
        &mut app,
        AgentEvent::ServerStatus {
            server: "deploy".into(),
            status: ServerStatus::Disconnected { reason: None },
        },
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("tracker ○ not connected"), "{text}");
    assert!(text.contains("docs ○ not connected"), "{text}");
    assert!(!text.contains("deploy"), "{text}");
}

#[test]
fn small_terminal_80x24_with_conversation_and_dialog() {
    let mut app = started_app();
    type_text(&mut app, "deploy 1.4.2 please");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(matches!(&commands[..], [UiCommand::Submit(t)] if t == "deploy 1.4.2 please"));
    agent(
        &mut app,
        AgentEvent::UserMessage("deploy 1.4.2 please".into()),
    );
    agent(
        &mut app,
        AgentEvent::TextDelta("I will **trigger** the deploy.".into()),
    );
    agent(&mut app, AgentEvent::AssistantMessageDone);
    agent(
        &mut app,
        AgentEvent::ToolCallStarted {
            call_id: "call-7".into(),
            name: "mcp__deploy__trigger".into(),
            server: Some("deploy".into()),
            input: json!({"environment": "production"}),
        },
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
    // The agent reports the decision; the grant it made is listed from that record.
    agent(
        &mut app,
        AgentEvent::PermissionDecided {
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
        },
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
    agent(&mut app, AgentEvent::TextDelta("still streaming".into()));
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
    let (trigger, trigger_rx) = tool_request(
        "c1",
        &trigger_entry(),
        json!({"environment": "production"}),
        app.now,
        None,
    );
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
        json!({"environment": "production"}),
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

// ---------- keys outside the dialog ----------

#[test]
fn ctrl_c_cancels_a_turn_then_quits_and_twice_when_idle_quits() {
    let mut app = started_app();
    type_text(&mut app, "hello");
    perform(key(&mut app, KeyCode::Enter));
    let (commands, quit) = perform(ctrl_c(&mut app));
    assert!(matches!(&commands[..], [UiCommand::Cancel]));
    assert!(!quit);
    agent(
        &mut app,
        AgentEvent::TurnFinished {
            usage: Usage::default(),
            cancelled: true,
        },
    );
    assert!(screen(&mut app, 110, 30).contains("turn cancelled"));

    // Idle, after the quit window ran out: the first press only warns.
    advance(&mut app, Duration::from_secs(3));
    let (commands, quit) = perform(ctrl_c(&mut app));
    assert!(commands.is_empty() && !quit);
    assert!(screen(&mut app, 110, 30).contains("press Ctrl+C again to quit"));
    advance(&mut app, Duration::from_millis(500));
    let (_, quit) = perform(ctrl_c(&mut app));
    assert!(quit);
}

#[test]
fn ctrl_c_presses_far_apart_do_not_quit_and_ctrl_d_does() {
    let mut app = started_app();
    perform(ctrl_c(&mut app));
    advance(&mut app, Duration::from_secs(5));
    let (_, quit) = perform(ctrl_c(&mut app));
    assert!(!quit);
    let (_, quit) = perform(key_mod(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL));
    assert!(quit);
}

#[test]
fn composer_enter_sends_and_shift_enter_adds_a_line() {
    let mut app = started_app();
    type_text(&mut app, "first");
    key_mod(&mut app, KeyCode::Enter, KeyModifiers::SHIFT);
    type_text(&mut app, "second");
    key_mod(&mut app, KeyCode::Enter, KeyModifiers::ALT);
    type_text(&mut app, "third");
    assert_eq!(app.composer_text(), "first\nsecond\nthird");
    let (commands, _) = perform(key(&mut app, KeyCode::Enter));
    assert!(matches!(&commands[..], [UiCommand::Submit(t)] if t == "first\nsecond\nthird"));
    assert_eq!(app.composer_text(), "");
    assert!(screen(&mut app, 110, 30).contains("› first"));
}

#[test]
fn slash_commands_send_the_right_commands() {
    let mut app = started_app();
    let run = |app: &mut App, text: &str| {
        type_text(app, text);
        perform(key(app, KeyCode::Enter))
    };
    assert!(
        matches!(&run(&mut app, "/connect docs").0[..], [UiCommand::Connect(n)] if n == "docs")
    );
    assert!(
        matches!(&run(&mut app, "/disconnect docs").0[..], [UiCommand::Disconnect(n)] if n == "docs")
    );
    assert!(matches!(&run(&mut app, "/clear").0[..], [UiCommand::Clear]));
    assert!(run(&mut app, "/connect").0.is_empty());
    assert!(
        screen(&mut app, 110, 30)
            .contains("usage: /connect NAME — configured servers: docs, deploy, fs")
    );
    assert!(run(&mut app, "/frobnicate").0.is_empty());
    assert!(screen(&mut app, 110, 30).contains("unknown command /frobnicate"));
    run(&mut app, "/help");
    assert_eq!(app.overlay, Overlay::Help);
    assert!(screen(&mut app, 110, 30).contains("Keys and commands"));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
    assert!(run(&mut app, "/quit").1);
}

#[test]
fn mcp_enable_and_disable_switch_a_server_for_the_session_or_in_its_file() {
    let mut app = started_app();
    let run = |app: &mut App, text: &str| {
        type_text(app, text);
        perform(key(app, KeyCode::Enter))
    };
    assert!(matches!(
        &run(&mut app, "/mcp disable fs --save").0[..],
        [UiCommand::SetServerEnabled { server, enabled: false, save: true }] if server == "fs"
    ));
    assert!(matches!(
        &run(&mut app, "/mcp enable docs").0[..],
        [UiCommand::SetServerEnabled { server, enabled: true, save: false }] if server == "docs"
    ));
    assert!(run(&mut app, "/mcp disable").0.is_empty());
    assert!(screen(&mut app, 110, 30).contains("usage: /mcp disable NAME [--save]"));
    assert!(!screen(&mut app, 110, 30).contains("fs ⊘ disabled"));
    agent(
        &mut app,
        AgentEvent::ServerEnabled {
            server: "fs".into(),
            enabled: false,
        },
    );
    assert!(screen(&mut app, 110, 30).contains("fs ⊘ disabled"));
}

#[test]
fn question_mark_opens_help_only_when_the_composer_is_empty() {
    let mut app = started_app();
    ch(&mut app, '?');
    assert_eq!(app.overlay, Overlay::Help);
    key(&mut app, KeyCode::Esc);
    type_text(&mut app, "why?");
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.composer_text(), "why?");
}

#[test]
fn bracketed_paste_goes_into_the_composer_cleaned() {
    let mut app = started_app();
    let _ = update(
        &mut app,
        Msg::Terminal(Event::Paste("line one\nline \u{1b}[31mtwo\u{7}".into())),
    );
    assert_eq!(app.composer_text(), "line one\nline two");
}

#[test]
fn tab_focuses_the_pool_and_selecting_a_tool_shows_its_details() {
    let mut app = started_app();
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec![],
            removed: vec![],
        },
    );
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Pool);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 110, 30);
    assert!(
        text.contains("raw name: MCP server 'docs', tool 'search'"),
        "{text}"
    );
    assert!(
        text.contains("policy: allow — rule `mcp__docs__search` (default)"),
        "{text}"
    );
    assert!(
        text.contains("server claims (not verified, never used to allow): readOnlyHint=true"),
        "{text}"
    );
    assert!(text.contains("\"query\""), "schema missing:\n{text}");
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Composer);
}

// ---------- conversation ----------

#[test]
fn markdown_is_rendered() {
    let mut app = started_app();
    for chunk in [
        "# Plan\n\nI'll use **two** tools:\n\n",
        "1. `search` the docs\n2. read the _result_\n\n",
        "```sh\nls -la\n```\n",
    ] {
        agent(&mut app, AgentEvent::TextDelta(chunk.into()));
    }
    agent(&mut app, AgentEvent::AssistantMessageDone);
    let terminal = render(&mut app, 110, 30);
    let text = screen_of(&terminal);
    for expected in [
        "# Plan",
        "I'll use two tools:",
        "1. search the docs",
        "2. read the result",
        "  ls -la",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert!(!text.contains("**") && !text.contains("```"), "{text}");
    // Emphasis survives as a style.
    let buf = terminal.backend().buffer();
    let bold = (0..buf.area.height).any(|y| {
        (0..buf.area.width).any(|x| {
            buf[(x, y)].symbol() == "t"
                && buf[(x, y)]
                    .modifier
                    .contains(ratatui::style::Modifier::BOLD)
                && buf[((x + 1).min(buf.area.width - 1), y)].symbol() == "w"
        })
    });
    assert!(bold, "**two** is not bold");
}

#[test]
fn escape_sequences_from_models_tools_and_servers_never_reach_the_screen() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::TextDelta("hi\u{1b}]0;pwned\u{7} there\u{1b}[2J\u{9b}31m!".into()),
    );
    agent(
        &mut app,
        AgentEvent::ToolCallStarted {
            call_id: "t1".into(),
            name: "mcp__docs__search".into(),
            server: Some("docs".into()),
            input: json!({"q": "\u{1b}[1;1H"}),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolCallFinished {
            call_id: "t1".into(),
            outcome: ToolOutcome::Error,
            output: "bad\u{1b}[31m red\r\u{8}".into(),
        },
    );
    agent(
        &mut app,
        AgentEvent::ServerStatus {
            server: "fs".into(),
            status: ServerStatus::Failed {
                reason: "boom\u{1b}]52;c;ZXZpbA==\u{7}".into(),
                stderr_tail: vec![],
            },
        },
    );
    let terminal = render(&mut app, 110, 30);
    let buf = terminal.backend().buffer();
    for cell in buf.content() {
        assert!(
            !cell.symbol().chars().any(|c| c.is_control()),
            "control character reached the screen: {:?}",
            cell.symbol()
        );
    }
    let text = screen_of(&terminal);
    assert!(text.contains("hi there!"), "{text}");
    assert!(text.contains("bad red"), "{text}");
    assert!(text.contains("boom"), "{text}");
    assert!(
        !text.contains("pwned") && !text.contains("ZXZpbA"),
        "{text}"
    );
}

#[test]
fn tool_cards_show_outcomes_and_expand() {
    let mut app = started_app();
    for (id, outcome) in [
        ("a", ToolOutcome::Ok),
        ("b", ToolOutcome::Error),
        ("c", ToolOutcome::Denied),
    ] {
        agent(
            &mut app,
            AgentEvent::ToolCallStarted {
                call_id: id.into(),
                name: format!("tool_{id}"),
                server: None,
                input: json!({"path": "src/main.rs"}),
            },
        );
        agent(
            &mut app,
            AgentEvent::ToolCallFinished {
                call_id: id.into(),
                outcome,
                output: (1..=6).map(|i| format!("out {i}\n")).collect(),
            },
        );
    }
    agent(
        &mut app,
        AgentEvent::ToolCallStarted {
            call_id: "d".into(),
            name: "mcp__deploy__trigger".into(),
            server: Some("deploy".into()),
            input: json!({}),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolProgress {
            call_id: "d".into(),
            progress: 3.0,
            total: Some(4.0),
            message: Some("uploading".into()),
        },
    );
    let text = screen(&mut app, 110, 40);
    assert!(text.contains("tool_a path=\"src/main.rs\""), "{text}");
    assert!(text.contains("⎿ ok") && text.contains("⎿ error") && text.contains("⎿ denied"));
    assert!(text.contains("running… 75% uploading"), "{text}");
    assert!(text.contains("… 3 more lines (ctrl+o to expand)"), "{text}");
    assert!(!text.contains("out 6"));
    key_mod(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let text = screen(&mut app, 110, 60);
    assert!(text.contains("out 6"), "{text}");
    // Cancelled turn: the running card says so.
    agent(
        &mut app,
        AgentEvent::TurnFinished {
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 34,
                ..Default::default()
            },
            cancelled: true,
        },
    );
    let text = screen(&mut app, 110, 60);
    assert!(text.contains("⎿ cancelled"), "{text}");
    assert!(text.contains("↑1200 ↓34 tok"), "{text}");
}

#[test]
fn scrolling_up_keeps_the_view_and_marks_new_output_below() {
    let mut app = started_app();
    for i in 0..50 {
        agent(&mut app, AgentEvent::Notice(format!("message {i}")));
    }
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("message 49"));
    key(&mut app, KeyCode::PageUp);
    let text = screen(&mut app, 110, 30);
    assert!(!text.contains("message 49"), "{text}");
    agent(&mut app, AgentEvent::Notice("message 50".into()));
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("new output below"), "{text}");
    assert!(!text.contains("message 50"));
    // The wheel scrolls too; back at the bottom the view follows again.
    for _ in 0..30 {
        let _ = update(
            &mut app,
            Msg::Terminal(Event::Mouse(MouseEvent {
                kind: MouseEventKind::ScrollDown,
                column: 5,
                row: 5,
                modifiers: KeyModifiers::NONE,
            })),
        );
    }
    let text = screen(&mut app, 110, 30);
    assert!(
        text.contains("message 50") && !text.contains("new output below"),
        "{text}"
    );
    agent(&mut app, AgentEvent::Notice("message 51".into()));
    assert!(screen(&mut app, 110, 30).contains("message 51"));
}

#[test]
fn resize_reflows_text() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::TextDelta("word ".repeat(40).trim_end().to_string()),
    );
    let wide = screen(&mut app, 120, 30);
    let narrow = screen(&mut app, 70, 30);
    let rows = |s: &str| s.lines().filter(|l| l.contains("word")).count();
    assert!(
        rows(&narrow) > rows(&wide),
        "wide:\n{wide}\nnarrow:\n{narrow}"
    );
}

// ---------- timers and frame pacing ----------

#[test]
fn idle_console_sets_no_timer_and_a_running_turn_ticks_the_spinner() {
    let mut app = started_app();
    assert_eq!(app.next_deadline(), None);
    type_text(&mut app, "go");
    perform(key(&mut app, KeyCode::Enter));
    let first = app.next_deadline().expect("spinner deadline");
    assert!(first > app.now && first <= app.now + Duration::from_millis(100));
    advance(&mut app, Duration::from_millis(1500));
    assert!(screen(&mut app, 110, 30).contains("working 1.5s"));
    agent(
        &mut app,
        AgentEvent::TurnFinished {
            usage: Usage::default(),
            cancelled: false,
        },
    );
    assert_eq!(app.next_deadline(), None);
}

#[test]
fn five_thousand_chunks_in_a_second_draw_at_most_sixty_frames() {
    let mut app = started_app();
    let mut limiter = FrameLimiter::default();
    let start = Instant::now();
    let mut draws = 0;
    let mut now = start;
    for i in 0..5000u32 {
        now = start + Duration::from_micros(200) * i;
        app.now = now;
        // As the runtime does: a frame only for what may have changed the screen.
        if update(&mut app, Msg::Agent(AgentEvent::TextDelta("x".into()))).redraw {
            limiter.mark_dirty();
        }
        if limiter.should_draw(now) {
            draws += 1;
            limiter.drawn(now);
        }
    }
    assert!(draws <= 60, "{draws} redraws in one second");
    assert!(draws >= 55, "only {draws} redraws: streaming looks frozen");
    // Nothing is left behind: the last chunk is drawn within one frame interval.
    let due = limiter.next_draw_at(now).expect("pending frame");
    assert!(due <= now + FRAME_INTERVAL);
    limiter.drawn(due);
    assert_eq!(
        limiter.next_draw_at(due),
        None,
        "idle limiter keeps a timer"
    );
}

fn redraw_of(app: &mut App, msg: Msg) -> bool {
    update(app, msg).redraw
}

fn key_event(code: KeyCode) -> Msg {
    Msg::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

#[test]
fn keys_that_change_nothing_do_not_cost_a_frame() {
    let mut app = started_app();
    resize(&mut app, 110, 30);
    for i in 0..3 {
        agent(&mut app, AgentEvent::Notice(format!("message {i}")));
    }
    let before = screen(&mut app, 110, 30);
    let mouse = |kind| {
        Msg::Terminal(Event::Mouse(MouseEvent {
            kind,
            column: 5,
            row: 5,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = crossterm::event::KeyEventKind::Release;
    let nothing = [
        ("Esc in the composer", key_event(KeyCode::Esc)),
        ("a mouse move", mouse(MouseEventKind::Moved)),
        ("a key release", Msg::Terminal(Event::Key(release))),
        ("focus regained", Msg::Terminal(Event::FocusGained)),
        // Following the bottom already: there is nothing further down.
        ("PageDown at the bottom", key_event(KeyCode::PageDown)),
        ("the wheel at the bottom", mouse(MouseEventKind::ScrollDown)),
        ("Left in an empty composer", key_event(KeyCode::Left)),
        ("an unbound key", key_event(KeyCode::F(5))),
    ];
    for (what, msg) in nothing {
        assert!(!redraw_of(&mut app, msg), "{what} asked for a frame");
    }
    // And indeed the screen is what it was.
    assert_eq!(screen(&mut app, 110, 30), before);

    // The pool: moving past the last tool changes nothing; moving does.
    key(&mut app, KeyCode::Tab);
    assert!(redraw_of(&mut app, key_event(KeyCode::Down)));
    for _ in 0..10 {
        key(&mut app, KeyCode::Down);
    }
    assert!(!redraw_of(&mut app, key_event(KeyCode::Down)));
    // Short details do not page.
    assert!(!redraw_of(&mut app, key_event(KeyCode::PageDown)));
    key(&mut app, KeyCode::Tab);

    // Whatever shows: typing, the wheel moving the view, output, ticks, a resize.
    assert!(redraw_of(&mut app, key_event(KeyCode::Char('h'))));
    assert!(redraw_of(&mut app, key_event(KeyCode::Left)), "cursor move");
    assert!(redraw_of(&mut app, mouse(MouseEventKind::ScrollUp)));
    assert!(redraw_of(
        &mut app,
        Msg::Agent(AgentEvent::TextDelta("more".into()))
    ));
    assert!(redraw_of(&mut app, Msg::Tick));
    assert!(redraw_of(&mut app, Msg::Terminal(Event::Resize(90, 20))));
}

#[test]
fn paging_counts_in_the_size_the_terminal_reported() {
    let mut app = started_app();
    for i in 0..60 {
        agent(&mut app, AgentEvent::Notice(format!("message {i}")));
    }
    // 30 rows: conversation of 30 - 3 (composer) - 1 (status) = 26 rows, 13 messages;
    // a page is 24 rows, 12 messages.
    resize(&mut app, 110, 30);
    key(&mut app, KeyCode::PageUp);
    let tall = screen(&mut app, 110, 30);
    assert!(
        tall.contains("message 35") && !tall.contains("message 48"),
        "{tall}"
    );
    // A smaller terminal: the same key pages by its smaller page (10 rows = 5 messages).
    let mut small = started_app();
    for i in 0..60 {
        agent(&mut small, AgentEvent::Notice(format!("message {i}")));
    }
    resize(&mut small, 110, 16);
    key(&mut small, KeyCode::PageUp);
    let short = screen(&mut small, 110, 16);
    assert!(
        short.contains("message 49") && !short.contains("message 55"),
        "{short}"
    );
}

#[test]
fn no_color_keeps_meaning_without_colours() {
    let mut app = App::new(
        ConsoleInfo {
            no_color: true,
            ..info()
        },
        Instant::now(),
    );
    // The starting pool first: only what arrives after it is marked new.
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot: builtin_entries(),
            added: vec![],
            removed: vec![],
        },
    );
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec!["mcp__docs__search".into()],
            removed: vec![],
        },
    );
    let terminal = render(&mut app, 110, 30);
    let buf = terminal.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "colour drawn under NO_COLOR");
        assert_eq!(cell.bg, Color::Reset, "colour drawn under NO_COLOR");
    }
    // The new tool is still marked, by reverse video.
    let reversed = buf
        .content()
        .iter()
        .any(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED));
    assert!(reversed);
    assert!(screen_of(&terminal).contains("mcp__docs__search new"));
}

#[test]
fn tool_detail_and_help_at_80x24() {
    let mut app = started_app();
    let mut snapshot = builtin_entries();
    snapshot.push(trigger_entry());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec![],
            removed: vec![],
        },
    );
    key(&mut app, KeyCode::Tab);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("policy: ask — rule `mcp__deploy__trigger`"),
        "{text}"
    );
    insta::assert_snapshot!("tool_detail_80x24", text);
    key(&mut app, KeyCode::Tab);
    ch(&mut app, '?');
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Ctrl+C"), "{text}");
    insta::assert_snapshot!("help_80x24", text);
}

#[test]
fn the_starting_pool_is_not_marked_new() {
    // The agent reports its first pool with every tool as "added"; that is the start
    // screen, not a change, so nothing is highlighted and no highlight timer runs.
    let mut app = App::new(info(), Instant::now());
    let snapshot = builtin_entries();
    let added: Vec<String> = snapshot.iter().map(|e| e.tool.name.clone()).collect();
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added,
            removed: vec![],
        },
    );
    let terminal = render(&mut app, 110, 30);
    let text = screen_of(&terminal);
    assert!(text.contains("read_file"), "{text}");
    assert!(!text.contains(" new"), "starting pool marked new:\n{text}");
    let buf = terminal.backend().buffer();
    assert!(
        buf.content().iter().all(|c| c.bg != Color::Green),
        "starting pool highlighted:\n{text}"
    );
    assert_eq!(app.next_deadline(), None, "a highlight timer runs at start");

    // A tool arriving afterwards is marked.
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot,
            added: vec!["mcp__docs__search".into()],
            removed: vec![],
        },
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("mcp__docs__search new"), "{text}");
}

#[test]
fn tool_cards_say_who_let_the_call_run_or_stopped_it() {
    let mut app = started_app();
    let decided = [
        (
            "a1",
            "read_file",
            Permit::Allow,
            Decider::Rule {
                rule: "Read(src/**)".into(),
                source: RuleSource::ProjectConfig("/home/dev/project/.toolgate/config.toml".into()),
            },
        ),
        (
            "a2",
            "mcp__deploy__trigger",
            Permit::Allow,
            Decider::Person {
                answer: UserDecision::AllowOnce,
                asked_by: "mcp__deploy__trigger".into(),
            },
        ),
        (
            "a3",
            "mcp__deploy__trigger",
            Permit::Allow,
            Decider::SessionGrant {
                tool: "mcp__deploy__trigger".into(),
            },
        ),
        (
            "a4",
            "bash",
            Permit::Deny,
            Decider::Rule {
                rule: "Bash(rm:*)".into(),
                source: RuleSource::UserConfig("/home/dev/.config/toolgate/config.toml".into()),
            },
        ),
        (
            "a5",
            "glob",
            Permit::Allow,
            Decider::Default {
                rule: "default: built-in".into(),
            },
        ),
        (
            "a6",
            "mcp__deploy__trigger",
            Permit::Deny,
            Decider::Expired {
                asked_by: "mcp__deploy__trigger".into(),
            },
        ),
    ];
    for (id, name, decision, decider) in decided {
        agent(
            &mut app,
            AgentEvent::ToolCallStarted {
                call_id: id.into(),
                name: name.into(),
                server: None,
                input: json!({}),
            },
        );
        agent(
            &mut app,
            AgentEvent::PermissionDecided {
                call_id: id.into(),
                record: AuditRecord::new(name, &json!({}), decision, None, decider),
            },
        );
        let outcome = if decision == Permit::Allow {
            ToolOutcome::Ok
        } else {
            ToolOutcome::Denied
        };
        agent(
            &mut app,
            AgentEvent::ToolCallFinished {
                call_id: id.into(),
                outcome,
                output: String::new(),
            },
        );
    }
    let text = screen(&mut app, 120, 36);
    for expected in [
        "⎿ ok · allowed by rule Read(src/**) (project config)",
        "⎿ ok · you answered: allow once",
        "⎿ ok · allowed for this session (your earlier answer)",
        "⎿ denied · denied by rule Bash(rm:*) (user config)",
        "⎿ ok · allowed by default: built-in",
        "⎿ denied · denied: nobody answered before the deadline",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn long_tool_details_scroll_with_page_keys() {
    let mut app = started_app();
    let properties: serde_json::Map<String, serde_json::Value> = (0..60)
        .map(|i| (format!("prop_{i:02}"), json!({"type": "string"})))
        .collect();
    let mut big = mcp_entry(
        "warehouse",
        "query",
        Verdict {
            decision: Decision::Ask {
                why: "unlisted MCP tool".into(),
            },
            rule: "default: unlisted MCP tool".into(),
            source: RuleSource::Default,
        },
        ToolClaims::default(),
    );
    big.tool.input_schema = object_schema(serde_json::Value::Object(properties)).into();
    agent(
        &mut app,
        AgentEvent::PoolChanged {
            snapshot: vec![big],
            added: vec![],
            removed: vec![],
        },
    );
    key(&mut app, KeyCode::Tab);
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("prop_00"), "{text}");
    assert!(!text.contains("prop_59"), "{text}");
    assert!(
        text.contains("↓ · PgUp/PgDn"),
        "more below is marked: {text}"
    );
    for _ in 0..10 {
        key(&mut app, KeyCode::PageDown);
    }
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("prop_59"), "{text}");
    assert!(
        text.contains("PgUp/PgDn") && !text.contains("↓ · PgUp/PgDn"),
        "{text}"
    );
    // Paging past the end does not need to be undone: as many pages up reach the top.
    for _ in 0..10 {
        key(&mut app, KeyCode::PageUp);
    }
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("lines 1–"), "{text}");
    assert!(text.contains("mcp__warehouse__query"), "{text}");
}

#[test]
fn a_tool_card_names_the_images_the_call_returned() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::ToolCallStarted {
            call_id: "i1".into(),
            name: "mcp__charts__render".into(),
            server: Some("charts".into()),
            input: json!({}),
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolImages {
            call_id: "i1".into(),
            images: vec![toolgate::agent::events::ImageSummary {
                media_type: "image/png\u{1b}[2J".into(),
                bytes: 5_380,
            }],
        },
    );
    agent(
        &mut app,
        AgentEvent::ToolCallFinished {
            call_id: "i1".into(),
            outcome: ToolOutcome::Ok,
            output: "a chart of last week".into(),
        },
    );
    let text = screen_of(&render(&mut app, 100, 24));
    assert!(
        text.contains("[image returned: image/png, 5.4 kB]"),
        "{text}"
    );
    assert!(text.contains("a chart of last week"), "{text}");
}
