//! toolgate's own MCP servers, tested as a client sees them: the real binary
//! (`toolgate serve docs|deploy|fs`) as a child process, spoken to with rmcp's client over
//! stdio in both protocol eras.

use crate::support::deploy_record;
use crate::support::process::alive;
use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
        ErrorCode, Implementation, ProgressNotificationParam, ProtocolVersion,
        ReadResourceRequestParams, Request, ResourceContents,
    },
    service::{NotificationContext, PeerRequestOptions, RunningService},
    transport::TokioChildProcess,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Upper bound for any single step; generous because the machine is shared.
const STEP: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug)]
enum Era {
    /// `initialize` handshake at 2025-11-25.
    Initialize,
    /// 2026-07-28: `server/discover` and per-request `_meta`.
    Discover,
}

#[derive(Clone)]
struct TestClient {
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("servers-test", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

struct Session {
    client: RunningService<RoleClient, TestClient>,
    progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

async fn start(args: &[&str], cwd: &Path, era: Era) -> Session {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    command
        .arg("serve")
        .args(args)
        .current_dir(cwd)
        .env("TOOLGATE_LOG", "warn");
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn toolgate serve");
    let (tx, progress) = mpsc::unbounded_channel();
    let lifecycle = match era {
        Era::Initialize => ClientLifecycleMode::Initialize,
        Era::Discover => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let client = tokio::time::timeout(
        STEP,
        TestClient { progress: tx }.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .expect("handshake timed out")
    .expect("handshake failed");
    Session { client, progress }
}

impl Session {
    async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        tokio::time::timeout(STEP, self.client.call_tool(params))
            .await
            .expect("call timed out")
    }

    async fn ok(&self, tool: &str, args: Value) -> (String, Option<Value>) {
        let result = self
            .call(tool, args)
            .await
            .expect("tool call failed at protocol level");
        assert_ne!(
            result.is_error,
            Some(true),
            "unexpected isError: {}",
            text(&result)
        );
        (text(&result), result.structured_content)
    }

    async fn tool_error(&self, tool: &str, args: Value) -> String {
        let result = self
            .call(tool, args)
            .await
            .expect("tool call failed at protocol level");
        assert_eq!(
            result.is_error,
            Some(true),
            "expected isError, got: {}",
            text(&result)
        );
        text(&result)
    }

    async fn stop(self) {
        let _ = tokio::time::timeout(STEP, self.client.cancel()).await;
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn docs_file(page: &str) -> String {
    std::fs::read_to_string(manifest_dir().join("assets/docs").join(page)).expect("docs page")
}

// ---------------------------------------------------------------- docs

async fn check_docs_search(session: &Session) {
    let (out, structured) = session
        .ok("search", json!({ "query": "deny ask allow precedence" }))
        .await;
    let hits = structured.expect("structured hits")["hits"]
        .as_array()
        .cloned()
        .expect("hits array");
    assert!(!hits.is_empty(), "{out}");
    let top = &hits[0];
    assert_eq!(top["page"], "permissions.md", "{out}");
    assert_eq!(top["heading"], "Precedence", "{out}");
    assert_eq!(top["uri"], "docs://permissions");
    // The line number points at the snippet in the shipped file.
    let line_no = top["line"].as_u64().expect("line") as usize;
    let line = docs_file("permissions.md")
        .lines()
        .nth(line_no - 1)
        .unwrap_or_default()
        .to_owned();
    let snippet = top["snippet"].as_str().expect("snippet");
    assert!(
        line.contains(snippet.trim_end_matches('…')),
        "line {line_no}: {line:?} vs {snippet:?}"
    );
    assert!(out.contains("permissions.md > Precedence (line "), "{out}");
}

#[tokio::test]
async fn docs_initialize_era_lists_annotated_tools_and_searches_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let session = start(&["docs"], dir.path(), Era::Initialize).await;
    let info = session.client.peer_info().expect("peer info");
    assert_eq!(
        info.protocol_version,
        ProtocolVersion::LATEST_WITH_INITIALIZE
    );

    let tools = session.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search", "get_version"]);
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
    }
    check_docs_search(&session).await;

    let (out, _) = session
        .ok(
            "search",
            json!({ "query": "ANTHROPIC_API_KEY", "limit": 1 }),
        )
        .await;
    assert!(out.starts_with("1 hit for"), "{out}");
    assert!(out.contains("keys.md"), "{out}");
    session.stop().await;
}

#[tokio::test]
async fn docs_discover_era_searches_versions_and_serves_pages_as_resources() {
    let dir = tempfile::tempdir().unwrap();
    let session = start(&["docs"], dir.path(), Era::Discover).await;
    let info = session.client.peer_info().expect("peer info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);

    check_docs_search(&session).await;

    let (out, structured) = session.ok("get_version", json!({})).await;
    let version = structured.expect("structured")["version"]
        .as_str()
        .unwrap()
        .to_owned();
    let release = std::fs::read_to_string(manifest_dir().join("assets/docs/VERSION")).unwrap();
    let (head, hash) = version.split_once('+').expect("release+hash");
    assert_eq!(head, release.trim());
    assert!(
        hash.len() == 12 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{version}"
    );
    assert!(out.contains(&version) && out.contains("13 pages"), "{out}");

    let resources = session
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "docs://getting-started",
            "docs://configuration",
            "docs://mcp-servers",
            "docs://permissions",
            "docs://modes",
            "docs://hooks",
            "docs://managed-policy",
            "docs://keys",
            "docs://sandbox",
            "docs://audit",
            "docs://long-sessions",
            "docs://headless",
            "docs://project-context"
        ]
    );
    let read = session
        .client
        .read_resource(ReadResourceRequestParams::new("docs://configuration"))
        .await
        .expect("resources/read");
    match &read.contents[..] {
        [
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            },
        ] => {
            assert_eq!(text, &docs_file("configuration.md"));
            assert_eq!(mime_type.as_deref(), Some("text/markdown"));
        }
        other => panic!("unexpected contents {other:?}"),
    }
    let missing = session
        .client
        .read_resource(ReadResourceRequestParams::new("docs://nope"))
        .await;
    assert!(
        matches!(missing, Err(ServiceError::McpError(_))),
        "{missing:?}"
    );
    session.stop().await;
}

#[tokio::test]
async fn docs_no_match_is_a_normal_result_and_bad_arguments_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let session = start(&["docs"], dir.path(), Era::Initialize).await;

    let (out, structured) = session.ok("search", json!({ "query": "xyzzyplugh" })).await;
    assert!(out.starts_with("No matches for \"xyzzyplugh\""), "{out}");
    assert_eq!(structured.unwrap()["hits"], json!([]));

    let err = session
        .tool_error("search", json!({ "query": "keys", "limit": "ten" }))
        .await;
    assert!(
        err.contains("field 'limit'") && err.contains("integer"),
        "{err}"
    );
    let err = session.tool_error("search", json!({ "limit": 3 })).await;
    assert!(err.contains("missing required field 'query'"), "{err}");
    let err = session
        .tool_error("search", json!({ "query": "keys", "colour": "red" }))
        .await;
    assert!(err.contains("unexpected field 'colour'"), "{err}");
    let err = session
        .tool_error("search", json!({ "query": "keys", "limit": 0 }))
        .await;
    assert!(err.contains("field 'limit'"), "{err}");

    // An unknown tool is a JSON-RPC error, not a result.
    match session.call("delete_everything", json!({})).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(
                error.message.contains("delete_everything"),
                "{}",
                error.message
            );
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    // The session survives all of the above.
    check_docs_search(&session).await;
    session.stop().await;
}

#[tokio::test]
async fn unknown_tool_is_a_json_rpc_error_in_the_discover_era_too() {
    let dir = tempfile::tempdir().unwrap();
    let session = start(&["fs", "."], dir.path(), Era::Discover).await;
    match session.call("rm_rf", json!({})).await {
        Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    session.stop().await;
}

// ---------------------------------------------------------------- deploy

async fn progress_messages(
    session: &mut Session,
    at_least: usize,
) -> Vec<ProgressNotificationParam> {
    let mut seen = Vec::new();
    while seen.len() < at_least {
        match tokio::time::timeout(STEP, session.progress.recv()).await {
            Ok(Some(p)) => seen.push(p),
            _ => break,
        }
    }
    seen
}

#[tokio::test]
async fn deploy_trigger_reports_progress_and_status_survives_a_restart() {
    let workspace = tempfile::tempdir().unwrap();
    let mut session = start(&["deploy"], workspace.path(), Era::Initialize).await;

    let tools = session.client.list_all_tools().await.expect("tools/list");
    let trigger = tools
        .iter()
        .find(|t| t.name == "trigger")
        .expect("trigger tool");
    let annotations = trigger.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.destructive_hint, Some(true));
    let status = tools
        .iter()
        .find(|t| t.name == "status")
        .expect("status tool");
    assert_eq!(
        status.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    let (out, _) = session.ok("status", json!({ "service": "web" })).await;
    assert!(
        out.contains("Service web: never deployed; current version none"),
        "{out}"
    );

    let (out, structured) = session.ok("trigger", json!({ "service": "web" })).await;
    assert!(out.starts_with("Successful deployment of web v1."), "{out}");
    assert!(out.contains("web v1 is live"), "output tail missing: {out}");
    let record = structured.expect("structured record");
    assert_eq!(record["exit_code"], 0);
    assert_eq!(record["version"], "v1");

    // The embedded web service has three steps: one notification each plus completion.
    let progress = progress_messages(&mut session, 4).await;
    assert_eq!(progress.len(), 4, "{progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0].progress < w[1].progress),
        "{progress:?}"
    );
    assert_eq!(progress[0].total, Some(3.0));
    let first = progress[0].message.as_deref().unwrap_or_default();
    assert!(first.contains("web v1: step 1/3"), "{first}");

    let err = session
        .tool_error("trigger", json!({ "service": "db" }))
        .await;
    assert!(
        err.contains("Unknown service 'db'. Known services: api, web"),
        "{err}"
    );

    let state = std::fs::read_to_string(workspace.path().join(".toolgate/deployments.json"))
        .expect("deployments.json written");
    let state: Value = serde_json::from_str(&state).expect("valid JSON");
    assert_eq!(state["deployments"][0]["service"], "web");
    session.stop().await;

    // A new server process (in the other era) sees the recorded deployment.
    let mut session = start(&["deploy"], workspace.path(), Era::Discover).await;
    let (out, _) = session.ok("status", json!({ "service": "web" })).await;
    assert!(
        out.contains("Service web: deployed; current version v1"),
        "{out}"
    );
    assert!(out.contains("v1 succeeded at "), "{out}");
    let (out, _) = session.ok("trigger", json!({ "service": "web" })).await;
    assert!(out.starts_with("Successful deployment of web v2."), "{out}");
    let progress = progress_messages(&mut session, 4).await;
    assert_eq!(
        progress.len(),
        4,
        "progress in the 2026-07-28 era too: {progress:?}"
    );
    assert!(
        progress[3]
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("web v2 deployed")
    );
    let (out, _) = session.ok("status", json!({})).await;
    assert!(
        out.contains("Service web: deployed; current version v2"),
        "{out}"
    );
    assert!(out.contains("Service api: never deployed"), "{out}");
    session.stop().await;
}

#[tokio::test]
async fn deploy_uses_the_workspace_config_and_reports_failed_steps() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".toolgate")).unwrap();
    std::fs::write(
        workspace.path().join(".toolgate/deploy.toml"),
        "[services.worker]\ncommand = \"echo starting worker; echo disk full >&2; exit 3\"\n",
    )
    .unwrap();
    // `--workspace` wins over the process's current directory.
    let elsewhere = tempfile::tempdir().unwrap();
    let workspace_arg = workspace.path().display().to_string();
    let session = start(
        &["deploy", "--workspace", &workspace_arg],
        elsewhere.path(),
        Era::Discover,
    )
    .await;

    let err = session
        .tool_error("trigger", json!({ "service": "web" }))
        .await;
    assert!(err.contains("Known services: worker"), "{err}");

    let err = session
        .tool_error("trigger", json!({ "service": "worker" }))
        .await;
    assert!(err.starts_with("FAILED deployment of worker v1."), "{err}");
    assert!(err.contains("exit 3"), "{err}");
    assert!(
        err.contains("starting worker\ndisk full"),
        "stdout and stderr in order: {err}"
    );

    let (out, _) = session.ok("status", json!({ "service": "worker" })).await;
    assert!(
        out.contains("last deployment v1 failed; current version none"),
        "{out}"
    );
    assert!(workspace.path().join(".toolgate/deployments.json").exists());
    assert!(
        !elsewhere.path().join(".toolgate").exists(),
        "nothing recorded in the cwd"
    );

    let err = session.tool_error("status", json!({ "service": 7 })).await;
    assert!(err.contains("field 'service'"), "{err}");
    session.stop().await;
}

/// Every call but the read-only `status` is logged as received before anything else
/// happens to it: a step that reads the log finds its own call already there, a call
/// whose arguments fail the schema is logged too, and `status` writes nothing. A call the
/// server cannot log is refused and its steps do not run.
#[tokio::test]
async fn deploy_logs_each_call_it_receives_before_its_steps_run() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".toolgate")).unwrap();
    std::fs::write(
        workspace.path().join(".toolgate/deploy.toml"),
        "[services.check]\ncommand = \"grep -q '\\\"service\\\":\\\"check\\\"' .toolgate/deploy-calls.jsonl && echo found my call && touch step_ran\"\n",
    )
    .unwrap();
    let log = deploy_record::received_path(workspace.path());
    let session = start(&["deploy"], workspace.path(), Era::Initialize).await;

    session.ok("status", json!({})).await;
    assert!(!log.exists(), "a status call was logged");

    let (out, _) = session.ok("trigger", json!({ "service": "check" })).await;
    assert!(
        out.contains("found my call"),
        "the step did not find its call: {out}"
    );
    let err = session.tool_error("trigger", json!({ "service": 7 })).await;
    assert!(err.contains("service"), "{err}");
    session.stop().await;

    let calls = deploy_record::received(workspace.path());
    let seen: Vec<(&Value, &Value, &Value)> = calls
        .iter()
        .map(|c| (&c["seq"], &c["tool"], &c["arguments"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!(1), &json!("trigger"), &json!({"service": "check"})),
            (&json!(2), &json!("trigger"), &json!({"service": 7})),
        ]
    );
    assert_eq!(calls[0]["pid"], calls[1]["pid"]);
    assert!(calls[0]["received_at"].is_string(), "{calls:?}");

    // The log cannot be written (a folder stands in its place): the call is refused and
    // nothing runs.
    std::fs::remove_file(workspace.path().join("step_ran")).unwrap();
    std::fs::remove_file(&log).unwrap();
    std::fs::create_dir(&log).unwrap();
    let session = start(&["deploy"], workspace.path(), Era::Discover).await;
    let err = session
        .tool_error("trigger", json!({ "service": "check" }))
        .await;
    assert!(
        err.starts_with("Not run: the deploy server records every call before running it")
            && err.contains("deploy-calls.jsonl"),
        "{err}"
    );
    session.stop().await;
    assert!(!workspace.path().join("step_ran").exists(), "the step ran");
    assert_eq!(deploy_record::deployments(workspace.path()).len(), 1);
}

#[tokio::test]
async fn cancelling_a_trigger_kills_the_step_and_records_the_attempt() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".toolgate")).unwrap();
    std::fs::write(
        workspace.path().join(".toolgate/deploy.toml"),
        "[services.slow]\ncommand = \"echo $$ > step.pid; exec sleep 120\"\n",
    )
    .unwrap();
    let mut session = start(&["deploy"], workspace.path(), Era::Initialize).await;
    let Value::Object(args) = json!({ "service": "slow" }) else {
        unreachable!()
    };
    let handle = session
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("trigger").with_arguments(args),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("send trigger");
    // The first progress notification is sent just before the step starts.
    let started = progress_messages(&mut session, 1).await;
    assert_eq!(started.len(), 1, "no progress before the step");
    let pid_file = workspace.path().join("step.pid");
    let pid = tokio::time::timeout(STEP, async {
        loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
            {
                break pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("step never wrote its pid");
    assert!(alive(pid));
    handle
        .cancel(Some("user pressed Ctrl+C".into()))
        .await
        .expect("cancel");

    // The attempt is recorded as failed and the step process is gone (bounded waits).
    let status = tokio::time::timeout(STEP, async {
        loop {
            let (out, structured) = session.ok("status", json!({ "service": "slow" })).await;
            if out.contains("last deployment v1 failed") {
                break structured.expect("structured status");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("cancelled deployment never recorded");
    let record = &status["services"][0]["recent"][0];
    assert_eq!(record["exit_code"], Value::Null);
    assert!(
        record["output_tail"]
            .as_str()
            .unwrap_or_default()
            .contains("cancelled"),
        "{record}"
    );
    tokio::time::timeout(STEP, async {
        while alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("step process still running after cancellation");
    session.stop().await;
}

// ---------------------------------------------------------------- fs

#[tokio::test]
async fn fs_is_confined_to_its_root() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("sub")).unwrap();
    std::fs::write(root.path().join("small.txt"), "hello fs\n").unwrap();
    let long: String = (0..5000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    std::fs::write(root.path().join("long.txt"), &long).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("escape")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        root.path().join("sub/link.txt"),
    )
    .unwrap();

    let root_arg = root.path().display().to_string();
    let session = start(&["fs", &root_arg], outside.path(), Era::Initialize).await;

    let (out, _) = session
        .ok("read_file", json!({ "path": "small.txt" }))
        .await;
    assert_eq!(out, "hello fs\n");
    let (out, _) = session.ok("read_file", json!({ "path": "long.txt" })).await;
    assert!(
        out.starts_with(&long[..4000]),
        "first 4000 characters shown"
    );
    assert!(!out.contains(&long[..4001]), "not more than 4000");
    assert!(
        out.ends_with("[truncated: showing the first 4000 of 5000 characters of long.txt]"),
        "{out}"
    );

    let (out, _) = session.ok("list_dir", json!({ "path": "." })).await;
    assert_eq!(out, "DIR escape\nDIR sub\nFILE long.txt\nFILE small.txt");

    for path in [
        "../secret.txt",
        "sub/../../x",
        &outside.path().join("secret.txt").display().to_string(),
    ] {
        let err = session
            .tool_error("read_file", json!({ "path": path }))
            .await;
        assert!(err.contains("outside the allowed root"), "{path}: {err}");
    }
    let err = session
        .tool_error("read_file", json!({ "path": "sub/link.txt" }))
        .await;
    assert!(err.contains("symbolic link that points outside"), "{err}");
    let err = session
        .tool_error("list_dir", json!({ "path": "escape" }))
        .await;
    assert!(err.contains("symbolic link that points outside"), "{err}");
    let err = session
        .tool_error(
            "write_file",
            json!({ "path": "escape/planted.txt", "content": "x" }),
        )
        .await;
    assert!(err.contains("outside"), "{err}");
    assert!(
        !outside.path().join("planted.txt").exists(),
        "nothing written outside"
    );
    let err = session
        .tool_error("read_file", json!({ "path": "missing.txt" }))
        .await;
    assert!(err.contains("does not exist"), "{err}");

    let (out, _) = session
        .ok(
            "write_file",
            json!({ "path": "notes/today.md", "content": "# Today\nship it\n" }),
        )
        .await;
    assert_eq!(out, "Created notes/today.md (16 bytes)");
    assert_eq!(
        std::fs::read_to_string(root.path().join("notes/today.md")).unwrap(),
        "# Today\nship it\n"
    );

    let err = session
        .tool_error("write_file", json!({ "path": "x.txt" }))
        .await;
    assert!(err.contains("missing required field 'content'"), "{err}");

    let (out, _) = session.ok("get_time", json!({})).await;
    assert!(
        out.contains("UTC: ") && out.contains("Local time: "),
        "{out}"
    );

    let resources = session
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(
        uris.contains(&"fs://small.txt") && uris.contains(&"fs://notes/today.md"),
        "{uris:?}"
    );
    assert!(!uris.iter().any(|u| u.contains("secret")), "{uris:?}");
    let read = session
        .client
        .read_resource(ReadResourceRequestParams::new("fs://notes/today.md"))
        .await
        .expect("resources/read");
    match &read.contents[..] {
        [
            ResourceContents::TextResourceContents {
                text, mime_type, ..
            },
        ] => {
            assert_eq!(text, "# Today\nship it\n");
            assert_eq!(mime_type.as_deref(), Some("text/markdown"));
        }
        other => panic!("unexpected contents {other:?}"),
    }
    let escaped = session
        .client
        .read_resource(ReadResourceRequestParams::new("fs://escape/secret.txt"))
        .await;
    assert!(
        matches!(escaped, Err(ServiceError::McpError(_))),
        "{escaped:?}"
    );
    session.stop().await;
}

#[tokio::test]
async fn serve_with_bad_arguments_fails_with_a_message() {
    let output = tokio::time::timeout(
        STEP,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["serve", "fs", "/definitely/not/here"])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("timed out")
    .expect("run");
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "stdout is reserved for protocol");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("fs root /definitely/not/here is not usable"),
        "{stderr}"
    );
}
