//! The model API misbehaving under the real binary: overloaded (529 with `retry-after`)
//! for a while or for good, a time budget spent, and a reply whose stream is cut
//! mid-body. The API is `support::model_api` (a raw socket on 127.0.0.1 speaking the
//! Messages API); toolgate runs headless (`-p`, JSONL and text output) and in a pty.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::model_api::{Answer, ModelApi, anthropic_text_stream};
use crate::support::pty;

/// A workspace, a state dir and a user config dir whose config.toml is `config`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(config: &str) -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["ws", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        std::fs::write(dir.path().join("config/config.toml"), config).expect("config.toml");
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `toolgate -p PROMPT` against `api`, with `format` output.
    fn prompt(&self, api: &ModelApi, format: &str) -> Output {
        crate::support::headless_run::on_model_api(
            &api.url,
            "anthropic",
            &self.path("state"),
            &self.path("config"),
            &self.path("ws"),
        )
        .args(["-p", "hello", "--output-format", format])
        .output()
        .expect("run toolgate")
    }

    /// The session log's records (the one session of this home).
    fn session_records(&self) -> Vec<Value> {
        records(
            &std::fs::read_to_string(crate::support::session_log(&self.path("state")))
                .expect("log"),
        )
    }
}

fn records(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

fn jsonl(out: &Output) -> Vec<Value> {
    records(&String::from_utf8_lossy(&out.stdout))
}

fn budget(attempts: u32, seconds: &str) -> String {
    format!("[model]\nretry_max_attempts = {attempts}\nretry_max_seconds = {seconds}\n")
}

#[test]
fn overloaded_three_times_then_the_reply_arrives_and_each_retry_was_reported() {
    let home = Home::new(&budget(5, "30"));
    let mut script = vec![Answer::overloaded_retry_after("0"); 3];
    script.push(Answer::Stream(anthropic_text_stream(
        &["All ", "good."],
        true,
    )));
    let api = ModelApi::start(script);
    let out = home.prompt(&api, "jsonl");
    let lines = jsonl(&out);
    assert!(
        out.status.success(),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let retries: Vec<(u64, u64)> = of_type(&lines, "model_retry")
        .iter()
        .map(|r| {
            assert_eq!(r["reason"], "overloaded", "{r}");
            assert_eq!(r["detail"], "HTTP 529: Overloaded", "{r}");
            assert_eq!(r["max_attempts"], 5, "{r}");
            (
                r["attempt"].as_u64().unwrap(),
                r["wait_ms"].as_u64().unwrap(),
            )
        })
        .collect();
    // `retry-after: 0` is honoured: no backoff of its own on top.
    assert_eq!(retries, [(2, 0), (3, 0), (4, 0)]);
    let texts: Vec<&Value> = of_type(&lines, "text");
    assert_eq!(texts.len(), 1, "{lines:#?}");
    assert_eq!(texts[0]["text"], "All good.");
    assert_eq!(api.finish().len(), 4);
    assert_eq!(of_type(&home.session_records(), "model_retry").len(), 3);
}

#[test]
fn overloaded_for_good_gives_up_naming_the_attempts_and_the_budget() {
    let home = Home::new(&budget(4, "30"));
    let api = ModelApi::start(vec![Answer::overloaded_retry_after("0"); 4]);
    let out = home.prompt(&api, "jsonl");
    let lines = jsonl(&out);
    assert_eq!(out.status.code(), Some(1), "{lines:#?}");
    assert_eq!(of_type(&lines, "model_retry").len(), 3, "{lines:#?}");
    let errors = of_type(&lines, "error");
    assert_eq!(
        errors[0]["message"],
        "anthropic: gave up after 4 attempts (at most 4 attempts within 30s); last error: HTTP 529: Overloaded"
    );
    assert_eq!(api.finish().len(), 4);
}

#[test]
fn a_spent_time_budget_ends_the_retries_and_says_so() {
    // No `retry-after`: backoff, cut short by a half-second budget long before the
    // attempts run out.
    let home = Home::new(&budget(1000, "0.5"));
    let api = ModelApi::start(vec![Answer::Overloaded { headers: vec![] }; 1000]);
    let out = home.prompt(&api, "jsonl");
    let lines = jsonl(&out);
    assert_eq!(out.status.code(), Some(1), "{lines:#?}");
    let message = of_type(&lines, "error")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains(
            ": the 0.5s retry budget is spent (at most 1000 attempts within 0.5s); last error: HTTP 529: Overloaded"
        ),
        "{message}"
    );
    let made = api.requests().len();
    assert_eq!(of_type(&lines, "model_retry").len(), made - 1, "{lines:#?}");

    // A server asking for longer than the budget leaves is not waited for.
    let home = Home::new(&budget(10, "30"));
    let api = ModelApi::start(vec![Answer::overloaded_retry_after("120")]);
    let lines = jsonl(&home.prompt(&api, "jsonl"));
    assert_eq!(
        of_type(&lines, "error")[0]["message"],
        "anthropic: gave up after 1 attempt: the server asked to wait 120s, more than is left of the 30s retry budget (at most 10 attempts within 30s); last error: HTTP 529: Overloaded"
    );
    assert_eq!(api.finish().len(), 1);
}

fn cut_then_whole() -> Vec<Answer> {
    vec![
        Answer::Cut(anthropic_text_stream(&["Half of ", "the answer"], false)),
        Answer::Stream(anthropic_text_stream(&["The whole ", "answer."], true)),
    ]
}

#[test]
fn a_stream_cut_mid_reply_is_retried_and_the_shown_text_is_kept_marked_and_logged() {
    let home = Home::new("");
    let api = ModelApi::start(cut_then_whole());
    let out = home.prompt(&api, "jsonl");
    let lines = jsonl(&out);
    assert!(
        out.status.success(),
        "{lines:#?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["type"].as_str())
        .filter(|k| ["reply_cut", "model_retry", "text"].contains(k))
        .collect();
    assert_eq!(kinds, ["reply_cut", "model_retry", "text"], "{lines:#?}");
    assert_eq!(
        *of_type(&lines, "reply_cut")[0],
        json!({"type": "reply_cut", "text": "Half of the answer", "retrying": true})
    );
    let retry = of_type(&lines, "model_retry")[0];
    assert_eq!(
        (retry["reason"].as_str(), retry["attempt"].as_u64()),
        (Some("cut"), Some(2))
    );
    assert_eq!(of_type(&lines, "text")[0]["text"], "The whole answer.");

    // The retry is the same request: the cut text never reached the model.
    let requests = api.finish();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1]);

    // The log keeps what was shown, apart from the conversation; a resume reads it back.
    let log = home.session_records();
    let cut = of_type(&log, "reply_cut");
    assert_eq!(cut.len(), 1, "{log:#?}");
    assert_eq!(cut[0]["text"], "Half of the answer");
    let assistant: Vec<&Value> = of_type(&log, "message")
        .into_iter()
        .filter(|m| m["message"]["role"] == "assistant")
        .collect();
    assert_eq!(assistant.len(), 1);
    assert_eq!(
        assistant[0]["message"]["content"],
        json!([{"type": "text", "text": "The whole answer."}])
    );
    let file = crate::support::session_log(&home.path("state"));
    let id = file.file_stem().unwrap().to_str().unwrap();
    let restored = toolgate::journal::load(&home.path("state/sessions"), id).unwrap();
    assert_eq!(restored.cut_replies.len(), 1);
    assert_eq!(restored.cut_replies[0].0, 1, "after the user's message");
    assert_eq!(restored.cut_replies[0].1.text, "Half of the answer");
    assert_eq!(restored.messages.len(), 2);
}

#[test]
fn text_output_marks_the_cut_where_it_happened() {
    let home = Home::new("");
    let api = ModelApi::start(cut_then_whole());
    let out = home.prompt(&api, "text");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Half of the answer\n— reply cut, retrying\nThe whole answer.\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("toolgate: reply cut, retrying") && stderr.contains("(attempt 2)"),
        "{stderr}"
    );
    api.finish();
}

/// The console: the countdown on the status line while overloaded, the cut text kept and
/// marked in the conversation, the reply after it; and the same again after a resume.
#[test]
fn console_counts_down_the_retry_and_marks_the_cut_reply_also_after_resume() {
    let home = Home::new("");
    let mut script = vec![Answer::overloaded_retry_after("3")];
    script.extend(cut_then_whole());
    let api = ModelApi::start(script);
    let command = || {
        pty::anthropic_console(
            &home.path("state"),
            &home.path("config"),
            &home.path("ws"),
            &api.url,
        )
    };
    let (mut child, screen, mut keys) = pty::spawn(command(), 36, 120);
    screen.wait_text("claude");
    keys.enter_line(&screen, "hello");
    screen.wait_text("overloaded, retrying in");
    screen.wait_text("(attempt 2)");
    screen.wait_for("the cut reply, marked, and the whole one", |t| {
        t.contains("Half of the answer")
            && t.contains("— reply cut, retrying")
            && t.contains("The whole answer.")
    });
    keys.press(b"\x04");
    assert!(screen.wait_exit(&mut child).success());

    let mut resume = command();
    resume.arg("--continue");
    let (mut child, screen, mut keys) = pty::spawn(resume, 36, 120);
    screen.wait_for("the restored conversation with the cut reply", |t| {
        t.contains("Half of the answer")
            && t.contains("— reply cut")
            && t.contains("The whole answer.")
    });
    keys.press(b"\x04");
    assert!(screen.wait_exit(&mut child).success());
    assert_eq!(api.finish().len(), 3);
}
