//! The agent with the real hub and toolgate's own servers as child processes: a pool that
//! grows during a turn, the person's answers to asks, and project servers.

use super::*;
use crate::support::deploy_record;

fn start_with_servers(replies: Vec<Reply>, adjust: impl FnOnce(&mut AgentConfig)) -> Harness {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mut cfg, requests) = config(replies, workspace.path(), state.path());
    let loaded = toolgate::settings::load_servers(&toolgate::settings::LoadOptions {
        workspace: workspace.path().to_path_buf(),
        ..Default::default()
    });
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    cfg.hub = McpHub::with_options(
        loaded.servers,
        hub_tx,
        toolgate::mcp::HubOptions {
            workspace: workspace.path().to_path_buf(),
            builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
            ..Default::default()
        },
    );
    cfg.hub_events = Some(hub_rx);
    adjust(&mut cfg);
    Harness {
        handle: agent::spawn(cfg),
        requests,
        workspace,
        state,
    }
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_server_connected_during_a_turn_is_in_the_next_requests_pool() {
    let mut h = start_with_servers(
        vec![
            reply(vec![
                tool("c1", "connect_mcp", json!({"name": "docs"})),
                stop(StopReason::ToolUse),
            ]),
            reply(vec![
                tool("v1", "mcp__docs__get_version", json!({})),
                tool("c2", "connect_mcp", json!({"name": "docs"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("done"),
        ],
        |_| {},
    );
    h.submit("connect docs").await;
    let events = h.turn(|_| Some(UserDecision::AllowOnce)).await;
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Ok);
    assert!(
        done[0]
            .1
            .starts_with("Connected to MCP server 'docs'. Discovered "),
        "{}",
        done[0].1
    );
    assert!(done[0].1.contains("search") && done[0].1.contains("get_version"));
    assert_eq!(done[1].0, ToolOutcome::Ok, "get_version: {}", done[1].1);
    assert!(
        done[2]
            .1
            .starts_with("MCP server 'docs' is already connected"),
        "{}",
        done[2].1
    );

    let pool_change = events.iter().rev().find_map(|e| match e {
        AgentEvent::View(View::PoolChanged(PoolUpdate { added, removed, .. })) => {
            Some((added.clone(), removed.clone()))
        }
        _ => None,
    });
    let (added, removed) = pool_change.expect("a PoolChanged after the connect");
    assert!(
        added.contains(&"mcp__docs__search".to_string()),
        "{added:?}"
    );
    assert!(removed.is_empty());

    let requests = h.requests();
    assert!(
        !tool_names(&requests[0])
            .iter()
            .any(|n| n.starts_with("mcp__docs__"))
    );
    assert!(!requests[0].system.contains("Connected MCP servers"));
    let second = tool_names(&requests[1]);
    assert!(
        second.contains(&"mcp__docs__search".to_string()),
        "{second:?}"
    );
    assert!(second.contains(&"mcp__docs__get_version".to_string()));
    assert!(!tool_names(&requests[0]).contains(&"disconnect_mcp".to_string()));
    assert!(second.contains(&"disconnect_mcp".to_string()));
    assert!(requests[1].system.contains("Connected MCP servers: docs"));
}

#[tokio::test]
async fn ask_answers_decide_each_call() {
    let trigger = |id: &str, service: &str| {
        reply(vec![
            tool(id, "mcp__deploy__trigger", json!({"service": service})),
            stop(StopReason::ToolUse),
        ])
    };
    let mut h = start_with_servers(
        vec![
            reply(vec![
                tool("c", "connect_mcp", json!({"name": "deploy"})),
                stop(StopReason::ToolUse),
            ]),
            trigger("denied", "web"),
            trigger("noted", "web"),
            trigger("once", "web"),
            trigger("broken", "no-such-service"),
            trigger("session", "api"),
            trigger("granted", "api"),
            final_text("done"),
        ],
        |_| {},
    );
    let mut answers = VecDeque::from(vec![
        UserDecision::Deny,
        UserDecision::DenyWithNote("not on a Friday".into()),
        UserDecision::AllowOnce,
        UserDecision::AllowOnce,
        UserDecision::AllowSession,
    ]);
    let mut asked = Vec::new();
    h.submit("deploy").await;
    let events = h
        .turn(|tool| {
            asked.push(tool.to_string());
            answers.pop_front()
        })
        .await;
    assert_eq!(asked.len(), 5, "the sixth call rides on the session grant");
    assert!(asked.iter().all(|t| t == "mcp__deploy__trigger"));
    let done = finished(&events);
    assert_eq!(done.len(), 7);
    assert_eq!(
        done[1],
        (
            ToolOutcome::Denied,
            "Permission denied: the user denied this call".into()
        )
    );
    assert_eq!(
        done[2],
        (
            ToolOutcome::Denied,
            "Permission denied by the user: not on a Friday".into()
        )
    );
    assert_eq!(done[3].0, ToolOutcome::Ok, "{}", done[3].1);
    assert!(done[3].1.contains("web"), "{}", done[3].1);
    assert_eq!(
        done[4].0,
        ToolOutcome::Error,
        "an isError result: {}",
        done[4].1
    );
    assert_eq!(done[5].0, ToolOutcome::Ok, "{}", done[5].1);
    assert_eq!(done[6].0, ToolOutcome::Ok, "{}", done[6].1);
    let deciders: Vec<(String, Decider)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Fact(Event::PermissionDecided(PermissionLine { call_id, record })) => {
                Some((call_id.to_string(), record.decider.clone()))
            }
            _ => None,
        })
        .filter(|(id, _)| id != "c")
        .collect();
    assert_eq!(deciders.len(), 6);
    // The five answers are the person's, each with the answer given and the rule that
    // asked; the sixth call rides on the session grant they gave.
    let person = |answer: UserDecision| Decider::Person {
        answer,
        asked_by: "mcp__deploy__trigger".into(),
    };
    let expected = vec![
        person(UserDecision::Deny),
        person(UserDecision::DenyWithNote("not on a Friday".into())),
        person(UserDecision::AllowOnce),
        person(UserDecision::AllowOnce),
        person(UserDecision::AllowSession),
        Decider::SessionGrant {
            tool: "mcp__deploy__trigger".into(),
        },
    ];
    let got: Vec<Decider> = deciders.into_iter().map(|(_, d)| d).collect();
    assert_eq!(got, expected);
    // The far side, once the servers have exited: the two denied calls never reached the
    // deploy server; it received
    // the other four, ran web once (the unknown service failed before running) and api
    // twice.
    h.shut_down().await;
    assert_eq!(
        deploy_record::received_triggers(h.workspace.path()),
        ["web", "no-such-service", "api", "api"]
    );
    let ran: Vec<String> = deploy_record::deployments(h.workspace.path())
        .iter()
        .map(|d| d["service"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ran, vec!["web", "api", "api"]);
}

#[tokio::test]
async fn an_unanswered_question_expires_into_a_denial_recorded_as_expired() {
    let mut h = start_with_servers(
        vec![
            reply(vec![
                tool("c", "connect_mcp", json!({"name": "deploy"})),
                stop(StopReason::ToolUse),
            ]),
            reply(vec![
                tool("t", "mcp__deploy__trigger", json!({"service": "web"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("not deployed"),
        ],
        |c| c.ask_timeout = Some(Duration::from_millis(200)),
    );
    h.submit("deploy").await;
    // The request reaches the front end with its deadline; nobody answers it.
    let events = h
        .until(|_| None, |e| matches!(e, AgentEvent::Request(_)))
        .await;
    let Some(AgentEvent::Request(HostRequest::ToolCall(request))) = events.into_iter().last()
    else {
        unreachable!()
    };
    let deadline = request
        .meta
        .deadline
        .expect("the request carries its deadline");
    assert!(deadline > request.meta.created);
    let events = h.turn(no_answers).await;
    assert_eq!(
        finished(&events),
        vec![(
            ToolOutcome::Denied,
            "Permission denied: nobody answered before the request's deadline".to_string()
        )]
    );
    assert!(
        events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::PermissionDecided(PermissionLine { call_id, record }))
            if call_id == "t"
                && record.decider == Decider::Expired { asked_by: "mcp__deploy__trigger".into() }))
    );
    assert!(request.is_withdrawn(), "the agent stopped waiting");
    h.shut_down().await;
    deploy_record::assert_none(h.workspace.path());
}

#[tokio::test]
async fn cancel_while_asking_gives_a_cancelled_result() {
    let mut h = start_with_servers(
        vec![
            // The server's tools are in the pool from the next model call on.
            reply(vec![
                tool("c", "connect_mcp", json!({"name": "deploy"})),
                stop(StopReason::ToolUse),
            ]),
            reply(vec![
                tool("t", "mcp__deploy__trigger", json!({"service": "web"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("never"),
        ],
        |_| {},
    );
    h.submit("deploy").await;
    let events = h
        .until(|_| None, |e| matches!(e, AgentEvent::Request(_)))
        .await;
    let Some(AgentEvent::Request(HostRequest::ToolCall(request))) = events.into_iter().last()
    else {
        unreachable!()
    };
    assert_eq!(request.payload.tool.name, "mcp__deploy__trigger");
    assert_eq!(request.payload.input, json!({"service": "web"}));
    h.handle.commands.send(UiCommand::Cancel).await.unwrap();
    let events = h.turn(no_answers).await;
    assert!(turn_cancelled(&events));
    assert_eq!(
        finished(&events),
        vec![(ToolOutcome::Cancelled, "Cancelled by the user".to_string())]
    );
    assert!(
        request.is_withdrawn(),
        "the agent stopped waiting for the answer"
    );
    assert_eq!(h.requests().len(), 2);
    h.shut_down().await;
    deploy_record::assert_none(h.workspace.path());
}

#[tokio::test]
async fn headless_turns_an_ask_into_a_denial_naming_the_allow_rule() {
    let mut h = start_with_servers(
        vec![
            // The server's tools are in the pool from the next model call on.
            reply(vec![
                tool("c", "connect_mcp", json!({"name": "deploy"})),
                stop(StopReason::ToolUse),
            ]),
            reply(vec![
                tool("t", "mcp__deploy__trigger", json!({"service": "web"})),
                stop(StopReason::ToolUse),
            ]),
            final_text("could not deploy"),
        ],
        |c| c.headless = true,
    );
    h.submit("deploy").await;
    let events = h.turn(no_answers).await;
    assert_eq!(
        finished(&events)[1],
        (
            ToolOutcome::Denied,
            "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow mcp__deploy__trigger".to_string()
        )
    );
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::PermissionDecided(PermissionLine { call_id, record }))
            if call_id == "t"
                && record.decision == Permit::Deny
                && record.decider == Decider::Headless { asked_by: "mcp__deploy__trigger".into() })));
    h.shut_down().await;
    deploy_record::assert_none(h.workspace.path());
}

#[tokio::test]
async fn allow_always_writes_a_rule_and_stops_asking() {
    let trigger = |id: &str| {
        reply(vec![
            tool(id, "mcp__deploy__trigger", json!({"service": "web"})),
            stop(StopReason::ToolUse),
        ])
    };
    let mut h = start_with_servers(
        vec![
            reply(vec![
                tool("c", "connect_mcp", json!({"name": "deploy"})),
                stop(StopReason::ToolUse),
            ]),
            trigger("first"),
            trigger("second"),
            final_text("done"),
        ],
        |_| {},
    );
    let mut asked = 0;
    h.submit("deploy twice").await;
    let events = h
        .turn(|_| {
            asked += 1;
            Some(UserDecision::AllowAlways)
        })
        .await;
    assert_eq!(asked, 1);
    let config = h.workspace.path().join(".toolgate").join("config.toml");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.contains("mcp__deploy__trigger"), "{written}");
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::Fact(Event::Notice { message: n }) if n.contains("mcp__deploy__trigger") && n.contains(config.to_str().unwrap()))));
    let outcomes: Vec<ToolOutcome> = finished(&events).iter().map(|d| d.0).collect();
    assert_eq!(
        outcomes,
        vec![ToolOutcome::Ok, ToolOutcome::Ok, ToolOutcome::Ok]
    );
    // Both calls reached the deploy server.
    h.shut_down().await;
    deploy_record::assert_received(h.workspace.path(), &["web", "web"]);
}

#[cfg(unix)]
#[tokio::test]
async fn the_gate_resolves_a_symlink_out_of_the_workspace_and_always_names_its_target() {
    let outside = tempfile::tempdir().unwrap();
    let secret = std::fs::canonicalize(outside.path())
        .unwrap()
        .join("secret.txt");
    std::fs::write(&secret, "the secret").unwrap();
    let read = |id: &str| {
        reply(vec![
            tool(id, "read_file", json!({"path": "innocent.txt"})),
            stop(StopReason::ToolUse),
        ])
    };
    let mut h = start(
        vec![read("first"), read("second"), final_text("done")],
        |_| {},
    );
    std::os::unix::fs::symlink(&secret, h.workspace.path().join("innocent.txt")).unwrap();
    let mut asked = Vec::new();
    h.submit("read it twice").await;
    let events = h
        .turn(|tool| {
            asked.push(tool.to_string());
            Some(UserDecision::AllowAlways)
        })
        .await;
    // The link points outside, so the first read asks; "always" writes the file the link
    // resolves to, which lets the second read through.
    assert_eq!(asked, ["read_file"]);
    let config = h.workspace.path().join(".toolgate").join("config.toml");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.contains(&format!("Read({})", secret.display())),
        "{written}"
    );
    let done = finished(&events);
    assert_eq!(done.len(), 2);
    for (outcome, output) in done {
        assert_eq!(outcome, ToolOutcome::Ok, "{output}");
        assert!(output.contains("the secret"), "{output}");
    }
}

#[tokio::test]
async fn a_project_server_asks_once_showing_its_command_line() {
    let workspace = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join(".mcp.json"),
        r#"{"mcpServers": {"projdocs": {"type": "builtin", "server": "docs"}}}"#,
    )
    .unwrap();
    let connect = |id: &str| {
        reply(vec![
            tool(id, "connect_mcp", json!({"name": "projdocs"})),
            stop(StopReason::ToolUse),
        ])
    };
    let (mut cfg, _requests) = config(
        vec![connect("c1"), connect("c2"), final_text("done")],
        workspace.path(),
        state.path(),
    );
    let loaded = toolgate::settings::load_servers(&toolgate::settings::LoadOptions {
        workspace: workspace.path().to_path_buf(),
        trust_project: true,
        ..Default::default()
    });
    assert!(
        loaded
            .servers
            .iter()
            .any(|s| s.name == "projdocs" && s.source.is_project())
    );
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    cfg.hub = McpHub::with_options(
        loaded.servers,
        hub_tx,
        toolgate::mcp::HubOptions {
            workspace: workspace.path().to_path_buf(),
            builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
            ..Default::default()
        },
    );
    cfg.hub_events = Some(hub_rx);
    let mut h = Harness {
        handle: agent::spawn(cfg),
        requests: _requests,
        workspace,
        state,
    };
    h.submit("connect the project's docs").await;
    // First question: leave it open to look at it, then deny.
    let events = h
        .until(|_| None, |e| matches!(e, AgentEvent::Request(_)))
        .await;
    let Some(AgentEvent::Request(HostRequest::ProjectServer(request))) = events.into_iter().last()
    else {
        panic!("expected a project-server request");
    };
    assert_eq!(
        request.meta.origin,
        toolgate::protocol::questions::Origin::Project {
            server: "projdocs".into()
        }
    );
    assert_eq!(request.payload.command_line, "toolgate serve docs");
    assert!(
        request.payload.why.contains("toolgate serve docs"),
        "{}",
        request.payload.why
    );
    assert!(request.answer(ProjectServerAnswer::DontStart));
    // Second connect asks again (the first was denied); approve it this time.
    let events = h.turn(|_| Some(UserDecision::AllowOnce)).await;
    let done = finished(&events);
    assert_eq!(done[0].0, ToolOutcome::Error, "{}", done[0].1);
    assert!(
        done[0]
            .1
            .contains("did not approve starting the project's MCP server 'projdocs'"),
        "{}",
        done[0].1
    );
    assert_eq!(done[1].0, ToolOutcome::Ok, "{}", done[1].1);
    assert!(done[1].1.starts_with("Connected to MCP server 'projdocs'"));
    let _ = &h.workspace;
}
