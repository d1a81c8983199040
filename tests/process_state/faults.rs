//! Fault injection at the MCP layer, beyond tests/it/mcp_client.rs: huge results, notification
//! floods, odd tool names, non-object schemas, stray response ids, a server that closes
//! stdout but lives on, and several servers crashing at once. Real child processes (the
//! misbehaving fixture in tests/fixtures), real stdio, the real hub and pool.

use crate::fixture_server::{fixture, hub_with, python_fixture};

use futures::future::join_all;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{CallOutput, HubEvent, McpError, McpHub, ProgressUpdate, ServerStatus};
use toolgate::pool::{self, MAX_NAME_LEN, PoolTool, ToolOrigin};
use toolgate::settings::{ServerConfig, ServerTransport};

const LIMIT: Duration = Duration::from_secs(60);
/// The notification flood's bound: see the test.
const FLOOD_LIMIT: Duration = Duration::from_secs(300);

/// The test that measures this process's resident memory runs alone (cargo test runs a
/// binary's tests as threads of one process; nextest runs one per process): it holds this
/// for writing, the test that allocates 50 MB too, and every other test of this binary
/// holds it for reading, so none allocates beside the measurement.
static MEMORY_SENSITIVE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

fn faulty(name: &str) -> ServerConfig {
    fixture(name, &[("FIXTURE_FAULT_TOOLS", "1")])
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("operation did not finish in bounded time")
}

async fn call(hub: &McpHub, server: &str, tool: &str, args: Value) -> Result<CallOutput, McpError> {
    bounded(hub.call(server, tool, args, None, CancellationToken::new())).await
}

async fn echo(hub: &McpHub, server: &str, text: &str) -> String {
    let out = call(hub, server, "echo", json!({ "text": text }))
        .await
        .expect("echo call");
    assert!(!out.is_error, "{out:?}");
    out.text
}

async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    tokio::time::timeout(LIMIT, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmRSS value in kB");
    kb * 1024
}

fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z"),
        Err(_) => false,
    }
}

fn mcp_tools(pool: &pool::Pool) -> Vec<&PoolTool> {
    pool.tools
        .iter()
        .filter(|t| matches!(t.origin, ToolOrigin::Mcp { .. }))
        .map(|t| &**t)
        .collect()
}

fn assemble(hub: &McpHub) -> Result<pool::Pool, pool::PoolError> {
    let names = hub.configured();
    pool::assemble(&toolgate::pool::builtin_tools(&names), &hub.server_tools())
}

#[tokio::test]
async fn fifty_megabyte_result_arrives_whole_in_bounded_time() {
    let _memory = MEMORY_SENSITIVE.write().await;
    let (hub, _rx) = hub_with(vec![fixture("huge", &[])]);
    bounded(hub.connect("huge")).await.unwrap();
    let out = call(&hub, "huge", "big", json!({ "bytes": 50_000_000 }))
        .await
        .expect("a 50 MB result is a result, not a transport failure");
    assert!(!out.is_error);
    assert_eq!(out.text.len(), 50_000_000);
    assert!(out.text.bytes().all(|b| b == b'x'), "result text altered");
    drop(out);
    // The connection survives a line that size.
    assert_eq!(echo(&hub, "huge", "after").await, "echo: after");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_flood_during_a_call_completes_with_bounded_memory() {
    let _memory = MEMORY_SENSITIVE.write().await;
    // What is measured is memory and completion, not speed: 50,000 notifications through
    // a Python server take tens of seconds on a loaded machine, so the call's own timeout
    // and the bound below are generous (a soak run under load passed the 30 s default).
    let patient = python_fixture(
        "chatty",
        "fixture_server.py",
        &[("FIXTURE_FAULT_TOOLS", "1")],
        FLOOD_LIMIT.as_millis() as u64,
    );
    let (hub, mut rx) = hub_with(vec![patient]);
    bounded(hub.connect("chatty")).await.unwrap();
    // The agent drains hub events as they come; count the flood's log lines like it would.
    let logs = tokio::spawn(async move {
        let mut count = 0usize;
        while let Some(event) = rx.recv().await {
            if let HubEvent::Log { message, .. } = event
                && message.starts_with("flood log ")
            {
                count += 1;
                if count == 25_000 {
                    break;
                }
            }
        }
        count
    });
    let before = resident_bytes();
    let (ptx, mut prx) = mpsc::unbounded_channel::<ProgressUpdate>();
    let progress = tokio::spawn(async move {
        let mut seen = 0usize;
        while prx.recv().await.is_some() {
            seen += 1;
        }
        seen
    });
    let flood = tokio::time::timeout(
        FLOOD_LIMIT,
        hub.call(
            "chatty",
            "flood_progress",
            json!({ "count": 50_000 }),
            Some(ptx),
            CancellationToken::new(),
        ),
    );
    // Another call on the same connection while the flood is under way still gets through.
    let (flood, side) = tokio::join!(flood, echo(&hub, "chatty", "meanwhile"));
    let flood = flood
        .expect("the flood finished within its bound")
        .expect("the flooded call completes");
    assert_eq!(flood.text, "flooded 50000");
    assert_eq!(side, "echo: meanwhile");
    let seen = bounded(progress).await.unwrap();
    assert!(seen > 0, "no progress reached the caller");
    assert!(seen <= 25_000, "more progress than the server sent: {seen}");
    assert_eq!(bounded(logs).await.unwrap(), 25_000, "log lines lost");
    let after = resident_bytes();
    let grown = after.saturating_sub(before);
    eprintln!(
        "resident memory grew by {} kB during the flood",
        grown / 1024
    );
    assert!(
        grown < 200 * 1024 * 1024,
        "resident memory grew by {} MB during a 50,000-notification flood",
        grown / (1024 * 1024)
    );
    assert_eq!(echo(&hub, "chatty", "after").await, "echo: after");
    hub.shutdown().await;
}

/// The spec requires each progress notification of a request to increase; a caller (the
/// console's progress line) must never see progress go backwards, although rmcp handles
/// each notification on its own task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flooded_progress_reaches_the_caller_in_order() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let (hub, _rx) = hub_with(vec![faulty("ordered")]);
    bounded(hub.connect("ordered")).await.unwrap();
    let (ptx, mut prx) = mpsc::unbounded_channel::<ProgressUpdate>();
    let out = bounded(hub.call(
        "ordered",
        "flood_progress",
        json!({ "count": 20_000 }),
        Some(ptx),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(out.text, "flooded 20000");
    let mut received = Vec::new();
    while let Ok(update) = prx.try_recv() {
        received.push(update.progress);
    }
    assert!(!received.is_empty());
    let backwards = received.windows(2).filter(|w| w[1] <= w[0]).count();
    assert_eq!(
        backwards,
        0,
        "{backwards} of {} progress updates arrived after a later one",
        received.len()
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn dotted_unicode_and_long_names_are_valid_unique_and_called_raw() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let a128 = "a".repeat(128);
    let dotted128 = format!("{}{}", "ns.".repeat(42), "xy");
    let twin_one = format!("{}.one", "x".repeat(120));
    let twin_two = format!("{}.two", "x".repeat(120));
    let raw_names: Vec<String> = vec![
        "search.v2.beta".into(),
        "files.read-text".into(),
        "naïve_工具_検索".into(),
        "wrench_🔧".into(),
        a128.clone(),
        dotted128.clone(),
        twin_one,
        twin_two,
    ];
    assert_eq!(a128.chars().count(), 128);
    assert_eq!(dotted128.chars().count(), 128);
    let echo_tools = serde_json::to_string(&raw_names).unwrap();
    let env = [
        ("FIXTURE_TOOLS", "[]"),
        ("FIXTURE_ECHO_TOOLS", echo_tools.as_str()),
    ];
    let (hub, _rx) = hub_with(vec![
        fixture("weird", &env),
        fixture("a-rather-long-server-name-for-naming-tests", &env),
    ]);
    for server in hub.configured() {
        let listed = bounded(hub.connect(&server)).await.unwrap();
        let listed: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            listed, raw_names,
            "raw names must survive listing unchanged"
        );
    }
    let pool = assemble(&hub).expect("no collision among these names");
    let tools = mcp_tools(&pool);
    assert_eq!(tools.len(), 2 * raw_names.len());
    let mut seen = HashSet::new();
    for tool in &pool.tools {
        assert!(
            !tool.name.is_empty()
                && tool.name.len() <= MAX_NAME_LEN
                && tool
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "invalid model-facing name {:?}",
            tool.name
        );
        assert!(seen.insert(tool.name.clone()), "duplicate {:?}", tool.name);
    }
    for tool in tools {
        let ToolOrigin::Mcp { server, tool: raw } = &tool.origin else {
            unreachable!()
        };
        let unshortened = format!("mcp__{}__{}", pool::normalize(server), pool::normalize(raw));
        assert_eq!(tool.shortened, unshortened.len() > MAX_NAME_LEN, "{raw}");
        if !tool.shortened {
            assert_eq!(tool.name, unshortened);
        }
        let out = call(&hub, server, raw, json!({})).await.unwrap();
        assert!(!out.is_error, "{out:?}");
        assert_eq!(
            out.text,
            format!("called as: {raw}"),
            "pool name {}",
            tool.name
        );
    }
    hub.shutdown().await;
}

/// Issue 23: a tool whose schema's root is not an object (or has no type) is left out of
/// the pool; the server connects and its other tools, and the other servers, stay callable.
#[tokio::test]
async fn non_object_schemas_leave_out_those_tools_while_the_rest_stay_callable() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let (hub, _rx) = hub_with(vec![
        fixture("good", &[]),
        fixture(
            "arrayish",
            &[
                ("FIXTURE_TOOLS", r#"["list_things", "echo"]"#),
                (
                    "FIXTURE_SCHEMA",
                    r#"{"type": "array", "items": {"type": "string"}}"#,
                ),
            ],
        ),
        fixture(
            "typeless",
            &[
                ("FIXTURE_TOOLS", r#"["anything"]"#),
                (
                    "FIXTURE_SCHEMA",
                    r#"{"properties": {"x": {"type": "string"}}}"#,
                ),
            ],
        ),
    ]);
    bounded(hub.connect("good")).await.unwrap();
    let before = assemble(&hub).expect("pool with the good server");
    bounded(hub.connect("arrayish")).await.unwrap();
    let pool = assemble(&hub).expect("the bad tool is left out, not the server");
    assert!(pool.get("mcp__arrayish__list_things").is_none());
    assert!(pool.get("mcp__arrayish__echo").is_some());
    let problem = |server: &str| {
        hub.server_tools()
            .iter()
            .find(|s| s.server() == server)
            .map(|s| s.invalid()[0].problem.to_string())
            .unwrap()
    };
    assert_eq!(
        problem("arrayish"),
        "its inputSchema's root is not type \"object\" (type \"array\"); model APIs require an object schema"
    );
    assert_eq!(echo(&hub, "arrayish", "fine").await, "echo: fine");
    bounded(hub.disconnect("arrayish")).await.unwrap();
    bounded(hub.connect("typeless")).await.unwrap();
    assert_eq!(
        problem("typeless"),
        "its inputSchema's root is not type \"object\" (no type); model APIs require an object schema"
    );
    bounded(hub.disconnect("typeless")).await.unwrap();
    assert_eq!(assemble(&hub).unwrap(), before);
    assert_eq!(echo(&hub, "good", "still here").await, "echo: still here");
    hub.shutdown().await;
}

/// `inputSchema: true` is a valid JSON Schema but not an object, so rmcp cannot read the
/// listing as a whole: toolgate reads it tool by tool, leaves that tool out, and the
/// server connects with the rest (issue 23; before, the connect failed).
#[tokio::test]
async fn schema_that_is_not_a_json_object_leaves_out_that_tool() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let (hub, _rx) = hub_with(vec![
        fixture("good", &[]),
        fixture(
            "boolean",
            &[
                ("FIXTURE_TOOLS", r#"["yes", "echo"]"#),
                ("FIXTURE_SCHEMA", "true"),
            ],
        ),
    ]);
    bounded(hub.connect("good")).await.unwrap();
    let tools = bounded(hub.connect("boolean")).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["echo"]);
    let listing = hub.server_tools();
    let boolean = listing.iter().find(|s| s.server() == "boolean").unwrap();
    assert_eq!(boolean.invalid()[0].name, "yes");
    assert_eq!(
        boolean.invalid()[0].problem.to_string(),
        "its inputSchema is not a JSON object (true); model APIs require an object schema"
    );
    assert_eq!(echo(&hub, "boolean", "ok").await, "echo: ok");
    assert_eq!(echo(&hub, "good", "unaffected").await, "echo: unaffected");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_stale_ids_interleaved_with_real_answers_route_correctly() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let (hub, _rx) = hub_with(vec![faulty("stray")]);
    bounded(hub.connect("stray")).await.unwrap();
    // Some answered ids for the server to repeat as stale duplicates.
    for i in 0..5 {
        assert_eq!(
            echo(&hub, "stray", &format!("warm {i}")).await,
            format!("echo: warm {i}")
        );
    }
    let noise = {
        let hub = hub.clone();
        tokio::spawn(
            async move { call(&hub, "stray", "interleave", json!({ "count": 3000 })).await },
        )
    };
    for batch in 0..20 {
        let calls = (0..5).map(|i| {
            let hub = hub.clone();
            async move {
                let text = format!("call {batch}-{i}");
                (text.clone(), echo(&hub, "stray", &text).await)
            }
        });
        for (text, answer) in join_all(calls).await {
            assert_eq!(
                answer,
                format!("echo: {text}"),
                "an answer reached the wrong call"
            );
        }
    }
    let out = bounded(noise).await.unwrap().expect("interleave completes");
    assert_eq!(out.text, "interleaved 3000");
    assert!(matches!(hub.status("stray"), ServerStatus::Ready { .. }));
    assert_eq!(echo(&hub, "stray", "after").await, "echo: after");
    hub.shutdown().await;
}

#[tokio::test]
async fn server_that_closes_stdout_but_keeps_running_is_failed_not_hung() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut config = faulty("mute");
    if let ServerTransport::Stdio { env, .. } = &mut config.transport {
        env.insert("FIXTURE_PIDFILE".into(), pidfile.display().to_string());
    }
    let (hub, _rx) = hub_with(vec![config]);
    bounded(hub.connect("mute")).await.unwrap();
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let err = call(&hub, "mute", "close_stdout", json!({}))
        .await
        .expect_err("no answer can come once stdout is closed");
    assert!(matches!(err, McpError::Disconnected { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("MCP server 'mute' disconnected"),
        "{err}"
    );
    wait_until("the server is marked failed", || {
        matches!(hub.status("mute"), ServerStatus::Failed { .. })
    })
    .await;
    match hub.status("mute") {
        ServerStatus::Failed {
            reason,
            stderr_tail,
        } => {
            assert_eq!(reason, "connection closed by the server");
            assert!(stderr_tail.iter().any(|l| l.contains("closing stdout")));
        }
        other => panic!("{other:?}"),
    }
    assert!(!hub.is_connected("mute"));
    wait_until("the mute process is gone", || !process_alive(pid)).await;
    let err = call(&hub, "mute", "echo", json!({ "text": "x" }))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "MCP server 'mute' is not connected");
    bounded(hub.connect("mute")).await.unwrap();
    assert_eq!(echo(&hub, "mute", "back").await, "echo: back");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_servers_crashing_at_once_leave_the_rest_of_the_pool_working() {
    let _beside = MEMORY_SENSITIVE.read().await;
    let victims = ["v1", "v2", "v3"];
    let survivors = ["s1", "s2", "s3"];
    let configs = victims
        .iter()
        .chain(survivors.iter())
        .map(|n| fixture(n, &[]))
        .collect();
    let (hub, _rx) = hub_with(configs);
    for name in victims.iter().chain(survivors.iter()) {
        bounded(hub.connect(name)).await.unwrap();
    }
    let slow_calls = survivors.iter().map(|s| {
        let hub = hub.clone();
        async move { call(&hub, s, "slow", json!({ "steps": 10, "delay_ms": 50 })).await }
    });
    let crashes = victims.iter().map(|v| {
        let hub = hub.clone();
        async move { call(&hub, v, "crash", json!({})).await }
    });
    let (slow, crashed) = tokio::join!(join_all(slow_calls), join_all(crashes));
    for (name, outcome) in victims.iter().zip(crashed) {
        let err = outcome.expect_err("a crash mid-call is an error");
        assert!(
            matches!(err, McpError::Disconnected { .. }),
            "{name}: {err}"
        );
        assert!(
            err.to_string().contains(&format!("MCP server '{name}'")),
            "{err}"
        );
        assert!(err.to_string().contains("simulated crash"), "{err}");
    }
    for (name, outcome) in survivors.iter().zip(slow) {
        let out = outcome.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.text, "slow done after 10 steps", "{name}");
    }
    wait_until("all victims are failed", || {
        victims
            .iter()
            .all(|v| matches!(hub.status(v), ServerStatus::Failed { .. }))
    })
    .await;
    for v in victims {
        assert!(!hub.is_connected(v));
    }
    let connected: Vec<String> = hub
        .server_tools()
        .iter()
        .map(|s| s.server().to_string())
        .collect();
    assert_eq!(connected, survivors);
    let pool = assemble(&hub).unwrap();
    let servers: HashSet<&str> = mcp_tools(&pool).iter().filter_map(|t| t.server()).collect();
    assert_eq!(servers, survivors.into_iter().collect());
    for s in survivors {
        assert_eq!(echo(&hub, s, s).await, format!("echo: {s}"));
        assert!(matches!(hub.status(s), ServerStatus::Ready { .. }));
    }
    hub.shutdown().await;
}
