//! Faults of misbehaving MCP servers (issue 23), against a real server in a child process
//! (tests/fixtures/faults_server.py): one bad tool schema must not cost the server's other
//! tools, a burst of `list_changed` must not become a burst of `tools/list`, and a result
//! over the message limit fails its call at once, naming the size and the limit.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use toolgate::mcp::HubEvent;

use crate::support::fixture_server::{fixture_file, hub_with, python_fixture};

/// `toolgate -p MESSAGE` with the faults server configured as `faults` (environment `env`),
/// the faults scenario as the model, the server's tools allowed, and `config_toml` as the
/// user's config.toml.
fn headless(dir: &Path, message: &str, env: serde_json::Value, config_toml: &str) -> Output {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), config_toml).unwrap();
    let mcp_json = dir.join("faults.mcp.json");
    let server = json!({"mcpServers": {"faults": {
        "command": "python3",
        "args": [fixture_file("faults_server.py")],
        "env": env,
    }}});
    std::fs::write(&mcp_json, server.to_string()).unwrap();
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "-p",
            message,
            "--output-format",
            "jsonl",
            "--allow",
            "mcp__faults",
        ])
        .arg("--mcp-config")
        .arg(&mcp_json)
        .current_dir(&workspace)
        .env("TOOLGATE_STATE_DIR", dir.join("state"))
        .env("TOOLGATE_CONFIG_DIR", &config)
        .env("TOOLGATE_SCENARIO", fixture_file("faults_scenario.json"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run toolgate")
}

fn events(run: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

fn finished<'a>(events: &'a [serde_json::Value], tool: &str) -> &'a serde_json::Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_finished" && e["name"] == tool)
        .unwrap_or_else(|| panic!("{tool} finished: {events:#?}"))
}

/// A server listing one tool whose schema is `true` (not an object) and one whose root is
/// an array: both are left out with a notice naming them, and `pad` is called through the
/// binary and runs (the file it writes has the text). Before, the whole server was refused.
#[test]
fn an_invalid_tool_schema_leaves_out_that_tool_only() {
    for broken in ["true", r#"{"type": "array", "items": {"type": "string"}}"#] {
        let dir = tempfile::tempdir().unwrap();
        let pad_file = dir.path().join("pad.txt");
        let run = headless(
            dir.path(),
            "pad hello",
            json!({"FAULTS_BROKEN": broken, "FAULTS_PAD_FILE": pad_file}),
            "",
        );
        assert_eq!(run.status.code(), Some(0), "{run:?}");
        let events = events(&run);
        let connect = finished(&events, "connect_mcp");
        assert_eq!(connect["outcome"], "ok", "{connect}");
        let pad = finished(&events, "mcp__faults__pad");
        assert_eq!(pad["outcome"], "ok", "{pad}");
        assert_eq!(pad["output"], "padded pad hello");
        assert_eq!(
            std::fs::read_to_string(&pad_file).unwrap(),
            "pad hello\n",
            "the server ran the call"
        );
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stderr),
            String::from_utf8_lossy(&run.stdout)
        );
        assert!(
            all.contains(
                "MCP server 'faults': tool 'broken' is left out of the tool pool: its inputSchema"
            ),
            "{broken}: {all}"
        );
    }
}

/// 10,000 `notifications/tools/list_changed` in one burst: the server counts the
/// `tools/list` requests it gets. At most one is in flight and one more queued, so a burst
/// costs a handful, and the last listing (with the last generation's tool) is the one kept.
#[tokio::test]
async fn a_burst_of_list_changed_is_coalesced() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("lists.txt");
    let record_env = record.display().to_string();
    let (hub, mut rx) = hub_with(vec![python_fixture(
        "faults",
        "faults_server.py",
        &[("FAULTS_RECORD", &record_env)],
        60_000,
    )]);
    let bounded = |f| tokio::time::timeout(Duration::from_secs(60), f);
    bounded(hub.connect("faults")).await.unwrap().unwrap();
    let listed = || {
        std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert_eq!(listed(), 1, "the connect lists once");
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        hub.call(
            "faults",
            "burst",
            json!({"count": 10_000}),
            None,
            Default::default(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(out.text, "sent 10000");
    // Wait (hang guard only) until the pool has the last generation's tool.
    let last = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let has_last = hub
                .server_tools()
                .iter()
                .any(|s| s.tools().iter().any(|t| t.name == "gen_10000"));
            if has_last {
                return;
            }
            match rx.recv().await {
                Some(_) => {}
                None => return,
            }
        }
    })
    .await;
    assert!(last.is_ok(), "the last listing reached the pool");
    let tools: Vec<String> = hub.server_tools()[0]
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(tools, vec!["pad", "burst", "big", "gen_10000"]);
    while let Ok(event) = rx.try_recv() {
        let _: HubEvent = event;
    }
    // Count once the session is over: shutdown closes the server's stdin and waits for it
    // to exit, and the server reads (and records) every request sent before that. A
    // re-list still queued after the last one reached the pool is counted too, with no
    // guess at how long it takes.
    hub.shutdown().await;
    let after_burst = listed() - 1;
    println!("tools/list requests for a burst of 10,000 list_changed: {after_burst}");
    assert!(
        (1..=3).contains(&after_burst),
        "{after_burst} tools/list requests for one burst of 10,000 list_changed"
    );
}

/// A result over the message limit (`[mcp] max_message_bytes`, here 1 MiB against a 3 MB
/// answer) fails that call at once with an error naming the size and the limit. Before,
/// rmcp dropped the line silently and the call ended as a timeout after the full timeout.
#[test]
fn a_result_over_the_message_limit_fails_its_call_naming_size_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let run = headless(
        dir.path(),
        "big",
        json!({}),
        "[mcp]\nmax_message_bytes = 1048576\n",
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let events = events(&run);
    let big = finished(&events, "mcp__faults__big");
    assert_eq!(big["outcome"], "error", "{big}");
    let output = big["output"].as_str().unwrap();
    assert!(
        output.contains("the server's answer is 30000")
            && output.contains(
                "bytes, over the limit of 1048576 bytes for one message ([mcp] max_message_bytes"
            )
            && !output.contains("timed out"),
        "{output}"
    );
}
