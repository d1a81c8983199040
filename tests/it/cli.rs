//! The real binary as a user runs it: `toolgate mcp …`, `toolgate -p …`, usage errors.

use std::process::{Command, Output};

use crate::support::deploy_record;

fn toolgate(workspace: &std::path::Path, args: &[&str]) -> Output {
    let state = workspace.join(".state");
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(workspace)
        .env("TOOLGATE_STATE_DIR", &state)
        .env("TOOLGATE_CONFIG_DIR", workspace.join(".config"))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run toolgate")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn mcp_list_tools_and_call() {
    let ws = tempfile::tempdir().unwrap();
    let list = toolgate(ws.path(), &["mcp", "list"]);
    assert!(list.status.success(), "{list:?}");
    let text = stdout(&list);
    for server in ["docs", "deploy", "fs"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(server) && l.contains("ready")),
            "{server} not ready in:\n{text}"
        );
    }
    let tools = toolgate(ws.path(), &["mcp", "tools", "docs"]);
    let text = stdout(&tools);
    assert!(text.contains("mcp__docs__search  [raw: search]"), "{text}");
    assert!(
        text.contains("server claims: ") && text.contains("readOnlyHint=true"),
        "{text}"
    );
    let call = toolgate(
        ws.path(),
        &["mcp", "call", "docs", "search", r#"{"query":"allow deny"}"#],
    );
    assert!(call.status.success(), "{call:?}");
    assert!(stdout(&call).contains("permissions"), "{}", stdout(&call));
    let bad = toolgate(ws.path(), &["mcp", "call", "docs", "search", "{not json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stdout(&bad).contains("not valid JSON"));
    let unknown = toolgate(ws.path(), &["mcp", "tools", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stdout(&unknown).contains("unknown MCP server 'nope'; available servers: docs, deploy, fs")
    );
}

#[test]
fn headless_demo_denies_the_deploy_unless_allowed() {
    let ws = tempfile::tempdir().unwrap();
    let denied = toolgate(ws.path(), &["-p", "deploy web", "--output-format", "jsonl"]);
    assert_eq!(denied.status.code(), Some(0), "{denied:?}");
    let lines: Vec<serde_json::Value> = stdout(&denied)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "session_start");
    assert_eq!(lines[0]["model"], "scripted demo");
    let trigger = lines
        .iter()
        .find(|l| l["type"] == "tool_finished" && l["name"] == "mcp__deploy__trigger")
        .expect("trigger finished");
    assert_eq!(trigger["outcome"], "denied");
    assert_eq!(
        trigger["output"],
        "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow mcp__deploy__trigger"
    );
    assert_eq!(lines.last().unwrap()["type"], "turn_finished");
    // The far side: the deploy server never ran the trigger.
    deploy_record::assert_none(ws.path());

    let allowed = toolgate(
        ws.path(),
        &["-p", "deploy web", "--allow", "mcp__deploy__trigger"],
    );
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    let text = stdout(&allowed);
    assert!(text.contains("Successful deployment of web v1"), "{text}");
    // The deploy record is in the workspace, so status survives restarts: the one
    // deployment the allowed run made.
    assert!(ws.path().join(".toolgate/deployments.json").is_file());
    deploy_record::assert_one_of(ws.path(), "web");
}

#[test]
fn usage_errors_exit_2() {
    let ws = tempfile::tempdir().unwrap();
    let bogus = toolgate(ws.path(), &["--bogus"]);
    assert_eq!(bogus.status.code(), Some(2));
    let bad_rule = toolgate(ws.path(), &["-p", "hi", "--allow", "Bash(*)"]);
    assert_eq!(bad_rule.status.code(), Some(2), "{bad_rule:?}");
}

#[test]
fn config_errors_are_reported_and_the_rest_still_runs() {
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join(".config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("mcp.json"),
        r#"{"mcpServers": {"bad": {"args": []}}}"#,
    )
    .unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[permissions]\nallow = [\"Nope((\"]\n",
    )
    .unwrap();
    let run = toolgate(ws.path(), &["-p", "deploy web"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("mcp.json:1:17: server 'bad': expected a \"command\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("config.toml:2:17: invalid rule \"Nope((\""),
        "{stderr}"
    );
    // The embedded servers still load and work: the docs server's own answer ("toolgate
    // docs <version> …") is quoted after the scenario's "Docs version: ".
    assert!(
        stdout(&run).contains("Docs version: toolgate docs "),
        "{}",
        stdout(&run)
    );
}
