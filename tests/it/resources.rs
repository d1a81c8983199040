//! MCP resources and prompts end to end: the fixture server in
//! tests/fixtures/resources_server.py as a real child process behind the real hub and
//! agent, and a test model that records every request it gets — so each test asserts
//! what the model receives after `@server:uri`, `/mcp__server__prompt` and the resource
//! built-ins (through the permission gate).

use crate::support::fixture_server::python_fixture;
use crate::support::replay_model::{ReplayModel, Requests, call};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use toolgate::agent::{self, AgentConfig, AgentHandle};
use toolgate::mcp::{Catalog, CompletionTarget, HubEvent, HubOptions, McpHub};
use toolgate::model::{ContentBlock, ImageData, ModelRequest, Role, StopReason, StreamEvent};
use toolgate::policy::{PersonAnswer, Policy};
use toolgate::protocol::questions::HostRequest;
use toolgate::protocol::{AgentEvent, ToolOutcome, UiCommand};
use toolgate::protocol::{Event, View};
use toolgate::settings::ServerConfig;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const WAIT: Duration = Duration::from_secs(30);

fn fixture(env: &[(&str, &str)]) -> ServerConfig {
    python_fixture("fx", "resources_server.py", env, 20_000)
}

fn done(text: &str) -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta(text.into()),
        StreamEvent::Stop(StopReason::EndTurn),
    ]
}

struct Harness {
    handle: AgentHandle,
    requests: Requests,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn start(
    env: &[(&str, &str)],
    replies: Vec<Vec<StreamEvent>>,
    adjust: impl FnOnce(&mut AgentConfig),
) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let requests: Requests = Arc::default();
    let model = ReplayModel {
        replies: Mutex::new(replies.into()),
        requests: requests.clone(),
    };
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        vec![fixture(env)],
        hub_tx,
        HubOptions {
            workspace: workspace.path().to_path_buf(),
            probe_timeout: Duration::from_millis(300),
            ..Default::default()
        },
    );
    let mut config = AgentConfig::new(
        Box::new(model),
        hub,
        hub_rx,
        Policy::default(),
        workspace.path().to_path_buf(),
    );
    config.sessions_dir = Some(state.path().join("sessions"));
    config.checkpoints_dir = Some(state.path().join("checkpoints"));
    config.pins_dir = Some(state.path().join("pins"));
    adjust(&mut config);
    Harness {
        handle: agent::spawn(config),
        requests,
        _dirs: (workspace, state),
    }
}

impl Harness {
    async fn send(&self, command: UiCommand) {
        self.handle.commands.send(command).await.unwrap();
    }

    /// Events up to and including the first that `stop` accepts; tool-call questions
    /// are answered with `answer` (their tool name is recorded in `asked`).
    async fn until(
        &mut self,
        asked: &mut Vec<String>,
        answer: PersonAnswer,
        mut stop: impl FnMut(&AgentEvent) -> bool,
    ) -> Vec<AgentEvent> {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("an agent event within the wait")
                .expect("the agent is running");
            if let AgentEvent::Request(HostRequest::ToolCall(request)) = event {
                asked.push(request.payload.tool.name.clone());
                assert!(request.answer(answer.clone()));
                continue;
            }
            let last = stop(&event);
            seen.push(event);
            if last {
                return seen;
            }
        }
    }

    async fn connect(&mut self) -> Arc<Catalog> {
        self.send(UiCommand::Connect("fx".into())).await;
        let events = self
            .until(&mut Vec::new(), PersonAnswer::Deny, |e| {
                matches!(e, AgentEvent::View(View::Catalog { .. }))
            })
            .await;
        match events.last() {
            Some(AgentEvent::View(View::Catalog { catalog, .. })) => catalog.clone(),
            _ => unreachable!(),
        }
    }

    async fn turn(&mut self, asked: &mut Vec<String>, answer: PersonAnswer) -> Vec<AgentEvent> {
        self.until(asked, answer, |e| {
            matches!(e, AgentEvent::Fact(Event::TurnFinished { .. }))
        })
        .await
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn notices(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::Notice { message: n }) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text { text } => text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn an_at_mention_attaches_text_and_image_resources_to_the_message() {
    let mut h = start(&[], vec![done("seen")], |c| c.output_budget = 1_000);
    let catalog = h.connect().await;
    let uris: Vec<&str> = catalog.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["fixture://readme", "fixture://logo", "fixture://big"]
    );
    assert_eq!(catalog.templates[0].uri_template, "fixture://pages/{name}");
    assert_eq!(catalog.prompts[0].name, "review");

    let typed = "compare @fx:fixture://readme with @fx:fixture://logo and @fx:fixture://big.";
    h.send(UiCommand::Submit(typed.into())).await;
    let events = h.turn(&mut Vec::new(), PersonAnswer::Deny).await;

    let requests = h.requests();
    let message = requests[0].messages.last().unwrap();
    assert_eq!(message.role, Role::User);
    assert_eq!(text_of(&message.content[0]), typed);
    assert_eq!(
        text_of(&message.content[1]),
        "<resource server=\"fx\" uri=\"fixture://readme\" mimeType=\"text/markdown\">\n# Fixture\nHello from the fixture.\n</resource>"
    );
    assert_eq!(
        text_of(&message.content[2]),
        "[image image/png from @fx:fixture://logo follows]"
    );
    assert_eq!(
        message.content[3],
        ContentBlock::Image(ImageData {
            media_type: "image/png".into(),
            data: PNG.into(),
        })
    );
    // 300,000 characters, cut to the budget of 1,000 with a visible marker.
    let big = text_of(&message.content[4]);
    assert!(big.starts_with("<resource server=\"fx\" uri=\"fixture://big\""));
    assert!(
        big.contains("[output truncated: showing the first 750 and the last 250 of 300"),
        "{}",
        &big[big.len() - 400..]
    );
    assert!(big.chars().count() < 1_300, "{}", big.chars().count());
    assert_eq!(message.content.len(), 5);

    let shown = notices(&events);
    let readme_tag = text_of(&message.content[1]).chars().count();
    assert!(
        shown.contains(&format!(
            "Attached @fx:fixture://readme ({readme_tag} characters)"
        )),
        "{shown:?}"
    );
    assert!(
        shown.contains(&"Attached @fx:fixture://logo (1 image)".to_string()),
        "{shown:?}"
    );
    assert!(
        shown
            .iter()
            .any(|n| n.starts_with("Attached @fx:fixture://big (")
                && n.ends_with("cut to the output budget")),
        "{shown:?}"
    );
}

#[tokio::test]
async fn a_mention_of_a_configured_server_connects_it_first() {
    let mut h = start(&[], vec![done("ok")], |_| {});
    h.send(UiCommand::Submit("read @fx:fixture://readme".into()))
        .await;
    let events = h.turn(&mut Vec::new(), PersonAnswer::Deny).await;
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.starts_with("Connected to MCP server 'fx'.")),
        "{:?}",
        notices(&events)
    );
    let requests = h.requests();
    let message = requests[0].messages.last().unwrap();
    assert!(text_of(&message.content[1]).contains("Hello from the fixture."));
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(tools.contains(&"mcp__fx__add_resource"), "{tools:?}");
}

#[tokio::test]
async fn a_mention_that_cannot_be_read_is_a_notice_and_the_model_is_told() {
    let mut h = start(&[], vec![done("ok")], |_| {});
    h.connect().await;
    h.send(UiCommand::Submit("look at @fx:fixture://nope".into()))
        .await;
    let events = h.turn(&mut Vec::new(), PersonAnswer::Deny).await;
    let shown = notices(&events);
    assert!(
        shown
            .iter()
            .any(|n| n.starts_with("Could not attach @fx:fixture://nope:")
                && n.contains("Resource not found")),
        "{shown:?}"
    );
    let requests = h.requests();
    let message = requests[0].messages.last().unwrap();
    assert!(
        text_of(&message.content[1]).starts_with("[@fx:fixture://nope could not be read:"),
        "{:?}",
        message.content
    );
}

#[tokio::test]
async fn a_prompt_puts_its_messages_into_the_conversation_with_their_roles() {
    let mut h = start(&[], vec![done("reviewed")], |_| {});
    h.connect().await;
    h.send(UiCommand::RunPrompt {
        server: "fx".into(),
        prompt: "review".into(),
        arguments: HashMap::from([
            ("file".to_string(), "src/main.rs".to_string()),
            ("language".to_string(), "rust".to_string()),
        ]),
    })
    .await;
    let events = h.turn(&mut Vec::new(), PersonAnswer::Deny).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Fact(Event::User { text: t }) if t == "Please review src/main.rs (rust).\n<resource server=\"fx\" uri=\"fixture://readme\" mimeType=\"text/markdown\">\n# Fixture\nHello from the fixture.\n</resource>")),
        "the transcript shows the prompt's first message"
    );
    let requests = h.requests();
    assert_eq!(requests.len(), 1, "the model answered once");
    let messages = &requests[0].messages;
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::User]);
    assert_eq!(
        text_of(&messages[0].content[0]),
        "Please review src/main.rs (rust)."
    );
    assert!(
        text_of(&messages[0].content[1])
            .starts_with("<resource server=\"fx\" uri=\"fixture://readme\"")
    );
    assert_eq!(
        text_of(&messages[1].content[0]),
        "I will look at src/main.rs."
    );
    assert_eq!(
        messages[2].content,
        vec![
            ContentBlock::Image(ImageData {
                media_type: "image/png".into(),
                data: PNG.into()
            }),
            ContentBlock::Text {
                text: "Go ahead.".into()
            }
        ]
    );
}

#[tokio::test]
async fn a_prompt_the_server_refuses_is_an_error_and_the_turn_ends() {
    let mut h = start(&[], vec![], |_| {});
    h.connect().await;
    h.send(UiCommand::RunPrompt {
        server: "fx".into(),
        prompt: "review".into(),
        arguments: HashMap::new(),
    })
    .await;
    let events = h.turn(&mut Vec::new(), PersonAnswer::Deny).await;
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::Fact(Event::Error { message: m })
            if m.starts_with("/mcp__fx__review:") && m.contains("missing required argument: file"))
        ),
        "{events:?}"
    );
    assert!(h.requests().is_empty(), "no model call");
}

#[tokio::test]
async fn the_resource_builtins_go_through_the_gate_per_server() {
    let mut h = start(
        &[],
        vec![
            call("l1", "list_mcp_resources", json!({})),
            call(
                "r1",
                "read_mcp_resource",
                json!({"server": "fx", "uri": "fixture://readme"}),
            ),
            call(
                "r2",
                "read_mcp_resource",
                json!({"server": "fx", "uri": "fixture://logo"}),
            ),
            done("read"),
        ],
        |_| {},
    );
    h.connect().await;
    h.send(UiCommand::Submit("what resources are there?".into()))
        .await;
    let mut asked = Vec::new();
    let events = h.turn(&mut asked, PersonAnswer::AllowSession).await;
    // Listing is allowed by default; the first read asks, "for this session" covers the
    // second read of the same server.
    assert_eq!(asked, ["read_mcp_resource"]);
    assert!(
        notices(&events).contains(
            &"read_mcp_resource(fx) is allowed for the rest of this session.".to_string()
        ),
        "{:?}",
        notices(&events)
    );
    let outcomes: Vec<ToolOutcome> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::ToolFinished { outcome, .. }) => Some(*outcome),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, [ToolOutcome::Ok; 3]);

    let requests = h.requests();
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(tools.contains(&"list_mcp_resources") && tools.contains(&"read_mcp_resource"));
    let result = |i: usize| match &requests[i].messages.last().unwrap().content[0] {
        ContentBlock::ToolResult {
            content, images, ..
        } => (content.clone(), images.clone()),
        other => panic!("{other:?}"),
    };
    let (listing, _) = result(1);
    assert!(
        listing.contains("fixture://readme — Read me (text/markdown)")
            && listing.contains("template fixture://pages/{name} — page: A page"),
        "{listing}"
    );
    let (readme, _) = result(2);
    assert!(readme.contains("Hello from the fixture."), "{readme}");
    let (logo, images) = result(3);
    assert_eq!(logo, "[image image/png attached]");
    assert_eq!(images[0].data, PNG);
}

#[tokio::test]
async fn without_resources_the_builtins_are_not_in_the_pool() {
    let mut h = start(&[], vec![done("hi")], |_| {});
    h.send(UiCommand::Submit("hello".into())).await;
    h.turn(&mut Vec::new(), PersonAnswer::Deny).await;
    let tools: Vec<String> = h.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(
        !tools.iter().any(|t| t.contains("mcp_resource")),
        "{tools:?}"
    );
}

#[tokio::test]
async fn a_server_whose_resource_list_fails_or_lies_gets_a_notice_and_keeps_its_prompts() {
    for (mode, said) in [
        ("broken", "resource index offline"),
        ("lying", "not a valid MCP result"),
    ] {
        let mut h = start(&[("FIXTURE_RESOURCES", mode)], vec![], |_| {});
        h.send(UiCommand::Connect("fx".into())).await;
        let events = h
            .until(&mut Vec::new(), PersonAnswer::Deny, |e| {
                matches!(e, AgentEvent::View(View::Catalog { .. }))
            })
            .await;
        let shown = notices(&events);
        assert!(
            shown
                .iter()
                .any(|n| n.starts_with("MCP server 'fx': resources/list failed:")
                    && n.contains(said)
                    && n.ends_with("(its tools still work)")),
            "{mode}: {shown:?}"
        );
        let Some(AgentEvent::View(View::Catalog { catalog, .. })) = events.last() else {
            unreachable!()
        };
        assert!(catalog.resources.is_empty(), "{mode}");
        assert_eq!(catalog.templates.len(), 1, "{mode}: templates still listed");
        assert_eq!(
            catalog.prompts[0].name, "review",
            "{mode}: prompts still listed"
        );
    }
}

#[tokio::test]
async fn a_server_without_templates_is_no_problem() {
    let mut h = start(&[("FIXTURE_TEMPLATES", "missing")], vec![], |_| {});
    h.send(UiCommand::Connect("fx".into())).await;
    let events = h
        .until(&mut Vec::new(), PersonAnswer::Deny, |e| {
            matches!(e, AgentEvent::View(View::Catalog { .. }))
        })
        .await;
    let Some(AgentEvent::View(View::Catalog { catalog, .. })) = events.last() else {
        unreachable!()
    };
    assert!(catalog.templates.is_empty());
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    assert_eq!(catalog.resources.len(), 3);
    assert!(
        !notices(&events).iter().any(|n| n.contains("templates")),
        "{:?}",
        notices(&events)
    );
}

// ---- the hub alone ----

fn hub() -> (McpHub, mpsc::UnboundedReceiver<HubEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = HubOptions {
        probe_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    (McpHub::with_options(vec![fixture(&[])], tx, options), rx)
}

async fn next_catalog(rx: &mut mpsc::UnboundedReceiver<HubEvent>) -> Arc<Catalog> {
    loop {
        match tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap()
            .unwrap()
        {
            HubEvent::CatalogChanged { catalog, .. } => return catalog,
            _ => continue,
        }
    }
}

#[tokio::test]
async fn list_changed_relists_resources_and_prompts_and_completion_asks_the_server() {
    let (hub, mut rx) = hub();
    hub.connect("fx").await.unwrap();
    let first = next_catalog(&mut rx).await;
    assert!(first.completions);
    assert_eq!(first.resources.len(), 3);

    let cancel = tokio_util::sync::CancellationToken::new();
    hub.call(
        "fx",
        "add_resource",
        json!({"name": "notes"}),
        None,
        cancel.clone(),
    )
    .await
    .unwrap();
    let relisted = next_catalog(&mut rx).await;
    assert_eq!(relisted.resources.len(), 4);
    assert_eq!(relisted.resources[3].uri, "fixture://extra/notes");

    hub.call("fx", "add_prompt", json!({"name": "explain"}), None, cancel)
        .await
        .unwrap();
    let relisted = next_catalog(&mut rx).await;
    let prompts: Vec<&str> = relisted.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(prompts, ["review", "explain"]);

    let values = hub
        .complete(
            "fx",
            &CompletionTarget::Template("fixture://pages/{name}".into()),
            "name",
            "in",
            &HashMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(values, ["intro", "install"]);
    let values = hub
        .complete(
            "fx",
            &CompletionTarget::Prompt("review".into()),
            "language",
            "r",
            &HashMap::from([("file".to_string(), "a.rs".to_string())]),
        )
        .await
        .unwrap();
    assert_eq!(values, ["rust", "ruby"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn rules_name_the_server_or_the_resource_tool() {
    // `mcp__fx` allows reading fx's resources as it allows its tools; a deny rule on
    // list_mcp_resources(fx) refuses the listing.
    let mut h = start(
        &[],
        vec![
            call(
                "r1",
                "read_mcp_resource",
                json!({"server": "fx", "uri": "fixture://readme"}),
            ),
            call("l1", "list_mcp_resources", json!({"server": "fx"})),
            done("ok"),
        ],
        |c| {
            let (rules, _, problems) = toolgate::policy::parse_permissions(
                "[permissions]\nallow = [\"mcp__fx\"]\ndeny = [\"list_mcp_resources(fx)\"]\n",
                "test",
                toolgate::policy::RuleSource::Flag,
            );
            assert!(problems.is_empty(), "{problems:?}");
            c.policy.add_rules(rules);
        },
    );
    h.connect().await;
    h.send(UiCommand::Submit("read it".into())).await;
    let mut asked = Vec::new();
    let events = h.turn(&mut asked, PersonAnswer::Deny).await;
    assert!(asked.is_empty(), "nobody was asked: {asked:?}");
    let finished: Vec<(ToolOutcome, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::ToolFinished {
                outcome, output, ..
            }) => Some((*outcome, output.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(finished[0].0, ToolOutcome::Ok);
    assert!(finished[0].1.contains("Hello from the fixture."));
    assert_eq!(finished[1].0, ToolOutcome::Denied);
    assert!(
        finished[1].1.contains("list_mcp_resources(fx)"),
        "{}",
        finished[1].1
    );
}
