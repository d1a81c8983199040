//! The MCP client (hub) against real child processes: the misbehaving fixture server in
//! tests/fixtures and toolgate's own servers.

use crate::support::fixture_server::{fixture, hub_with};
use crate::support::process::alive;

use serde_json::json;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{HubEvent, McpError, McpHub, ServerStatus};

const LIMIT: Duration = Duration::from_secs(30);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("operation did not finish in bounded time")
}

async fn echo(hub: &McpHub, server: &str) -> String {
    let out = bounded(hub.call(
        server,
        "echo",
        json!({"text": "hi"}),
        None,
        CancellationToken::new(),
    ))
    .await
    .expect("echo call");
    assert!(!out.is_error, "{out:?}");
    out.text
}

#[tokio::test]
async fn legacy_and_modern_servers_both_connect() {
    let (hub, _rx) = hub_with(vec![
        fixture("old", &[("FIXTURE_ERA", "legacy")]),
        fixture("new", &[("FIXTURE_ERA", "modern")]),
    ]);
    let tools = bounded(hub.connect("old")).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    bounded(hub.connect("new")).await.unwrap();
    assert_eq!(echo(&hub, "old").await, "echo: hi");
    assert_eq!(echo(&hub, "new").await, "echo: hi");
    match hub.status("old") {
        ServerStatus::Ready { protocol, .. } => assert_eq!(protocol, "2025-11-25"),
        other => panic!("{other:?}"),
    }
    match hub.status("new") {
        ServerStatus::Ready { protocol, tools } => {
            assert_eq!(protocol, "2026-07-28");
            assert_eq!(tools, 10);
        }
        other => panic!("{other:?}"),
    }
    let names: Vec<String> = hub
        .server_tools()
        .iter()
        .map(|s| s.server().to_string())
        .collect();
    assert_eq!(names, ["old", "new"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn discover_probe_that_is_ignored_or_answered_empty_falls_back() {
    let (hub, _rx) = hub_with(vec![
        fixture("silent", &[("FIXTURE_MODE", "silent_discover")]),
        fixture("empty", &[("FIXTURE_MODE", "empty_discover")]),
    ]);
    bounded(hub.connect("silent")).await.unwrap();
    bounded(hub.connect("empty")).await.unwrap();
    assert_eq!(echo(&hub, "silent").await, "echo: hi");
    assert_eq!(echo(&hub, "empty").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn slow_modern_server_is_retried_without_the_probe() {
    // The probe (500 ms here) gives up, `initialize` is refused by a server that only
    // speaks 2026-07-28, and the hub starts it again in discover mode.
    let (hub, _rx) = hub_with(vec![fixture(
        "slowmodern",
        &[("FIXTURE_ERA", "modern"), ("FIXTURE_MODE", "slow_discover")],
    )]);
    bounded(hub.connect("slowmodern")).await.unwrap();
    assert_eq!(echo(&hub, "slowmodern").await, "echo: hi");
    match hub.status("slowmodern") {
        ServerStatus::Ready { protocol, .. } => assert_eq!(protocol, "2026-07-28"),
        other => panic!("{other:?}"),
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn exit_at_start_and_during_handshake_are_clear_failures() {
    let (hub, _rx) = hub_with(vec![
        fixture("dead", &[("FIXTURE_MODE", "exit_at_start")]),
        fixture("halfway", &[("FIXTURE_MODE", "exit_in_handshake")]),
    ]);
    let err = bounded(hub.connect("dead")).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("MCP server 'dead' failed to start"), "{text}");
    assert!(text.contains("configuration missing"), "{text}");
    match hub.status("dead") {
        ServerStatus::Failed { stderr_tail, .. } => {
            assert!(
                stderr_tail
                    .iter()
                    .any(|l| l.contains("configuration missing"))
            )
        }
        other => panic!("{other:?}"),
    }
    let err = bounded(hub.connect("halfway")).await.unwrap_err();
    assert!(
        err.to_string().contains("exiting during the handshake"),
        "{err}"
    );
    assert!(!hub.is_connected("halfway"));
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped() {
    let (hub, _rx) = hub_with(vec![fixture(
        "noisy",
        &[("FIXTURE_MODE", "garbage_stdout")],
    )]);
    bounded(hub.connect("noisy")).await.unwrap();
    assert_eq!(echo(&hub, "noisy").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn crash_mid_call_reports_exit_and_stderr_then_reconnects() {
    let (hub, _rx) = hub_with(vec![fixture("fragile", &[])]);
    bounded(hub.connect("fragile")).await.unwrap();
    let err = bounded(hub.call(
        "fragile",
        "crash",
        json!({}),
        None,
        CancellationToken::new(),
    ))
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::Disconnected { .. }), "{text}");
    assert!(text.contains("simulated crash"), "{text}");
    // The watcher drops it from the pool and then marks it failed, once the process's exit
    // status and last stderr lines are in (a moment later on a loaded machine).
    bounded(async {
        while hub.is_connected("fragile")
            || !matches!(hub.status("fragile"), ServerStatus::Failed { .. })
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    match hub.status("fragile") {
        ServerStatus::Failed {
            reason,
            stderr_tail,
        } => {
            assert!(reason.contains("exit status: 3"), "{reason}");
            assert!(stderr_tail.iter().any(|l| l.contains("simulated crash")));
        }
        other => panic!("{other:?}"),
    }
    bounded(hub.connect("fragile")).await.unwrap();
    assert_eq!(echo(&hub, "fragile").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn hang_times_out_and_server_stays_usable() {
    let mut config = fixture("sleepy", &[]);
    // The hang never answers, so any limit ends it; the limit also bounds the echo after
    // it, so it is generous (a loaded machine must not turn the echo into a timeout).
    config.call_timeout_ms = 3000;
    let (hub, _rx) = hub_with(vec![config]);
    bounded(hub.connect("sleepy")).await.unwrap();
    let err = bounded(hub.call("sleepy", "hang", json!({}), None, CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("timed out"));
    assert_eq!(echo(&hub, "sleepy").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn progress_then_cancel_drops_late_messages() {
    let (hub, _rx) = hub_with(vec![fixture("slowpoke", &[])]);
    bounded(hub.connect("slowpoke")).await.unwrap();
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let call = {
        let hub = hub.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            hub.call(
                "slowpoke",
                "slow",
                json!({"steps": 50, "delay_ms": 100}),
                Some(ptx),
                cancel,
            )
            .await
        })
    };
    let first = bounded(prx.recv()).await.expect("progress arrives");
    assert_eq!(first.progress, 1.0);
    assert_eq!(first.total, Some(50.0));
    assert_eq!(first.message.as_deref(), Some("step 1"));
    cancel.cancel();
    let result = bounded(call).await.unwrap();
    assert!(matches!(result, Err(McpError::Cancelled)), "{result:?}");
    // The fixture answers the cancelled request with more progress and a result; neither
    // may reach us, and the connection keeps working. It says on stderr once it has sent
    // them; a call after that is answered after them on its stdout, so once the echo is
    // back the hub has handled both, and what reached the channel is all there will be.
    bounded(async {
        while !hub
            .stderr_tail("slowpoke")
            .iter()
            .any(|l| l.contains("late messages sent"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(echo(&hub, "slowpoke").await, "echo: hi");
    while let Ok(update) = prx.try_recv() {
        assert_ne!(
            update.message.as_deref(),
            Some("late progress after cancel")
        );
    }
    assert_eq!(echo(&hub, "slowpoke").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn list_changed_relists_and_reports_added_and_removed() {
    let (hub, mut rx) = hub_with(vec![fixture("grow", &[])]);
    bounded(hub.connect("grow")).await.unwrap();
    bounded(hub.call(
        "grow",
        "add_tool",
        json!({"name": "fresh.tool"}),
        None,
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    let (added, removed) = bounded(async {
        loop {
            if let Some(HubEvent::ToolsChanged { added, removed, .. }) = rx.recv().await {
                return (added, removed);
            }
        }
    })
    .await;
    assert_eq!(added, ["fresh.tool"]);
    assert!(removed.is_empty());
    assert!(
        hub.server_tools()[0]
            .tools()
            .iter()
            .any(|t| t.name == "fresh.tool")
    );
    bounded(hub.call(
        "grow",
        "remove_tool",
        json!({"name": "echo"}),
        None,
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    let removed = bounded(async {
        loop {
            if let Some(HubEvent::ToolsChanged { removed, .. }) = rx.recv().await {
                return removed;
            }
        }
    })
    .await;
    assert_eq!(removed, ["echo"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn ten_thousand_tools_over_pages() {
    let (hub, _rx) = hub_with(vec![fixture(
        "many",
        &[
            ("FIXTURE_TOOLS", "[]"),
            ("FIXTURE_TOOL_COUNT", "10000"),
            ("FIXTURE_PAGE_SIZE", "700"),
        ],
    )]);
    let tools = bounded(hub.connect("many")).await.unwrap();
    assert_eq!(tools.len(), 10_000);
    assert_eq!(tools[9_999].name, "t9999");
    hub.shutdown().await;
}

#[tokio::test]
async fn unknown_ids_floods_errors_and_big_results() {
    let (hub, _rx) = hub_with(vec![fixture("odd", &[])]);
    bounded(hub.connect("odd")).await.unwrap();
    let cancel = CancellationToken::new;
    let out = bounded(hub.call("odd", "bogus_id", json!({}), None, cancel()))
        .await
        .unwrap();
    assert_eq!(out.text, "real answer");
    let out = bounded(hub.call("odd", "flood", json!({"count": 5000}), None, cancel()))
        .await
        .unwrap();
    assert_eq!(out.text, "flooded");
    let out = bounded(hub.call("odd", "nope", json!({}), None, cancel()))
        .await
        .unwrap();
    assert!(out.is_error);
    assert!(
        out.text.contains("-32602") && out.text.contains("Unknown tool: nope"),
        "{}",
        out.text
    );
    let out = bounded(hub.call("odd", "fail", json!({}), None, cancel()))
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(out.text, "the fixture tool failed on purpose");
    // Beyond rmcp's default 16 MiB line limit.
    let out = bounded(hub.call("odd", "big", json!({"bytes": 20_000_000}), None, cancel()))
        .await
        .unwrap();
    assert_eq!(out.text.len(), 20_000_000);
    assert_eq!(echo(&hub, "odd").await, "echo: hi");
    hub.shutdown().await;
}

#[tokio::test]
async fn shutdown_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let (hub, _rx) = hub_with(vec![fixture(
        "tidy",
        &[("FIXTURE_PIDFILE", pidfile.to_str().unwrap())],
    )]);
    bounded(hub.connect("tidy")).await.unwrap();
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    bounded(hub.disconnect("tidy")).await.unwrap();
    assert!(!alive(pid), "server process {pid} survived disconnect");
    assert_eq!(
        hub.status("tidy"),
        ServerStatus::Disconnected { reason: None }
    );
    let err = bounded(hub.call("tidy", "echo", json!({}), None, CancellationToken::new()))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "MCP server 'tidy' is not connected");
}

#[tokio::test]
async fn unknown_server_lists_the_available_ones() {
    let (hub, _rx) = hub_with(vec![fixture("a", &[]), fixture("b", &[])]);
    let err = hub.connect("zzz").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown MCP server 'zzz'; available servers: a, b"
    );
}
