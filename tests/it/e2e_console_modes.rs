//! Permission modes in the console: the real binary in a pty against a local Messages API
//! (`support::window_api`). What proves it: the status line the person sees, and the file
//! on disk once the plan is approved.

use std::path::Path;

use portable_pty::CommandBuilder;
use serde_json::json;

use crate::support::pty::{self, Screen};
use crate::support::window_api::{Say, WindowApi};

const ROWS: u16 = 36;
const COLS: u16 = 140;
const SHIFT_TAB: &[u8] = b"\x1b[Z";

/// The console in `ws` on the anthropic provider, pointed at `api`.
fn console(home: &Path, ws: &Path, api: &WindowApi) -> CommandBuilder {
    let mut cmd = pty::toolgate(&home.join("state"), &home.join("config"));
    cmd.cwd(ws);
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_API_KEY", "test-key");
    cmd.env("ANTHROPIC_BASE_URL", &api.url);
    cmd.env_remove("MODEL_ID");
    cmd.args(["--provider", "anthropic"]);
    cmd
}

/// The status line (the row under the composer: the last row of the screen).
fn status_line(screen: &Screen) -> String {
    screen.text().lines().last().unwrap_or_default().to_string()
}

fn wait_status(screen: &Screen, mode: &str) {
    let shown = format!("· {mode} mode");
    screen.wait_for(&format!("the status line to name {mode} mode"), |text| {
        text.lines()
            .last()
            .is_some_and(|line| line.contains(&shown))
    });
}

fn quit(
    screen: &Screen,
    keys: &mut pty::Keys,
    child: &mut Box<dyn portable_pty::Child + Send + Sync>,
) {
    keys.press(b"\x04");
    let status = screen.wait_exit(child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

#[test]
fn shift_tab_cycles_the_modes_and_the_status_line_names_each() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let api = WindowApi::start(1 << 20, |_| Say::Text("unused".into()));
    let (mut child, screen, mut keys) =
        pty::spawn(console(home.path(), ws.path(), &api), ROWS, COLS);
    // The session has started (its log is open) once the status line names the model.
    screen.wait_for("the session to start", |text| {
        text.lines()
            .last()
            .is_some_and(|line| line.contains("claude-sonnet") && line.contains("· default mode"))
    });
    for mode in ["accept-edits", "plan", "ask", "auto", "default"] {
        keys.press(SHIFT_TAB);
        wait_status(&screen, mode);
    }
    // The session file records each change.
    let log =
        std::fs::read_to_string(crate::support::session_log(&home.path().join("state"))).unwrap();
    let modes: Vec<String> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["type"] == "permission_mode")
        .map(|r| r["mode"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        modes,
        ["accept-edits", "plan", "ask", "auto", "default"],
        "{log}"
    );
    quit(&screen, &mut keys, &mut child);
}

#[test]
fn an_approved_plan_leaves_plan_mode_and_the_next_edit_runs() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut script = vec![
        Say::Tool {
            name: "exit_plan_mode".into(),
            input: json!({"plan": "## The plan\n\n- write **a.txt** with a greeting"}),
        },
        Say::Tool {
            name: "write_file".into(),
            input: json!({"path": "a.txt", "content": "hello"}),
        },
    ]
    .into_iter();
    let api = WindowApi::start(1 << 20, move |_| {
        script
            .next()
            .unwrap_or_else(|| Say::Text("All done.".into()))
    });
    let mut cmd = console(home.path(), ws.path(), &api);
    cmd.args(["--permission-mode", "plan"]);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    wait_status(&screen, "plan");
    keys.enter_line(&screen, "make a plan");
    screen.wait_text("Plan ready for review");
    // The plan is shown as markdown: a list item with its bullet, bold without its marks
    // (the tool card above it shows the raw input).
    screen.wait_text("• write a.txt with a greeting");
    assert!(!ws.path().join("a.txt").exists());
    screen.wait_modal_armed("the plan question to take keys");
    keys.press(b"y");
    screen.wait_text("All done.");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "hello"
    );
    assert!(
        status_line(&screen).contains("· default mode"),
        "{}",
        screen.text()
    );
    quit(&screen, &mut keys, &mut child);
}

/// How many tool results `body` (a Messages request) carries, and whether its last message
/// is one: the model's place in a script, read from the request it received.
fn tool_results_in(body: &serde_json::Value) -> (usize, bool) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let is_result = |m: &serde_json::Value| {
        m["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
    };
    let count = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .count();
    (count, messages.last().is_some_and(is_result))
}

/// The tool results the model received, in order (the last request carries them all).
fn results_received(api: &WindowApi) -> Vec<String> {
    let seen = api.seen();
    let last = seen.last().expect("a model request");
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect()
}

/// What the terminal was sent from byte `from` on, as text.
fn written_since(screen: &Screen, from: usize) -> String {
    let raw = screen.raw.lock().expect("raw lock");
    String::from_utf8_lossy(&raw[from.min(raw.len())..]).into_owned()
}

fn written_so_far(screen: &Screen) -> usize {
    screen.raw.lock().expect("raw lock").len()
}

/// Shift+Tab from default to plan, then the model writes a file and runs `touch`: plan
/// mode refuses both without a question (default mode runs both: a file tool inside the
/// workspace and a command that is not destructive), nothing lands on disk, and the model
/// is told to plan.
#[test]
fn a_switch_to_plan_mode_with_shift_tab_refuses_the_next_writes() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let calls = [
        Say::Tool {
            name: "write_file".into(),
            input: json!({"path": "written.txt", "content": "x"}),
        },
        Say::Tool {
            name: "bash".into(),
            input: json!({"command": "touch f"}),
        },
    ];
    let api = WindowApi::start(1 << 20, move |body| {
        let (done, _) = tool_results_in(body);
        calls
            .get(done)
            .cloned()
            .unwrap_or_else(|| Say::Text(format!("Done after {done} calls.")))
    });
    let (mut child, screen, mut keys) =
        pty::spawn(console(home.path(), ws.path(), &api), ROWS, COLS);
    wait_status(&screen, "default");
    keys.press(SHIFT_TAB);
    wait_status(&screen, "accept-edits");
    keys.press(SHIFT_TAB);
    wait_status(&screen, "plan");
    let from = written_so_far(&screen);
    keys.enter_line(&screen, "write the files");
    screen.wait_text("Done after 2 calls.");
    assert!(!ws.path().join("written.txt").exists(), "write_file ran");
    assert!(!ws.path().join("f").exists(), "touch ran");
    let shown = written_since(&screen, from);
    assert!(
        !shown.contains("Permission required"),
        "plan mode asked instead of refusing: {shown}"
    );
    let results = results_received(&api);
    assert_eq!(results.len(), 2, "{results:?}");
    for refused in &results {
        assert!(
            refused.contains("plan mode") && refused.contains("exit_plan_mode"),
            "{refused}"
        );
    }
    assert!(
        status_line(&screen).contains("· plan mode"),
        "{}",
        screen.text()
    );
    quit(&screen, &mut keys, &mut child);
}

/// The same command before and after Shift+Tab from default to accept-edits: `rm` of a
/// file in the workspace asks in default mode (denied here: the file stays), and runs
/// without a question once accept-edits is in force (the file is gone).
#[test]
fn a_switch_to_accept_edits_with_shift_tab_runs_what_default_mode_asked() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for name in ["old1.txt", "old2.txt"] {
        std::fs::write(ws.path().join(name), "old").unwrap();
    }
    let api = WindowApi::start(1 << 20, move |body| {
        let (done, answering) = tool_results_in(body);
        if answering {
            Say::Text(format!("Done with call {done}."))
        } else {
            Say::Tool {
                name: "bash".into(),
                input: json!({"command": format!("rm old{}.txt", done + 1)}),
            }
        }
    });
    let (mut child, screen, mut keys) =
        pty::spawn(console(home.path(), ws.path(), &api), ROWS, COLS);
    wait_status(&screen, "default");
    let before_first = written_so_far(&screen);
    keys.enter_line(&screen, "remove the first");
    pty::wait_question(&screen, "bash");
    keys.press(b"n");
    screen.wait_text("Done with call 1.");
    assert!(ws.path().join("old1.txt").exists(), "the denied rm ran");
    // What the terminal was sent shows a question when there was one (so its absence
    // below means something).
    assert!(written_since(&screen, before_first).contains("Permission required"));

    keys.press(SHIFT_TAB);
    wait_status(&screen, "accept-edits");
    let from = written_so_far(&screen);
    keys.enter_line(&screen, "remove the second");
    screen.wait_text("Done with call 2.");
    assert!(
        !ws.path().join("old2.txt").exists(),
        "accept-edits did not run the rm: {}",
        screen.text()
    );
    let shown = written_since(&screen, from);
    assert!(
        !shown.contains("Permission required"),
        "accept-edits asked: {shown}"
    );
    // The session log names the mode as the decider of the second call.
    let log =
        std::fs::read_to_string(crate::support::session_log(&home.path().join("state"))).unwrap();
    let deciders: Vec<String> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["type"] == "permission_decided" && r["tool"] == "bash")
        .map(|r| r["decider"]["by"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(deciders, ["person", "mode"], "{log}");
    quit(&screen, &mut keys, &mut child);
}
