//! A project's hooks in the console (decision 0086): the real binary in a real pty asks
//! once, showing the commands, before any of them runs; after "run them", the project's
//! SessionStart hook runs (its file appears) and `/hooks` lists it with its last result.

use std::thread;
use std::time::{Duration, Instant};

use crate::support::pty;

const ROWS: u16 = 40;
const COLS: u16 = 140;

#[test]
fn a_projects_hooks_run_only_after_the_person_agrees_and_hooks_lists_them() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".toolgate")).unwrap();
    std::fs::write(
        workspace.path().join(".toolgate/config.toml"),
        "[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"touch session_hook_ran\" }]\n",
    )
    .unwrap();
    let marker = workspace.path().join("session_hook_ran");

    let mut cmd = pty::toolgate(&home.path().join("state"), &home.path().join("config"));
    cmd.arg("--trust-project");
    cmd.cwd(workspace.path());
    cmd.env("TERM", "xterm-256color");
    let (mut child, mut screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.row_per_line = true;
    screen.wait_text("Run this project's hooks?");
    screen.wait_text("SessionStart: touch session_hook_ran");
    assert!(!marker.exists(), "nothing ran before the answer");
    screen.wait_modal_armed("the dialog to take keys (after its guard window)");
    keys.press(b"y");

    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(marker.exists(), "the agreed SessionStart hook ran");

    keys.press(b"/hooks\r");
    screen.wait_text("Hooks in force (1)");
    // The line wraps in the transcript's width: its parts, each once.
    screen.wait_for("the hook's source and last result", |t| {
        t.contains("project: ") && t.contains("last:") && t.contains("exit 0")
    });

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// A Notification hook (the user's own file) runs when a tool call waits for the person,
/// with Claude Code's fields; the question is still there to answer.
#[test]
fn a_notification_hook_runs_when_a_tool_call_waits_for_the_person() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/config.toml"),
        "[[hooks.Notification]]\nhooks = [{ type = \"command\", command = \"cat > notification_stdin.json\" }]\n",
    )
    .unwrap();
    let steps = serde_json::json!([
        {"id": "connect", "say": "Connecting.", "tools": [
            {"name": "connect_mcp", "input": {"name": "deploy"}}]},
        {"id": "call", "after": "connect", "say": "Deploying.", "tools": [
            {"name": "mcp__deploy__trigger", "input": {"service": "web"}}]},
        {"id": "done", "after": "call", "say": "Finished."}]);
    let cmd = pty::scripted_console(home.path(), workspace.path(), steps);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "deploy web");
    pty::wait_question(&screen, "mcp__deploy__trigger");
    let written = workspace.path().join("notification_stdin.json");
    screen.wait_for("the Notification hook to write its stdin", |_| {
        std::fs::read_to_string(&written).is_ok_and(|t| t.trim_end().ends_with('}'))
    });
    let stdin = std::fs::read_to_string(&written).unwrap();
    let stdin: serde_json::Value =
        serde_json::from_str(&stdin).unwrap_or_else(|e| panic!("{e}: {stdin:?}"));
    assert_eq!(stdin["hook_event_name"], "Notification", "{stdin}");
    assert!(
        stdin["message"]
            .as_str()
            .is_some_and(|m| m.contains("mcp__deploy__trigger")),
        "{stdin}"
    );
    // Denied: nothing was deployed, and the turn finished.
    keys.press(b"n");
    screen.wait_text("Finished.");
    crate::support::deploy_record::assert_none(workspace.path());
    keys.press(b"\x04");
    screen.wait_exit(&mut child);
}
