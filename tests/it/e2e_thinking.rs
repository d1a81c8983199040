//! End to end: extended thinking (issue 27, decision 0079) through the real binary in a
//! pty against a local Messages API. `[model] thinking` turns it on in the request; the
//! thinking streams into the conversation as one collapsed line (Ctrl+O shows it); the
//! next request of the turn, after the tool call, carries the thinking block back with its
//! signature, before the tool call, as the API requires.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::support::model_api::{Answer, ModelApi, anthropic_sse, anthropic_text_stream};
use crate::support::pty::{self, Home};

const THOUGHT: &str = "The person wants the text files. A glob will do.";
const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgwkbLDs";

/// A reply that thinks (held open after the thinking, until `release`), then calls glob.
fn thinks_then_globs(release: &Arc<AtomicBool>) -> Answer {
    let (first, second) = THOUGHT.split_at(35);
    let head = anthropic_sse(&[
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":first}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":second}}),
    ]);
    let tail = anthropic_sse(&[
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":SIGNATURE}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"glob","input":{}}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\": \"*.txt\"}"}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}),
        json!({"type":"message_stop"}),
    ]);
    Answer::Held {
        head,
        tail,
        release: release.clone(),
    }
}

#[test]
fn thinking_shows_collapsed_and_goes_back_with_its_signature_after_a_tool_call() {
    let home = Home::new();
    std::fs::write(
        home.path("config/config.toml"),
        "[model]\nthinking = 2000\n",
    )
    .unwrap();
    std::fs::write(home.path("ws/notes.txt"), "notes\n").unwrap();
    let release = Arc::new(AtomicBool::new(false));
    let api = ModelApi::start(vec![
        thinks_then_globs(&release),
        Answer::Stream(anthropic_text_stream(&["Found notes.txt."], true)),
    ]);
    let (mut child, screen, mut keys) = pty::spawn(home.console(&api.url), 30, 110);
    screen.wait_text("claude");
    keys.enter_line(&screen, "list the text files");
    screen.wait_text("✻ thinking… 10 words · Ctrl+O shows it");
    assert!(!screen.text().contains("A glob will do"), "collapsed");
    release.store(true, Ordering::SeqCst);
    screen.wait_text("Found notes.txt.");
    screen.wait_text("✻ thought 10 words");
    assert!(!screen.text().contains("A glob will do"), "still collapsed");
    keys.press(b"\x0f");
    screen.wait_text(THOUGHT);
    keys.press(b"\x04");
    assert!(screen.wait_exit(&mut child).success());

    let requests = api.finish();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(
        requests[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2000})
    );
    assert!(
        requests[0]["max_tokens"].as_u64().unwrap() > 2000,
        "max_tokens leaves room beyond the budget"
    );
    let assistant = &requests[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(assistant["content"][1]["id"], "toolu_1");
}
