//! End to end in a real pseudo-terminal: the real `toolgate` binary with the resources
//! fixture server configured as a user server. The person connects it, types `@`, picks a
//! resource from the popup with Tab and sends; the resource is read and attached.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 36;
const COLS: u16 = 120;
const WAIT: Duration = Duration::from_secs(30);

use crate::support::pty::Screen;

#[test]
fn at_completes_a_resource_in_a_real_terminal_and_the_message_carries_it() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/resources_server.py");
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("mcp.json"),
        serde_json::json!({"mcpServers": {"fx": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.cwd(workspace.path());
    cmd.env("TOOLGATE_STATE_DIR", home.path().join("state"));
    cmd.env("TOOLGATE_CONFIG_DIR", &config);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("ANTHROPIC_API_KEY");
    cmd.env_remove("OPENAI_API_KEY");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn toolgate");
    drop(pair.slave);

    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let mut reader = pair.master.try_clone_reader().expect("pty reader");
    let sink = Arc::clone(&parser);
    thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().expect("parser lock").process(&buf[..n]);
        }
    });
    let mut keys = pair.master.take_writer().expect("pty writer");
    let mut press = |bytes: &[u8]| {
        keys.write_all(bytes).expect("write to pty");
        keys.flush().expect("flush pty");
    };
    let screen = Screen { parser };

    screen.wait_text("scripted demo");
    press(b"/connect fx\r");
    screen.wait_text("mcp__fx__add_resource");
    press(b"see @read");
    screen.wait_text("@fx:fixture://readme  Read me");
    press(b"\t");
    screen.wait_text("see @fx:fixture://readme");
    press(b"\r");
    screen.wait_text("Attached @fx:fixture://readme (");

    press(b"\x04");
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for toolgate") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("toolgate did not exit; screen:\n{}", screen.text());
        }
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// `toolgate -p "… @fx:uri"`: the real binary connects the mentioned server, reads the
/// resources and the session log records the message the model got (text and image).
#[test]
fn headless_reads_mentions_and_the_message_carries_text_and_image() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/resources_server.py");
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
