//! End to end: the composer's history and editor (issue 27, decision 0079), through the
//! real binary in a pty against a local Messages API. The far side proves it: what the
//! API received, what the editor was given, and the terminal's line modes.

use serde_json::Value;

use crate::support::model_api::{Answer, ModelApi, anthropic_text_stream};
use crate::support::pty::{self, Home};

const CTRL_R: &[u8] = b"\x12";
const CTRL_G: &[u8] = b"\x07";
const CTRL_C: &[u8] = b"\x03";
const CTRL_D: &[u8] = b"\x04";
const ESC: &[u8] = b"\x1b";

fn whole(said: &str) -> Answer {
    Answer::Stream(anthropic_text_stream(&[said], true))
}

/// The text of the last user message of a request.
fn last_user_text(request: &Value) -> String {
    let message = request["messages"]
        .as_array()
        .and_then(|all| all.iter().rev().find(|m| m["role"] == "user"))
        .cloned()
        .unwrap_or_default();
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// One console run that sends `prompt` and quits once the reply `said` shows.
fn send_once(home: &Home, prompt: &str, said: &str) {
    let api = ModelApi::start(vec![whole(said)]);
    let (mut child, screen, mut keys) = pty::spawn(home.console(&api.url), 30, 110);
    screen.wait_text("claude");
    keys.enter_line(&screen, prompt);
    screen.wait_text(said);
    keys.press(CTRL_D);
    assert!(screen.wait_exit(&mut child).success());
    assert_eq!(api.finish().len(), 1);
}

/// A prompt sent in an earlier session of the same workspace is found with Ctrl+R and
/// sent again; Esc in the search gives back what the composer held.
#[test]
fn ctrl_r_finds_a_prompt_from_an_earlier_session_and_sends_it() {
    let home = Home::new();
    send_once(&home, "deploy the web app to staging", "Deployed.");
    send_once(&home, "list the open issues", "Listed.");

    let api = ModelApi::start(vec![whole("Deployed again.")]);
    let (mut child, screen, mut keys) = pty::spawn(home.console(&api.url), 30, 110);
    screen.wait_text("claude");
    keys.press(b"half typed");
    screen.wait_text("half typed");
    keys.press(CTRL_R);
    screen.wait_text("search:");
    keys.press(b"zzz");
    screen.wait_text("no earlier prompt matches");
    keys.press(ESC);
    screen.wait_for("the search closed, the text back", |t| {
        !t.contains("search:") && t.contains("half typed")
    });
    keys.press(CTRL_C);
    screen.wait_for("the composer emptied", |t| !t.contains("half typed"));

    keys.press(CTRL_R);
    screen.wait_text("search:");
    screen.wait_text("list the open issues");
    keys.press(b"STAGING");
    screen.wait_for("only the match listed", |t| {
        t.contains("deploy the web app to staging") && !t.contains("list the open issues")
    });
    keys.press(b"\r");
    screen.wait_for("the match in the composer", |t| {
        !t.contains("search:") && t.contains("deploy the web app to staging")
    });
    keys.press(b"\r");
    screen.wait_text("Deployed again.");
    keys.press(CTRL_D);
    assert!(screen.wait_exit(&mut child).success());

    let requests = api.finish();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        last_user_text(&requests[0]),
        "deploy the web app to staging"
    );
}

/// Ctrl+G hands the terminal to `$EDITOR` (cooked, out of the alternate screen), the
/// edited text comes back into the composer, and the console has its raw, alternate
/// screen again; what is sent is the edited text.
#[test]
fn ctrl_g_edits_the_message_in_the_editor_and_restores_the_screen() {
    let home = Home::new();
    let seen = home.path("seen");
    std::fs::create_dir_all(&seen).unwrap();
    let script = home.path("editor.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncp \"$1\" '{dir}/given.txt'\nstty -a > '{dir}/stty.txt' 2>&1\nprintf 'edited by the editor\\nsecond line\\n' > \"$1\"\n",
            dir = seen.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();

    let api = ModelApi::start(vec![whole("Got it.")]);
    let mut cmd = home.console(&api.url);
    cmd.env_remove("VISUAL");
    cmd.env("EDITOR", &script);
    let (mut child, screen, mut keys) = pty::spawn(cmd, 30, 110);
    screen.wait_text("claude");
    keys.press(b"original draft");
    screen.wait_text("original draft");
    keys.press(CTRL_G);
    screen.wait_for("the edited text in the composer", |t| {
        t.contains("edited by the editor") && t.contains("second line") && !t.contains("original")
    });
    screen.wait_for_screen("the alternate screen again", |s| s.alternate_screen());
    let modes = keys.line_modes();
    assert!(!modes.canonical && !modes.echo, "raw again: {modes:?}");
    assert_eq!(
        std::fs::read_to_string(seen.join("given.txt")).unwrap(),
        "original draft"
    );
    let stty = std::fs::read_to_string(seen.join("stty.txt")).unwrap();
    assert!(
        stty.contains("icanon") && !stty.contains("-icanon"),
        "the editor ran on a cooked terminal: {stty}"
    );
    screen.wait_text("idle");

    keys.press(b"\r");
    screen.wait_text("Got it.");
    keys.press(CTRL_D);
    assert!(screen.wait_exit(&mut child).success());
    let requests = api.finish();
    assert_eq!(
        last_user_text(&requests[0]),
        "edited by the editor\nsecond line"
    );
}

/// An editor that fails leaves the message as it was and says why.
#[test]
fn a_failing_editor_leaves_the_message_and_says_why() {
    let home = Home::new();
    let mut cmd = home.console("http://127.0.0.1:9");
    cmd.env_remove("VISUAL");
    cmd.env("EDITOR", "false");
    let (mut child, screen, mut keys) = pty::spawn(cmd, 30, 110);
    screen.wait_text("claude");
    keys.press(b"keep me");
    screen.wait_text("keep me");
    keys.press(CTRL_G);
    screen.wait_text("the editor failed, the message is as it was");
    assert!(screen.text().contains("keep me"));
    keys.press(CTRL_D);
    assert!(screen.wait_exit(&mut child).success());
}
