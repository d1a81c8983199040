//! Reloading the server configuration in a running session, through the agent's channels:
//! a real hub running toolgate's own docs server as a child process, a real `.mcp.json`.
//! A changed project server asks before it reconnects; a broken file changes nothing.

use std::time::Duration;

use futures::stream::{self, BoxStream, StreamExt};
use tokio::sync::mpsc;

use toolgate::agent::{self, AgentConfig, AgentHandle, ConfigReload, RulesReload};
use toolgate::mcp::{McpHub, ServerStatus};
use toolgate::model::{ModelError, ModelProvider, ModelRequest, StreamEvent};
use toolgate::policy::{Decision, Policy};
use toolgate::protocol::questions::{HostRequest, ProjectServerAnswer};
use toolgate::protocol::{AgentEvent, PoolUpdate, UiCommand};
use toolgate::protocol::{Event, View};
use toolgate::settings::LoadOptions;
use toolgate::settings::reload::SettingsSeen;

/// No turn is run here; the model is never asked.
struct NoModel;

impl ModelProvider for NoModel {
    fn label(&self) -> String {
        "no model".into()
    }

    fn stream(&self, _: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        stream::iter(vec![Err(ModelError::Config("not used".into()))]).boxed()
    }
}

const WAIT: Duration = Duration::from_secs(30);

struct Session {
    handle: AgentHandle,
    mcp_json: std::path::PathBuf,
    _workspace: tempfile::TempDir,
}

impl Session {
    fn start(servers: &str) -> Session {
        Session::start_with(servers, |_, _| {})
    }

    /// Like [`Session::start`]; `adjust` may change the agent's configuration first.
    fn start_with(
        servers: &str,
        adjust: impl FnOnce(&std::path::Path, &mut AgentConfig),
    ) -> Session {
        let workspace = tempfile::tempdir().unwrap();
        let mcp_json = workspace.path().join(".mcp.json");
        std::fs::write(&mcp_json, servers).unwrap();
        let options = LoadOptions {
            workspace: workspace.path().to_path_buf(),
            user_config_dir: None,
            flag_files: Vec::new(),
            trust_project: true,
            ..Default::default()
        };
        let loaded = toolgate::settings::load_servers(&options);
        let (hub_tx, hub_rx) = mpsc::unbounded_channel();
        let hub = McpHub::with_options(
            loaded.servers,
            hub_tx,
            toolgate::mcp::HubOptions {
                workspace: workspace.path().to_path_buf(),
                builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
                ..Default::default()
            },
        );
        let mut config = AgentConfig::new(
            Box::new(NoModel),
            hub,
            hub_rx,
            Policy::default(),
            workspace.path().to_path_buf(),
        );
        config.sessions_dir = None;
        config.checkpoints_dir = None;
        config.reload = Some(ConfigReload {
            options,
            known_problems: loaded.diagnostics,
            watch: false,
            rules: None,
        });
        adjust(workspace.path(), &mut config);
        Session {
            handle: agent::spawn(config),
            mcp_json,
            _workspace: workspace,
        }
    }

    async fn send(&self, command: UiCommand) {
        self.handle.commands.send(command).await.unwrap();
    }

    /// Events up to the first one `done` accepts; a project-server question is answered
    /// with `answer` and its reason kept.
    async fn until(
        &mut self,
        answer: Option<ProjectServerAnswer>,
        done: impl Fn(&AgentEvent) -> bool,
    ) -> (Vec<AgentEvent>, Vec<String>) {
        let mut seen = Vec::new();
        let mut asked = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("an agent event within the wait")
                .expect("the agent runs");
            if let AgentEvent::Request(HostRequest::ProjectServer(request)) = event {
                asked.push(request.payload.why.clone());
                let answer = answer.expect("no project-server question expected");
                assert!(request.answer(answer));
                continue;
            }
            let stop = done(&event);
            seen.push(event);
            if stop {
                return (seen, asked);
            }
        }
    }
}

fn notice_with(needle: &'static str) -> impl Fn(&AgentEvent) -> bool {
    move |e| matches!(e, AgentEvent::Fact(Event::Notice { message: text }) | AgentEvent::Fact(Event::Error { message: text }) if text.contains(needle))
}

fn text_of(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::Notice { message: t })
            | AgentEvent::Fact(Event::Error { message: t }) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn disconnected(events: &[AgentEvent], name: &str) -> bool {
    events.iter().any(|e| {
        matches!(e, AgentEvent::Fact(Event::ServerStatus { server, status: ServerStatus::Disconnected { .. } }) if server == name)
    })
}

#[tokio::test]
async fn a_changed_project_server_asks_before_it_reconnects_and_bad_config_changes_nothing() {
    let mut s =
        Session::start(r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs"}}}"#);
    s.until(None, |e| {
        matches!(e, AgentEvent::View(View::PoolChanged(_)))
    })
    .await;
    s.send(UiCommand::Connect("extra".into())).await;
    let (_, asked) = s
        .until(
            Some(ProjectServerAnswer::Start),
            notice_with("Connected to MCP server 'extra'"),
        )
        .await;
    assert_eq!(asked.len(), 1, "the first start asks: {asked:?}");

    // Same command line, another timeout: still a new definition, so it asks again.
    std::fs::write(
        &s.mcp_json,
        r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs", "timeout": 5000}}}"#,
    )
    .unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, asked) = s
        .until(
            Some(ProjectServerAnswer::Start),
            notice_with("MCP configuration reloaded"),
        )
        .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("the project changed the definition of 'extra'"),
        "{asked:?}"
    );
    let text = text_of(&events);
    assert!(text.contains("(/mcp reload): changed: extra"), "{text}");
    assert!(text.contains("Connected to MCP server 'extra'"), "{text}");

    // Declined: the old process stops and the new definition does not start.
    std::fs::write(
        &s.mcp_json,
        r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs", "timeout": 6000}}}"#,
    )
    .unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, asked) = s
        .until(
            Some(ProjectServerAnswer::DontStart),
            notice_with("MCP configuration reloaded"),
        )
        .await;
    assert_eq!(asked.len(), 1);
    let text = text_of(&events);
    assert!(
        text.contains("'extra' was not reconnected with its new definition (you declined)"),
        "{text}"
    );
    assert!(!text.contains("Connected to MCP server"), "{text}");

    // Connect again, then break the file: the reload is refused with the position and the
    // server keeps running under the configuration in force.
    s.send(UiCommand::Connect("extra".into())).await;
    s.until(None, notice_with("Connected to MCP server 'extra'"))
        .await;
    std::fs::write(
        &s.mcp_json,
        "{\"mcpServers\": {\n  \"extra\": {\"type\": \"builtin\"\n}}",
    )
    .unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, _) = s.until(None, notice_with("not reloaded")).await;
    let text = text_of(&events);
    assert!(
        text.contains(&format!("{}:3:", s.mcp_json.display())) && text.contains("invalid JSON"),
        "{text}"
    );
    // Nothing changed: a reload with the old text again finds no difference.
    std::fs::write(
        &s.mcp_json,
        r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs", "timeout": 6000}}}"#,
    )
    .unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, _) = s.until(None, notice_with("no server changed")).await;
    assert!(!disconnected(&events, "extra"), "the server kept running");

    // Removed from the file: disconnected, and the agent's server list no longer has it.
    std::fs::write(&s.mcp_json, r#"{"mcpServers": {}}"#).unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, _) = s
        .until(None, notice_with("MCP configuration reloaded"))
        .await;
    let listed: Vec<&str> = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::View(View::ServersChanged { servers }) => {
                Some(servers.iter().map(|s| s.name.as_str()).collect())
            }
            _ => None,
        })
        .expect("the new server list");
    assert_eq!(listed, ["docs", "deploy", "fs"]);
    assert!(
        text_of(&events).contains("Disconnected from MCP server 'extra'"),
        "{}",
        text_of(&events)
    );
    s.send(UiCommand::Shutdown).await;
}

#[tokio::test]
async fn a_server_disabled_in_the_file_disconnects_without_a_question() {
    let mut s =
        Session::start(r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs"}}}"#);
    s.until(None, |e| {
        matches!(e, AgentEvent::View(View::PoolChanged(_)))
    })
    .await;
    s.send(UiCommand::Connect("extra".into())).await;
    s.until(
        Some(ProjectServerAnswer::Start),
        notice_with("Connected to MCP server 'extra'"),
    )
    .await;

    std::fs::write(
        &s.mcp_json,
        r#"{"mcpServers": {"extra": {"type": "builtin", "server": "docs", "enabled": false}}}"#,
    )
    .unwrap();
    s.send(UiCommand::ReloadConfig).await;
    // No answer given: a project-server question here would fail the test.
    let (events, asked) = s
        .until(None, notice_with("MCP configuration reloaded"))
        .await;
    assert!(asked.is_empty(), "{asked:?}");
    let text = text_of(&events);
    assert!(
        text.contains("'extra' is disabled by its configuration"),
        "{text}"
    );
    assert!(!text.contains("Connected to MCP server 'extra'"), "{text}");
    assert!(
        text.contains("Disconnected from MCP server 'extra'"),
        "{text}"
    );
    s.send(UiCommand::Shutdown).await;
}

/// The verdict the pool panel shows for `tool` in the last pool snapshot among `events`.
fn shown_decision(events: &[AgentEvent], tool: &str) -> Option<Decision> {
    events.iter().rev().find_map(|e| match e {
        AgentEvent::View(View::PoolChanged(PoolUpdate { snapshot, .. })) => snapshot
            .iter()
            .find(|entry| entry.tool.name == tool)
            .map(|entry| entry.verdict.decision.clone()),
        _ => None,
    })
}

/// Editing the project's `config.toml` while the console runs changes the rules in force,
/// picked up by the real file watcher; a broken file keeps the rules and names the position;
/// `/mcp reload` reads them again too.
#[tokio::test]
async fn permission_rules_reload_when_config_toml_changes_and_a_broken_file_keeps_them() {
    let mut s = Session::start_with(r#"{"mcpServers": {}}"#, |workspace, config| {
        let options = LoadOptions {
            workspace: workspace.to_path_buf(),
            user_config_dir: None,
            trust_project: true,
            ..LoadOptions::default()
        };
        let (policy, known_problems) =
            toolgate::policy::from_settings(&toolgate::settings::load(&options).permissions);
        config.policy = policy;
        let reload = config.reload.as_mut().unwrap();
        reload.watch = true;
        reload.options = options;
        reload.rules = Some(RulesReload {
            known_problems,
            settings_seen: Some(SettingsSeen::at_start(
                Default::default(),
                Default::default(),
            )),
        });
    });
    let config_toml = s._workspace.path().join(".toolgate").join("config.toml");
    s.until(None, |e| {
        matches!(e, AgentEvent::View(View::PoolChanged(_)))
    })
    .await;
    s.send(UiCommand::Connect("docs".into())).await;
    let (events, _) = s
        .until(None, notice_with("Connected to MCP server 'docs'"))
        .await;
    assert_eq!(
        shown_decision(&events, "mcp__docs__search"),
        Some(Decision::Allow),
        "the shipped default allows it"
    );

    // Saved in an editor: the watcher reloads, the notice names the rule, the badge follows.
    std::fs::create_dir_all(config_toml.parent().unwrap()).unwrap();
    std::fs::write(
        &config_toml,
        "[permissions]\ndeny = [\"mcp__docs__search\"]\n",
    )
    .unwrap();
    let (events, _) = s
        .until(None, notice_with("Permission rules reloaded"))
        .await;
    let text = text_of(&events);
    assert!(
        text.contains(&format!(
            "+ deny mcp__docs__search (project config {})",
            config_toml.display()
        )),
        "{text}"
    );
    assert!(
        matches!(
            shown_decision(&events, "mcp__docs__search"),
            Some(Decision::Deny { .. })
        ),
        "{events:?}"
    );

    // A broken file: nothing changes, and the error says where.
    std::fs::write(
        &config_toml,
        "[permissions]\ndeny = [\"mcp__docs__search\"\n",
    )
    .unwrap();
    let (events, _) = s.until(None, notice_with("not reloaded")).await;
    let text = text_of(&events);
    assert!(
        text.contains("Permission rules not reloaded; the rules in force stay")
            && text.contains(&format!("{}:", config_toml.display())),
        "{text}"
    );

    // Fixed and emptied: /mcp reload (or the save) drops the rule again.
    std::fs::write(&config_toml, "[permissions]\n").unwrap();
    s.send(UiCommand::ReloadConfig).await;
    let (events, _) = s.until(None, notice_with("- deny mcp__docs__search")).await;
    assert_eq!(
        shown_decision(&events, "mcp__docs__search"),
        Some(Decision::Allow),
        "{events:?}"
    );

    // `[tools]` applies at once: with search on, docs' tools leave the request.
    std::fs::write(&config_toml, "[tools]\nsearch = \"on\"\n").unwrap();
    let (events, _) = s.until(None, notice_with("[tools] search = \"on\"")).await;
    let text = text_of(&events);
    assert!(text.contains("config.toml reloaded"), "{text}");
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::View(View::PoolChanged(PoolUpdate { deferred, changed, .. }))
            if changed.deferred && deferred.iter().any(|t| t.tool.name == "mcp__docs__search"))
        ),
        "{events:?}"
    );
    assert_eq!(shown_decision(&events, "mcp__docs__search"), None);

    // `[sandbox]` shapes running processes: named, with the restart that applies it.
    std::fs::write(
        &config_toml,
        "[tools]\nsearch = \"on\"\n[sandbox]\nnetwork = true\n",
    )
    .unwrap();
    let (events, _) = s.until(None, notice_with("[sandbox] changed")).await;
    let text = text_of(&events);
    assert!(
        text.contains("applies when toolgate starts again"),
        "{text}"
    );
    s.send(UiCommand::Shutdown).await;
}
