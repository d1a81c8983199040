//! A running console picks up edits of `.mcp.json`: the real binary in a real pty, the
//! file changed beside it. A new server appears as not connected; a connected one that is
//! removed is disconnected (its process ends); a broken file is reported with its position
//! and changes nothing.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 40;
const COLS: u16 = 140;
const WAIT: Duration = Duration::from_secs(30);

struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    fn text(&self) -> String {
        let parser = self.parser.lock().unwrap();
        let rows: Vec<String> = parser.screen().rows(0, COLS).collect();
        rows.join("\n")
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.text();
            if pred(&text) {
                return;
            }
            if Instant::now() > deadline {
                panic!("timed out after {WAIT:?} waiting for {what}; screen:\n{text}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_text(&self, needle: &str) {
        self.wait_for(&format!("{needle:?}"), |t| t.contains(needle));
    }
}

/// Live (not zombie) children of `pid`, from /proc.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) && fields[0] != "Z" {
            out.push(child);
        }
    }
    out
}

/// Saves the way editors do: a temporary file renamed over the old one.
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("json.swp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn edits_of_mcp_json_reach_the_running_console() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mcp_json = workspace.path().join(".mcp.json");
    std::fs::write(&mcp_json, "{\"mcpServers\": {}}\n").unwrap();

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("--trust-project");
    cmd.cwd(workspace.path());
    cmd.env("TOOLGATE_STATE_DIR", home.path().join("state"));
    cmd.env("TOOLGATE_CONFIG_DIR", home.path().join("config"));
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("ANTHROPIC_API_KEY");
    cmd.env_remove("OPENAI_API_KEY");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let pid = child.process_id().unwrap();
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    let sink = Arc::clone(&parser);
    thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().process(&buf[..n]);
        }
    });
    let mut keys = pair.master.take_writer().unwrap();
    let mut press = |bytes: &[u8]| {
        keys.write_all(bytes).unwrap();
        keys.flush().unwrap();
    };
    let screen = Screen { parser };
    screen.wait_text("scripted demo");
    screen.wait_text("fs ○ not connected");

    // A server added to the file appears, not connected.
    save(
        &mcp_json,
        "{\n  \"mcpServers\": {\n    \"extra\": {\"type\": \"builtin\", \"server\": \"docs\"}\n  }\n}\n",
    );
    screen.wait_text("extra ○ not connected");
    screen.wait_text("MCP configuration reloaded");
    assert!(children_of(pid).is_empty(), "nothing was started");

    // Connect it (a project server: asked first), then remove it from the file.
    press(b"/connect extra\r");
    screen.wait_text("Start a project server?");
    thread::sleep(Duration::from_millis(400)); // the dialog's guard window
    press(b"y");
    screen.wait_text("mcp__extra__search");
    screen.wait_text("extra ● ready · 2 tools");
    assert_eq!(children_of(pid).len(), 1, "the server runs");

    // A broken file is reported with its position and changes nothing.
    save(
        &mcp_json,
        "{\n  \"mcpServers\": {\n    \"extra\": {\"type\": \"builtin\",}\n  }\n}\n",
    );
    screen.wait_for("the reload refused with the file's position", |t| {
        t.contains("not reloaded") && t.contains(&format!("{}:3:", mcp_json.display()))
    });
    assert!(screen.text().contains("extra ● ready · 2 tools"));
    assert_eq!(children_of(pid).len(), 1, "the server still runs");

    save(&mcp_json, "{\"mcpServers\": {}}\n");
    screen.wait_for("extra disconnected and gone from the panel", |t| {
        // The row goes only once its tools have left the pool.
        !t.contains("extra ●") && !t.contains("extra ○") && t.contains("removed: extra")
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !children_of(pid).is_empty() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(
        children_of(pid).is_empty(),
        "the removed server's process ended"
    );

    press(b"\x04");
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "toolgate exited with {status:?}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("toolgate did not exit; screen:\n{}", screen.text());
        }
        thread::sleep(Duration::from_millis(20));
    }
}
