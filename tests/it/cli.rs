//! The real binary as a user runs it: `toolgate mcp …`, `toolgate -p …`, usage errors.

use crate::support::fixture_server::fixture_file;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::deploy_record;

fn toolgate(workspace: &Path, args: &[&str]) -> Output {
    toolgate_with(workspace, args, &[])
}

/// [`toolgate`] with more environment (a scenario for the scripted model, say).
fn toolgate_with(workspace: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let state = workspace.join(".state");
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .envs(env.iter().copied())
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

/// `toolgate -p` on a scripted model that connects the fixture server `fx` and calls `tool`;
/// the run's output.
fn run_calling_fixture(tool: &str) -> Output {
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join(".config");
    std::fs::create_dir_all(&config).unwrap();
    let script = fixture_file("fixture_server.py");
    std::fs::write(
        config.join("mcp.json"),
        serde_json::json!({"mcpServers": {"fx": {"command": "python3", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    let scenario = ws.path().join("scenario.json");
    std::fs::write(
        &scenario,
        serde_json::json!({"name": "one call", "description": "connect fx, call a tool", "steps": [
            {"id": "connect", "say": "Connecting.",
             "tools": [{"name": "connect_mcp", "input": {"name": "fx"}}]},
            {"id": "call", "after": "connect", "on": "ok", "say": "Calling.",
             "tools": [{"name": format!("mcp__fx__{tool}"), "input": {"text": "hi"}}]},
            {"id": "done", "after": "call", "say": "Carrying on without it."}
        ]})
        .to_string(),
    )
    .unwrap();
    toolgate_with(
        ws.path(),
        &[
            "-p",
            "go",
            "--provider",
            "scripted",
            "--output-format",
            "jsonl",
            "--allow",
            "mcp__fx",
        ],
        &[("TOOLGATE_SCENARIO", &scenario)],
    )
}

/// Decision 0067: a server that crashes while connected fails the run (exit 1) even though
/// the model read the error and finished its turn; the JSONL says which server and why.
#[test]
fn headless_run_whose_server_crashed_mid_run_exits_1() {
    let crashed = run_calling_fixture("crash");
    let text = stdout(&crashed);
    assert_eq!(crashed.status.code(), Some(1), "{crashed:?}");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let error = lines
        .iter()
        .find(|l| l["type"] == "error")
        .unwrap_or_else(|| panic!("no error event in:\n{text}"));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("the MCP server 'fx' stopped during the run"),
        "{error}"
    );
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["type"], &last["exit_code"]),
        (&serde_json::json!("turn_finished"), &serde_json::json!(1)),
        "{text}"
    );

    // The same run whose server stays up succeeds.
    let fine = run_calling_fixture("echo");
    assert_eq!(fine.status.code(), Some(0), "{fine:?}");
}

/// Issue 23, item 11: a server name given twice in one mcp.json is reported with the file,
/// the name and the lines; the later definition is the one in force, as before.
#[test]
fn duplicate_server_key_is_reported_and_the_later_definition_wins() {
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join(".config");
    std::fs::create_dir_all(&config).unwrap();
    let file = config.join("mcp.json");
    std::fs::write(
        &file,
        "{\"mcpServers\": {\n  \"dup\": {\"type\": \"builtin\", \"server\": \"docs\"},\n  \"dup\": {\"type\": \"builtin\", \"server\": \"fs\"}\n}}\n",
    )
    .unwrap();
    let status = toolgate(ws.path(), &["status"]);
    assert!(status.status.success(), "{status:?}");
    let all = format!(
        "{}{}",
        stdout(&status),
        String::from_utf8_lossy(&status.stderr)
    );
    let expected = format!(
        "{}:3:3: server 'dup' is defined 2 times in this file (lines 2, 3); the last definition is used",
        file.display()
    );
    assert!(all.contains(&expected), "{all}");
    assert!(
        all.lines()
            .any(|l| l.trim_start().starts_with("dup") && l.contains("toolgate serve fs")),
        "the later definition is in force:\n{all}"
    );
}

/// Issue 23, item 11: a session record cut short (a full disk, a kill mid-write) costs only
/// that record. Resuming the session appends on a new line, so every record written after
/// the cut parses, the first (`resumed`) included.
#[test]
fn a_cut_session_record_does_not_corrupt_the_records_after_it() {
    let ws = tempfile::tempdir().unwrap();
    let scenario = ws.path().join("scenario.json");
    std::fs::write(
        &scenario,
        r#"{"name": "note", "description": "answers once", "steps": [{"id": "done", "say": "Noted."}]}"#,
    )
    .unwrap();
    let env = [("TOOLGATE_SCENARIO", scenario.as_path())];
    let first = toolgate_with(ws.path(), &["-p", "first", "--provider", "scripted"], &env);
    assert!(first.status.success(), "{first:?}");
    let sessions = ws.path().join(".state/sessions");
    let log = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a session log");

    // Cut the last record in half: no newline at the end any more.
    let text = std::fs::read_to_string(&log).unwrap();
    let last_start = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = last_start + (text.len() - last_start) / 2;
    std::fs::write(&log, &text[..cut]).unwrap();
    let kept = text[..last_start].lines().count();

    let second = toolgate_with(
        ws.path(),
        &["-p", "second", "--continue", "--provider", "scripted"],
        &env,
    );
    assert!(second.status.success(), "{second:?}");
    let after = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert!(
        lines[kept].starts_with(&text[last_start..cut]),
        "the cut record stays as it was"
    );
    let new: Vec<serde_json::Value> = lines[kept + 1..]
        .iter()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: a record after the cut: {l}"))
        })
        .collect();
    assert_eq!(new[0]["type"], "resumed", "{after}");
    assert!(
        new.iter()
            .any(|r| r["type"] == "message" && r["message"]["content"][0]["text"] == "second"),
        "{after}"
    );
}

/// A deny or ask rule that does not parse fails closed: `-p` does not start (exit 2, the
/// rule's file:line:column on stderr), so the tool it was meant to stop never runs (the
/// deploy server receives no call). Before, the rule was skipped with a notice and the
/// deploy ran under `allow = ["mcp__deploy"]`. A bad allow rule stays a notice.
#[test]
fn a_malformed_deny_or_ask_rule_refuses_the_start() {
    for (list, column) in [("deny", 31), ("ask", 30)] {
        let ws = tempfile::tempdir().unwrap();
        let config = ws.path().join(".config");
        std::fs::create_dir_all(&config).unwrap();
        let config_toml = config.join("config.toml");
        std::fs::write(
            &config_toml,
            format!(
                "[permissions]\nallow = [\"mcp__deploy\"]\n{list} = [\"mcp__deploy__trigger(\"]\n"
            ),
        )
        .unwrap();
        let run = toolgate(ws.path(), &["-p", "deploy web"]);
        assert_eq!(run.status.code(), Some(2), "{list}: {run:?}");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            stderr.contains("toolgate does not start")
                && stderr.contains(&format!(
                    "{}:3:{column}: invalid {list} rule \"mcp__deploy__trigger(\"",
                    config_toml.display()
                )),
            "{list}: {stderr}"
        );
        assert!(!stdout(&run).contains("Successful deployment"), "{run:?}");
        deploy_record::assert_none(ws.path());

        // `toolgate status` lists the error.
        let status = toolgate(ws.path(), &["status"]);
        let text = stdout(&status);
        assert!(
            text.contains("Permission rules: 1 error")
                && text.contains(&format!(
                    "  error: {}:3:{column}: invalid {list} rule",
                    config_toml.display()
                )),
            "{text}"
        );
    }

    // A malformed allow rule only loosens nothing: a notice, and the run goes on.
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".config")).unwrap();
    std::fs::write(
        ws.path().join(".config/config.toml"),
        "[permissions]\nallow = [\"mcp__deploy__trigger(\"]\n",
    )
    .unwrap();
    let run = toolgate(ws.path(), &["-p", "deploy web"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    deploy_record::assert_none(ws.path());
    let status = stdout(&toolgate(ws.path(), &["status"]));
    assert!(
        status.contains("Permission rules: no errors") && status.contains("  warning: "),
        "{status}"
    );
}

/// Issue 41: `toolgate status` says what the start would do. A hook that cannot be read
/// refuses the start, so status names it and exits 2 (it used to say "no errors" and exit
/// 0); a `[model]` key it ignores is listed as a notice. Fixed, both starts and status
/// agree again: exit 0.
#[test]
fn status_names_a_bad_hook_and_model_notices_and_exits_2_where_the_start_refuses() {
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join(".config");
    std::fs::create_dir_all(&config).unwrap();
    let file = config.join("config.toml");
    std::fs::write(
        &file,
        "[model]\nretriez = 3\n\n[[hooks.PreToolUse]]\nmatcher = \"(\"\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    )
    .unwrap();

    // The start refuses.
    let run = toolgate(ws.path(), &["-p", "hello", "--provider", "scripted"]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let refused = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(refused.contains("hook cannot be read"), "{refused}");

    // Status says so, with the hook's place and the [model] notice, and exits 2.
    let status = toolgate(ws.path(), &["status"]);
    let text = stdout(&status);
    assert_eq!(status.status.code(), Some(2), "{text}");
    assert!(
        text.contains("Start: refused")
            && text.contains("hook cannot be read")
            && text.contains(&format!("{}:5:", file.display()))
            && text.contains("matcher is not a valid regex"),
        "{text}"
    );
    assert!(
        text.contains("warning: config [model]: ") && text.contains("unknown key model.retriez"),
        "{text}"
    );

    // With the hook fixed, the start goes ahead and status agrees (the notice stays).
    std::fs::write(
        &file,
        "[model]\nretriez = 3\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    )
    .unwrap();
    let run = toolgate(ws.path(), &["-p", "hello", "--provider", "scripted"]);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let status = toolgate(ws.path(), &["status"]);
    let text = stdout(&status);
    assert_eq!(status.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Start: toolgate starts") && text.contains("unknown key model.retriez"),
        "{text}"
    );
}
