//! Edit approvals in the real console: the real binary in a pty, the scripted model asking
//! for write_file and edit_file, and a rule that makes them ask. The question shows the
//! change as a diff of the file on disk; the file on disk is the proof of what ran.

use std::path::Path;

use serde_json::json;

use crate::support::pty::{self, quit, scripted_console, wait_question};

const ROWS: u16 = 40;
const COLS: u16 = 120;

/// A config dir whose rules ask before every file change and command.
fn asking_config(home: &Path) {
    asking_config_with(home, "");
}

fn asking_config_with(home: &Path, more: &str) {
    let config = home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!("[permissions]\nask = [\"edit_file\", \"write_file\", \"bash\"]\n{more}"),
    )
    .unwrap();
}

/// The model calls `tool` with `input`, then says the first line of the result it got.
fn call_steps(tool: &str, input: serde_json::Value) -> serde_json::Value {
    json!([
        {"id": "call", "say": "Changing.", "tools": [{"name": tool, "input": input}]},
        {"id": "done", "after": "call", "say": "Model received: {{result_line}}"}])
}

/// In ask mode (no rule at all) the edit asks, showing its diff.
#[test]
fn an_edit_question_shows_the_diff_of_the_file_on_disk_and_approving_it_edits() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let file = workspace.path().join("notes.txt");
    std::fs::write(&file, "alpha\nold line\nomega\n").unwrap();
    let input = json!({"path": "notes.txt", "old_text": "old line", "new_text": "new line"});
    let mut cmd = scripted_console(
        home.path(),
        workspace.path(),
        call_steps("edit_file", input),
    );
    cmd.args(["--permission-mode", "ask"]);
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("· ask mode");
    keys.enter_line(&screen, "fix the note");
    wait_question(&screen, "edit_file");
    screen.wait_for("the diff", |t| {
        t.contains("diff notes.txt (+1 -1)") && t.contains("-old line") && t.contains("+new line")
    });
    // Nothing changed while the question waits.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "alpha\nold line\nomega\n"
    );

    keys.press(b"v");
    screen.wait_text("\"old_text\": \"old line\"");
    keys.press(b"v");
    screen.wait_text("+new line");

    keys.press(b"y");
    screen.wait_text("Model received: Edited notes.txt");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "alpha\nnew line\nomega\n"
    );
    quit(&screen, &mut keys, &mut child);
}

#[test]
fn a_write_of_a_new_file_shows_every_line_as_an_addition() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    asking_config(home.path());
    let input = json!({"path": "docs/fresh.md", "content": "# Fresh\nfirst point\nsecond point\n"});
    let cmd = scripted_console(
        home.path(),
        workspace.path(),
        call_steps("write_file", input),
    );
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "write it down");
    wait_question(&screen, "write_file");
    screen.wait_for("the new file's lines", |t| {
        t.contains("new file docs/fresh.md (+3 -0)")
            && t.contains("@@ -0,0 +1,3 @@")
            && t.contains("+# Fresh")
            && t.contains("+first point")
            && t.contains("+second point")
    });
    let file = workspace.path().join("docs/fresh.md");
    assert!(!file.exists());
    keys.press(b"y");
    screen.wait_text("Model received: Wrote");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# Fresh\nfirst point\nsecond point\n"
    );
    quit(&screen, &mut keys, &mut child);
}

/// The focus reports a terminal sends when its window loses and regains the focus.
const FOCUS_OUT: &[u8] = b"\x1b[O";
const FOCUS_IN: &[u8] = b"\x1b[I";
/// The start of an OSC 9 desktop notification.
const OSC9: &[u8] = b"\x1b]9;";

fn count(screen: &pty::Screen, bytes: &[u8]) -> usize {
    let raw = screen.raw.lock().unwrap();
    raw.windows(bytes.len()).filter(|w| *w == bytes).count()
}

/// Two edits: the first asked while the terminal is in the background (bell and OSC 9,
/// naming the tool), the second after it came back (nothing written).
#[test]
fn a_question_in_the_background_rings_and_notifies_and_none_when_focused() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    asking_config_with(home.path(), "[tui]\nnotify = \"auto\"\n");
    let steps = json!([
        {"id": "one", "say": "First.", "tools": [{"name": "write_file",
            "input": {"path": "a.txt", "content": "a\n"}}]},
        {"id": "two", "after": "one", "say": "Second.", "tools": [{"name": "write_file",
            "input": {"path": "b.txt", "content": "b\n"}}]},
        {"id": "done", "after": "two", "say": "Model received: {{result_line}}"}]);
    let mut cmd = scripted_console(home.path(), workspace.path(), steps);
    cmd.env("TERM_PROGRAM", "iTerm.app");
    cmd.env_remove("VTE_VERSION");
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
    // The console asked for focus reports.
    assert!(screen.wrote_eventually(b"\x1b[?1004h"));
    keys.press(FOCUS_OUT);
    keys.enter_line(&screen, "write two files");
    wait_question(&screen, "write_file");
    let notification =
        b"\x1b]9;toolgate: Permission required: The agent wants to call write_file\x07";
    assert!(screen.wrote_eventually(notification));
    assert_eq!(count(&screen, b"\x07\x1b]9;"), 1, "the bell comes first");

    keys.press(FOCUS_IN);
    keys.press(b"y");
    screen.wait_for("the second question", |t| t.contains("new file b.txt"));
    screen.wait_modal_armed("the second question to take keys");
    assert_eq!(count(&screen, OSC9), 1, "no notification while focused");
    keys.press(b"y");
    screen.wait_text("Model received: Wrote");
    quit(&screen, &mut keys, &mut child);
    assert_eq!(count(&screen, OSC9), 1);
    assert_eq!(count(&screen, b"\x07"), 2, "one bell, one OSC terminator");
}

/// A terminal that never reported losing the focus gets no bell and no notification.
#[test]
fn a_question_while_focused_writes_no_bell_and_no_notification() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    asking_config(home.path());
    let input = json!({"path": "a.txt", "content": "a\n"});
    let cmd = scripted_console(
        home.path(),
        workspace.path(),
        call_steps("write_file", input),
    );
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
    keys.enter_line(&screen, "write a file");
    wait_question(&screen, "write_file");
    keys.press(b"n");
    screen.wait_text("Model received:");
    quit(&screen, &mut keys, &mut child);
    assert!(!screen.wrote(OSC9) && !screen.wrote(b"\x07"));
    // Focus reports are switched off again with the rest of the console's modes.
    assert!(screen.wrote_eventually(b"\x1b[?1004l"));
}
