//! The managed policy layer through the shipped binary (decision 0082): a managed file
//! named by `TOOLGATE_MANAGED_CONFIG` (the system file's stand-in: tests cannot write
//! /etc), headless runs against a local Messages API whose model calls the tools, and the
//! far side of every call checked where it lands: the deploy server's own record, a
//! marker file a blocked server would write, a file bash would write outside the
//! workspace.

use crate::support::{jsonl, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::deploy_record;
use crate::support::window_api::{Say, WindowApi};

/// Far above anything these runs send.
const LIMIT_BYTES: usize = 4_000_000;

/// A user config dir, a state dir, a workspace and a managed file, in one temp dir.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["ws/.toolgate", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn write(&self, sub: &str, text: &str) -> PathBuf {
        let path = self.path(sub);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn workspace(&self) -> PathBuf {
        self.path("ws")
    }

    /// `toolgate ARGS` in the workspace, with this home's folders and the managed file
    /// `managed.toml` when one was written.
    fn toolgate(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args)
            .current_dir(self.workspace())
            .env("TOOLGATE_STATE_DIR", self.path("state"))
            .env("TOOLGATE_CONFIG_DIR", self.path("config"))
            .env_remove("MODEL_ID");
        self.managed(cmd)
    }

    /// The managed file `managed.toml` for `cmd` when one was written, and nothing that
    /// could stand in for it or for the model.
    fn managed(&self, mut cmd: Command) -> Command {
        cmd.env_remove("TOOLGATE_SCENARIO")
            .env_remove(toolgate::settings::managed::MANAGED_CONFIG_VAR);
        let managed = self.path("managed.toml");
        if managed.exists() {
            cmd.env(toolgate::settings::managed::MANAGED_CONFIG_VAR, managed);
        }
        cmd
    }

    /// `toolgate -p go` (JSONL) on the anthropic provider pointed at `api`, not run yet.
    fn headless_command(&self, api: &WindowApi, extra: &[&str]) -> Command {
        let mut cmd = self.managed(crate::support::headless_run::on_model_api(
            &api.url,
            "anthropic",
            &self.path("state"),
            &self.path("config"),
            &self.workspace(),
        ));
        cmd.args(["-p", "go", "--output-format", "jsonl"])
            .args(extra);
        cmd
    }

    /// `toolgate -p go` (JSONL) on the anthropic provider pointed at `api`.
    fn headless(&self, api: &WindowApi, extra: &[&str]) -> Output {
        self.headless_command(api, extra)
            .output()
            .expect("run toolgate -p")
    }
}

/// A model that makes these tool calls, one per request, then says it is done.
fn model(calls: Vec<(&'static str, Value)>) -> WindowApi {
    let mut next = 0;
    WindowApi::start(LIMIT_BYTES, move |_| {
        next += 1;
        match calls.get(next - 1) {
            Some((name, input)) => Say::Tool {
                name: name.to_string(),
                input: input.clone(),
            },
            None => Say::Text("Done.".into()),
        }
    })
}

/// The text of the tool result the model received last in `body` (a Messages request).
fn last_tool_result(body: &Value) -> String {
    let messages = body["messages"].as_array().expect("messages");
    let content = &messages.last().expect("a message")["content"];
    let block = content
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_result"))
        .unwrap_or_else(|| panic!("no tool_result in {content}"));
    match &block["content"] {
        Value::String(text) => text.clone(),
        other => other
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The tool results the model received, in order (request i+1 carries call i's result).
fn tool_results(api: &WindowApi) -> Vec<String> {
    api.seen()
        .iter()
        .skip(1)
        .map(|seen| last_tool_result(&seen.body))
        .collect()
}

fn deploy_web() -> Vec<(&'static str, Value)> {
    vec![
        ("connect_mcp", json!({"name": "deploy"})),
        ("mcp__deploy__trigger", json!({"service": "web"})),
    ]
}

#[test]
fn a_managed_deny_beats_allow_rules_of_the_user_the_project_and_the_command_line() {
    let home = Home::new();
    let allow = "[permissions]\nallow = [\"mcp__deploy__trigger\"]\n";
    home.write("config/config.toml", allow);
    home.write("ws/.toolgate/config.toml", allow);
    let managed = home.write(
        "managed.toml",
        "[permissions]\ndeny = [\"mcp__deploy__trigger\"]\n",
    );
    let api = model(deploy_web());
    let out = home.headless(
        &api,
        &["--trust-project", "--allow", "mcp__deploy__trigger"],
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    // The deploy server never ran a deployment.
    deploy_record::assert_none(&home.workspace());
    let results = tool_results(&api);
    assert_eq!(results.len(), 2, "{results:?}");
    let refusal = &results[1];
    assert!(
        refusal.contains("denied by the managed policy")
            && refusal.contains(&managed.display().to_string()),
        "{refusal}"
    );
    // The audit record says the managed policy decided.
    let decided: Vec<Value> = jsonl(&out)
        .into_iter()
        .filter(|e| e["type"] == "permission_decided" && e["tool"] == "mcp__deploy__trigger")
        .collect();
    assert_eq!(decided.len(), 1, "{decided:?}");
    let record = serde_json::to_string(&decided[0]).unwrap();
    assert!(record.contains("\"source\":\"managed\""), "{record}");
    // `toolgate audit export` marks the decision managed; the session's chain holds.
    let export = home
        .toolgate(&["audit", "export", "--format", "jsonl"])
        .output()
        .unwrap();
    assert!(export.status.success(), "stderr: {}", stderr(&export));
    let rows = jsonl(&export);
    let row = rows
        .iter()
        .find(|r| r["tool"] == "mcp__deploy__trigger")
        .unwrap_or_else(|| panic!("no trigger row in {rows:?}"));
    assert_eq!(
        (&row["decision"], &row["managed"]),
        (&json!("deny"), &json!(true))
    );
    let verify = home.toolgate(&["audit", "verify"]).output().unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn status_shows_the_managed_file_and_what_it_overrides() {
    let home = Home::new();
    let user = home.write(
        "config/config.toml",
        "[permissions]\nallow = [\"mcp__deploy__trigger\"]\n[sandbox]\nmode = \"off\"\n",
    );
    let managed = home.write(
        "managed.toml",
        "[permissions]\ndeny = [\"mcp__deploy\"]\n[sandbox]\nmode = \"workspace-write\"\n",
    );
    let out = home.toolgate(&["status"]).output().unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = [
        format!("Managed policy: {}", managed.display()),
        "  deny mcp__deploy".to_string(),
        "  sandbox.mode at least \"workspace-write\"".to_string(),
        format!(
            "    allow mcp__deploy__trigger (user config {}): denied by managed rule mcp__deploy (managed policy {})",
            user.display(),
            managed.display()
        ),
        "    sandbox.mode = \"off\" of the user or project config is raised to \"workspace-write\""
            .to_string(),
    ];
    for line in expected {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
}

/// A stdio server whose command leaves `marker` behind the moment it runs.
fn marker_server(home: &Home, name: &str, marker: &Path) {
    let servers = json!({"mcpServers": {name: {"command": "sh",
        "args": ["-c", format!("touch '{}'", marker.display())]}}});
    home.write("config/mcp.json", &servers.to_string());
}

#[test]
fn a_denied_server_never_starts_and_the_model_is_told_why() {
    let home = Home::new();
    let marker = home.path("outsider-ran");
    marker_server(&home, "outsider", &marker);
    home.write("managed.toml", "[mcp]\ndenied_servers = [\"outsider\"]\n");
    let api = model(vec![
        ("connect_mcp", json!({"name": "outsider"})),
        ("connect_mcp", json!({"name": "docs"})),
    ]);
    let out = home.headless(&api, &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(!marker.exists(), "the denied server's command ran");
    let results = tool_results(&api);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("blocked by the managed policy: denied_servers pattern \"outsider\""),
        "{}",
        results[0]
    );
    assert!(
        !results[1].contains("blocked") && results[1].contains("docs"),
        "{}",
        results[1]
    );
}

#[test]
fn a_server_outside_allowed_servers_never_starts_and_a_listed_one_connects() {
    let home = Home::new();
    let marker = home.path("outsider-ran");
    marker_server(&home, "outsider", &marker);
    let managed = home.write("managed.toml", "[mcp]\nallowed_servers = [\"docs\"]\n");
    let out = home.toolgate(&["mcp", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !marker.exists(),
        "the unlisted server's command ran:\n{text}"
    );
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{text}"))
            .to_string()
    };
    assert!(line("docs").contains("ready"), "{text}");
    assert!(
        line("outsider").contains(&format!(
            "blocked by the managed policy: not in allowed_servers of {}",
            managed.display()
        )),
        "{text}"
    );
}

#[test]
fn managed_rules_only_ignores_other_allow_rules_and_applies_managed_ones() {
    // The user's allow rule and --allow are ignored: the trigger asks, headless denies it.
    let home = Home::new();
    home.write(
        "config/config.toml",
        "[permissions]\nallow = [\"mcp__deploy__trigger\"]\n",
    );
    home.write("managed.toml", "[permissions]\nmanaged_rules_only = true\n");
    let api = model(deploy_web());
    let out = home.headless(&api, &["--allow", "mcp__deploy__trigger"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    deploy_record::assert_none(&home.workspace());
    let results = tool_results(&api);
    assert!(results[1].contains("managed_rules_only"), "{}", results[1]);

    // A managed allow rule applies.
    let home = Home::new();
    home.write(
        "managed.toml",
        "[permissions]\nmanaged_rules_only = true\nallow = [\"mcp__deploy__trigger\"]\n",
    );
    let api = model(deploy_web());
    let out = home.headless(&api, &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    deploy_record::assert_one_of(&home.workspace(), "web");
}

/// A folder outside the workspace and outside bash's temp dir.
fn outside(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("managed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_managed_sandbox_floor_keeps_bash_in_the_workspace_whatever_the_user_says() {
    let out_dir = outside("floor");
    let tmp = outside("floor-tmp");
    let run = |managed: Option<&str>, escaped: &Path| {
        let home = Home::new();
        home.write("config/config.toml", "[sandbox]\nmode = \"off\"\n");
        if let Some(text) = managed {
            home.write("managed.toml", text);
        }
        let command = format!("touch '{}'", escaped.display());
        let api = model(vec![("bash", json!({ "command": command }))]);
        let out = home
            .headless_command(&api, &[])
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        assert!(out.status.success(), "stderr: {}", stderr(&out));
    };
    // Without a managed file, the user's mode = "off" lets bash write there …
    let control = out_dir.join("control");
    run(None, &control);
    assert!(
        control.exists(),
        "the control run did not write outside the workspace"
    );
    // … with the managed floor it does not.
    let escaped = out_dir.join("escaped");
    run(Some("[sandbox]\nmode = \"workspace-write\"\n"), &escaped);
    assert!(!escaped.exists(), "bash wrote outside the workspace");
    let _ = std::fs::remove_dir_all(&out_dir);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_malformed_managed_file_refuses_start_and_names_the_position() {
    let home = Home::new();
    let managed = home.write(
        "managed.toml",
        "[permissions]\ndeny = [\"mcp__deploy__trigger\"]\ndenny = [\"Bash\"]\n",
    );
    let out = home
        .toolgate(&["-p", "go", "--provider", "scripted"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = stderr(&out);
    assert!(err.contains("toolgate does not start"), "{err}");
    assert!(
        err.contains(&format!(
            "{}:3:9: unknown key permissions.denny",
            managed.display()
        )),
        "{err}"
    );
    // `toolgate status` names it too.
    let status = home.toolgate(&["status"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!(
            "error: {}:3:9: unknown key permissions.denny",
            managed.display()
        )),
        "{text}"
    );
    // A named managed file that is missing refuses too.
    std::fs::remove_file(&managed).unwrap();
    let out = home
        .toolgate(&["-p", "go", "--provider", "scripted"])
        .env(toolgate::settings::managed::MANAGED_CONFIG_VAR, &managed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("TOOLGATE_MANAGED_CONFIG"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn adding_a_denied_server_says_it_will_not_be_started() {
    let home = Home::new();
    home.write(
        "managed.toml",
        "[mcp]\ndenied_servers = [\"command:curl *\"]\n",
    );
    let out = home
        .toolgate(&["mcp", "add", "fetcher", "--", "curl", "https://example.com"])
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("note: server 'fetcher' is blocked by the managed policy: denied_servers pattern \"command:curl *\""),
        "{text}"
    );
}

/// In the console: `/connect` of a denied server says why and runs nothing, and
/// `/permissions` shows the managed policy and what it overrides.
#[test]
fn the_console_says_why_a_server_is_blocked_and_shows_the_managed_policy() {
    use crate::support::pty;
    let home = Home::new();
    let marker = home.path("outsider-ran");
    marker_server(&home, "outsider", &marker);
    home.write(
        "config/config.toml",
        "[permissions]\nallow = [\"mcp__deploy__trigger\"]\n",
    );
    let managed = home.write(
        "managed.toml",
        "[permissions]\ndeny = [\"mcp__deploy__trigger\"]\n[mcp]\ndenied_servers = [\"outsider\"]\n",
    );
    let mut cmd = pty::toolgate(&home.path("state"), &home.path("config"));
    cmd.cwd(home.workspace());
    cmd.env("TERM", "xterm-256color");
    cmd.env_remove("TOOLGATE_SCENARIO");
    cmd.env(toolgate::settings::managed::MANAGED_CONFIG_VAR, &managed);
    let (mut child, screen, mut keys) = pty::spawn(cmd, 40, 160);
    screen.wait_text("scripted demo");
    keys.press(b"/connect outsider\r");
    screen.wait_text("blocked by the managed policy: denied_servers pattern \"outsider\"");
    assert!(!marker.exists(), "the denied server's command ran");
    keys.press(b"/permissions\r");
    screen.wait_text(&format!("Managed policy: {}", managed.display()));
    screen.wait_text("allow mcp__deploy__trigger (user config");
    keys.press(b"\x1b");
    keys.press(b"\x04");
    let status = screen.wait_exit(&mut child);
    assert!(status.success(), "toolgate exited with {status:?}");
}

/// A managed hook runs whatever the other layers say: its block (exit 2) stops a call the
/// user allows on the command line, and nothing is deployed.
#[test]
fn a_managed_hook_blocks_a_call_the_user_allows() {
    let home = Home::new();
    home.write(
        "managed.toml",
        r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{ type = "command", command = "touch managed_hook_ran; echo 'change freeze, ask the release team' >&2; exit 2" }]
"#,
    );
    let api = model(deploy_web());
    let out = home.headless(&api, &["--allow", "mcp__deploy__trigger"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(home.workspace().join("managed_hook_ran").exists());
    let results = tool_results(&api);
    assert!(
        results
            .last()
            .is_some_and(|r| r.contains("change freeze, ask the release team")),
        "{results:?}"
    );
    deploy_record::assert_none(&home.workspace());
}
