//! The OS sandbox with real confined processes: the `bash` built-in as the agent runs it, a
//! stdio MCP server under a workspace-write profile, toolgate's own servers, and the
//! fail-closed path of a machine without the sandbox. Every test looks at what a user would
//! see: the tool's output, and whether a file exists or a connection arrived.
//!
//! A test binary of its own (not a module of tests/it): every test sets process-wide
//! environment variables (TMPDIR, a provider key, toolgate's state dir) that would reach
//! the other tests running as threads of the same process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

/// Shared with tests/it (its `support::fixture_server`); these tests use only `fixture`.
#[allow(dead_code)]
#[path = "../it/support/fixture_server.rs"]
mod fixture_server;

mod kernel_modes;
mod proxy;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::builtin::{self, BuiltinOutput};
use toolgate::mcp::HubOptions;
use toolgate::sandbox::{FORCE_UNAVAILABLE_ENV, Sandbox, SandboxStatus};
use toolgate::settings::{NetworkAccess, SandboxMode, SandboxSettings};

const PROVIDER_KEY: &str = "sk-ant-test-do-not-leak";

/// A private folder beside the tests' own temp dir (bash may write anywhere in the temp
/// dir): the places "outside the workspace", the fake home and toolgate's state dir live
/// here.
fn base() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sandbox-{}", std::process::id()))
}

/// Process-wide environment, the same values for every test: a provider key and a service
/// token that must not reach tools, and a state dir of our own. The library under test
/// reads them from this process (bash gets its environment from toolgate's own), so they
/// cannot be passed per child here; they are set exactly once, by the first test, while
/// every other test waits in the `Once` (each calls this first, before it reads the
/// environment or starts a process), so no test runs beside a `set_var`.
fn environment() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        std::fs::create_dir_all(base().join("state")).unwrap();
        std::fs::create_dir_all(base().join("tmp")).unwrap();
        // SAFETY: this runs once, while every other test is blocked above (see the doc).
        unsafe {
            // The temp dir is writable for sandboxed commands. A checkout under /tmp would
            // put the "outside" folders, the fake homes and the state dir inside it, so the
            // tests get a temp dir of their own beside them instead.
            std::env::set_var("TMPDIR", base().join("tmp"));
            std::env::set_var("ANTHROPIC_API_KEY", PROVIDER_KEY);
            std::env::set_var("MY_SERVICE_TOKEN", "svc-token-value");
            std::env::set_var("TOOLGATE_STATE_DIR", base().join("state"));
            std::env::set_var("TOOLGATE_EXE", env!("CARGO_BIN_EXE_toolgate"));
        }
    });
}

/// A fresh folder under [`base`] (not writable for sandboxed commands).
fn outside(name: &str) -> PathBuf {
    let dir = base().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fake_home(name: &str) -> PathBuf {
    let home = outside(name);
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL").unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".aws/credentials"), "aws_secret=AWS-SECRET").unwrap();
    std::fs::write(home.join(".netrc"), "machine x password NETRC-SECRET").unwrap();
    std::fs::write(home.join("notes.txt"), "ordinary notes").unwrap();
    home
}

fn sandbox_with(settings: SandboxSettings) -> Sandbox {
    Sandbox::new(settings)
}

async fn bash(sandbox: &Sandbox, workspace: &Path, command: &str) -> BuiltinOutput {
    builtin::run_with(
        toolgate::builtin::tools::bash::ID,
        &json!({ "command": command, "timeout_ms": 20_000 }),
        workspace,
        sandbox,
        CancellationToken::new(),
    )
    .await
}

fn assert_blocked(out: &BuiltinOutput, what: &str) {
    assert!(out.is_error, "{what} should fail:\n{}", out.text);
    assert!(
        out.text
            .contains("[sandbox: this command ran in toolgate's sandbox"),
        "{what}: the result should say the sandbox may have blocked it:\n{}",
        out.text
    );
}

#[tokio::test]
async fn writes_outside_the_workspace_fail_and_leave_no_file() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let out_dir = outside("writes");
    std::fs::write(out_dir.join("existing.txt"), "keep me").unwrap();
    let sandbox = Sandbox::default();
    let o = out_dir.display();
    let attempts = [
        ("redirect", format!("echo x > {o}/redirect")),
        (
            "python",
            format!("python3 -c \"open('{o}/python', 'w').write('x')\""),
        ),
        ("cp", format!("echo x > in.txt && cp in.txt {o}/cp")),
        ("subshell cd", format!("(cd {o} && touch subshell)")),
        ("tee", format!("echo x | tee {o}/tee")),
        ("mkdir", format!("mkdir {o}/mkdir")),
    ];
    for (what, command) in &attempts {
        let out = bash(&sandbox, ws.path(), command).await;
        assert_blocked(&out, what);
        assert!(
            out.text.contains("Permission denied"),
            "{what}: {}",
            out.text
        );
    }
    let left: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["existing.txt"], "nothing new outside the workspace");

    // Changing what is already there fails too: truncation, removal, renaming.
    for (what, command) in [
        ("truncate", format!(": > {o}/existing.txt")),
        ("truncate(1)", format!("truncate -s 0 {o}/existing.txt")),
        ("rm", format!("rm -f {o}/existing.txt")),
        ("mv", format!("mv {o}/existing.txt {o}/moved.txt")),
    ] {
        let out = bash(&sandbox, ws.path(), &command).await;
        assert!(out.is_error, "{what} should fail:\n{}", out.text);
    }
    assert_eq!(
        std::fs::read_to_string(out_dir.join("existing.txt")).unwrap(),
        "keep me"
    );
    // Reading outside the workspace is allowed.
    let out = bash(&sandbox, ws.path(), &format!("cat {o}/existing.txt")).await;
    assert_eq!(out, BuiltinOutput::ok("keep me\nexit status: 0"));
}

#[tokio::test]
async fn writes_in_the_workspace_and_the_temp_dir_work() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::default();
    let tmp_file = std::env::temp_dir().join(format!("toolgate-sandbox-{}", std::process::id()));
    let command = format!(
        "set -e; echo one > a.txt; mkdir -p sub/deep; mv a.txt sub/deep/b.txt; \
         python3 -c \"open('py.txt', 'w').write('py')\"; : > empty.txt; rm empty.txt; \
         echo tmp > {t}; cat {t}; rm {t}; t2=$(mktemp); echo m > \"$t2\"; rm \"$t2\"; \
         echo quiet > /dev/null; echo shown > /dev/stdout; ln -s sub/deep/b.txt link; cat link",
        t = tmp_file.display()
    );
    let out = bash(&sandbox, ws.path(), &command).await;
    assert_eq!(out, BuiltinOutput::ok("tmp\nshown\none\nexit status: 0"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/deep/b.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("py.txt")).unwrap(),
        "py"
    );
    assert!(!tmp_file.exists());
}

#[tokio::test]
async fn read_only_mode_refuses_writes_even_in_the_workspace() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "notes").unwrap();
    let sandbox = sandbox_with(SandboxSettings {
        mode: SandboxMode::ReadOnly,
        ..SandboxSettings::default()
    });
    let out = bash(&sandbox, ws.path(), "cat notes.txt && echo x > new.txt").await;
    assert_blocked(&out, "write in read-only mode");
    assert!(out.text.starts_with("notes"), "{}", out.text);
    assert!(
        out.text
            .contains("read-only, network only through toolgate's proxy"),
        "{}",
        out.text
    );
    assert!(!ws.path().join("new.txt").exists());
}

#[tokio::test]
async fn credential_folders_and_toolgate_state_are_unreadable() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let home = fake_home("home-read");
    let private = outside("private");
    std::fs::write(private.join("plan.txt"), "PRIVATE-PLAN").unwrap();
    std::fs::write(base().join("state/trusted.json"), "STATE-SECRET").unwrap();
    let sandbox = sandbox_with(SandboxSettings {
        home: Some(home.clone()),
        deny_read: vec![private.clone()],
        ..SandboxSettings::default()
    });
    let h = home.display();
    for (what, command) in [
        ("ssh key", format!("cat {h}/.ssh/id_ed25519")),
        ("aws", format!("cat {h}/.aws/credentials")),
        ("netrc", format!("cat {h}/.netrc")),
        (
            "python",
            format!("python3 -c \"print(open('{h}/.ssh/id_ed25519').read())\""),
        ),
        ("grep -r", format!("grep -r SECRET {h}/.aws")),
        ("deny_read", format!("cat {}/plan.txt", private.display())),
        (
            "state dir",
            format!("cat {}/state/trusted.json", base().display()),
        ),
        (
            "via a symlink",
            format!("ln -s {h}/.ssh key && cat key/id_ed25519"),
        ),
    ] {
        let out = bash(&sandbox, ws.path(), &command).await;
        assert_blocked(&out, what);
        for secret in [
            "PRIVATE-KEY",
            "AWS-SECRET",
            "NETRC-SECRET",
            "PRIVATE-PLAN",
            "STATE-SECRET",
        ] {
            assert!(
                !out.text.contains(secret),
                "{what} leaked {secret}:\n{}",
                out.text
            );
        }
    }
    // Everything else in the home directory reads as usual, and it can be listed.
    let out = bash(
        &sandbox,
        ws.path(),
        &format!("cat {h}/notes.txt && echo && ls -a {h}"),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.starts_with("ordinary notes\n"), "{}", out.text);
    assert!(out.text.contains("notes.txt"), "{}", out.text);
}

#[tokio::test]
async fn network_connections_are_refused_unless_allowed() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let python = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\""
    );
    // Offline (the proxied default is tests/sandbox/proxy.rs's).
    let sandbox = sandbox_with(SandboxSettings {
        network: NetworkAccess::None,
        ..SandboxSettings::default()
    });
    for (what, command) in [
        ("python", python.clone()),
        (
            "bash /dev/tcp",
            format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        ),
        (
            "udp",
            "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\"".into(),
        ),
    ] {
        let out = bash(&sandbox, ws.path(), &command).await;
        assert_blocked(&out, what);
        assert!(!out.text.contains("connected"), "{}", out.text);
    }
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "no connection may have reached the listener"
    );
    // Local IPC over UNIX sockets keeps working.
    let out = bash(
        &sandbox,
        ws.path(),
        "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\"",
    )
    .await;
    assert_eq!(out, BuiltinOutput::ok("ok\nexit status: 0"));

    // With network = true the same command connects: the refusal above was the sandbox's.
    let online = sandbox_with(SandboxSettings {
        network: NetworkAccess::Full,
        ..SandboxSettings::default()
    });
    let out = bash(&online, ws.path(), &python).await;
    assert_eq!(out, BuiltinOutput::ok("connected\nexit status: 0"));
    listener.set_nonblocking(false).unwrap();
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn tools_get_no_secrets_from_toolgates_environment() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let out = bash(&Sandbox::default(), ws.path(), "env").await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("PATH="), "{}", out.text);
    assert!(!out.text.contains("ANTHROPIC_API_KEY"), "{}", out.text);
    assert!(!out.text.contains(PROVIDER_KEY), "{}", out.text);
    assert!(!out.text.contains("MY_SERVICE_TOKEN"), "{}", out.text);

    // env_passthrough lets a named variable through, never a provider key.
    let passing = sandbox_with(SandboxSettings {
        env_passthrough: vec!["MY_SERVICE_TOKEN".into(), "ANTHROPIC_API_KEY".into()],
        ..SandboxSettings::default()
    });
    let out = bash(&passing, ws.path(), "env").await;
    assert!(
        out.text.contains("MY_SERVICE_TOKEN=svc-token-value"),
        "{}",
        out.text
    );
    assert!(!out.text.contains(PROVIDER_KEY), "{}", out.text);

    // Nor can a command read them from toolgate's own process.
    let out = bash(
        &Sandbox::default(),
        ws.path(),
        "tr '\\0' '\\n' < /proc/$PPID/environ",
    )
    .await;
    assert_blocked(&out, "reading the parent's environment");
    assert!(!out.text.contains(PROVIDER_KEY), "{}", out.text);
}

#[tokio::test]
async fn a_workspace_write_mcp_server_cannot_write_outside_or_see_secrets() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let out_dir = outside("server-writes");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut config = fixture_server::fixture(
        "boxed",
        &[
            (
                "FIXTURE_TOOLS",
                r#"["write_file", "get_env", "connect_tcp"]"#,
            ),
            ("FIXTURE_OWN_TOKEN", "configured-for-this-server"),
        ],
    );
    config.sandbox.mode = Some(SandboxMode::WorkspaceWrite);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let hub = toolgate::mcp::McpHub::with_options(
        vec![config],
        tx,
        HubOptions {
            workspace: ws.path().to_path_buf(),
            builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
            ..HubOptions::default()
        },
    );
    hub.connect("boxed").await.unwrap();
    let call = |tool: &str, args: serde_json::Value| {
        let hub = hub.clone();
        let tool = tool.to_string();
        async move {
            hub.call("boxed", &tool, args, None, CancellationToken::new())
                .await
                .unwrap()
        }
    };
    let outside_file = out_dir.join("from-server.txt");
    let out = call(
        "write_file",
        json!({"path": outside_file.display().to_string(), "content": "x"}),
    )
    .await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("Permission denied"), "{}", out.text);
    assert!(!outside_file.exists());

    let inside = ws.path().join("from-server.txt");
    let out = call(
        "write_file",
        json!({"path": inside.display().to_string(), "content": "x"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "x");

    let out = call("get_env", json!({})).await;
    assert!(!out.text.contains(PROVIDER_KEY), "{}", out.text);
    assert!(!out.text.contains("MY_SERVICE_TOKEN"), "{}", out.text);
    // The server's own `env` entries pass as configured, secret-looking names included.
    assert!(
        out.text
            .contains("FIXTURE_OWN_TOKEN=configured-for-this-server"),
        "{}",
        out.text
    );

    let out = call("connect_tcp", json!({"port": port})).await;
    assert!(out.is_error, "{}", out.text);
    assert!(out.text.contains("Permission denied"), "{}", out.text);
    hub.shutdown().await;
}

#[tokio::test]
async fn toolgates_own_servers_run_confined() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    // A deploy step that writes into the workspace: deploy may only write `.toolgate/`.
    std::fs::create_dir(ws.path().join(".toolgate")).unwrap();
    std::fs::write(
        ws.path().join(".toolgate/deploy.toml"),
        "[services.site]\ndescription = \"test\"\nsteps = [\"echo ok > .toolgate/marker\", \"echo x > escaped.txt\"]\n",
    )
    .unwrap();
    let loaded = toolgate::settings::load_servers(&toolgate::settings::LoadOptions {
        workspace: ws.path().to_path_buf(),
        ..Default::default()
    });
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let hub = toolgate::mcp::McpHub::with_options(
        loaded.servers,
        tx,
        HubOptions {
            workspace: ws.path().to_path_buf(),
            builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
            ..HubOptions::default()
        },
    );
    hub.connect("deploy").await.unwrap();
    let out = hub
        .call(
            "deploy",
            "trigger",
            json!({"service": "site"}),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("FAILED deployment of site v1"),
        "{}",
        out.text
    );
    assert!(out.text.contains("Permission denied"), "{}", out.text);
    assert!(!ws.path().join("escaped.txt").exists());
    // Its own records and the first step's file are there: `.toolgate/` is writable.
    assert!(ws.path().join(".toolgate/marker").is_file());
    assert!(ws.path().join(".toolgate/deployments.json").is_file());
    assert!(ws.path().join(".toolgate/deploy-calls.jsonl").is_file());

    // docs runs read-only and offline: no new privileges, a seccomp filter.
    hub.connect("docs").await.unwrap();
    let pids = Command::new("pgrep")
        .args(["-P", &std::process::id().to_string(), "-f", "serve docs"])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&pids.stdout).into_owned();
    let pid = pids.lines().last().unwrap_or_default();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(status.contains("NoNewPrivs:\t1"), "docs ({pid}):\n{status}");
    assert!(status.contains("Seccomp:\t2"), "docs ({pid}):\n{status}");
    assert_eq!(
        hub.sandbox_profile("docs").map(|p| p.describe()),
        Some("read-only, no network".to_string())
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn an_unavailable_sandbox_refuses_instead_of_running_unconfined() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::with_status(
        SandboxSettings::default(),
        SandboxStatus::unavailable(format!("forced by {FORCE_UNAVAILABLE_ENV}=1")),
    );
    let out = bash(&sandbox, ws.path(), "touch ran.txt").await;
    assert_eq!(
        out,
        BuiltinOutput::error(
            "bash: the command was not run: the sandbox is unavailable: forced by TOOLGATE_SANDBOX_FORCE_UNAVAILABLE=1"
        )
    );
    assert!(!ws.path().join("ran.txt").exists());

    // The real binary, switched by the environment variable: `toolgate status` says so,
    // and toolgate's own servers (always confined) refuse to start.
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(ws.path())
            .env(FORCE_UNAVAILABLE_ENV, "1")
            .env("TOOLGATE_CONFIG_DIR", base().join("no-config"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, status) = run(&["status"]);
    assert_eq!(code, Some(0));
    assert!(
        status.starts_with(
            "Sandbox: unavailable: forced by TOOLGATE_SANDBOX_FORCE_UNAVAILABLE=1\n  bash: workspace-write"
        ),
        "{status}"
    );
    assert!(
        status.contains("\n  bash in plan mode: read-only, no network — cannot be enforced, so bash is refused in plan mode: forced by TOOLGATE_SANDBOX_FORCE_UNAVAILABLE=1\n"),
        "{status}"
    );
    let (code, out) = run(&["mcp", "call", "fs", "list_dir", "{}"]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("cannot start 'toolgate serve fs .': the sandbox is unavailable: forced by TOOLGATE_SANDBOX_FORCE_UNAVAILABLE=1"),
        "{out}"
    );
}

/// The real binary with a provider key in its own environment, and a project server under
/// a workspace-write profile: the server sees neither the key in its environment nor
/// toolgate's through /proc.
#[test]
fn a_sandboxed_server_cannot_read_toolgates_key_through_proc() {
    environment();
    let ws = tempfile::tempdir().unwrap();
    let script = fixture_server::fixture_file("fixture_server.py");
    let config = ws.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"boxed": {
            "command": "python3",
            "args": [script.display().to_string()],
            "env": {"FIXTURE_TOOLS": "[\"parent_environ\", \"get_env\"]"},
            "sandbox": "workspace-write"
        }}})
        .to_string(),
    )
    .unwrap();
    let call = |tool: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["mcp", "call", "boxed", tool, "{}", "--mcp-config"])
            .arg(&config)
            .current_dir(ws.path())
            .env("ANTHROPIC_API_KEY", PROVIDER_KEY)
            .env("TOOLGATE_CONFIG_DIR", base().join("no-config"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = call("parent_environ");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("cannot read the parent's environment: [Errno 13] Permission denied"),
        "{out}"
    );
    assert!(!out.contains(PROVIDER_KEY), "{out}");
    let (code, out) = call("get_env");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("FIXTURE_TOOLS="), "{out}");
    assert!(!out.contains(PROVIDER_KEY), "{out}");
}
