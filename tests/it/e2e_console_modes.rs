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
