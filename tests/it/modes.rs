//! Permission modes from the outside: the shipped binary run headless (`-p`) against a
//! local model server speaking the Messages API, with the proof where each call lands — the
//! workspace on disk, the tool results the model server received, a fixture server's own
//! record of the calls it got.

use crate::support::jsonl;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::fixture_server::fixture_file;
use crate::support::window_api::{Say, WindowApi};

/// A model that plays `script` one answer per request, then says "done".
fn model(script: Vec<Say>) -> WindowApi {
    let mut script = script.into_iter();
    WindowApi::start(10 << 20, move |_| {
        script.next().unwrap_or_else(|| Say::Text("done".into()))
    })
}

fn tool(name: &str, input: Value) -> Say {
    Say::Tool {
        name: name.into(),
        input,
    }
}

/// `toolgate -p go --output-format jsonl` in `ws` with `args`.
fn run(home: &Path, ws: &Path, api: &WindowApi, args: &[&str]) -> Output {
    headless(home, ws, api, args)
        .output()
        .expect("run toolgate")
}

/// A headless run against the local model API, with a fresh state and config folder.
fn headless(home: &Path, ws: &Path, api: &WindowApi, args: &[&str]) -> Command {
    let mut command = crate::support::headless_run::on_model_api(
        &api.url,
        "anthropic",
        &home.join("state"),
        &home.join("config"),
        ws,
    );
    command
        .args(["-p", "go", "--output-format", "jsonl"])
        .args(args)
        .env("TMPDIR", home);
    command
}

/// An mcp.json with the fixture server `liar` (a destructive `clean_cache` that claims to be
/// read-only), and the file it records every call it receives in.
fn liar_server(home: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let record = home.join("calls.jsonl");
    let config = home.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"liar": {"command": "python3",
            "args": [fixture_file("lying_server.py")],
            "env": {"FIXTURE_RECORD": record, "FIXTURE_TARGET": home.join("cache.db")}}}})
        .to_string(),
    )
    .unwrap();
    (config, record)
}

#[test]
fn plan_mode_refuses_writes_and_writing_bash_tells_the_model_and_still_reads() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "the plan's input").unwrap();
    let api = model(vec![
        tool("write_file", json!({"path": "new.txt", "content": "x"})),
        tool("bash", json!({"command": "echo hi > made.txt"})),
        tool("read_file", json!({"path": "notes.txt"})),
        tool("exit_plan_mode", json!({"plan": "1. write new.txt"})),
    ]);
    let out = run(home.path(), ws.path(), &api, &["--permission-mode", "plan"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !ws.path().join("new.txt").exists(),
        "write_file ran in plan mode"
    );
    assert!(
        !ws.path().join("made.txt").exists(),
        "bash wrote in plan mode"
    );
    let results = api.tool_results();
    assert_eq!(results.len(), 4, "{results:?}");
    for refused in &results[..2] {
        assert!(
            refused.contains("plan mode") && refused.contains("exit_plan_mode"),
            "{refused}"
        );
    }
    assert!(results[2].contains("the plan's input"), "{}", results[2]);
    // Nobody can approve the plan headless: the run stays in plan mode and says so.
    assert!(results[3].contains("stays in plan mode"), "{}", results[3]);
    let offered = |request: &Value| {
        request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["name"] == "exit_plan_mode")
    };
    assert!(api.seen().iter().all(|s| offered(&s.body)));
    // The JSONL output says the run was in plan mode, and the refusals were the mode's.
    let lines = jsonl(&out);
    assert!(
        lines.iter().any(|l| l["type"] == "permission_mode"
            && l["mode"] == "plan"
            && l["cause"] == "start"),
        "{lines:?}"
    );
    let by_mode = lines
        .iter()
        .filter(|l| l["type"] == "permission_decided" && l["decider"]["by"] == "mode")
        .count();
    assert_eq!(by_mode, 2, "{lines:?}");
}

#[test]
fn ask_mode_denies_an_edit_unless_an_allow_rule_covers_it() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let write = || tool("write_file", json!({"path": "a.txt", "content": "hello"}));
    let api = model(vec![write()]);
    let out = run(home.path(), ws.path(), &api, &["--permission-mode", "ask"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !ws.path().join("a.txt").exists(),
        "ask mode wrote without asking"
    );
    // exit_plan_mode is offered only in plan mode.
    let tools = &api.seen()[0].body["tools"];
    assert!(!tools.to_string().contains("exit_plan_mode"), "{tools}");
    let results = api.tool_results();
    assert!(
        results[0].contains("Permission denied") && results[0].contains("--allow"),
        "{results:?}"
    );
    // The same edit in default mode runs without asking: ask mode made the difference.
    let api = model(vec![write()]);
    let allowed = ["--permission-mode", "ask", "--allow", "write_file"];
    let out = run(home.path(), ws.path(), &api, &allowed);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "hello"
    );
}

#[test]
fn auto_mode_runs_an_unlisted_mcp_tool_that_default_mode_refuses() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (config, record) = liar_server(home.path());
    let script = || {
        vec![
            tool("connect_mcp", json!({"name": "liar"})),
            tool("mcp__liar__clean_cache", json!({})),
        ]
    };
    let config_arg = config.to_str().unwrap();
    let calls = || {
        std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("clean_cache"))
            .count()
    };
    let api = model(script());
    let out = run(home.path(), ws.path(), &api, &["--mcp-config", config_arg]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(calls(), 0, "default mode let an unlisted MCP tool run");
    let api = model(script());
    let auto = ["--mcp-config", config_arg, "--permission-mode", "auto"];
    let out = run(home.path(), ws.path(), &api, &auto);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(calls(), 1, "auto mode did not run the tool: {out:?}");
}

#[test]
fn default_mode_in_config_toml_applies_and_a_bad_one_stops_the_start() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        "[permissions]\ndefault_mode = \"plan\"\n",
    )
    .unwrap();
    let api = model(vec![tool(
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
    )]);
    let out = run(home.path(), ws.path(), &api, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(!ws.path().join("a.txt").exists());
    assert!(api.tool_results()[0].contains("plan mode"));
    std::fs::write(
        config_dir.join("config.toml"),
        "[permissions]\ndefault_mode = \"yolo\"\n",
    )
    .unwrap();
    let out = run(home.path(), ws.path(), &api, &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("default_mode"), "{stderr}");
}

#[test]
fn a_resumed_session_goes_back_to_its_mode_unless_the_flag_says_another() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let api = model(vec![]);
    let out = run(home.path(), ws.path(), &api, &["--permission-mode", "plan"]);
    assert!(out.status.success(), "{out:?}");
    let write = || tool("write_file", json!({"path": "a.txt", "content": "x"}));
    let api = model(vec![write()]);
    let out = run(home.path(), ws.path(), &api, &["--continue"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !ws.path().join("a.txt").exists(),
        "the resumed run left plan mode"
    );
    assert!(
        jsonl(&out)
            .iter()
            .any(|l| l["type"] == "permission_mode" && l["cause"] == "resume"),
        "{out:?}"
    );
    let api = model(vec![write()]);
    let flagged = ["--continue", "--permission-mode", "default"];
    let out = run(home.path(), ws.path(), &api, &flagged);
    assert!(out.status.success(), "{out:?}");
    assert!(
        ws.path().join("a.txt").exists(),
        "the flag did not win: {out:?}"
    );
}

#[test]
fn a_managed_policy_that_disables_auto_mode_refuses_it_and_the_run_stays_in_default() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let managed = home.path().join("managed.toml");
    std::fs::write(&managed, "[permissions]\ndisable_auto_mode = true\n").unwrap();
    std::fs::write(ws.path().join("x.txt"), "keep").unwrap();
    let (config, record) = liar_server(home.path());
    // An unlisted MCP tool (what auto mode would run) and a destructive command.
    let api = model(vec![
        tool("connect_mcp", json!({"name": "liar"})),
        tool("mcp__liar__clean_cache", json!({})),
        tool("bash", json!({"command": "rm -f x.txt"})),
    ]);
    let args = [
        "--mcp-config",
        config.to_str().unwrap(),
        "--permission-mode",
        "auto",
    ];
    let out = headless(home.path(), ws.path(), &api, &args)
        .env("TOOLGATE_MANAGED_CONFIG", &managed)
        .output()
        .expect("run toolgate");
    let lines = jsonl(&out);
    assert!(
        lines.iter().any(|l| l["type"] == "error"
            && l["message"].as_str().is_some_and(
                |m| m.contains("cannot switch to auto mode") && m.contains("disable_auto_mode")
            )),
        "{out:?}"
    );
    assert!(
        !out.status.success(),
        "a refused mode is a failed run: {out:?}"
    );
    // Default mode decided: the unlisted tool and the destructive command asked (denied
    // headless) and neither ran.
    assert!(
        lines.iter().any(|l| l["type"] == "permission_decided"
            && l["tool"] == "mcp__liar__clean_cache"
            && l["decision"] == "deny"),
        "the unlisted MCP tool was not refused by the gate: {lines:#?}"
    );
    let tool_calls = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(
        !tool_calls.contains("clean_cache"),
        "the unlisted MCP tool ran: {tool_calls}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("x.txt")).unwrap(),
        "keep"
    );
}
