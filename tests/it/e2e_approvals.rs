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
    let config = home.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[permissions]\nask = [\"edit_file\", \"write_file\", \"bash\"]\n",
    )
    .unwrap();
}

/// The model calls `tool` with `input`, then says the first line of the result it got.
fn call_steps(tool: &str, input: serde_json::Value) -> serde_json::Value {
    json!([
        {"id": "call", "say": "Changing.", "tools": [{"name": tool, "input": input}]},
        {"id": "done", "after": "call", "say": "Model received: {{result_line}}"}])
}

#[test]
fn an_edit_question_shows_the_diff_of_the_file_on_disk_and_approving_it_edits() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    asking_config(home.path());
    let file = workspace.path().join("notes.txt");
    std::fs::write(&file, "alpha\nold line\nomega\n").unwrap();
    let input = json!({"path": "notes.txt", "old_text": "old line", "new_text": "new line"});
    let cmd = scripted_console(
        home.path(),
        workspace.path(),
        call_steps("edit_file", input),
    );
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);
    screen.wait_text("scripted demo");
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
