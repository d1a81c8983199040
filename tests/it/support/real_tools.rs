//! Tool definitions as toolgate's own servers really list them: the shipped binary's
//! `toolgate serve NAME` asked over stdio (initialize, then tools/list). Tests that show a
//! call build its arguments against these, so a snapshot cannot show a call the server
//! would refuse.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// The `tools/list` entry of `tool` on toolgate's server `server` (a child process run in
/// a fresh workspace, so the embedded service config applies).
pub fn definition(server: &str, tool: &str) -> Value {
    let workspace = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", server, "--workspace"])
        .arg(workspace.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run toolgate serve");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").expect("write to the server");
        stdin.flush().expect("flush to the server");
    };
    // Reads lines until the response with `id` (the server may also notify).
    let mut response = |id: u64| -> Value {
        loop {
            let mut line = String::new();
            let n = stdout.read_line(&mut line).expect("read from the server");
            assert!(
                n > 0,
                "server '{server}' closed stdout before answering {id}"
            );
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                return message;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "toolgate-tests", "version": "0"}}}),
    );
    response(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
    let listed = response(2);
    drop(stdin); // end of input: the server exits
    let _ = child.wait();
    listed["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == tool))
        .cloned()
        .unwrap_or_else(|| panic!("server '{server}' lists no tool '{tool}': {listed}"))
}

/// `input` checked against the tool's real input schema: a test's call the server would
/// refuse fails here, not silently in a snapshot.
pub fn valid_input(definition: &Value, input: Value) -> Value {
    let validator = jsonschema::validator_for(&definition["inputSchema"]).expect("a valid schema");
    let problems: Vec<String> = validator
        .iter_errors(&input)
        .map(|e| e.to_string())
        .collect();
    assert!(
        problems.is_empty(),
        "{input} does not fit {}'s schema: {problems:?}",
        definition["name"]
    );
    input
}
