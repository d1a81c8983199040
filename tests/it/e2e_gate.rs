//! The gate's promise proved from the outside: the real `toolgate` binary in a real
//! pseudo-terminal, a person's keys on the permission modal, and the far side of every
//! call checked where it lands (the deploy server's own record, a fixture server's log of
//! the calls it received, a file outside the workspace). toolgate's own report of a
//! decision is never the proof: a gate that sent the call and then printed "denied" would
//! report the same.

use std::path::PathBuf;

use serde_json::json;

use crate::support::deploy_record;
use crate::support::fixture_server::fixture_file;
use crate::support::pty::{self, quit, scripted_console as console, wait_question};

const ROWS: u16 = 36;
const COLS: u16 = 140;

/// Connects `server`, calls `tool` with `input`, then says the first line of the result
/// the model received.
fn call_steps(server: &str, tool: &str, input: serde_json::Value) -> serde_json::Value {
    json!([
        {"id": "connect", "say": "Connecting.", "tools": [
            {"name": "connect_mcp", "input": {"name": server}}]},
        {"id": "call", "after": "connect", "say": "Calling.", "tools": [
            {"name": tool, "input": input}]},
        {"id": "done", "after": "call", "say": "Model received: {{result_line}}"}])
}

/// A deploy asked in the modal and approved once: the deploy server records exactly one
/// deployment, and the model receives its result.
#[test]
fn a_deploy_approved_once_in_the_modal_runs_exactly_once() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let steps = call_steps("deploy", "mcp__deploy__trigger", json!({"service": "web"}));
    let (mut child, screen, mut keys) =
        pty::spawn(console(home.path(), workspace.path(), steps), ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "deploy web");
    wait_question(&screen, "mcp__deploy__trigger");
    // Nothing ran while the question waits.
    deploy_record::assert_none(workspace.path());
    keys.press(b"y");
    screen.wait_text("Model received: Successful deployment of web v1");
    deploy_record::assert_one_of(workspace.path(), "web");
    quit(&screen, &mut keys, &mut child);
    // Still one: nothing ran again on the way out.
    deploy_record::assert_one_of(workspace.path(), "web");
}

/// Denied with a note: the deploy server records nothing, and the model receives the
/// person's note.
#[test]
fn a_deploy_denied_with_a_note_never_runs_and_the_model_gets_the_note() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let steps = call_steps("deploy", "mcp__deploy__trigger", json!({"service": "web"}));
    let (mut child, screen, mut keys) =
        pty::spawn(console(home.path(), workspace.path(), steps), ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "deploy web");
    wait_question(&screen, "mcp__deploy__trigger");
    keys.press(b"d");
    screen.wait_text("note: ");
    keys.press(b"not on a Friday");
    screen.wait_text("not on a Friday");
    keys.press(b"\r");
    screen.wait_text("Model received: Permission denied by the user: not on a Friday");
    deploy_record::assert_none(workspace.path());
    quit(&screen, &mut keys, &mut child);
    deploy_record::assert_none(workspace.path());
}

/// "Allow for the next 5 calls" picked with its key in the real modal: the answered call
/// and the next four run without a question, the sixth asks again and, denied, never
/// runs. The deploy server's own record counts exactly five deployments.
#[test]
fn a_grant_for_the_next_calls_is_used_up_and_then_the_modal_asks_again() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut steps = vec![json!({"id": "connect", "say": "Connecting.", "tools": [
        {"name": "connect_mcp", "input": {"name": "deploy"}}]})];
    let mut previous = "connect".to_string();
    for i in 1..=6 {
        let id = format!("deploy{i}");
        steps.push(
            json!({"id": id, "after": previous, "say": format!("Deploy {i}."),
            "tools": [{"name": "mcp__deploy__trigger", "input": {"service": "web"}}]}),
        );
        previous = id;
    }
    steps.push(json!({"id": "done", "after": previous, "say": "Model received: {{result_line}}"}));
    let (mut child, screen, mut keys) = pty::spawn(
        console(home.path(), workspace.path(), json!(steps)),
        ROWS,
        COLS,
    );
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "deploy web six times");
    wait_question(&screen, "mcp__deploy__trigger");
    deploy_record::assert_none(workspace.path());
    keys.press(b"c");
    // The sixth call's question: by then the server has run the five the grant allowed.
    screen.wait_for("the sixth call's question", |t| {
        t.contains("Deploy 6.") && t.contains("Permission required")
    });
    screen.wait_modal_armed("the second modal to take keys");
    deploy_record::assert_received(workspace.path(), &["web"; 5]);
    keys.press(b"n");
    screen.wait_text("Model received: Permission denied");
    // The sixth, denied, never reached the server.
    deploy_record::assert_received(workspace.path(), &["web"; 5]);
    // The grant is used up: /permissions lists none.
    keys.enter_line(&screen, "/permissions");
    screen.wait_for("the permissions overlay without grants", |t| {
        t.contains("Session grants (this session only)") && t.contains("  none")
    });
    keys.press(b"\x1b");
    quit(&screen, &mut keys, &mut child);
    deploy_record::assert_received(workspace.path(), &["web"; 5]);
    // The session log names the grant for each call it let through, with what it left.
    let log =
        std::fs::read_to_string(crate::support::session_log(&home.path().join("state"))).unwrap();
    let left: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "permission_decided" && r["decider"]["by"] == "limited_grant")
        .map(|r| r["decider"]["left"].clone())
        .collect();
    assert_eq!(
        left,
        [3, 2, 1, 0].map(|n| json!({"calls": n})).to_vec(),
        "{log}"
    );
}

/// A real server (tests/fixtures/lying_server.py) whose destructive tool claims
/// `readOnlyHint: true`: the claim authorizes nothing, the person is still asked, and the
/// denied call never reaches the server.
#[test]
fn a_tool_that_claims_to_be_read_only_still_asks() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let record = home.path().join("calls.jsonl");
    let target = workspace.path().join("cache.db");
    std::fs::write(&target, "precious").unwrap();
    let config = home.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"liar": {"command": "python3",
            "args": [fixture_file("lying_server.py")],
            "env": {"FIXTURE_RECORD": record, "FIXTURE_TARGET": target}}}})
        .to_string(),
    )
    .unwrap();
    let steps = call_steps("liar", "mcp__liar__clean_cache", json!({}));
    let mut cmd = console(home.path(), workspace.path(), steps);
    cmd.arg("--mcp-config");
    cmd.arg(&config);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "show the cache");
    wait_question(&screen, "mcp__liar__clean_cache");
    // The person sees the claim for what it is: the server's word, not a permission.
    screen.wait_for("the server's claim, marked unverified", |t| {
        t.contains("server claims (not verified): title=\"Show cache\", readOnlyHint=true")
    });
    keys.press(b"n");
    screen.wait_text("Model received: Permission denied");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert!(
        !record.exists(),
        "the server received the denied call: {}",
        std::fs::read_to_string(&record).unwrap_or_default()
    );
    quit(&screen, &mut keys, &mut child);
}

/// A folder outside the workspace and outside the temp dir (both writable for confined
/// commands): under the build's own temp dir.
fn outside(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// bash through the shipped binary, in its default sandbox: a write outside the workspace
/// fails, leaves no file, and the person reads on the tool card that the sandbox may have
/// blocked it.
#[test]
fn bash_in_the_console_cannot_write_outside_the_workspace_and_says_so() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let out = outside("bash");
    let escaped = out.join("escaped");
    // bash may write in its temp dir ($TMPDIR): a folder of its own beside `out`, so that
    // `out` is outside it also in a checkout under /tmp (the default temp dir).
    let tmp = outside("bash-tmp");
    let steps: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_file("shell_scenario.json")).unwrap(),
    )
    .unwrap();
    let mut command = console(home.path(), workspace.path(), steps["steps"].clone());
    command.env("TMPDIR", &tmp);
    let (mut child, screen, mut keys) = pty::spawn(command, ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, &format!("touch {}", escaped.display()));
    screen.wait_text("Result: ");
    screen.wait_text("[sandbox: this command ran in toolgate's sandbox");
    assert!(!escaped.exists(), "bash wrote outside the workspace");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&tmp);
    quit(&screen, &mut keys, &mut child);
}
