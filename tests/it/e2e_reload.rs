//! A running console picks up edits of `.mcp.json`: the real binary in a real pty, the
//! file changed beside it. A new server appears as not connected; a connected one that is
//! removed is disconnected (its process ends); a broken file is reported with its position
//! and changes nothing.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::support::process::children_of;
use crate::support::pty;

const ROWS: u16 = 40;
const COLS: u16 = 140;

/// Saves the way editors do: a temporary file renamed over the old one.
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("json.swp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn edits_of_mcp_json_reach_the_running_console() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mcp_json = workspace.path().join(".mcp.json");
    std::fs::write(&mcp_json, "{\"mcpServers\": {}}\n").unwrap();

    let mut cmd = pty::toolgate(&home.path().join("state"), &home.path().join("config"));
    cmd.arg("--trust-project");
    cmd.cwd(workspace.path());
    cmd.env("TERM", "xterm-256color");
    let (mut child, mut screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    // Each row on a line of its own.
    screen.row_per_line = true;
    let pid = child.process_id().unwrap();
    screen.wait_text("scripted demo");
    screen.wait_text("fs ○ not connected");

    // A server added to the file appears, not connected.
    save(
        &mcp_json,
        "{\n  \"mcpServers\": {\n    \"extra\": {\"type\": \"builtin\", \"server\": \"docs\"}\n  }\n}\n",
    );
    screen.wait_text("extra ○ not connected");
    screen.wait_text("MCP configuration reloaded");
    assert!(children_of(pid).is_empty(), "nothing was started");

    // Connect it (a project server: asked first), then remove it from the file.
    keys.press(b"/connect extra\r");
    screen.wait_text("Start a project server?");
    screen.wait_modal_armed("the dialog to take keys (after its guard window)");
    keys.press(b"y");
    screen.wait_text("mcp__extra__search");
    screen.wait_text("extra ● ready · 2 tools");
    assert_eq!(children_of(pid).len(), 1, "the server runs");

    // A broken file is reported with its position and changes nothing.
    save(
        &mcp_json,
        "{\n  \"mcpServers\": {\n    \"extra\": {\"type\": \"builtin\",}\n  }\n}\n",
    );
    screen.wait_for("the reload refused with the file's position", |t| {
        t.contains("not reloaded") && t.contains(&format!("{}:3:", mcp_json.display()))
    });
    assert!(screen.text().contains("extra ● ready · 2 tools"));
    assert_eq!(children_of(pid).len(), 1, "the server still runs");

    save(&mcp_json, "{\"mcpServers\": {}}\n");
    screen.wait_for("extra disconnected and gone from the panel", |t| {
        // The row goes only once its tools have left the pool.
        !t.contains("extra ●") && !t.contains("extra ○") && t.contains("removed: extra")
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !children_of(pid).is_empty() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(
        children_of(pid).is_empty(),
        "the removed server's process ended"
    );

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// Issue 23: a deny rule broken by an edit while the console runs does not fail open. The
/// reload is refused with the rule's position, the rules in force stay, and the deploy the
/// deny rule stops still does not run under `allow = ["mcp__deploy"]`: the deploy server
/// receives no call.
#[test]
fn a_deny_rule_broken_in_a_live_reload_keeps_the_rules_in_force() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let config_toml = workspace.path().join(".toolgate").join("config.toml");
    std::fs::create_dir_all(config_toml.parent().unwrap()).unwrap();
    std::fs::write(
        &config_toml,
        "[permissions]\nallow = [\"mcp__deploy\"]\ndeny = [\"mcp__deploy__trigger\"]\n",
    )
    .unwrap();

    let mut cmd = pty::toolgate(&home.path().join("state"), &home.path().join("config"));
    cmd.arg("--trust-project");
    cmd.cwd(workspace.path());
    cmd.env("TERM", "xterm-256color");
    let (mut child, mut screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.row_per_line = true;
    screen.wait_text("scripted demo");

    let tmp = config_toml.with_extension("toml.swp");
    std::fs::write(
        &tmp,
        "[permissions]\nallow = [\"mcp__deploy\"]\ndeny = [\"mcp__deploy__trigger(\"]\n",
    )
    .unwrap();
    std::fs::rename(&tmp, &config_toml).unwrap();
    screen.wait_for("the reload refused with the rule's position", |t| {
        t.contains("Permission rules not reloaded") && t.contains("config.toml:3:")
    });

    keys.enter_line(&screen, "deploy web");
    screen.wait_text("The deploy was not approved");
    crate::support::deploy_record::assert_none(workspace.path());

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}
