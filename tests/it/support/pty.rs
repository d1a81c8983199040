//! The real binary in a real pty: the screen a user sees, the keys they press, and the
//! process itself. Shared by the end-to-end tests.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};

/// How long a test waits for the screen to show something.
pub const WAIT: Duration = Duration::from_secs(30);

/// The screen as a user sees it, fed by a thread that drains the pty the whole time
/// (a full pty would block the child's writes).
pub struct Screen {
    pub parser: Arc<Mutex<vt100::Parser>>,
    /// Text is every row of the screen on a line of its own, even a row the terminal
    /// wrapped into the next (else as vt100 reads it: a wrapped row runs on).
    pub row_per_line: bool,
    /// Every byte the program wrote to the terminal, escape sequences included.
    pub raw: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    pub fn text(&self) -> String {
        let parser = self.parser.lock().expect("parser lock");
        if self.row_per_line {
            let cols = parser.screen().size().1;
            let rows: Vec<String> = parser.screen().rows(0, cols).collect();
            rows.join("\n")
        } else {
            parser.screen().contents()
        }
    }

    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
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

    /// Whether the program ever wrote `bytes` (an escape sequence, say) to the terminal.
    pub fn wrote(&self, bytes: &[u8]) -> bool {
        let raw = self.raw.lock().expect("raw lock");
        raw.windows(bytes.len()).any(|w| w == bytes)
    }

    /// [`Screen::wrote`], waiting (at most [`WAIT`]) for the bytes: after the program
    /// exits, the reader thread may still be draining what it wrote last.
    pub fn wrote_eventually(&self, bytes: &[u8]) -> bool {
        let deadline = Instant::now() + WAIT;
        while !self.wrote(bytes) {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }

    pub fn wait_text(&self, needle: &str) {
        self.wait_for(&format!("{needle:?}"), |t| t.contains(needle));
    }

    /// Waits until the question modal on screen takes keys. Keys typed in its first
    /// moments are swallowed (the guard window, restarted for every request shown), and
    /// the modal shows when that ends: a highlighted choice in reverse video where all
    /// were dim, or the `▶` on a form's focused field. Waiting for that, not for a fixed
    /// time, keeps a key from being lost on a slow machine.
    pub fn wait_modal_armed(&self, what: &str) {
        self.wait_for_screen(what, |screen| {
            let (rows, cols) = screen.size();
            (0..rows).any(|row| {
                let cells: Vec<&vt100::Cell> =
                    (0..cols).filter_map(|col| screen.cell(row, col)).collect();
                let text: String = cells
                    .iter()
                    .map(|c| if c.has_contents() { c.contents() } else { " " })
                    .collect();
                let lit = cells
                    .iter()
                    .any(|c| c.inverse() && !c.contents().trim().is_empty());
                (has_choice_button(&text) && lit) || text.contains("▶ ")
            })
        });
    }

    /// Like [`Screen::wait_for`], with the whole screen (cells and their attributes).
    pub fn wait_for_screen(&self, what: &str, pred: impl Fn(&vt100::Screen) -> bool) {
        let deadline = Instant::now() + WAIT;
        loop {
            if pred(self.parser.lock().expect("parser lock").screen()) {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out after {WAIT:?} waiting for {what}; screen:\n{}",
                    self.text()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (at most [`WAIT`], then kills it) for `child` to exit: its exit status.
    pub fn wait_exit(&self, child: &mut Box<dyn Child + Send + Sync>) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = child.try_wait().expect("wait for toolgate") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "toolgate did not exit within {WAIT:?}; screen:\n{}",
                    self.text()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// True when `row` holds a choice button like `[y] ` (a key in brackets, then a space).
fn has_choice_button(row: &str) -> bool {
    let chars: Vec<char> = row.chars().collect();
    chars
        .windows(4)
        .any(|w| w[0] == '[' && w[1].is_ascii_alphanumeric() && w[2] == ']' && w[3] == ' ')
}

/// What the person types into the pty, and the pty's side of the terminal settings.
pub struct Keys {
    writer: Box<dyn Write + Send>,
    master: Box<dyn MasterPty + Send>,
}

/// The terminal's line settings as the program left them (termios local modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineModes {
    /// ICANON: lines are edited by the terminal (off in raw mode).
    pub canonical: bool,
    /// ECHO: typed keys are shown by the terminal (off in raw mode).
    pub echo: bool,
}

impl Keys {
    pub fn press(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// The pty's termios, read through the master (both ends share one line discipline).
    pub fn line_modes(&self) -> LineModes {
        let fd = self.master.as_raw_fd().expect("the pty master's fd");
        // SAFETY: termios is plain data; tcgetattr only writes into the struct we pass.
        let mut termios: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(fd, &mut termios) }, 0, "tcgetattr");
        LineModes {
            canonical: termios.c_lflag & libc::ICANON != 0,
            echo: termios.c_lflag & libc::ECHO != 0,
        }
    }

    /// Types a line, waits until `screen` shows it, and submits it.
    pub fn enter_line(&mut self, screen: &Screen, line: &str) {
        self.press(line.as_bytes());
        screen.wait_text(line);
        self.press(b"\r");
    }
}

/// The binary under test with its state and user config in folders of the test's own, and
/// no provider key from the test's environment.
pub fn toolgate(state: &Path, config: &Path) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.env("TOOLGATE_STATE_DIR", state);
    cmd.env("TOOLGATE_CONFIG_DIR", config);
    cmd.env_remove("ANTHROPIC_API_KEY");
    cmd.env_remove("OPENAI_API_KEY");
    cmd
}

/// [`toolgate`] as the console in `cwd` on the anthropic provider, pointed at the local
/// Messages API at `api_url` (`support::model_api`), with the provider's default model.
pub fn anthropic_console(state: &Path, config: &Path, cwd: &Path, api_url: &str) -> CommandBuilder {
    let mut cmd = toolgate(state, config);
    cmd.cwd(cwd);
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_API_KEY", "test-key");
    cmd.env("ANTHROPIC_BASE_URL", api_url);
    cmd.env_remove("MODEL_ID");
    cmd.args(["--provider", "anthropic"]);
    cmd
}

/// The console on the scripted model playing `steps` (a scenario of the scripted demo
/// model: it is stateless and works from each request it receives, so what it quotes of a
/// tool result is what the model was sent).
pub fn scripted_console(home: &Path, workspace: &Path, steps: serde_json::Value) -> CommandBuilder {
    let scenario = home.join("scenario.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "gate", "description": "for tests", "chunk_chars": 64,
            "chunk_delay_ms": 0, "steps": steps})
        .to_string(),
    )
    .expect("write the scenario");
    let mut cmd = toolgate(&home.join("state"), &home.join("config"));
    cmd.cwd(workspace);
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("NO_COLOR");
    cmd.env("TOOLGATE_SCENARIO", &scenario);
    cmd
}

/// Waits for the permission modal about `tool`, and for it to take keys.
pub fn wait_question(screen: &Screen, tool: &str) {
    screen.wait_for(&format!("the permission modal for {tool}"), |t| {
        t.contains("Permission required") && t.contains(tool)
    });
    screen.wait_modal_armed("the permission modal to take keys");
}

pub fn quit(
    screen: &Screen,
    keys: &mut Keys,
    child: &mut Box<dyn portable_pty::Child + Send + Sync>,
) {
    keys.press(b"\x04");
    let status = screen.wait_exit(child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// Starts `cmd` in a pty of `rows` × `cols`: the child, its screen and its keyboard.
pub fn spawn(
    cmd: CommandBuilder,
    rows: u16,
    cols: u16,
) -> (Box<dyn Child + Send + Sync>, Screen, Keys) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open pty");
    let child = pair.slave.spawn_command(cmd).expect("spawn toolgate");
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
    let raw = Arc::new(Mutex::new(Vec::new()));
    let mut reader = pair.master.try_clone_reader().expect("pty reader");
    let (sink, raw_sink) = (Arc::clone(&parser), Arc::clone(&raw));
    thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().expect("parser lock").process(&buf[..n]);
            raw_sink
                .lock()
                .expect("raw lock")
                .extend_from_slice(&buf[..n]);
        }
    });
    let keys = Keys {
        writer: pair.master.take_writer().expect("pty writer"),
        master: pair.master,
    };
    let screen = Screen {
        parser,
        row_per_line: false,
        raw,
    };
    (child, screen, keys)
}

/// A workspace (`ws`), a state folder and a user config folder in one temporary folder,
/// for console runs against a local Messages API.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["ws", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        Home { dir }
    }

    pub fn path(&self, sub: &str) -> std::path::PathBuf {
        self.dir.path().join(sub)
    }

    /// The console in `ws` on the anthropic provider, pointed at the API at `api_url`.
    pub fn console(&self, api_url: &str) -> CommandBuilder {
        anthropic_console(
            &self.path("state"),
            &self.path("config"),
            &self.path("ws"),
            api_url,
        )
    }
}
