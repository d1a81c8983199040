//! Every process toolgate starts dies with it (issue 23, item 2): a real MCP server started
//! through `sh -c "python3 server.py; …"` (so the server is toolgate's grandchild) and a
//! `bash` command's background sleeper are gone after the real binary exits normally, after
//! SIGTERM and after kill -9.

use crate::support::fixture_server::{fixture_file, hub_with, stdio_server};
use crate::support::process::{alive, gone_within, parent_of};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Hang guard only: how long a process gets to appear or to go.
const WAIT: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug)]
enum End {
    /// The run finishes and toolgate exits by itself.
    Normal,
    Signal(libc::c_int),
}

struct Case {
    home: tempfile::TempDir,
    workspace: PathBuf,
}

impl Case {
    fn new() -> Case {
        let home = tempfile::tempdir().unwrap();
        let workspace = home.path().join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(home.path().join("config")).unwrap();
        Case { home, workspace }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `toolgate -p PROMPT` on the scripted model playing `scenario`.
    fn start(&self, prompt: &str, scenario: &Path, allow: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["-p", prompt, "--provider", "scripted"])
            .args(allow.iter().flat_map(|rule| ["--allow", rule]))
            .current_dir(&self.workspace)
            .env("TOOLGATE_STATE_DIR", self.home.path().join("state"))
            .env("TOOLGATE_CONFIG_DIR", self.home.path().join("config"))
            .env("TOOLGATE_SCENARIO", scenario)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// The pid a process wrote into `file`, once it has.
fn pid_in(file: &Path, toolgate: &mut Child) -> u32 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        if let Some(status) = toolgate.try_wait().unwrap() {
            let out = toolgate.wait_with_output_text();
            panic!(
                "toolgate exited ({status}) before {} appeared:\n{out}",
                file.display()
            );
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            file.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

trait OutputText {
    fn wait_with_output_text(&mut self) -> String;
}

impl OutputText for Child {
    fn wait_with_output_text(&mut self) -> String {
        use std::io::Read;
        let mut text = String::new();
        if let Some(out) = self.stdout.as_mut() {
            let _ = out.read_to_string(&mut text);
        }
        if let Some(err) = self.stderr.as_mut() {
            let _ = err.read_to_string(&mut text);
        }
        text
    }
}

/// Ends toolgate the way `end` says and waits for it to be gone.
fn end_toolgate(toolgate: &mut Child, end: End) {
    if let End::Signal(signal) = end {
        // SAFETY: a plain syscall on the pid of a child we have not reaped.
        unsafe { libc::kill(toolgate.id() as libc::pid_t, signal) };
    }
    let deadline = Instant::now() + WAIT;
    while toolgate.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = toolgate.kill();
            panic!("toolgate did not end ({end:?})");
        }
        thread::sleep(Duration::from_millis(20));
    }
    if let End::Normal = end {
        let status = toolgate.wait().unwrap();
        let out = toolgate.wait_with_output_text();
        assert!(status.success(), "{status}\n{out}");
    }
}

/// A server behind `sh -c` that does not exit when its stdin closes (it has work of its
/// own): connected, then called (`hang` keeps the call in flight while toolgate is
/// signalled).
fn server_behind_a_wrapper(end: End) {
    let case = Case::new();
    let pidfile = case.workspace.join("server.pid");
    let script = fixture_file("fixture_server.py");
    let wrapper = format!(
        "python3 '{}'; echo 'the server ended' >&2",
        script.display()
    );
    std::fs::write(
        case.home.path().join("config/mcp.json"),
        serde_json::json!({"mcpServers": {"fx": {
            "command": "sh", "args": ["-c", wrapper],
            "env": {"FIXTURE_PIDFILE": pidfile, "FIXTURE_LINGER": "1"}
        }}})
        .to_string(),
    )
    .unwrap();
    let (tool, input) = match end {
        End::Normal => ("mcp__fx__echo", serde_json::json!({"text": "hi"})),
        End::Signal(_) => ("mcp__fx__hang", serde_json::json!({})),
    };
    let scenario = case.write(
        "scenario.json",
        &serde_json::json!({"name": "server", "description": "connect fx, call it", "steps": [
            {"id": "connect", "say": "Connecting.",
             "tools": [{"name": "connect_mcp", "input": {"name": "fx"}}]},
            {"id": "call", "after": "connect", "on": "ok", "say": "Calling.",
             "tools": [{"name": tool, "input": input}]},
            {"id": "done", "after": "call", "say": "Done."}
        ]})
        .to_string(),
    );

    let mut toolgate = case.start("go", &scenario, &["mcp__fx"]);
    let server = pid_in(&pidfile, &mut toolgate);
    if let End::Signal(_) = end {
        let wrapper = parent_of(server).expect("the server's parent");
        assert_ne!(wrapper, toolgate.id(), "the server is a grandchild");
        assert_eq!(
            parent_of(wrapper),
            Some(toolgate.id()),
            "behind the sh wrapper"
        );
    }
    end_toolgate(&mut toolgate, end);
    assert!(
        gone_within(server, WAIT),
        "the server (pid {server}) outlived toolgate ({end:?}); parent now {:?}",
        parent_of(server)
    );
}

#[test]
fn server_behind_sh_is_gone_after_a_normal_exit() {
    server_behind_a_wrapper(End::Normal);
}

#[test]
fn server_behind_sh_is_gone_after_sigterm() {
    server_behind_a_wrapper(End::Signal(libc::SIGTERM));
}

#[test]
fn server_behind_sh_is_gone_after_kill_9() {
    server_behind_a_wrapper(End::Signal(libc::SIGKILL));
}

/// A bash command (sandboxed, so it runs without a rule) that leaves a sleeper in the
/// background (and, when toolgate is to be signalled, waits for it so the command is still
/// running then).
fn background_sleeper(end: End) {
    let case = Case::new();
    let command = match end {
        End::Normal => "sleep 300 & echo $! > sleeper.pid",
        End::Signal(_) => "sleep 300 & echo $! > sleeper.pid; wait",
    };
    let mut toolgate = case.start(command, &fixture_file("shell_scenario.json"), &[]);
    let sleeper = pid_in(&case.workspace.join("sleeper.pid"), &mut toolgate);
    end_toolgate(&mut toolgate, end);
    assert!(
        gone_within(sleeper, WAIT),
        "the sleeper (pid {sleeper}) outlived toolgate ({end:?}); alive: {}",
        alive(sleeper)
    );
}

#[test]
fn bash_background_sleeper_is_gone_after_a_normal_exit() {
    background_sleeper(End::Normal);
}

#[test]
fn bash_background_sleeper_is_gone_after_sigterm() {
    background_sleeper(End::Signal(libc::SIGTERM));
}

#[test]
fn bash_background_sleeper_is_gone_after_kill_9() {
    background_sleeper(End::Signal(libc::SIGKILL));
}

/// A disconnect, with toolgate still running (so the reaper has no part in it), stops the
/// wrapper's whole group: the lingering server behind `sh -c` gets SIGTERM, not an orphan's
/// life.
#[tokio::test]
async fn disconnect_stops_the_server_behind_sh_while_toolgate_runs() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    let wrapper = format!(
        "python3 '{}'; echo 'the server ended' >&2",
        fixture_file("fixture_server.py").display()
    );
    let (hub, _events) = hub_with(vec![stdio_server(
        "wrapped",
        "sh",
        vec!["-c".into(), wrapper],
        &[
            ("FIXTURE_PIDFILE", pidfile.to_str().unwrap()),
            ("FIXTURE_LINGER", "1"),
        ],
        30_000,
    )]);
    tokio::time::timeout(WAIT, hub.connect("wrapped"))
        .await
        .expect("connect in time")
        .unwrap();
    let server: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(parent_of(server), Some(std::process::id()), "a grandchild");
    tokio::time::timeout(WAIT, hub.disconnect("wrapped"))
        .await
        .expect("disconnect in time")
        .unwrap();
    assert!(
        gone_within(server, WAIT),
        "the server (pid {server}) outlived its disconnect; parent now {:?}",
        parent_of(server)
    );
}
