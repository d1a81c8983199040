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
