//! The built-ins against real files in temporary workspaces and real shell processes, one
//! file per tool (the connectors, bash, the file tools, glob); the helpers they share.

mod bash;
mod definitions;
mod files;
mod glob;

use super::*;
use serde_json::json;
use std::time::Duration;

fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

async fn call(tool: BuiltinId, input: Value, ws: &Path) -> BuiltinOutput {
    run(tool, &input, ws, CancellationToken::new()).await
}

/// bash with only a command.
async fn bash(command: &str, ws: &Path) -> BuiltinOutput {
    call(tools::bash::ID, json!({ "command": command }), ws).await
}

/// glob with only a pattern.
async fn glob(pattern: &str, ws: &Path) -> BuiltinOutput {
    call(tools::glob::ID, json!({ "pattern": pattern }), ws).await
}

/// True once `pid` no longer runs. A killed process may linger as a zombie until its new
/// parent reaps it; a zombie runs nothing, so it counts as gone.
fn is_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

/// Waits (boundedly) for `pid` to disappear; the kill is asynchronous to us.
async fn wait_gone(pid: i32) -> bool {
    for _ in 0..200 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn pid_after(text: &str, label: &str) -> i32 {
    let start = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label} in {text:?}"))
        + label.len();
    text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

fn touch(root: &Path, rel: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "x").unwrap();
}

/// Calls `tool` with each input in turn and checks each output.
async fn expect<const N: usize>(tool: BuiltinId, ws: &Path, cases: [(Value, BuiltinOutput); N]) {
    for (input, expected) in cases {
        let out = call(tool, input.clone(), ws).await;
        assert_eq!(out, expected, "{tool:?} {input}");
    }
}

/// What an error's text must show: its start, or a part of it.
enum ErrorText {
    StartsWith(&'static str),
    Contains(&'static str),
}
use ErrorText::{Contains, StartsWith};

/// Runs each input with `tool` in `ws` and checks that it fails with the expected text.
async fn expect_errors<const N: usize>(tool: BuiltinId, ws: &Path, cases: [(Value, ErrorText); N]) {
    for (input, expected) in cases {
        let out = call(tool, input.clone(), ws).await;
        assert!(out.is_error, "{tool:?} {input} should fail: {}", out.text);
        let shown = match expected {
            StartsWith(start) => out.text.starts_with(start),
            Contains(part) => out.text.contains(part),
        };
        assert!(shown, "{tool:?} {input}: {}", out.text);
    }
}

/// Waits for the background process `pid` to be gone, and fails the test if it is not.
async fn assert_gone(pid: i32) {
    assert!(wait_gone(pid).await, "background sleep {pid} survived");
}

/// A workspace holding these (empty) files.
fn workspace_with(files: &[&str]) -> tempfile::TempDir {
    let ws = workspace();
    for rel in files {
        touch(ws.path(), rel);
    }
    ws
}

/// The text of a workspace file.
fn read(ws: &tempfile::TempDir, rel: &str) -> String {
    std::fs::read_to_string(ws.path().join(rel)).unwrap()
}
