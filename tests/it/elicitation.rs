//! Elicitation end to end outside the console: the real binary (`toolgate mcp call`, and
//! headless `toolgate -p`) against a real child-process MCP server
//! (tests/fixtures/elicit_server.py) that records every answer it receives.

use crate::support::fixture_server::fixture_file;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::pty;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(extra_env: Value) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let server = fixture_file("elicit_server.py");
        let mut env = json!({"FIXTURE_RECORD": dir.path().join("received.jsonl")});
        if let (Some(env), Some(extra)) = (env.as_object_mut(), extra_env.as_object()) {
            env.extend(extra.clone());
        }
        let config = json!({"mcpServers": {"elicit": {
            "command": "python3", "args": [server], "env": env}}});
        std::fs::write(dir.path().join("mcp.json"), config.to_string()).unwrap();
        Fixture { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn toolgate(&self, args: &[&str]) -> Output {
        let config = self.path().join("mcp.json");
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .arg("--mcp-config")
            .arg(&config)
            .arg("--workspace")
            .arg(self.path())
            .env("TOOLGATE_STATE_DIR", self.path().join("state"))
            .env("TOOLGATE_CONFIG_DIR", self.path().join("config"))
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// What the server received, one entry per answer.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path().join("received.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn answers(&self, tool: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|r| r["tool"] == tool)
            .collect()
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn toolgate_declares_elicitation_and_a_script_sends_the_forms_defaults() {
    let f = Fixture::new(
        json!({"FIXTURE_SCHEMA": json!({"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 2},
        "region": {"type": "string", "oneOf": [{"const": "eu", "title": "Europe"}], "default": "eu"},
        "verified": {"type": "boolean", "default": true},
        "note": {"type": "string"}}}).to_string()}),
    );
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "ask",
        "{}",
        "--elicitation",
        "accept-defaults",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let capabilities = &f.received()[0]["initialize"];
    assert_eq!(
        capabilities["elicitation"],
        json!({"form": {}, "url": {}}),
        "{capabilities}"
    );
    assert_eq!(
        f.answers("ask"),
        [json!({"tool": "ask", "result": {"action": "accept",
            "content": {"replicas": 2, "region": "eu", "verified": true}}})]
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("'elicit' asked for input; sent its defaults (3 field(s))"),
        "{}",
        text(&out)
    );
}

#[test]
fn without_a_terminal_the_request_is_declined_and_a_form_the_defaults_do_not_fill_too() {
    let f = Fixture::new(json!({}));
    let out = f.toolgate(&["mcp", "call", "elicit", "ask", "{}"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "ask",
        "{}",
        "--elicitation",
        "accept-defaults",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the defaults do not fill (name)"),
        "{}",
        text(&out)
    );
    assert_eq!(
        f.answers("ask"),
        [
            json!({"tool": "ask", "result": {"action": "decline"}}),
            json!({"tool": "ask", "result": {"action": "decline"}})
        ]
    );
}

#[test]
fn a_malformed_schema_is_declined_with_the_reason_sent_to_the_server() {
    let f = Fixture::new(json!({}));
    let schema = json!({"schema": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 5, "maximum": 1}}}});
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "ask",
        &schema.to_string(),
        "--elicitation",
        "accept-defaults",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let answers = f.answers("ask");
    let error = &answers[0]["error"];
    assert_eq!(error["code"], -32602, "{answers:?}");
    assert_eq!(
        error["message"],
        "toolgate declined the elicitation: property 'replicas': minimum 5 is above maximum 1"
    );
    // A shape rmcp itself cannot read (a nested object) gets its reason too.
    let nested = json!({"schema": {"type": "object", "properties": {
        "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}});
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "ask",
        &nested.to_string(),
        "--elicitation",
        "accept-defaults",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let answers = f.answers("ask");
    assert_eq!(
        answers[1]["error"]["message"],
        "toolgate declined the elicitation: property 'address': type 'object' cannot be asked \
         in a form (only string, number, integer, boolean and arrays of options)",
        "{answers:?}"
    );
}

#[test]
fn an_input_required_call_is_answered_and_retried_with_the_answers_and_the_state() {
    let f = Fixture::new(json!({}));
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "ask_mrtr",
        "{}",
        "--elicitation",
        "accept-defaults",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        f.answers("ask_mrtr"),
        [
            json!({"tool": "ask_mrtr", "requestState": "state-1", "inputResponses": {
            "release": {"action": "accept", "content": {"replicas": 2, "region": "eu"}}}})
        ]
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("retried with:"), "{}", text(&out));
    assert!(
        !stdout.contains("input_required"),
        "no raw dump: {}",
        text(&out)
    );
}

#[test]
fn headless_declines_and_reports_it_in_the_jsonl_stream() {
    let f = Fixture::new(json!({}));
    let scenario = f.path().join("scenario.json");
    std::fs::write(
        &scenario,
        json!({"name": "elicit", "description": "connects elicit and calls ask",
            "chunk_chars": 64, "chunk_delay_ms": 0, "steps": [
            {"id": "connect", "say": "Connecting.", "tools": [
                {"name": "connect_mcp", "input": {"name": "elicit"}}]},
            {"id": "ask", "after": "connect", "say": "Asking.", "tools": [
                {"name": "mcp__elicit__ask", "input": {}}]},
            {"id": "done", "after": "ask", "say": "Result: {{result_line}}"}]})
        .to_string(),
    )
    .unwrap();
    let config = f.path().join("mcp.json");
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "-p",
            "go",
            "--output-format",
            "jsonl",
            "--allow",
            "mcp__elicit__ask",
        ])
        .arg("--mcp-config")
        .arg(&config)
        .arg("--workspace")
        .arg(f.path())
        .env("TOOLGATE_STATE_DIR", f.path().join("state"))
        .env("TOOLGATE_CONFIG_DIR", f.path().join("config"))
        .env("TOOLGATE_SCENARIO", &scenario)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dismissed: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "request_dismissed")
        .collect();
    assert_eq!(
        dismissed,
        [json!({"type": "request_dismissed", "kind": "elicitation",
            "origin": "MCP server 'elicit'", "outcome": "declined the request of 'elicit'"})],
        "{}",
        text(&out)
    );
    assert_eq!(
        f.answers("ask"),
        [json!({"tool": "ask", "result": {"action": "decline"}})]
    );
}

/// Through the hub's API: a call whose server waits for the person does not time out,
/// however long the person takes, and the person's answer reaches the server.
#[tokio::test]
async fn a_call_does_not_time_out_while_its_server_waits_for_the_person() {
    use std::collections::BTreeMap;
    use toolgate::mcp::{ElicitationAsk, ElicitationReply, HubEvent, HubOptions, McpHub};
    use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("received.jsonl");
    let script = fixture_file("elicit_server.py");
    let config = ServerConfig {
        name: "elicit".into(),
        transport: ServerTransport::Stdio {
            command: "python3".into(),
            args: vec![script.display().to_string()],
            env: BTreeMap::from([("FIXTURE_RECORD".to_string(), record.display().to_string())]),
            cwd: None,
        },
        source: ConfigSource::Embedded,
        // The server's question must arrive within it (the call's clock starts when it is
        // sent), so it is generous for a loaded machine; the wait below outlives it.
        call_timeout_ms: 3000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    };
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        vec![config],
        tx,
        HubOptions {
            probe_timeout: std::time::Duration::from_millis(500),
            ..HubOptions::default()
        },
    );
    hub.connect("elicit").await.unwrap();
    let call = tokio::spawn({
        let hub = hub.clone();
        async move {
            hub.call("elicit", "ask", json!({}), None, Default::default())
                .await
        }
    });
    let question = loop {
        match events.recv().await.unwrap() {
            HubEvent::Elicitation(q) => break q,
            _ => continue,
        }
    };
    let ElicitationAsk::Form { form, .. } = &question.ask else {
        panic!("{:?}", question.ask)
    };
    assert_eq!(form.fields[0].label(), "Release name");
    // Twice the call's timeout: a call that timed out meanwhile would end with an error.
    tokio::time::sleep(std::time::Duration::from_millis(6000)).await;
    assert!(
        !call.is_finished(),
        "the call ended while the person was asked"
    );
    let content = json!({"name": "late", "region": "eu"});
    question.answer(ElicitationReply::Accept(
        content.as_object().unwrap().clone(),
    ));
    let output = call.await.unwrap().unwrap();
    assert!(!output.is_error, "{output:?}");
    assert!(output.text.contains("\"late\""), "{output:?}");
    hub.shutdown().await;
}

/// A call refused with -32042 (URL elicitation required) and nobody at a terminal to ask:
/// the page is not opened, the call ends with a tool error naming the page, and it is not
/// sent again.
#[test]
fn a_call_that_needs_a_page_visited_first_is_not_retried_when_the_page_is_declined() {
    let f = Fixture::new(json!({}));
    let out = f.toolgate(&[
        "mcp",
        "call",
        "elicit",
        "url_gate",
        "{}",
        "--elicitation",
        "accept-defaults",
    ]);
    let all = text(&out);
    assert!(
        all.contains("MCP error -32042: Connect your Example account first")
            && all.contains("https://accounts.example.com/connect/7d1e")
            && all.contains("declined"),
        "{all}"
    );
    assert!(!all.contains("the account is connected"), "{all}");
    assert_eq!(
        f.answers("url_gate"),
        [json!({"tool": "url_gate", "call": "refused"})]
    );
}

/// The same call on a terminal: the person sees the page's domain and URL, opens it, and
/// once the server says the page is done the call is sent again and answers.
#[test]
fn a_call_that_needs_a_page_visited_first_goes_on_once_the_server_says_it_is_done() {
    let f = Fixture::new(json!({}));
    let mut cmd = pty::toolgate(&f.path().join("state"), &f.path().join("config"));
    for arg in [
        "mcp",
        "call",
        "elicit",
        "url_gate",
        "{}",
        "--elicitation",
        "ask",
    ] {
        cmd.arg(arg);
    }
    cmd.arg("--mcp-config");
    cmd.arg(f.path().join("mcp.json"));
    cmd.arg("--workspace");
    cmd.arg(f.path());
    // "Opening" the page runs `true`: no browser starts on the test machine.
    cmd.env("BROWSER", "true");
    let (mut child, screen, mut keys) = pty::spawn(cmd, 40, 120);
    screen.wait_text("Open it in your browser?");
    let shown = screen.text();
    assert!(
        shown.contains("domain: accounts.example.com")
            && shown.contains("url:    https://accounts.example.com/connect/7d1e"),
        "{shown}"
    );
    keys.press(b"o\n");
    screen.wait_text("the account is connected");
    let status = child.wait().unwrap();
    assert!(status.success(), "{}", screen.text());
    assert_eq!(
        f.answers("url_gate"),
        [
            json!({"tool": "url_gate", "call": "refused"}),
            json!({"tool": "url_gate", "call": "answered"})
        ]
    );
}
