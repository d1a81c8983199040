//! Interop with MCP software nobody on this team wrote, installed from the npm registry at
//! pinned versions by `.ci/interop-setup.sh` into tests/interop/node_modules:
//!
//! - toolgate's client (`McpHub`) against the reference server
//!   `@modelcontextprotocol/server-everything`;
//! - the official inspector CLI (`@modelcontextprotocol/inspector --cli`) against toolgate's
//!   own servers (`toolgate serve docs|deploy|fs`).
//!
//! On a fresh clone the first test that needs them runs `.ci/interop-setup.sh` (`npm ci` of the
//! pinned lockfile), so the README's `cargo test` works without a separate install step. Missing
//! Node or a failed install is a failure with instructions, never a skip.

use crate::support::fixture_server::stdio_server;
use crate::support::npm_packages;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{HubEvent, HubOptions, McpError, McpHub, ProgressUpdate, ServerStatus};
use toolgate::pool::ToolOrigin;
use toolgate::settings::ServerConfig;

const LIMIT: Duration = Duration::from_secs(30);

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// A file inside tests/interop/node_modules, installed first if it is missing; panics with
/// the installer's output if that fails.
fn installed(relative: &str) -> PathBuf {
    let path = interop_dir().join("node_modules").join(relative);
    if !path.is_file()
        && let Err(why) = npm_packages::install_once()
    {
        panic!("the interop packages are not installed and installing them failed: {why}");
    }
    assert!(
        path.is_file(),
        "{} is missing even after .ci/interop-setup.sh ran (needs node and npm).",
        path.display()
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        matches!(&node, Ok(out) if out.status.success()),
        "`node --version` failed ({node:?}): Node 20 must be on PATH for the interop tests; \
         install it and run .ci/interop-setup.sh"
    );
    path
}

fn everything_entry() -> PathBuf {
    installed("@modelcontextprotocol/server-everything/dist/index.js")
}

fn inspector_entry() -> PathBuf {
    installed("@modelcontextprotocol/inspector/cli/build/cli.js")
}

// ---------------------------------------------------------------- toolgate client → everything

fn everything_config() -> ServerConfig {
    let entry = everything_entry().display().to_string();
    stdio_server(
        "everything",
        "node",
        vec![entry, "stdio".into()],
        &[],
        20_000,
    )
}

fn hub_with_everything() -> (McpHub, mpsc::UnboundedReceiver<HubEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = HubOptions {
        builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
        probe_timeout: Duration::from_millis(500),
        ..HubOptions::default()
    };
    (
        McpHub::with_options(vec![everything_config()], tx, options),
        rx,
    )
}

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {LIMIT:?}"))
}

async fn call(hub: &McpHub, tool: &str, args: Value) -> toolgate::mcp::CallOutput {
    bounded(
        tool,
        hub.call("everything", tool, args, None, CancellationToken::new()),
    )
    .await
    .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[tokio::test]
async fn everything_tools_join_the_pool_and_answer_calls() {
    let (hub, _events) = hub_with_everything();
    let tools = bounded("connect", hub.connect("everything"))
        .await
        .unwrap_or_else(|e| panic!("connect to server-everything: {e}"));
    let raw: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(raw.contains(&expected), "{expected} missing from {raw:?}");
    }
    match hub.status("everything") {
        ServerStatus::Ready { tools: n, protocol } => {
            assert_eq!(n, tools.len());
            assert!(!protocol.is_empty(), "no negotiated protocol version");
        }
        other => panic!("status after connect: {other:?}"),
    }

    let builtins = toolgate::pool::builtin_tools(&hub.configured());
    let pool = toolgate::pool::assemble(&builtins, &hub.server_tools()).expect("pool assembles");
    let echo = pool.get("mcp__everything__echo").expect("echo in the pool");
    assert_eq!(
        echo.origin,
        ToolOrigin::Mcp {
            server: "everything".into(),
            tool: "echo".into()
        }
    );
    assert_eq!(
        echo.claims.read_only,
        Some(true),
        "echo claims readOnlyHint"
    );
    assert!(pool.get("mcp__everything__get-sum").is_some());
    let from_everything: Vec<&str> = pool
        .names()
        .into_iter()
        .filter(|n| n.starts_with("mcp__everything__"))
        .collect();
    assert_eq!(from_everything.len(), tools.len(), "{from_everything:?}");

    let out = call(&hub, "echo", json!({"message": "hello from toolgate"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, "Echo: hello from toolgate");

    let out = call(&hub, "get-sum", json!({"a": 2, "b": 40})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, "The sum of 2 and 40 is 42.");

    // The server validates with zod: a wrong argument type is a tool error, not a crash.
    let out = call(&hub, "get-sum", json!({"a": "two", "b": 40})).await;
    assert!(
        out.is_error,
        "bad arguments must be an error result: {out:?}"
    );

    let out = call(&hub, "no-such-tool", json!({})).await;
    assert!(
        out.is_error,
        "unknown tool must be an error result: {out:?}"
    );
    assert!(out.text.contains("no-such-tool"), "{out:?}");

    bounded("shutdown", hub.shutdown()).await;
    assert_eq!(
        hub.status("everything"),
        ServerStatus::Disconnected { reason: None }
    );
}

/// server-everything (2026.8.31) registers its capability-dependent tools
/// (`simulate-research-query`, …) in `oninitialized` and announces them with
/// `notifications/tools/list_changed`. That is the only tools/list_changed it ever sends, and
/// it goes out before its answer to the client's first `tools/list`, so what a client can
/// check is that those tools are in the pool; no tool of this version changes the tool list
/// later (list_changed after connect is covered with the fixture server in mcp_client.rs).
#[tokio::test]
async fn tools_registered_during_the_handshake_reach_the_pool() {
    let (hub, _events) = hub_with_everything();
    bounded("connect", hub.connect("everything"))
        .await
        .unwrap_or_else(|e| panic!("connect to server-everything: {e}"));
    let has_late_tool = || {
        hub.server_tools()
            .iter()
            .flat_map(|s| s.tools().to_vec())
            .any(|t| t.name == "simulate-research-query")
    };
    bounded("late tool", async {
        while !has_late_tool() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let builtins = toolgate::pool::builtin_tools(&hub.configured());
    let pool = toolgate::pool::assemble(&builtins, &hub.server_tools()).expect("pool assembles");
    assert!(
        pool.get("mcp__everything__simulate-research-query")
            .is_some()
    );
    hub.shutdown().await;
}

/// `simulate-research-query` declares `execution.taskSupport: "required"`: toolgate calls it
/// as a task (tools/call with `task`, `tasks/get` at the server's 1 s pollInterval,
/// `tasks/result`), and the task's status messages arrive as the call's progress.
#[tokio::test]
async fn a_task_required_tool_runs_as_a_task_with_its_status_as_progress() {
    let (hub, _events) = hub_with_everything();
    bounded("connect", hub.connect("everything")).await.unwrap();
    bounded("late tool", async {
        while !hub
            .server_tools()
            .iter()
            .flat_map(|s| s.tools().to_vec())
            .any(|t| t.name == "simulate-research-query")
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = bounded(
        "research task",
        hub.call(
            "everything",
            "simulate-research-query",
            json!({"topic": "toolgate"}),
            Some(tx),
            CancellationToken::new(),
        ),
    )
    .await
    .expect("the task's result");
    assert!(!out.is_error, "{out:?}");
    assert!(
        out.text.starts_with("# Research Report: toolgate"),
        "{}",
        out.text
    );
    let mut messages = Vec::new();
    while let Ok(update) = rx.try_recv() {
        messages.extend(update.message);
    }
    assert!(
        messages.len() >= 2 && messages[0] == "Gathering sources...",
        "{messages:?}"
    );
    hub.shutdown().await;
}

async fn next_update(rx: &mut mpsc::UnboundedReceiver<ProgressUpdate>) -> ProgressUpdate {
    bounded("progress update", rx.recv())
        .await
        .expect("progress channel closed before the expected update")
}

#[tokio::test]
async fn long_running_operation_reports_progress_until_done() {
    let (hub, _events) = hub_with_everything();
    bounded("connect", hub.connect("everything")).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = bounded(
        "long-running operation",
        hub.call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
            Some(tx),
            CancellationToken::new(),
        ),
    )
    .await
    .expect("long-running operation");
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        out.text,
        "Long running operation completed. Duration: 1 seconds, Steps: 4."
    );
    let mut seen = Vec::new();
    while let Ok(update) = rx.try_recv() {
        seen.push((update.progress, update.total));
    }
    assert_eq!(
        seen,
        vec![
            (1.0, Some(4.0)),
            (2.0, Some(4.0)),
            (3.0, Some(4.0)),
            (4.0, Some(4.0))
        ]
    );
    hub.shutdown().await;
}

/// Cancel after the first progress update. The server's loop does not watch its abort
/// signal, so it keeps sending progress for the cancelled request; none of it may reach the
/// cancelled call's channel, nor the channel of the call that runs next.
#[tokio::test]
async fn cancelled_operation_drops_late_progress() {
    let (hub, _events) = hub_with_everything();
    bounded("connect", hub.connect("everything")).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let hub = hub.clone();
        let cancel = cancel.clone();
        async move {
            hub.call(
                "everything",
                "trigger-long-running-operation",
                json!({"duration": 3, "steps": 6}),
                Some(tx),
                cancel,
            )
            .await
        }
    });
    let first = next_update(&mut rx).await;
    assert_eq!((first.progress, first.total), (1.0, Some(6.0)));
    cancel.cancel();
    let outcome = bounded("cancelled call", running).await.expect("task");
    assert_eq!(outcome, Err(McpError::Cancelled));
    // The hub dropped its route (and so the sender): the channel ends without late updates.
    let late = bounded("progress channel to close", async {
        let mut late = Vec::new();
        while let Some(update) = rx.recv().await {
            late.push(update);
        }
        late
    })
    .await;
    assert!(
        late.iter().all(|u| u.progress <= 1.0),
        "late progress after cancel: {late:?}"
    );

    // While the server still works on the cancelled operation, a new call gets only its own
    // progress: steps of 2, never the cancelled call's total of 6.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = bounded(
        "second operation",
        hub.call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            Some(tx),
            CancellationToken::new(),
        ),
    )
    .await
    .expect("second operation");
    assert!(!out.is_error, "{out:?}");
    let mut seen = Vec::new();
    while let Some(update) = rx.recv().await {
        seen.push((update.progress, update.total));
    }
    assert_eq!(seen, vec![(1.0, Some(2.0)), (2.0, Some(2.0))]);

    // The connection survived the cancellation.
    let out = call(&hub, "echo", json!({"message": "still here"})).await;
    assert_eq!(out.text, "Echo: still here");
    hub.shutdown().await;
}

// ---------------------------------------------------------------- inspector CLI → toolgate

/// Runs `mcp-inspector --cli toolgate serve <server_args…> <inspector_args…>` in `dir` and
/// returns its JSON output.
fn inspector(dir: &Path, server_args: &[&str], inspector_args: &[&str]) -> Value {
    let output = Command::new("node")
        .arg(inspector_entry())
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg("serve")
        .args(server_args)
        .args(inspector_args)
        .current_dir(dir)
        .output()
        .expect("spawn node for the inspector CLI");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "inspector {server_args:?} {inspector_args:?} failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        output.status
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspector printed no JSON ({e}):\n{stdout}\nstderr: {stderr}"))
}

fn listed_names(listing: &Value) -> Vec<String> {
    listing["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools array in {listing}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The concatenated text blocks of a `tools/call` result, after checking it is no error.
fn result_text(result: &Value) -> String {
    assert_eq!(result["isError"], json!(false), "{result}");
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {result}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn inspector_lists_and_searches_the_docs_server() {
    let dir = tempfile::tempdir().unwrap();
    let listing = inspector(dir.path(), &["docs"], &["--method", "tools/list"]);
    assert_eq!(listed_names(&listing), ["search", "get_version"]);
    assert_eq!(
        listing["tools"][0]["inputSchema"]["required"],
        json!(["query"])
    );

    let result = inspector(
        dir.path(),
        &["docs"],
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "search",
            "--tool-arg",
            "query=deny rule precedence",
            "--tool-arg",
            "limit=3",
        ],
    );
    let text = result_text(&result);
    assert!(text.contains("in the toolgate docs"), "{text}");
    assert!(text.contains("permissions.md"), "{text}");
    let hits = result["structuredContent"]["hits"]
        .as_array()
        .expect("hits");
    assert!(!hits.is_empty() && hits.len() <= 3, "{hits:?}");
    assert_eq!(hits[0]["uri"], "docs://permissions");
}

#[test]
fn inspector_lists_and_calls_the_deploy_server() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().display().to_string();
    let serve = ["--workspace", workspace.as_str(), "deploy"];
    let listing = inspector(dir.path(), &serve, &["--method", "tools/list"]);
    assert_eq!(listed_names(&listing), ["status", "trigger"]);

    let result = inspector(
        dir.path(),
        &serve,
        &["--method", "tools/call", "--tool-name", "status"],
    );
    let text = result_text(&result);
    assert!(text.contains("Service api: never deployed"), "{text}");
    assert!(text.contains("Service web: never deployed"), "{text}");

    // An unknown service is a tool error naming the known ones, not a protocol failure.
    let output = Command::new("node")
        .arg(inspector_entry())
        .args(["--cli", env!("CARGO_BIN_EXE_toolgate"), "serve"])
        .args(serve)
        .args(["--method", "tools/call", "--tool-name", "status"])
        .args(["--tool-arg", "service=nope"])
        .current_dir(dir.path())
        .output()
        .expect("spawn inspector");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("\"isError\": true"), "{stdout}");
    assert!(stdout.contains("api") && stdout.contains("web"), "{stdout}");
}

#[test]
fn inspector_lists_and_calls_the_fs_server() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("note.txt"),
        "hello from the interop suite\n",
    )
    .unwrap();
    let root = dir.path().display().to_string();
    let serve = ["fs", root.as_str()];
    let listing = inspector(dir.path(), &serve, &["--method", "tools/list"]);
    let names = listing_sorted(&listing);
    assert_eq!(names, ["get_time", "list_dir", "read_file", "write_file"]);

    let read = inspector(
        dir.path(),
        &serve,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read_file",
            "--tool-arg",
            "path=note.txt",
        ],
    );
    assert!(
        result_text(&read).contains("hello from the interop suite"),
        "{read}"
    );

    let listed = inspector(
        dir.path(),
        &serve,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "list_dir",
            "--tool-arg",
            "path=.",
        ],
    );
    assert!(result_text(&listed).contains("note.txt"), "{listed}");
}

fn listing_sorted(listing: &Value) -> Vec<String> {
    let mut names = listed_names(listing);
    names.sort();
    names
}
