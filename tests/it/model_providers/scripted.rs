//! The scripted demo model driven turn by turn, and scenarios read from a file.

use super::*;

/// Runs one model call and appends the assistant's message; returns its text and tool calls.
async fn scripted_turn(
    provider: &ScriptedProvider,
    messages: &mut Vec<Message>,
) -> (String, Vec<(String, String, Value)>, StopReason) {
    let (events, error) = collect(
        provider,
        ModelRequest {
            system: String::new(),
            messages: messages.clone(),
            tools: vec![],
            max_tokens: 0,
            sampling: Default::default(),
        },
    )
    .await;
    assert_eq!(error, None);
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut stop = None;
    let mut text_chunks = 0;
    for event in events {
        match event {
            StreamEvent::TextDelta(t) => {
                text_chunks += 1;
                text.push_str(&t);
            }
            StreamEvent::ToolUse { id, name, input } => calls.push((id, name, input)),
            StreamEvent::Stop(reason) => stop = Some(reason),
            _ => {}
        }
    }
    assert!(
        text_chunks > 1 || text.len() < 20,
        "text is streamed in chunks"
    );
    let mut content = vec![ContentBlock::Text { text: text.clone() }];
    content.extend(calls.iter().map(|(id, name, input)| ContentBlock::ToolUse {
        id: id.clone(),
        name: name.clone(),
        input: input.clone(),
    }));
    messages.push(Message {
        role: Role::Assistant,
        content,
    });
    (text, calls, stop.expect("a stop reason"))
}

fn tool_result(id: &str, content: &str, is_error: bool) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error,
            images: vec![],
        }],
    }
}

/// Plays the default scenario up to the trigger call, answering each call with `ok`
/// results, and returns the conversation and the trigger's tool id.
async fn play_until_trigger(provider: &ScriptedProvider) -> (Vec<Message>, String) {
    let mut messages = vec![Message::user_text("deploy web")];
    let expected = [
        (
            "connect_mcp",
            json!({"name": "docs"}),
            "Connected to MCP server 'docs'. Discovered 2 tools: search, get_version",
        ),
        (
            "mcp__docs__search",
            json!({"query": "deploy"}),
            "deploying.md: Deploying — run trigger(service)",
        ),
        (
            "mcp__docs__get_version",
            json!({}),
            "docs 1.4.0\n(built 2026-11-30)",
        ),
        (
            "connect_mcp",
            json!({"name": "deploy"}),
            "Connected to MCP server 'deploy'. Discovered 2 tools: status, trigger",
        ),
        (
            "mcp__deploy__status",
            json!({"service": "web"}),
            "web: v41 running, last deploy 2026-12-01",
        ),
    ];
    let mut texts = Vec::new();
    for (name, input, result) in expected {
        let (text, calls, stop) = scripted_turn(provider, &mut messages).await;
        assert_eq!(stop, StopReason::ToolUse);
        assert_eq!(calls.len(), 1, "one call per step: {calls:?}");
        assert_eq!((calls[0].1.as_str(), &calls[0].2), (name, &input));
        texts.push(text);
        messages.push(tool_result(&calls[0].0, result, false));
    }
    assert!(
        texts[1].contains("Let me look that up in the docs"),
        "{}",
        texts[1]
    );
    assert!(
        texts[3].contains("Docs version: docs 1.4.0."),
        "{}",
        texts[3]
    );
    let (text, calls, stop) = scripted_turn(provider, &mut messages).await;
    assert_eq!(stop, StopReason::ToolUse);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1, "mcp__deploy__trigger");
    assert_eq!(calls[0].2, json!({"service": "web"}));
    assert!(text.contains("web: v41 running"), "{text}");
    assert!(text.contains("approve"), "{text}");
    let id = calls[0].0.clone();
    (messages, id)
}

fn demo() -> ScriptedProvider {
    ScriptedProvider::demo()
        .unwrap()
        .with_chunk_delay(Duration::ZERO)
}

#[tokio::test]
async fn scripted_demo_ok_branch_reports_the_deploy() {
    let provider = demo();
    assert_eq!(provider.label(), "scripted demo");
    let (mut messages, trigger_id) = play_until_trigger(&provider).await;
    messages.push(tool_result(
        &trigger_id,
        "Deployed web v42 in 1.2 s (exit 0)",
        false,
    ));
    let (text, calls, stop) = scripted_turn(&provider, &mut messages).await;
    assert!(calls.is_empty());
    assert_eq!(stop, StopReason::EndTurn);
    assert!(
        text.starts_with("The deploy of **web** went through."),
        "{text}"
    );
    assert!(
        text.contains("Deployed web v42 in 1.2 s (exit 0)"),
        "{text}"
    );
}

#[tokio::test]
async fn scripted_demo_denied_and_error_branches() {
    let provider = demo();
    let (messages, trigger_id) = play_until_trigger(&provider).await;

    let mut denied = messages.clone();
    denied.push(tool_result(
        &trigger_id,
        "Permission denied: the user declined mcp__deploy__trigger",
        true,
    ));
    let (text, calls, stop) = scripted_turn(&provider, &mut denied).await;
    assert!(calls.is_empty());
    assert_eq!(stop, StopReason::EndTurn);
    assert!(text.starts_with("The deploy was not approved"), "{text}");
    assert!(text.contains("the user declined"), "{text}");

    let mut failed = messages;
    failed.push(tool_result(&trigger_id, "web: command exited with 1", true));
    let (text, _, _) = scripted_turn(&provider, &mut failed).await;
    assert!(text.starts_with("The deploy of **web** failed"), "{text}");
    assert!(text.contains("command exited with 1"), "{text}");
}

#[tokio::test]
async fn scripted_demo_stops_when_an_early_step_fails_and_restarts_on_a_new_message() {
    let provider = demo();
    let mut messages = vec![Message::user_text("anything at all")];
    let (_, calls, _) = scripted_turn(&provider, &mut messages).await;
    assert_eq!(calls[0].1, "connect_mcp");
    messages.push(tool_result(
        &calls[0].0,
        "MCP server 'docs' failed to start: exit status 1",
        true,
    ));
    let (text, calls, stop) = scripted_turn(&provider, &mut messages).await;
    assert!(calls.is_empty());
    assert_eq!(stop, StopReason::EndTurn);
    assert!(text.contains("failed to start"), "{text}");
    assert!(text.contains("nothing was deployed"), "{text}");

    // A new user message starts the story again, with fresh tool ids.
    messages.push(Message::user_text("try again"));
    let (_, again, _) = scripted_turn(&provider, &mut messages).await;
    assert_eq!(again[0].1, "connect_mcp");
    let first_ids: Vec<&str> = messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(first_ids.len(), 2);
    assert_ne!(first_ids[0], first_ids[1]);
}

#[tokio::test]
async fn scripted_scenario_from_a_file_routes_by_user_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("files.json");
    std::fs::write(
        &file,
        toolgate::model::scripted::EMBEDDED
            .iter()
            .find(|(n, _)| *n == "files")
            .unwrap()
            .1,
    )
    .unwrap();
    let opts = ProviderOptions {
        scenario: Some(file.display().to_string()),
        ..Default::default()
    };
    let provider = select(&opts).unwrap();
    assert_eq!(provider.label(), "scripted demo");

    let text_of = |events: Vec<StreamEvent>| -> String {
        events
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t),
                _ => None,
            })
            .collect()
    };
    let ask = |text: &str| ModelRequest {
        system: String::new(),
        messages: vec![Message::user_text(text)],
        tools: vec![],
        max_tokens: 0,
        sampling: Default::default(),
    };
    let (events, _) = collect(provider.as_ref(), ask("good morning")).await;
    assert_eq!(
        text_of(events),
        "Hello from the scripted demo. You said: good morning"
    );

    let (events, _) = collect(provider.as_ref(), ask("please list the files")).await;
    let glob = events.iter().find_map(|e| match e {
        StreamEvent::ToolUse { id, name, input } => Some((id.clone(), name.clone(), input.clone())),
        _ => None,
    });
    let (id, name, input) = glob.expect("a glob call");
    assert_eq!((name.as_str(), input), ("glob", json!({"pattern": "*"})));
    let mut request = ask("please list the files");
    request.messages.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: id.clone(),
            name,
            input: json!({"pattern": "*"}),
        }],
    });
    request
        .messages
        .push(tool_result(&id, "Cargo.toml\nsrc/main.rs", false));
    let (events, _) = collect(provider.as_ref(), request).await;
    assert_eq!(
        text_of(events),
        "Here is what I found:\nCargo.toml\nsrc/main.rs"
    );

    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        r#"{"name": "b", "steps": [{"id": "a", "user": "[", "say": "x"}]}"#,
    )
    .unwrap();
    let err = Scenario::from_file(&broken).unwrap_err().to_string();
    assert!(
        err.contains("broken.json") && err.contains("bad 'user' regex"),
        "{err}"
    );
}
