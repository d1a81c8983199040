//! The headless front end: the shipped binary's `toolgate -p` on the scripted demo model,
//! with toolgate's own servers as its child processes: what it prints, its exit codes, and
//! what the deploy server really did. Each run gets its state and config folders through
//! its own environment (nothing is set in this test process, whose tests run in parallel).

use serde_json::Value;
use toolgate::protocol::Event;

use crate::support::deploy_record;
use crate::support::headless_run::Headless;

fn lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn finished_tools(events: &[Value]) -> Vec<(String, String)> {
    of_type(events, "tool_finished")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn story_until_trigger() -> Vec<(String, String)> {
    [
        "connect_mcp",
        "mcp__docs__search",
        "mcp__docs__get_version",
        "connect_mcp",
        "mcp__deploy__status",
    ]
    .iter()
    .map(|n| (n.to_string(), "ok".to_string()))
    .collect()
}

#[test]
fn demo_in_jsonl_denies_the_trigger_without_allow() {
    let workspace = tempfile::tempdir().unwrap();
    let run = Headless::new("deploy web", "jsonl");
    let (code, out, err) = run.run(workspace.path());
    assert_eq!(code, 0, "stderr: {err}\nstdout: {out}");
    let events = lines(&out);

    let start = &events[0];
    assert_eq!(start["type"], "session_start");
    assert_eq!(start["model"], "scripted demo");
    let servers: Vec<&str> = start["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(servers, vec!["docs", "deploy", "fs"]);
    let pool: Vec<&str> = start["pool"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        pool.contains(&"connect_mcp") && pool.contains(&"bash"),
        "{pool:?}"
    );

    let mut expected = story_until_trigger();
    expected.push(("mcp__deploy__trigger".into(), "denied".into()));
    assert_eq!(finished_tools(&events), expected);
    let trigger = of_type(&events, "tool_finished")
        .last()
        .copied()
        .unwrap()
        .clone();
    assert_eq!(
        trigger["output"],
        "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow mcp__deploy__trigger"
    );
    let decided = of_type(&events, "permission_decided");
    let trigger_decision = decided
        .iter()
        .find(|d| d["tool"] == "mcp__deploy__trigger")
        .unwrap();
    assert_eq!(trigger_decision["decision"], "deny");
    assert_eq!(trigger_decision["decider"]["by"], "headless");
    assert_eq!(
        trigger_decision["decider"]["asked_by"],
        "mcp__deploy__trigger"
    );
    let search_decision = decided
        .iter()
        .find(|d| d["tool"] == "mcp__docs__search")
        .unwrap();
    assert_eq!(search_decision["decision"], "allow");

    assert!(of_type(&events, "pool_changed").iter().any(|p| {
        p["added"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "mcp__deploy__trigger")
    }));
    assert!(
        of_type(&events, "text").last().unwrap()["text"]
            .as_str()
            .unwrap()
            .contains("not approved")
    );
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert_eq!(last["exit_code"], 0);
    assert_eq!(last["cancelled"], false);
    // The far side: the deploy server never ran the trigger.
    deploy_record::assert_none(workspace.path());

    // The session log has the decision with the policy's audit record.
    let id = start["session_id"].as_str().unwrap();
    let log_path = run.state_dir().join("sessions").join(format!("{id}.jsonl"));
    let log = std::fs::read_to_string(&log_path).unwrap();
    let records: Vec<Value> = lines(&log);
    assert_eq!(records[0]["type"], "session_start");
    let audit = records
        .iter()
        .find(|r| r["type"] == "permission_decided" && r["tool"] == "mcp__deploy__trigger")
        .cloned()
        .unwrap();
    assert_eq!(audit["decider"]["by"], "headless");
    assert_eq!(audit["decision"], "deny");
    assert_eq!(audit["tool"], "mcp__deploy__trigger");
    assert_eq!(audit["input_digest"].as_str().unwrap().len(), 16);
}

#[test]
fn demo_runs_the_trigger_with_allow() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, err) = Headless::new("deploy web", "jsonl")
        .arg("--allow")
        .arg("mcp__deploy__trigger")
        .run(workspace.path());
    assert_eq!(code, 0, "stderr: {err}\nstdout: {out}");
    let events = lines(&out);
    let mut expected = story_until_trigger();
    expected.push(("mcp__deploy__trigger".into(), "ok".into()));
    assert_eq!(finished_tools(&events), expected);
    let trigger = of_type(&events, "tool_finished")
        .last()
        .copied()
        .unwrap()
        .clone();
    assert!(
        trigger["output"].as_str().unwrap().contains("web"),
        "{trigger}"
    );
    let decided = of_type(&events, "permission_decided");
    let trigger_decision = decided
        .iter()
        .find(|d| d["tool"] == "mcp__deploy__trigger")
        .unwrap();
    assert_eq!(trigger_decision["decision"], "allow");
    assert_eq!(trigger_decision["decider"]["by"], "rule");
    assert_eq!(trigger_decision["decider"]["rule"], "mcp__deploy__trigger");
    assert_eq!(trigger_decision["decider"]["source"]["source"], "flag");
    // Every line is one protocol Event: a consumer can read the stream with the same type.
    for line in out.lines() {
        let event: Event =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not an Event ({e}): {line}"));
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
    assert_eq!(events.last().unwrap()["type"], "turn_finished");
    // The far side: the deploy server ran exactly this one deployment.
    deploy_record::assert_one_of(workspace.path(), "web");
}

#[test]
fn text_output_prints_the_answer_on_stdout_and_activity_on_stderr() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, err) = Headless::new("deploy web", "text").run(workspace.path());
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("not approved"), "{out}");
    assert!(!out.contains("\u{1b}"));
    assert!(
        err.contains("[denied] mcp__deploy__trigger: Permission denied: approval is unavailable"),
        "{err}"
    );
    deploy_record::assert_none(workspace.path());
}

#[test]
fn resuming_an_unknown_session_is_a_usage_error() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, _, err) = Headless::new("hi", "jsonl")
        .arg("--resume")
        .arg("no-such-session")
        .run(workspace.path());
    assert_eq!(code, 2);
    assert_eq!(err, "toolgate: no session 'no-such-session' found\n");

    let (code, _, err) = Headless::new("hi", "jsonl").arg("-c").run(workspace.path());
    assert_eq!(code, 2);
    assert!(
        err.starts_with("toolgate: no earlier session for workspace"),
        "{err}"
    );
}

#[test]
fn continue_picks_up_the_session_and_its_servers() {
    let workspace = tempfile::tempdir().unwrap();
    let first = Headless::new("deploy web", "jsonl");
    let (code, out, _) = first.run(workspace.path());
    assert_eq!(code, 0);
    let first_id = lines(&out)[0]["session_id"].as_str().unwrap().to_string();

    // The same state dir: the second run finds the first one's session.
    let (code, out, err) = first.arg("-c").run(workspace.path());
    assert_eq!(code, 0, "{err}");
    let events = lines(&out);
    assert_eq!(events[0]["session_id"], first_id.as_str());
    // Both servers were connected when the first run ended; they are back before the turn.
    let pool: Vec<&str> = events[0]["pool"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(pool.contains(&"mcp__docs__search"), "{pool:?}");
    assert!(pool.contains(&"mcp__deploy__trigger"), "{pool:?}");
    assert!(
        of_type(&events, "notice")
            .iter()
            .any(|n| n["message"].as_str().unwrap().contains("messages restored"))
    );
}

#[test]
fn an_invalid_allow_rule_is_a_usage_error() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, err) = Headless::new("hi", "jsonl")
        .arg("--allow")
        .arg("Bash(unclosed")
        .run(workspace.path());
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.starts_with("toolgate: --allow Bash(unclosed"), "{err}");
}
