//! Long sessions against a model API with a context limit (`support::window_api`, both
//! wire formats): a run that reads more than the window holds finishes, a configured
//! window keeps every request under the limit, a resumed compacted session starts small,
//! and in the console `/compact` shrinks the next request and the status line shows the
//! share of the window in use.

use crate::support::jsonl;
use std::path::PathBuf;
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::pty;
use crate::support::window_api::{Say, Seen, WindowApi};

/// The issue's figures: 24 reads of 40 KB files against a 400 KB request limit.
const FILES: usize = 24;
const FILE_BYTES: usize = 40_000;
const LIMIT_BYTES: usize = 400_000;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    /// A workspace with `files` text files of `FILE_BYTES` each, and `config` as the
    /// user's config.toml.
    fn new(files: usize, config: &str) -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["ws", "state", "config"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        std::fs::write(dir.path().join("config/config.toml"), config).expect("config.toml");
        for i in 0..files {
            let line = format!("file {i:02}: the quick brown fox jumps over the lazy dog\n");
            let body = line.repeat(FILE_BYTES / line.len() + 1);
            std::fs::write(
                dir.path().join(format!("ws/f{i:02}.txt")),
                &body[..FILE_BYTES],
            )
            .expect("write a file");
        }
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `toolgate -p PROMPT` against `api` with `provider`, JSONL out, plus `extra` args.
    fn run(&self, api: &WindowApi, provider: &str, prompt: &str, extra: &[&str]) -> Output {
        crate::support::headless_run::on_model_api(
            &api.url,
            provider,
            &self.path("state"),
            &self.path("config"),
            &self.path("ws"),
        )
        .args(["-p", prompt, "--output-format", "jsonl"])
        .args(extra)
        .output()
        .expect("run toolgate")
    }
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// A model that reads the files one by one, then answers; a summary request (no tools)
/// gets a summary. `reads` counts the reads it asked for.
fn reader(reads: Arc<Mutex<usize>>) -> impl FnMut(&Value) -> Say + Send + 'static {
    move |body| {
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return Say::Text("The agent is reading f00..f23 one by one; keep going.".into());
        }
        let mut n = reads.lock().expect("reads");
        if *n < FILES {
            *n += 1;
            Say::Tool {
                name: "read_file".into(),
                input: json!({ "path": format!("f{:02}.txt", *n - 1) }),
            }
        } else {
            Say::Text(format!("All {FILES} files read."))
        }
    }
}

/// The id of the tool call the request answers last: the model needs that result.
fn last_result_answered(body: &Value) -> bool {
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    let text = last.to_string();
    // Anthropic: a tool_result block; OpenAI: a `tool` role message.
    text.contains("tool_result") || last["role"] == "tool"
}

fn assert_finished_within_the_limit(out: &Output, seen: &[Seen], refused_expected: usize) {
    let lines = jsonl(out);
    assert!(
        out.status.success(),
        "exit {:?}; stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let texts: Vec<&str> = of_type(&lines, "text")
        .iter()
        .filter_map(|l| l["text"].as_str())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("All 24 files read.")),
        "the final answer: {texts:?}"
    );
    let refused = seen.iter().filter(|s| s.refused).count();
    assert_eq!(
        refused,
        refused_expected,
        "requests over the limit: {:?}",
        seen.iter().map(|s| s.bytes).collect::<Vec<_>>()
    );
    let compacted = of_type(&lines, "compacted");
    assert!(!compacted.is_empty(), "a compacted line");
    for line in &compacted {
        assert!(
            line["tokens_after"].as_u64() < line["tokens_before"].as_u64(),
            "{line}"
        );
    }
    let finished = of_type(&lines, "tool_finished");
    assert_eq!(finished.len(), FILES, "every read ran");
    // Every request after a read carried that read's result.
    for s in seen
        .iter()
        .filter(|s| !s.is_summary() && !s.refused)
        .skip(1)
    {
        assert!(
            last_result_answered(&s.body),
            "a request without its result"
        );
    }
}

#[test]
fn a_run_that_reads_past_the_window_recovers_once_and_finishes() {
    let home = Home::new(FILES, "");
    let reads = Arc::new(Mutex::new(0));
    let api = WindowApi::start(LIMIT_BYTES, reader(reads.clone()));
    let out = home.run(&api, "anthropic", "read every file", &[]);
    let seen = api.seen();
    assert_finished_within_the_limit(&out, &seen, 1);
    assert_eq!(*reads.lock().expect("reads"), FILES);
    // The refusal named the limit: the requests after it stay under it.
    if let Some(first) = seen.iter().position(|s| s.refused) {
        assert!(seen[first + 1..].iter().all(|s| !s.refused));
    }
}

#[test]
fn chat_completions_context_length_exceeded_is_recovered_the_same_way() {
    let home = Home::new(FILES, "");
    let api = WindowApi::start(LIMIT_BYTES, reader(Arc::new(Mutex::new(0))));
    let out = home.run(&api, "openai", "read every file", &[]);
    assert_finished_within_the_limit(&out, &api.seen(), 1);
}

#[test]
fn a_configured_window_keeps_every_request_under_the_limit_and_resume_starts_small() {
    // 60k tokens is about 240 KB here: below the server's 400 KB.
    let home = Home::new(FILES, "[model]\ncontext_window = 60000\n");
    let api = WindowApi::start(LIMIT_BYTES, reader(Arc::new(Mutex::new(0))));
    let out = home.run(&api, "anthropic", "read every file", &[]);
    let seen = api.seen();
    assert_finished_within_the_limit(&out, &seen, 0);

    // The session log holds the whole history; a resumed run sends the compacted one.
    let log = crate::support::session_log(&home.path("state"));
    let text = std::fs::read_to_string(&log).expect("session log");
    assert!(
        text.contains("\"type\":\"compacted\""),
        "a compacted record"
    );
    assert!(
        text.contains("file 00: the quick brown fox"),
        "the log keeps the first file's content"
    );
    let again = WindowApi::start(LIMIT_BYTES, |_| Say::Text("Noted.".into()));
    let out = home.run(&again, "anthropic", "one more thing", &["--continue"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let resumed = again.seen();
    assert!(resumed.iter().all(|s| !s.refused));
    let first = &resumed[0];
    // The whole history is past the limit (24 × 40 KB); what is sent is not.
    assert!(FILES * FILE_BYTES > LIMIT_BYTES && first.bytes < LIMIT_BYTES);
    let body = first.body.to_string();
    assert!(
        body.contains("toolgate cleared this tool output")
            || body.contains("Summary of the earlier conversation"),
        "the resumed request is the compacted conversation"
    );
    assert!(body.contains("one more thing"));
}

/// The console: the status line's share of the window, and `/compact` making the next
/// request at least 30% smaller after a few large tool results.
#[test]
fn console_compact_shrinks_the_next_request_and_the_status_line_shows_the_share() {
    let home = Home::new(4, "");
    let reads = Arc::new(Mutex::new(0));
    let counter = reads.clone();
    let api = WindowApi::start(LIMIT_BYTES, move |body| {
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return Say::Text("Read four files for the person.".into());
        }
        let mut n = counter.lock().expect("reads");
        if *n < 4 {
            *n += 1;
            Say::Tool {
                name: "read_file".into(),
                input: json!({ "path": format!("f{:02}.txt", *n - 1) }),
            }
        } else {
            Say::Text("Read them all.".into())
        }
    });
    let cmd = pty::anthropic_console(
        &home.path("state"),
        &home.path("config"),
        &home.path("ws"),
        &api.url,
    );
    let (mut child, screen, mut keys) = pty::spawn(cmd, 36, 140);
    screen.wait_text("claude");
    screen.wait_for("the gauge", |t| gauge(t).is_some_and(|p| p < 5));
    keys.enter_line(&screen, "read the four files");
    screen.wait_text("Read them all.");
    // Four 40 KB results in a 200k window: about a tenth of it.
    screen.wait_for("the gauge after the reads", |t| {
        gauge(t).is_some_and(|p| p >= 10)
    });
    // `/context` says what fills the window: the four results are most of it.
    keys.enter_line(&screen, "/context");
    screen.wait_for("the context breakdown", |t| {
        t.contains("Context:") && t.contains("tool results") && t.contains("system prompt")
    });
    let before = api.seen().last().expect("a request").bytes;
    keys.enter_line(&screen, "/compact the files read");
    screen.wait_text("conversation compacted (/compact)");
    keys.enter_line(&screen, "and now?");
    screen.wait_for("the reply after compacting", |_| {
        api.seen().iter().filter(|s| !s.is_summary()).count() >= 6
    });
    let seen = api.seen();
    let summary = seen
        .iter()
        .find(|s| s.is_summary())
        .expect("a summary request");
    assert!(
        summary.body.to_string().contains("the files read"),
        "the focus steers the summary"
    );
    let after = seen.last().expect("the request after /compact").bytes;
    assert!(
        after * 10 <= before * 7,
        "the request after /compact ({after} bytes) is at least 30% smaller than before ({before})"
    );
    keys.press(b"\x04");
    assert!(screen.wait_exit(&mut child).success());
}

/// The percentage the status line shows after "ctx ".
fn gauge(screen: &str) -> Option<u64> {
    let at = screen.find("ctx ")? + 4;
    let digits: String = screen[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// When compacting cannot help (the system prompt and tools alone are over the limit), the
/// turn ends after one retry with an error that says so, not a loop.
#[test]
fn an_overflow_compaction_cannot_fix_ends_with_a_clear_error_after_one_retry() {
    let home = Home::new(0, "");
    let api = WindowApi::start(2_000, |_| Say::Text("never".into()));
    let out = home.run(&api, "anthropic", "hello", &[]);
    assert!(!out.status.success());
    let lines = jsonl(&out);
    let errors: Vec<&str> = of_type(&lines, "error")
        .iter()
        .filter_map(|l| l["message"].as_str())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("prompt is too long")
            && e.contains("Compacting did not bring the request under the model's limit")),
        "{errors:?}"
    );
    let seen = api.seen();
    assert_eq!(seen.len(), 2, "the request and one retry");
    assert!(seen.iter().all(|s| s.refused));
}

/// On the Chat Completions format as well, a configured window keeps every request under the
/// server's limit; and a PreCompact hook (decision 0086) runs before each automatic
/// compaction with Claude Code's fields.
#[test]
fn chat_completions_with_a_configured_window_compacts_in_time_and_pre_compact_hooks_run() {
    let config = r#"[model]
context_window = 60000

[[hooks.PreCompact]]
hooks = [{ type = "command", command = "cat > pre_compact_stdin.json" }]
"#;
    let home = Home::new(FILES, config);
    let api = WindowApi::start(LIMIT_BYTES, reader(Arc::new(Mutex::new(0))));
    let out = home.run(&api, "openai", "read every file", &[]);
    assert_finished_within_the_limit(&out, &api.seen(), 0);
    let stdin = std::fs::read_to_string(home.path("ws/pre_compact_stdin.json"))
        .expect("the PreCompact hook wrote its stdin");
    let stdin: serde_json::Value = serde_json::from_str(&stdin).expect("JSON on stdin");
    assert_eq!(stdin["hook_event_name"], "PreCompact", "{stdin}");
    assert_eq!(stdin["trigger"], "auto", "{stdin}");
}
