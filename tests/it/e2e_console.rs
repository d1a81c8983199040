//! End to end: the real `toolgate` binary in a real pseudo-terminal, on the scripted demo
//! model. A user asks to deploy, watches the pool grow, denies the permission and quits;
//! the process exits cleanly and leaves no server child behind.

use crate::support::fixture_server::fixture_file;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

use crate::support::deploy_record;
use crate::support::process::{alive, children_of};
use crate::support::pty;

const ROWS: u16 = 36;
const COLS: u16 = 120;

fn command(home: &Path, workspace: &Path) -> CommandBuilder {
    let mut cmd = pty::toolgate(&home.join("state"), &home.join("config"));
    cmd.cwd(workspace);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd
}

#[test]
fn deploy_is_asked_denied_and_quit_leaves_nothing_running() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");

    let (mut child, screen, mut keys) =
        pty::spawn(command(home.path(), workspace.path()), ROWS, COLS);
    let pid = child.process_id().expect("toolgate pid");

    screen.wait_text("scripted demo");
    keys.press(b"deploy web");
    screen.wait_text("deploy web");
    keys.press(b"\r");

    screen.wait_text("mcp__docs__search");
    screen.wait_for("the permission modal for mcp__deploy__trigger", |t| {
        t.contains("Permission required") && t.contains("mcp__deploy__trigger")
    });
    let servers = children_of(pid);
    assert!(
        !servers.is_empty(),
        "no server child while the deploy is pending"
    );
    // Keys in the first moments of a modal are swallowed (the guard window): wait until
    // the modal shows it takes keys.
    screen.wait_modal_armed("the permission modal to take keys");
    keys.press(b"n");
    screen.wait_for("the denial in the conversation", |t| {
        t.contains("Permission denied") && !t.contains("Permission required")
    });
    // The far side: the deploy server never ran the trigger.
    deploy_record::assert_none(workspace.path());

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");

    // The servers it started are gone with it (give a stray a moment to be reaped).
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    let survivors: Vec<u32> = servers.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        survivors.is_empty(),
        "server processes outlived toolgate: {survivors:?}"
    );
}

/// A .mcp.json with the recording elicitation fixture server as `elicit`, and the file
/// the server records what it receives in.
fn elicit_config(home: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let record = home.join("received.jsonl");
    let server = fixture_file("elicit_server.py");
    let config = home.join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"elicit": {"command": "python3", "args": [server],
            "env": {"FIXTURE_RECORD": record}}}})
        .to_string(),
    )
    .unwrap();
    (config, record)
}

/// `toolgate mcp call` on a terminal asks field by field on stderr and sends the answers.
#[test]
fn mcp_call_on_a_terminal_asks_for_the_form_and_sends_it() {
    let home = tempfile::tempdir().expect("tempdir");
    let (config, record) = elicit_config(home.path());
    let mut cmd = command(home.path(), home.path());
    cmd.args(["mcp", "call", "elicit", "ask", "{}", "--mcp-config"]);
    cmd.arg(&config);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    let mut answer = |prompt: &str, typed: &str| {
        screen.wait_text(prompt);
        keys.press(typed.as_bytes());
    };
    screen.wait_text("MCP server 'elicit' asks you for input (the server asks, not the model):");
    answer(
        "Release name (at least 3 characters, required) []: ",
        "web\r",
    );
    answer("replicas (whole number, 1–5) [2]: ", "\r");
    answer("region (pick one, required) [Europe]: ", "2\r");
    answer("notify (pick any) []: ", "chat\r");
    answer("confirm (yes or no) [no]: ", "y\r");
    answer("Send this to 'elicit'?", "s\r");
    screen.wait_text("received: {\"result\"");
    screen.wait_exit(&mut child);
    let received = std::fs::read_to_string(&record).unwrap();
    let answer: serde_json::Value = received
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["tool"] == "ask")
        .unwrap_or_else(|| panic!("no answer recorded: {received}"));
    assert_eq!(
        answer["result"],
        serde_json::json!({"action": "accept", "content": {"name": "web", "replicas": 2,
            "region": "us", "notify": ["chat"], "confirm": true}})
    );
}

/// A form from a real MCP server (tests/fixtures/elicit_server.py, a child process),
/// filled in on the console's inbox: typed text, a number corrected after its problem
/// showed, a single choice, a multiple choice, a yes/no, Enter. The server records what
/// it received.
#[test]
fn an_elicitation_form_is_filled_in_on_the_console_and_reaches_the_server() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (config, record) = elicit_config(home.path());
    let scenario = home.path().join("scenario.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "elicit", "description": "connects elicit and calls ask",
            "chunk_chars": 64, "chunk_delay_ms": 0, "steps": [
            {"id": "connect", "say": "Connecting.", "tools": [
                {"name": "connect_mcp", "input": {"name": "elicit"}}]},
            {"id": "ask", "after": "connect", "say": "Asking.", "tools": [
                {"name": "mcp__elicit__ask", "input": {}}]},
            {"id": "many", "after": "ask", "say": "Asking many.", "tools": [
                {"name": "mcp__elicit__ask_many", "input": {"count": 10}}]},
            {"id": "done", "after": "many", "say": "Result: {{result_line}}"}]})
        .to_string(),
    )
    .unwrap();
    let mut cmd = command(home.path(), workspace.path());
    cmd.env("TOOLGATE_SCENARIO", &scenario);
    cmd.args([
        "--allow",
        "mcp__elicit__ask",
        "--allow",
        "mcp__elicit__ask_many",
        "--mcp-config",
    ]);
    cmd.arg(&config);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);

    screen.wait_text("scripted demo");
    keys.press(b"go\r");
    screen.wait_for("the form", |t| {
        t.contains("An MCP server asks you to fill in a form")
            && t.contains("the server asks, not the model")
            && t.contains("Release name *:")
    });
    // Keys in the first moments of a modal are swallowed (the guard window): wait until
    // the form shows its focused field.
    screen.wait_modal_armed("the form to take keys");
    keys.press(b"v2.1");
    screen.wait_text("Release name *: v2.1");
    keys.press(b"\t\x7f9");
    screen.wait_text("✗ at most 5");
    keys.press(b"\x7f3\t\x1b[C\t\x1b[C \t ");
    screen.wait_text("[x] yes");
    keys.press(b"\r");
    // The transcript says so (the rest of the line may be under the next question).
    screen.wait_text("· You sent 'elicit'");
    screen.wait_text("Asking many.");
    let received = std::fs::read_to_string(&record).unwrap();
    let answer: serde_json::Value = received
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["tool"] == "ask")
        .unwrap_or_else(|| panic!("no answer recorded: {received}"));
    assert_eq!(
        answer["result"],
        serde_json::json!({"action": "accept", "content": {"name": "v2.1", "replicas": 3,
            "region": "us", "notify": ["chat"], "confirm": true}})
    );

    // Ten questions at once: eight wait in the inbox, two are refused with the reason at
    // once; Esc declines the eight one by one, and the call finishes.
    // Every request shown restarts the guard window, so each Esc waits until the next
    // request is on screen (the count went down) and takes keys (its focused field shows).
    // The status line's count is part of the check: it is the last row a frame writes, so
    // a screen read while a frame is still arriving (the new count in the modal's title
    // above the old request's focused field) does not pass for the new request armed.
    for waiting in (1..=8).rev() {
        let shown = format!("the request with {waiting} waiting, taking keys");
        screen.wait_for(&shown, |t| {
            let counted = if waiting > 1 {
                t.contains(&format!(" of {waiting}"))
            } else {
                !t.contains(" of 2") && t.contains("An MCP server asks you to fill in a form")
            };
            counted
                && t.contains(&format!("waiting for your answer ({waiting})"))
                && t.contains("▶ ")
        });
        keys.press(b"\x1b");
    }
    screen.wait_text("Result: received:");
    let received = std::fs::read_to_string(&record).unwrap();
    let many: Vec<serde_json::Value> = received
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["tool"] == "ask_many")
        .collect();
    let declined = many
        .iter()
        .filter(|v| v["result"] == serde_json::json!({"action": "decline"}))
        .count();
    let refused: Vec<&serde_json::Value> = many
        .iter()
        .filter(|v| {
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("8 requests of this server already wait"))
        })
        .collect();
    assert_eq!((declined, refused.len()), (8, 2), "{received}");

    keys.press(b"\x04");
    screen.wait_exit(&mut child);
}

/// A signal from another process (the terminal is raw, so Ctrl-C is a key and never one)
/// ends the console: the terminal is back in line mode with echo, the alternate screen was
/// left, and the exit status is 128 + the signal's number (issue 23, item 3).
fn signal_restores_the_terminal(signal: libc::c_int) {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (mut child, screen, keys) = pty::spawn(command(home.path(), workspace.path()), ROWS, COLS);
    screen.wait_text("scripted demo");
    let raw = keys.line_modes();
    assert!(!raw.canonical && !raw.echo, "the console runs raw: {raw:?}");

    let pid = child.process_id().expect("toolgate pid");
    // SAFETY: a plain syscall on the pid of our child, which has not been reaped.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
    let status = screen.wait_exit(&mut child);

    let modes = keys.line_modes();
    assert!(
        modes.canonical && modes.echo,
        "signal {signal} left the terminal raw: {modes:?}"
    );
    assert!(
        screen.wrote_eventually(b"\x1b[?1049l"),
        "signal {signal}: the alternate screen was not left"
    );
    assert_eq!(
        (status.signal(), status.exit_code()),
        (None, 128 + signal as u32),
        "signal {signal}: exit status {status:?}"
    );
}

/// Runs examples/terminal_exits.rs (the console's own terminal guard) in a pty, lets it
/// take the terminal, presses a key and checks that the way it ends (`panic` or `error`)
/// gave the terminal back.
fn exit_path_restores_the_terminal(how: &str) -> portable_pty::ExitStatus {
    let example = std::env::current_exe()
        .expect("test binary path")
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .join("examples/terminal_exits");
    if !example.is_file() {
        // `cargo test` builds the examples; a run of this crate alone (`--test it`) does not.
        let built = std::process::Command::new(env!("CARGO"))
            .args(["build", "--example", "terminal_exits"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build --example terminal_exits");
        assert!(
            built.success(),
            "cargo build --example terminal_exits: {built}"
        );
    }
    let mut cmd = portable_pty::CommandBuilder::new(example);
    cmd.arg(how);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("ready");
    let raw = keys.line_modes();
    assert!(
        !raw.canonical && !raw.echo,
        "{how}: the terminal is raw: {raw:?}"
    );
    keys.press(b"x");
    let status = screen.wait_exit(&mut child);
    let modes = keys.line_modes();
    assert!(
        modes.canonical && modes.echo,
        "{how} left the terminal raw: {modes:?}"
    );
    assert!(
        screen.wrote_eventually(b"\x1b[?1049l"),
        "{how}: the alternate screen was not left"
    );
    status
}

#[test]
fn a_panic_restores_the_terminal() {
    let status = exit_path_restores_the_terminal("panic");
    assert_eq!(status.exit_code(), 101, "a panic's exit status: {status:?}");
}

#[test]
fn an_error_return_restores_the_terminal() {
    let status = exit_path_restores_the_terminal("error");
    assert_eq!(status.exit_code(), 1, "an error's exit status: {status:?}");
}

#[test]
fn sigint_restores_the_terminal_and_exits_130() {
    signal_restores_the_terminal(libc::SIGINT);
}

#[test]
fn sigquit_restores_the_terminal_and_exits_131() {
    signal_restores_the_terminal(libc::SIGQUIT);
}

#[test]
fn sigterm_and_sighup_restore_the_terminal_and_exit_143_and_129() {
    signal_restores_the_terminal(libc::SIGTERM);
    signal_restores_the_terminal(libc::SIGHUP);
}

/// Resume (`toolgate -c`) brings back the whole transcript: the earlier turn's tool card
/// and its result, not only the prompt and the reply.
#[test]
fn a_resumed_session_shows_the_earlier_tool_card_with_its_result() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    // The earlier session: one headless turn whose bash call prints two lines. The second
    // ("tool-42") appears only in the call's result: the prompt holds `$((6*7))`, and the
    // reply quotes only the first line.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "-p",
            "echo first; echo tool-$((6*7))",
            "--provider",
            "scripted",
        ])
        .current_dir(workspace.path())
        .env("TOOLGATE_STATE_DIR", home.path().join("state"))
        .env("TOOLGATE_CONFIG_DIR", home.path().join("config"))
        .env("TOOLGATE_SCENARIO", fixture_file("shell_scenario.json"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run toolgate -p");
    assert!(out.status.success(), "{out:?}");

    let mut cmd = command(home.path(), workspace.path());
    cmd.args(["-c", "--provider", "scripted"]);
    cmd.env("TOOLGATE_SCENARIO", fixture_file("shell_scenario.json"));
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("Resumed session");
    screen.wait_text("Result: first");
    screen.wait_text("tool-42");
    let text = screen.text();
    assert!(text.contains("bash"), "{text}");

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}
