//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, pinned in
//! tests/interop/conformance) in server mode, against toolgate's own servers served over
//! Streamable HTTP by the real binary: `toolgate serve docs|deploy|fs --listen 127.0.0.1:0`.
//! No expected-failures list: every scenario run must pass with no failure and no warning.
//!
//! Which scenarios run is decided per server from what it declares in its `initialize`
//! answer (read here over the same socket), so a server that gains a capability gains its
//! scenarios:
//!
//! - always: `server-initialize`, `ping`, `tools-list`;
//! - on the first server only, since all three share one HTTP front (src/servers/http.rs,
//!   rmcp's `StreamableHttpService` with its Host check): `dns-rebinding-protection`,
//!   `server-sse-multiple-streams` (concurrent POST streams, with `tools/list` only);
//! - `resources` declared: `resources-list`; `logging`: `logging-set-level`; `prompts`:
//!   `prompts-list`.
//!
//! Scenarios that do not apply, because they call test fixtures by name that only the
//! suite's own reference server has (a server under test cannot declare them and still be
//! the server it is):
//!
//! - `tools-call-*` (simple-text, image, audio, embedded-resource, mixed-content,
//!   with-logging, error, with-progress, sampling, elicitation), `json-schema-2020-12`,
//!   `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`: call tools named
//!   `test_*` / `json_schema_2020_12_tool`;
//! - `server-sse-polling`: calls the `test_reconnection` tool, which closes the stream
//!   mid-call (without it the suite can only warn);
//! - `resources-read-text`, `resources-read-binary`, `resources-templates-read`,
//!   `resources-subscribe`, `resources-unsubscribe`: read or watch `test://static-text`,
//!   `test://static-binary`, `test://template/{id}/data`, `test://watched-resource`
//!   (toolgate's docs server has `docs://` pages and does not declare `subscribe`);
//! - `completion-complete`: completes the prompt `test_prompt_with_arguments`;
//! - `prompts-get-*`: get the prompts `test_simple_prompt`, `test_prompt_with_arguments`,
//!   `test_prompt_with_embedded_resource`, `test_prompt_with_image`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use crate::support::conformance::installed;
use serde_json::{Value, json};

/// `toolgate serve NAME … --listen 127.0.0.1:0`, killed on drop.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(name: &str, args: &[PathBuf], state: &std::path::Path) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("serve")
        .arg(name)
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .env("TOOLGATE_STATE_DIR", state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "toolgate serve {name} printed {first:?}"
    );
    Served { child, url }
}

/// The server's `capabilities`, from an `initialize` sent as the suite's client sends it.
async fn capabilities(url: &str) -> Value {
    let response = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "conformance-server-test", "version": "1"},
            }}),
        )
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let body = response.text().await.unwrap();
    // An SSE stream (`data: {...}` lines) or a plain JSON body.
    let answer = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .chain(std::iter::once(body.trim()))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|v| v.get("id") == Some(&json!(1)))
        .unwrap_or_else(|| panic!("no initialize answer in {body}"));
    answer["result"]["capabilities"].clone()
}

fn scenarios_for(capabilities: &Value, transport_too: bool) -> Vec<&'static str> {
    let mut scenarios = vec!["server-initialize", "ping", "tools-list"];
    if transport_too {
        scenarios.extend(["dns-rebinding-protection", "server-sse-multiple-streams"]);
    }
    for (capability, scenario) in [
        ("resources", "resources-list"),
        ("logging", "logging-set-level"),
        ("prompts", "prompts-list"),
    ] {
        if capabilities.get(capability).is_some() {
            scenarios.push(scenario);
        }
    }
    scenarios
}

/// `Passed: 2/2, 0 failed, 0 warnings`, or why not.
fn outcome(stdout: &str) -> Result<String, String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Passed: "))
        .ok_or_else(|| "no result line".to_string())?;
    if line.contains(" 0 failed, 0 warnings") && !line.starts_with("Passed: 0/") {
        Ok(line.to_string())
    } else {
        Err(line.to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolgate_servers_pass_the_conformance_scenarios_they_declare() {
    let (node, suite) = installed();
    let state = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "hello\n").unwrap();
    let started = Instant::now();
    let servers = [
        ("docs", serve("docs", &[], state.path())),
        ("deploy", serve("deploy", &[], state.path())),
        (
            "fs",
            serve("fs", &[root.path().to_path_buf()], state.path()),
        ),
    ];
    // Every scenario is its own Node process; they run side by side (each makes its own
    // session), which keeps the whole run to a few seconds.
    let mut running = Vec::new();
    for (i, (name, served)) in servers.iter().enumerate() {
        let declared = capabilities(&served.url).await;
        assert!(
            declared.get("tools").is_some(),
            "{name} declares tools: {declared}"
        );
        for scenario in scenarios_for(&declared, i == 0) {
            let child = Command::new(&node)
                .arg(&suite)
                .args(["server", "--url", &served.url, "--scenario", scenario])
                .current_dir(std::env::temp_dir())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            running.push((*name, scenario, child));
        }
    }
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for (name, scenario, child) in running {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        match outcome(&stdout) {
            Ok(line) if out.status.success() => passed.push(format!("{name} {scenario}: {line}")),
            Ok(line) | Err(line) => failed.push(format!(
                "{name} {scenario} (exit {}): {line}\n{stdout}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    }
    assert!(
        failed.is_empty(),
        "failing scenarios:\n{}",
        failed.join("\n\n")
    );
    // Three on each server, two transport scenarios, and docs declares resources.
    assert!(passed.len() >= 12, "{passed:#?}");
    assert!(
        passed.iter().any(|p| p.starts_with("docs resources-list")),
        "{passed:#?}"
    );
    let took = started.elapsed();
    eprintln!(
        "conformance (server mode): {} scenarios passed in {:.1} s\n{}",
        passed.len(),
        took.as_secs_f64(),
        passed.join("\n")
    );
    // How long it took is reported, not asserted: a timed assertion fails on a loaded
    // machine without anything being wrong (speed goals are benchmarks' business).
}
