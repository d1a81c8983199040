//! End to end in a real pseudo-terminal: the real `toolgate` binary on the scripted demo
//! model, with the fixture MCP server (a real child process). The model calls a server tool
//! that samples; the console shows the sampling request, the person approves it, and the
//! server receives the scripted model's text (its tool result quotes it back).

use crate::support::fixture_server::fixture_file;
use std::path::{Path, PathBuf};

use crate::support::pty;

const ROWS: u16 = 40;
const COLS: u16 = 120;

const SCENARIO: &str = r#"{"name": "sampling", "steps": [
  {"id": "summary", "user": "(?i)summari[sz]e", "say": "SCRIPTED SUMMARY"},
  {"id": "go", "user": "(?i)^go", "say": "Connecting the notes server.",
   "tools": [{"name": "connect_mcp", "input": {"name": "fix"}}]},
  {"id": "call", "after": "go", "on": "ok", "tools": [{"name": "mcp__fix__sample",
   "input": {"text": "Please summarize: apples and pears", "max_tokens": 100, "system": "You are terse."}}]},
  {"id": "done", "after": "call", "say": "The server got: {{result_line}}"}
]}"#;

fn files(home: &Path) -> (PathBuf, PathBuf) {
    let scenario = home.join("sampling.json");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let script = fixture_file("fixture_server.py");
    let mcp = serde_json::json!({"mcpServers": {"fix": {
        "command": "python3",
        "args": [script.display().to_string()],
        "env": {"FIXTURE_HOST_TOOLS": "1"}
    }}});
    let config = home.join("mcp.json");
    std::fs::write(&config, mcp.to_string()).unwrap();
    (scenario, config)
}

#[test]
fn the_person_approves_a_sampling_request_and_the_server_gets_the_models_text() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (scenario, mcp_config) = files(home.path());

    let mut cmd = pty::toolgate(&home.path().join("state"), &home.path().join("config"));
    cmd.cwd(workspace.path());
    cmd.arg("--mcp-config");
    cmd.arg(&mcp_config);
    cmd.arg("--allow");
    cmd.arg("mcp__fix__sample");
    cmd.env("TOOLGATE_SCENARIO", &scenario);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);

    screen.wait_text("scripted demo");
    keys.press(b"go");
    screen.wait_text("go");
    keys.press(b"\r");

    // The request shows who asks, the system prompt, the message and the token limit.
    screen.wait_for("the sampling request", |t| {
        t.contains("Sampling request")
            && t.contains("MCP server 'fix' asks to use your model")
            && t.contains("You are terse.")
            && t.contains("Please summarize: apples and pears")
            && t.contains("100 (toolgate's cap: 4096)")
    });
    // Keys in the first moments of a modal are swallowed (the guard window): wait until
    // the modal shows it takes keys.
    screen.wait_modal_armed("the sampling request to take keys");
    keys.press(b"y");

    screen.wait_for("the server's answer in the conversation", |t| {
        t.contains("The server got: sampled: SCRIPTED SUMMARY (model scripted demo, stop endTurn)")
            && !t.contains("Sampling request")
    });
    screen.wait_text("sampling for 'fix' answered by scripted demo");
    screen.wait_text("you allowed it once");

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}
