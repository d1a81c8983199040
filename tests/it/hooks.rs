//! Hooks (decision 0086) in the shipped binary, headless, on the scripted demo (which ends
//! with a `mcp__deploy__trigger` call) or a local model server: what a hook decides is
//! proven by the deploy server's own record, what it received by the file it wrote its
//! stdin to, and what the model read by the tool results and the requests it got.

use serde_json::{Value, json};

use crate::support::deploy_record;
use crate::support::headless_run::Headless;
use crate::support::window_api::{Say, WindowApi};

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The deploy run with this user `config.toml`, and `args`: exit code, events, stderr.
fn deploy_with(
    config: &str,
    args: &[&str],
    workspace: &std::path::Path,
) -> (i32, Vec<Value>, String) {
    let mut run = Headless::new("deploy web", "jsonl");
    for arg in args {
        run = run.arg(arg);
    }
    std::fs::write(run.config_dir().join("config.toml"), config).unwrap();
    let (code, out, err) = run.run(workspace);
    (code, lines(&out), err)
}

fn trigger_finished(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_finished" && e["name"] == "mcp__deploy__trigger")
        .unwrap_or_else(|| panic!("no trigger result: {events:#?}"))
}

fn trigger_decision(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "permission_decided" && e["tool"] == "mcp__deploy__trigger")
        .unwrap_or_else(|| panic!("no trigger decision: {events:#?}"))
}

fn notices(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "notice")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn read_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the hook wrote no {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The start of a hook command that proves the hook ran: it appends its stdin (one JSON
/// line) to `hook_calls.jsonl` in the workspace before doing whatever follows. A test whose
/// hook is meant to decide checks this log, so it cannot pass because the hook silently
/// never ran.
const LOG_STDIN: &str = "cat >> hook_calls.jsonl; echo >> hook_calls.jsonl;";

/// The stdin of every run of a hook that logged itself with [`LOG_STDIN`], in order.
fn hook_calls(workspace: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(workspace.join("hook_calls.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The hook for `event` ran for `tool` with the demo's deploy input on its stdin.
fn assert_hook_ran_for_the_trigger(workspace: &std::path::Path, event: &str) {
    let calls = hook_calls(workspace);
    assert!(
        calls.iter().any(|c| c["hook_event_name"] == event
            && c["tool_name"] == "mcp__deploy__trigger"
            && c["tool_input"] == json!({ "service": "web" })),
        "no {event} hook ran for the trigger: {calls:#?}"
    );
}

const ALLOW_JSON: &str = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"release window open"}}"#;

#[test]
fn a_pre_tool_use_hook_exiting_2_blocks_an_allowed_call_and_the_model_reads_why() {
    let workspace = tempfile::tempdir().unwrap();
    let config = r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{ type = "command", command = "cat > pre_stdin.json; echo 'release freeze until Monday' >&2; exit 2" }]
"#;
    let (code, events, err) = deploy_with(
        config,
        &["--allow", "mcp__deploy__trigger"],
        workspace.path(),
    );
    assert_eq!(code, 0, "{err}");
    let result = trigger_finished(&events);
    assert_eq!(result["outcome"], "denied", "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("release freeze until Monday"),
        "{result}"
    );
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "deny");
    assert_eq!(decision["decider"]["by"], "hook");
    assert!(
        decision["decider"]["hook"]
            .as_str()
            .unwrap()
            .contains("PreToolUse hook `cat > pre_stdin.json"),
        "{decision}"
    );
    // What the hook got on stdin.
    let stdin = read_json(&workspace.path().join("pre_stdin.json"));
    assert_eq!(stdin["hook_event_name"], "PreToolUse");
    assert_eq!(stdin["tool_name"], "mcp__deploy__trigger");
    assert_eq!(stdin["tool_input"], json!({ "service": "web" }));
    assert!(stdin["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    // The far side: nothing was deployed.
    deploy_record::assert_none(workspace.path());
}

#[test]
fn a_json_allow_runs_an_unlisted_tool_headless_and_post_tool_use_sees_the_response() {
    let workspace = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__.*"
hooks = [{{ type = "command", command = '''{LOG_STDIN} echo '{ALLOW_JSON}' ''' }}]

[[hooks.PostToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{{ type = "command", command = '''cat > post_stdin.json; echo '{{"decision":"block","reason":"check the dashboard"}}' ''' }}]
"#
    );
    let (code, events, err) = deploy_with(&config, &[], workspace.path());
    assert_eq!(code, 0, "{err}");
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "allow", "{decision}");
    assert_eq!(decision["decider"]["by"], "hook");
    assert_eq!(decision["decider"]["reason"], "release window open");
    assert_hook_ran_for_the_trigger(workspace.path(), "PreToolUse");
    deploy_record::assert_one_of(workspace.path(), "web");
    // PostToolUse saw the response, and its block reason reached the model.
    let stdin = read_json(&workspace.path().join("post_stdin.json"));
    assert_eq!(stdin["hook_event_name"], "PostToolUse");
    assert!(
        stdin["tool_response"].as_str().unwrap().contains("web"),
        "{stdin}"
    );
    let result = trigger_finished(&events);
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("check the dashboard"),
        "{result}"
    );
}

#[test]
fn a_hook_cannot_beat_a_deny_rule() {
    let workspace = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[[hooks.PreToolUse]]
hooks = [{{ type = "command", command = '''{LOG_STDIN} echo '{ALLOW_JSON}' ''' }}]
"#
    );
    let (code, events, err) = deploy_with(
        &config,
        &["--deny", "mcp__deploy__trigger"],
        workspace.path(),
    );
    assert_eq!(code, 0, "{err}");
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["decider"]["by"], "rule");
    // The hook did say allow for this call: the rule beat it, it was not left out.
    assert_hook_ran_for_the_trigger(workspace.path(), "PreToolUse");
    deploy_record::assert_none(workspace.path());
}

#[test]
fn a_hanging_hook_is_stopped_its_call_does_not_run_and_the_run_goes_on() {
    let workspace = tempfile::tempdir().unwrap();
    let config = r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{ type = "command", command = "cat >> hook_calls.jsonl; echo >> hook_calls.jsonl; sleep 300", timeout = 2 }]
"#;
    let (code, events, err) = deploy_with(
        config,
        &["--allow", "mcp__deploy__trigger"],
        workspace.path(),
    );
    assert_eq!(code, 0, "{err}");
    let notices = notices(&events);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("timed out after 2 s and was stopped")),
        "{notices:?}"
    );
    // It fell back to asking, which headless denies.
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["decider"]["by"], "headless");
    assert!(
        decision["decider"]["asked_by"]
            .as_str()
            .unwrap()
            .contains("sleep 300"),
        "{decision}"
    );
    assert_eq!(events.last().unwrap()["type"], "turn_finished");
    assert_hook_ran_for_the_trigger(workspace.path(), "PreToolUse");
    deploy_record::assert_none(workspace.path());
}

/// `toolgate -p PROMPT` on the local model server `api`, with this user `config.toml`.
fn run_on_api(
    api: &WindowApi,
    prompt: &str,
    config: &str,
    workspace: &std::path::Path,
) -> std::process::Output {
    // Only its state and config folders: the run itself talks to the local model server.
    let run = Headless::new(prompt, "jsonl");
    std::fs::write(run.config_dir().join("config.toml"), config).unwrap();
    crate::support::headless_run::on_model_api(
        &api.url,
        "anthropic",
        &run.state_dir(),
        &run.config_dir(),
        workspace,
    )
    .args(["-p", prompt, "--output-format", "jsonl"])
    .output()
    .unwrap()
}

#[test]
fn user_prompt_submit_output_reaches_the_model() {
    let workspace = tempfile::tempdir().unwrap();
    let api = WindowApi::start(10_000_000, |_| Say::Text("Noted.".into()));
    let config = r#"
[[hooks.UserPromptSubmit]]
hooks = [{ type = "command", command = "cat > prompt_stdin.json; echo 'ticket ABC-123 is in scope'" }]

[[hooks.SessionStart]]
hooks = [{ type = "command", command = "echo 'on branch release-7'" }]
"#;
    let out = run_on_api(&api, "what is in scope?", config, workspace.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = api.seen();
    let first = &seen.first().expect("a model request").body;
    let user = first["messages"][0].to_string();
    assert!(user.contains("what is in scope?"), "{user}");
    assert!(user.contains("ticket ABC-123 is in scope"), "{user}");
    // SessionStart's context rides along with the first prompt.
    assert!(user.contains("on branch release-7"), "{user}");
    let stdin = read_json(&workspace.path().join("prompt_stdin.json"));
    assert_eq!(stdin["hook_event_name"], "UserPromptSubmit");
    assert_eq!(stdin["prompt"], "what is in scope?");
}

#[test]
fn a_stop_hook_keeps_the_agent_going_with_its_reason_a_bounded_number_of_times() {
    let workspace = tempfile::tempdir().unwrap();
    let api = WindowApi::start(10_000_000, |_| Say::Text("Done.".into()));
    let config = r#"
[[hooks.Stop]]
hooks = [{ type = "command", command = '''echo '{"decision":"block","reason":"run the tests too"}' ''' }]
"#;
    let out = run_on_api(&api, "fix it", config, workspace.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = api.seen();
    // The first answer, then three more after the hook's blocks; the fourth block ends it.
    assert_eq!(seen.len(), 4, "{seen:#?}");
    let messages = seen[3].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap().to_string();
    assert!(
        last.contains("Stop hook feedback: run the tests too"),
        "{last}"
    );
    let events = lines(&String::from_utf8_lossy(&out.stdout));
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("blocked the stop 3 times in a row")),
        "{events:#?}"
    );
}

/// Headless, a project's hooks run only with `--trust-project` (the consent a run that
/// cannot ask is given up front, as for the project's servers); without it the project's
/// file is not read at all.
#[test]
fn a_projects_hooks_run_headless_only_when_the_folder_is_trusted() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".toolgate")).unwrap();
    std::fs::write(
        workspace.path().join(".toolgate/config.toml"),
        r#"
[[hooks.PreToolUse]]
hooks = [{ type = "command", command = "touch project_hook_ran" }]
"#,
    )
    .unwrap();
    let ran = workspace.path().join("project_hook_ran");
    let (code, events, err) = deploy_with("", &[], workspace.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        !ran.exists(),
        "an untrusted project's hook ran: {events:#?}"
    );
    let untrusted = notices(&events);
    assert!(
        untrusted
            .iter()
            .any(|n| n.contains(".toolgate/config.toml") && n.contains("not trusted")),
        "the person is not told why the project's file was left out: {untrusted:?}"
    );

    let (code, events, err) = deploy_with("", &["--trust-project"], workspace.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        ran.exists(),
        "the trusted project's hook did not run: {events:#?}"
    );
}

#[test]
fn a_malformed_hooks_table_refuses_the_start_naming_the_place() {
    let workspace = tempfile::tempdir().unwrap();
    let config = "[[hooks.PreToolUse]]\nmatcher = \"(\"\nhooks = [{ type = \"command\", command = \"true\" }]\n";
    let (code, events, err) = deploy_with(config, &[], workspace.path());
    assert_eq!(code, 2, "{events:?}");
    assert!(
        err.contains("config.toml:2:11: matcher is not a valid regex (unclosed group)"),
        "{err}"
    );
    deploy_record::assert_none(workspace.path());
}

#[test]
fn a_permission_request_hook_answers_the_question_headless() {
    let workspace = tempfile::tempdir().unwrap();
    let config = r#"
[[hooks.PermissionRequest]]
matcher = "mcp__deploy__trigger"
hooks = [{ type = "command", command = '''cat >> hook_calls.jsonl; echo >> hook_calls.jsonl; echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}' ''' }]
"#;
    let (code, events, err) = deploy_with(config, &[], workspace.path());
    assert_eq!(code, 0, "{err}");
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "allow", "{decision}");
    assert_eq!(decision["decider"]["by"], "hook");
    assert!(
        decision["decider"]["hook"]
            .as_str()
            .unwrap()
            .starts_with("PermissionRequest hook"),
        "{decision}"
    );
    assert_hook_ran_for_the_trigger(workspace.path(), "PermissionRequest");
    deploy_record::assert_one_of(workspace.path(), "web");
}

#[test]
fn hooks_import_claude_copies_both_files_and_reports_them() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config");
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::create_dir_all(workspace.path().join(".claude")).unwrap();
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        "# mine\n[tools]\nsearch = \"auto\"\n",
    )
    .unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"~/bin/guard","timeout":10}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        workspace.path().join(".claude/settings.json"),
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"make lint"}]}]}}"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["hooks", "import", "claude"])
        .current_dir(workspace.path())
        .env("HOME", home.path())
        .env("TOOLGATE_CONFIG_DIR", &config_dir)
        .env("TOOLGATE_STATE_DIR", home.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The user's own hook is copied as Claude Code ran it, unsandboxed, and says so; the
    // project's stays in the sandbox (a project file may not leave it), and says so.
    assert!(
        stdout.contains(
            "+ PreToolUse [Bash]: ~/bin/guard (sandbox = false: runs outside the sandbox, as Claude Code ran it)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("+ Stop: make lint (runs in the sandbox"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Claude Code runs hooks unsandboxed"),
        "{stdout}"
    );
    let user = std::fs::read_to_string(config_dir.join("config.toml")).unwrap();
    assert!(
        user.starts_with("# mine\n[tools]\nsearch = \"auto\"\n"),
        "{user}"
    );
    assert!(
        user.contains("[[hooks.PreToolUse]]\nmatcher = \"Bash\""),
        "{user}"
    );
    assert!(user.contains("sandbox = false"), "{user}");
    let project = std::fs::read_to_string(workspace.path().join(".toolgate/config.toml")).unwrap();
    assert!(project.contains("[[hooks.Stop]]"), "{project}");
    assert!(project.contains("command = \"make lint\""), "{project}");
    assert!(!project.contains("sandbox"), "{project}");
    // The file it wrote is one toolgate starts with: `status` reads the hooks.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("status")
        .current_dir(workspace.path())
        .env("HOME", home.path())
        .env("TOOLGATE_CONFIG_DIR", &config_dir)
        .env("TOOLGATE_STATE_DIR", home.path().join("state"))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}{}",
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn hooks_import_claude_with_sandbox_keeps_your_own_hooks_confined() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config");
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"log-it"}]}]}}"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["hooks", "import", "claude", "--sandbox"])
        .current_dir(workspace.path())
        .env("HOME", home.path())
        .env("TOOLGATE_CONFIG_DIR", &config_dir)
        .env("TOOLGATE_STATE_DIR", home.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("+ PostToolUse: log-it (runs in the sandbox"),
        "{stdout}"
    );
    let user = std::fs::read_to_string(config_dir.join("config.toml")).unwrap();
    assert!(user.contains("command = \"log-it\""), "{user}");
    assert!(!user.contains("sandbox"), "{user}");
}

#[test]
fn a_hook_cannot_answer_a_managed_ask() {
    let workspace = tempfile::tempdir().unwrap();
    let managed = tempfile::tempdir().unwrap();
    let managed_file = managed.path().join("managed.toml");
    std::fs::write(
        &managed_file,
        "[permissions]\nask = [\"mcp__deploy__trigger\"]\n",
    )
    .unwrap();
    let run = Headless::new("deploy web", "jsonl");
    std::fs::write(
        run.config_dir().join("config.toml"),
        format!(
            "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = '''{LOG_STDIN} echo '{ALLOW_JSON}' ''' }}]\n"
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["-p", "deploy web", "--output-format", "jsonl"])
        .args(["--provider", "scripted"])
        .current_dir(workspace.path())
        .env("TOOLGATE_STATE_DIR", run.state_dir())
        .env("TOOLGATE_CONFIG_DIR", run.config_dir())
        .env("TOOLGATE_MANAGED_CONFIG", &managed_file)
        .env_remove("TOOLGATE_SCENARIO")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = lines(&String::from_utf8_lossy(&out.stdout));
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["decider"]["by"], "headless", "{decision}");
    assert_hook_ran_for_the_trigger(workspace.path(), "PreToolUse");
    deploy_record::assert_none(workspace.path());
}

/// SessionStart and SessionEnd hooks run once each around a headless run, with the event's
/// name and the session's id on stdin (the same id in both).
#[test]
fn session_start_and_session_end_hooks_run_around_a_headless_run() {
    let workspace = tempfile::tempdir().unwrap();
    let config = r#"
[[hooks.SessionStart]]
hooks = [{ type = "command", command = "cat >> session_start.jsonl; echo >> session_start.jsonl" }]

[[hooks.SessionEnd]]
hooks = [{ type = "command", command = "cat >> session_end.jsonl; echo >> session_end.jsonl" }]
"#;
    let (code, _events, err) = deploy_with(config, &[], workspace.path());
    assert_eq!(code, 0, "{err}");
    let read = |name: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(workspace.path().join(name))
            .unwrap_or_else(|e| panic!("the hook wrote no {name}: {e}"));
        lines(text.trim())
    };
    let (start, end) = (read("session_start.jsonl"), read("session_end.jsonl"));
    assert_eq!(start.len(), 1, "{start:?}");
    assert_eq!(end.len(), 1, "{end:?}");
    assert_eq!(start[0]["hook_event_name"], "SessionStart");
    assert_eq!(end[0]["hook_event_name"], "SessionEnd");
    let id = start[0]["session_id"].as_str().expect("a session id");
    assert!(!id.is_empty());
    assert_eq!(end[0]["session_id"], id);
}

/// A bash call rewritten by a hook, as run by the local model server: `updatedInput` is what
/// runs, and the rules judge it again (a hook's allow never beats a deny rule).
fn rewritten_bash(workspace: &std::path::Path, rewritten: &str) -> Vec<Value> {
    bash_with_updated_input(workspace, json!({ "command": rewritten }))
}

/// The local model server's bash call, its input replaced by a PreToolUse hook's
/// `updatedInput`: the run's events.
fn bash_with_updated_input(workspace: &std::path::Path, updated: Value) -> Vec<Value> {
    let mut script = vec![Say::Tool {
        name: "bash".into(),
        input: json!({ "command": "echo hello" }),
    }]
    .into_iter();
    let api = WindowApi::start(10_000_000, move |_| {
        script.next().unwrap_or_else(|| Say::Text("Done.".into()))
    });
    let output = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": updated}});
    let config = format!(
        r#"
[permissions]
allow = ["Bash(echo:*)", "Bash(touch:*)"]
deny = ["Bash(rm:*)"]

[[hooks.PreToolUse]]
matcher = "bash"
hooks = [{{ type = "command", command = '''{LOG_STDIN} echo '{output}' ''' }}]
"#
    );
    let out = run_on_api(&api, "say hello", &config, workspace);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines(&String::from_utf8(out.stdout).unwrap())
}

#[test]
fn a_hooks_updated_input_is_what_runs_and_the_rules_judge_it_again() {
    let workspace = tempfile::tempdir().unwrap();
    rewritten_bash(workspace.path(), "touch made_by_the_hook");
    assert!(
        workspace.path().join("made_by_the_hook").exists(),
        "the rewritten command did not run"
    );

    std::fs::write(workspace.path().join("keep.txt"), "keep").unwrap();
    let events = rewritten_bash(workspace.path(), "rm -f keep.txt");
    let decision = events
        .iter()
        .find(|e| e["type"] == "permission_decided" && e["tool"] == "bash")
        .unwrap_or_else(|| panic!("no bash decision: {events:#?}"));
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["decider"]["by"], "rule", "{decision}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("keep.txt")).unwrap(),
        "keep"
    );
    // The hook ran in both runs, each time on the model's own command: what the rules
    // judged was its rewrite.
    let inputs: Vec<Value> = hook_calls(workspace.path())
        .iter()
        .filter(|c| c["hook_event_name"] == "PreToolUse" && c["tool_name"] == "bash")
        .map(|c| c["tool_input"].clone())
        .collect();
    assert_eq!(inputs, vec![json!({ "command": "echo hello" }); 2]);
}

/// An `updatedInput` the tool's argument check refuses is not run and not decided: the
/// model reads the problem, as for its own invalid input.
#[test]
fn an_updated_input_the_tool_refuses_is_neither_decided_nor_run() {
    let workspace = tempfile::tempdir().unwrap();
    let events = bash_with_updated_input(workspace.path(), json!({ "command": 42 }));
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_finished" && e["name"] == "bash")
        .unwrap_or_else(|| panic!("no bash result: {events:#?}"));
    assert_eq!(result["outcome"], "error", "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .starts_with("Invalid arguments for bash"),
        "{result}"
    );
    assert!(
        !events
            .iter()
            .any(|e| e["type"] == "permission_decided" && e["tool"] == "bash"),
        "a refused input was decided: {events:#?}"
    );
    let hooked: Vec<Value> = hook_calls(workspace.path())
        .iter()
        .filter(|c| c["hook_event_name"] == "PreToolUse")
        .map(|c| c["tool_input"].clone())
        .collect();
    assert_eq!(hooked, vec![json!({ "command": "echo hello" })]);
}

/// A PreToolUse hook that fails makes the call ask, and that question is the person's: a
/// PermissionRequest hook that would allow it is not asked (headless: refused).
#[test]
fn a_failed_pre_tool_use_hook_is_not_answered_by_a_permission_request_hook() {
    let workspace = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{{ type = "command", command = "{LOG_STDIN} echo 'guard broke' >&2; exit 1" }}]

[[hooks.PermissionRequest]]
matcher = "mcp__deploy__trigger"
hooks = [{{ type = "command", command = '''{LOG_STDIN} echo '{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"allow"}}}}}}' ''' }}]
"#
    );
    let (code, events, err) = deploy_with(
        &config,
        &["--allow", "mcp__deploy__trigger"],
        workspace.path(),
    );
    assert_eq!(code, 0, "{err}");
    let decision = trigger_decision(&events);
    assert_eq!(decision["decision"], "deny", "{decision}");
    assert_eq!(decision["decider"]["by"], "headless", "{decision}");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("guard broke") && n.contains("asks instead of running")),
        "{events:#?}"
    );
    assert_hook_ran_for_the_trigger(workspace.path(), "PreToolUse");
    let asked: Vec<Value> = hook_calls(workspace.path())
        .into_iter()
        .filter(|c| c["hook_event_name"] == "PermissionRequest")
        .collect();
    assert!(
        asked.is_empty(),
        "the PermissionRequest hook ran: {asked:#?}"
    );
    deploy_record::assert_none(workspace.path());
}

/// Hooks that match one event run at once, not one after another: each of these two waits
/// (up to 10 s) for the other to have started, and only then says it finished.
#[test]
fn hooks_of_one_event_run_in_parallel() {
    let workspace = tempfile::tempdir().unwrap();
    let wait_for = |mine: &str, other: &str| {
        format!(
            "touch {mine}_started; for i in $(seq 100); do if [ -e {other}_started ]; then touch {mine}_saw_{other}; exit 0; fi; sleep 0.1; done; exit 1"
        )
    };
    let config = format!(
        r#"
[[hooks.PreToolUse]]
matcher = "mcp__deploy__trigger"
hooks = [{{ type = "command", command = "{}" }}, {{ type = "command", command = "{}" }}]
"#,
        wait_for("a", "b"),
        wait_for("b", "a")
    );
    let (code, _, err) = deploy_with(
        &config,
        &["--allow", "mcp__deploy__trigger"],
        workspace.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        workspace.path().join("a_saw_b").exists(),
        "hook a never saw b start"
    );
    assert!(
        workspace.path().join("b_saw_a").exists(),
        "hook b never saw a start"
    );
    deploy_record::assert_one_of(workspace.path(), "web");
}
