//! Task-augmented tool calls (MCP 2025-11-25) against the fixture server's `task_job`, a
//! real child process that declares `execution.taskSupport: "required"`, refuses plain
//! calls and logs what it was asked (`FIXTURE_TASK_LOG`): the hub calls it as a task,
//! reports its status as progress, and ends it with `tasks/cancel` on cancel and timeout.
//! The agent's side (progress events, the pool) runs through the real agent loop.

use crate::support::fixture_server::{fixture, hub_with};

use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{McpError, McpHub, ProgressUpdate};

const LIMIT: Duration = Duration::from_secs(30);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("operation did not finish in bounded time")
}

fn task_server(log: &Path, timeout_ms: Option<u64>) -> (McpHub, PathBuf) {
    task_server_with(log, timeout_ms, &[])
}

fn task_server_with(
    log: &Path,
    timeout_ms: Option<u64>,
    env: &[(&str, &str)],
) -> (McpHub, PathBuf) {
    let mut vars = vec![
        ("FIXTURE_TOOLS", r#"["echo", "task_job"]"#),
        ("FIXTURE_TASK_LOG", log.to_str().unwrap()),
    ];
    vars.extend_from_slice(env);
    let mut config = fixture("jobs", &vars);
    if let Some(ms) = timeout_ms {
        config.call_timeout_ms = ms;
    }
    let (hub, _rx) = hub_with(vec![config]);
    (hub, log.to_path_buf())
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits until the fixture logged `line` (it runs in another process).
async fn logged(log: &Path, line: &str) {
    let found = tokio::time::timeout(Duration::from_secs(5), async {
        while !log_lines(log).iter().any(|l| l == line) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(found.is_ok(), "{line:?} not in {:?}", log_lines(log));
}

#[tokio::test]
async fn a_task_tool_runs_as_a_task_and_reports_its_status_as_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, log) = task_server(&dir.path().join("tasks.log"), None);
    bounded(hub.connect("jobs")).await.unwrap();
    // The pool offers it, marked as a task tool (the detail view says so).
    let builtins = toolgate::pool::builtin_tools(&hub.configured());
    let pool = toolgate::pool::assemble(&builtins, &hub.server_tools()).unwrap();
    let task_tool = pool
        .get("mcp__jobs__task_job")
        .expect("task_job in the pool");
    assert!(task_tool.claims.task_required);
    assert_eq!(task_tool.claims.describe(), "taskSupport=required");
    assert!(!pool.get("mcp__jobs__echo").unwrap().claims.task_required);
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressUpdate>();
    let out = bounded(hub.call(
        "jobs",
        "task_job",
        json!({"steps": 3, "delay_ms": 150}),
        Some(tx),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.text, "job done after 3 steps");
    let mut messages = Vec::new();
    while let Ok(update) = rx.try_recv() {
        messages.extend(update.message);
    }
    assert_eq!(messages.first().map(String::as_str), Some("queued"));
    assert!(
        messages.iter().any(|m| m.starts_with("step ")),
        "{messages:?}"
    );
    // The listing said "required": no plain call was ever tried.
    assert_eq!(log_lines(&log), vec!["created task-1"]);
    hub.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_task_call_sends_tasks_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, log) = task_server(&dir.path().join("tasks.log"), None);
    bounded(hub.connect("jobs")).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressUpdate>();
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let hub = hub.clone();
        let cancel = cancel.clone();
        async move {
            hub.call(
                "jobs",
                "task_job",
                json!({"steps": 50, "delay_ms": 100}),
                Some(tx),
                cancel,
            )
            .await
        }
    });
    let first = bounded(rx.recv()).await.unwrap();
    assert_eq!(first.message.as_deref(), Some("queued"));
    cancel.cancel();
    let outcome = bounded(running).await.unwrap();
    assert_eq!(outcome, Err(McpError::Cancelled));
    logged(&log, "cancelled task-1").await;
    // The connection is fine afterwards.
    let out = bounded(hub.call(
        "jobs",
        "echo",
        json!({"text": "still here"}),
        None,
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(out.text, "echo: still here");
    hub.shutdown().await;
}

#[tokio::test]
async fn a_task_that_outlives_the_call_timeout_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, log) = task_server(&dir.path().join("tasks.log"), Some(600));
    bounded(hub.connect("jobs")).await.unwrap();
    let outcome = bounded(hub.call(
        "jobs",
        "task_job",
        json!({"steps": 50, "delay_ms": 100}),
        None,
        CancellationToken::new(),
    ))
    .await;
    assert!(
        matches!(&outcome, Err(McpError::Timeout { tool, .. }) if tool == "task_job"),
        "{outcome:?}"
    );
    logged(&log, "cancelled task-1").await;
    hub.shutdown().await;
}

/// A server whose listing toolgate cannot read raw (Streamable HTTP; here the fixture hides
/// `execution`): the refusal of the plain call makes the hub call the tool as a task, that
/// time and from then on.
#[tokio::test]
async fn a_refused_plain_call_is_made_again_as_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let (hub, log) = task_server_with(
        &dir.path().join("tasks.log"),
        None,
        &[("FIXTURE_HIDE_EXECUTION", "1")],
    );
    bounded(hub.connect("jobs")).await.unwrap();
    for _ in 0..2 {
        let out = bounded(hub.call(
            "jobs",
            "task_job",
            json!({"steps": 1, "delay_ms": 10}),
            None,
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        assert_eq!(out.text, "job done after 1 steps");
    }
    assert_eq!(
        log_lines(&log),
        vec!["plain call refused", "created task-1", "created task-2"]
    );
    hub.shutdown().await;
}
