//! The headless front end with the scripted demo model, the real hub and toolgate's own
//! servers as child processes: what `toolgate -p` prints, and its exit codes.

use std::path::Path;

use serde_json::Value;

use crate::deploy_record;
use toolgate::agent::ResumeFrom;
use toolgate::cli::bootstrap::{self, FrontEnd};
use toolgate::headless::{self, HeadlessOptions, JsonlEvent, OutputFormat};

/// Process-wide environment for these tests: the servers are this package's binary, state
/// and user config go to a private folder (same values for every test, so parallel tests
/// in one process agree).
fn environment() {
    let base = std::env::temp_dir().join(format!("toolgate-headless-tests-{}", std::process::id()));
    std::fs::create_dir_all(base.join("config")).unwrap();
    // SAFETY: every test sets the same values before it starts any thread of its own.
    unsafe {
        std::env::set_var("TOOLGATE_EXE", env!("CARGO_BIN_EXE_toolgate"));
        std::env::set_var("TOOLGATE_STATE_DIR", base.join("state"));
        std::env::set_var("TOOLGATE_CONFIG_DIR", base.join("config"));
    }
}

fn options(workspace: &Path, prompt: &str, format: OutputFormat) -> HeadlessOptions {
    let mut opts = HeadlessOptions::new(prompt, workspace.to_path_buf());
    opts.output_format = format;
    opts.start.provider = Some("scripted".into());
    opts
}

async fn run(opts: HeadlessOptions) -> (i32, String, String) {
    environment();
    let prompt = headless::read_prompt(&opts.prompt, &mut std::io::empty()).unwrap();
    let config = match bootstrap::prepare(&opts.start, FrontEnd::Headless) {
        Ok(config) => config,
        Err(failure) => {
            return (
                i32::from(failure.kind().code()),
                String::new(),
                failure.to_string(),
            );
        }
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let result = headless::run_with(config, prompt, opts.output_format, &mut out, &mut err).await;
    let code = result.map_or_else(|f| i32::from(f.kind().code()), |()| 0);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

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

#[tokio::test]
async fn demo_in_jsonl_denies_the_trigger_without_allow() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, err) = run(options(workspace.path(), "deploy web", OutputFormat::Jsonl)).await;
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
    let log_path = std::path::PathBuf::from(std::env::var_os("TOOLGATE_STATE_DIR").unwrap())
        .join("sessions")
        .join(format!("{id}.jsonl"));
    let log = std::fs::read_to_string(&log_path).unwrap();
    let records: Vec<Value> = lines(&log);
    assert_eq!(records[0]["type"], "session_start");
    let audit = records
        .iter()
        .find(|r| r["type"] == "permission" && r["tool"] == "mcp__deploy__trigger")
        .cloned()
        .unwrap();
    assert_eq!(audit["decider"]["by"], "headless");
    assert_eq!(audit["decision"], "deny");
    assert_eq!(audit["tool"], "mcp__deploy__trigger");
    assert_eq!(audit["input_digest"].as_str().unwrap().len(), 16);
}

#[tokio::test]
async fn demo_runs_the_trigger_with_allow() {
    let workspace = tempfile::tempdir().unwrap();
    let mut opts = options(workspace.path(), "deploy web", OutputFormat::Jsonl);
    opts.start.allow = vec!["mcp__deploy__trigger".into()];
    let (code, out, err) = run(opts).await;
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
    // Every line is one JsonlEvent: a consumer can read the stream with the same type.
    for line in out.lines() {
        let event: JsonlEvent =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JsonlEvent ({e}): {line}"));
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
    assert_eq!(events.last().unwrap()["type"], "turn_finished");
    // The far side: the deploy server ran exactly this one deployment.
    deploy_record::assert_one_of(workspace.path(), "web");
}

#[tokio::test]
async fn text_output_prints_the_answer_on_stdout_and_activity_on_stderr() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, err) = run(options(workspace.path(), "deploy web", OutputFormat::Text)).await;
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.contains("not approved"), "{out}");
    assert!(!out.contains("\u{1b}"));
    assert!(
        err.contains("[denied] mcp__deploy__trigger: Permission denied: approval is unavailable"),
        "{err}"
    );
    deploy_record::assert_none(workspace.path());
}

#[tokio::test]
async fn resuming_an_unknown_session_is_a_usage_error() {
    let workspace = tempfile::tempdir().unwrap();
    let mut opts = options(workspace.path(), "hi", OutputFormat::Jsonl);
    opts.start.resume = Some(ResumeFrom::Id("no-such-session".into()));
    let (code, _, err) = run(opts).await;
    assert_eq!(code, 2);
    assert_eq!(err, "no session 'no-such-session' found");

    let mut opts = options(workspace.path(), "hi", OutputFormat::Jsonl);
    opts.start.resume = Some(ResumeFrom::Latest);
    let (code, _, err) = run(opts).await;
    assert_eq!(code, 2);
    assert!(err.starts_with("no earlier session for workspace"), "{err}");
}

#[tokio::test]
async fn continue_picks_up_the_session_and_its_servers() {
    let workspace = tempfile::tempdir().unwrap();
    let (code, out, _) = run(options(workspace.path(), "deploy web", OutputFormat::Jsonl)).await;
    assert_eq!(code, 0);
    let first_id = lines(&out)[0]["session_id"].as_str().unwrap().to_string();

    let mut opts = options(workspace.path(), "deploy web", OutputFormat::Jsonl);
    opts.start.resume = Some(ResumeFrom::Latest);
    let (code, out, err) = run(opts).await;
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

#[tokio::test]
async fn an_invalid_allow_rule_is_a_usage_error() {
    let workspace = tempfile::tempdir().unwrap();
    let mut opts = options(workspace.path(), "hi", OutputFormat::Jsonl);
    opts.start.allow = vec!["Bash(unclosed".into()];
    let (code, out, err) = run(opts).await;
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.starts_with("--allow Bash(unclosed"), "{err}");
}
