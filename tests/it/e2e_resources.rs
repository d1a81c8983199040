//! End to end in a real pseudo-terminal: the real `toolgate` binary with the resources
//! fixture server configured as a user server. The person connects it, types `@`, picks a
//! resource from the popup with Tab and sends; the resource is read and attached.

use crate::support::fixture_server::fixture_file;

use crate::support::pty;

const ROWS: u16 = 36;
const COLS: u16 = 120;

#[test]
fn at_completes_a_resource_in_a_real_terminal_and_the_message_carries_it() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let script = fixture_file("resources_server.py");
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("mcp.json"),
        serde_json::json!({"mcpServers": {"fx": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();

    let mut cmd = pty::toolgate(&home.path().join("state"), &config);
    cmd.cwd(workspace.path());
    cmd.env("TERM", "xterm-256color");
    let (mut child, screen, mut keys) = pty::spawn(cmd, ROWS, COLS);

    screen.wait_text("scripted demo");
    keys.press(b"/connect fx\r");
    screen.wait_text("mcp__fx__add_resource");
    keys.press(b"see @read");
    screen.wait_text("@fx:fixture://readme  Read me");
    keys.press(b"\t");
    screen.wait_text("see @fx:fixture://readme");
    keys.press(b"\r");
    screen.wait_text("Attached @fx:fixture://readme (");

    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// `toolgate -p "… @fx:uri"`: the real binary connects the mentioned server, reads the
/// resources and the session log records the message the model got (text and image).
#[test]
fn headless_reads_mentions_and_the_message_carries_text_and_image() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let script = fixture_file("resources_server.py");
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("mcp.json"),
        serde_json::json!({"mcpServers": {"fx": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    let scenario = home.path().join("scenario.json");
    std::fs::write(
        &scenario,
        r#"{"name": "note", "description": "answers once", "steps": [{"id": "done", "say": "Noted."}]}"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "-p",
            "compare @fx:fixture://readme with @fx:fixture://logo",
            "--provider",
            "scripted",
            "--output-format",
            "jsonl",
        ])
        .current_dir(workspace.path())
        .env("TOOLGATE_STATE_DIR", home.path().join("state"))
        .env("TOOLGATE_CONFIG_DIR", &config)
        .env("TOOLGATE_SCENARIO", &scenario)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(r#""message":"Attached @fx:fixture://logo (1 image)""#),
        "{stdout}"
    );

    let sessions = home.path().join("state/sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .expect("a session log");
    let text = std::fs::read_to_string(log.path()).unwrap();
    let message = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["type"] == "message" && r["message"]["role"] == "user")
        .expect("the user message is recorded");
    let content = message["message"]["content"].as_array().unwrap();
    assert_eq!(
        content[0]["text"],
        "compare @fx:fixture://readme with @fx:fixture://logo"
    );
    assert!(
        content[1]["text"]
            .as_str()
            .unwrap()
            .contains("Hello from the fixture."),
        "{content:?}"
    );
    assert_eq!(content[3]["type"], "image");
    assert_eq!(content[3]["media_type"], "image/png");
}
