//! The context bookkeeping a request costs at 50, 100 and 200 turns of history: the new
//! messages' estimates, the sum over the kept per-message estimates, and the threshold
//! check (what `Agent` does before every model call). It must grow no faster than the
//! history kept: the per-message cost at 200 turns should match the one at 50. For scale,
//! the same request re-counting every message from its text (what the per-message cache
//! avoids), and redoing a compaction record over 200 turns (what a resume does once).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use serde_json::json;
use toolgate::agent::context::{ContextMeter, message_tokens};
use toolgate::journal::redo::{ClearedOutput, CompactionRecord, apply};
use toolgate::model::{ContentBlock, Message, Role};
use toolgate::protocol::{CompactionReport, CompactionTrigger};

const TURNS: [usize; 3] = [50, 100, 200];

/// One turn as a coding session has them: a request, a tool call with a 4 KB result, a
/// reply.
fn turn(i: usize) -> [Message; 3] {
    [
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: format!("step {i}: look at src/module_{i}.rs and fix the failing test"),
            }],
        },
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: format!("toolu_{i}"),
                name: "read_file".into(),
                input: json!({ "path": format!("src/module_{i}.rs") }),
            }],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("toolu_{i}"),
                content: format!("fn module_{i}() {{}}\n").repeat(4_096 / 20),
                is_error: false,
                images: vec![],
            }],
        },
    ]
}

fn history(turns: usize) -> Vec<Message> {
    (0..turns).flat_map(turn).collect()
}

/// One request's bookkeeping with the cache: estimate the two new messages, sum, check.
fn with_cache(cached: &mut Vec<u64>, new: &[Message], meter: &ContextMeter) -> bool {
    for message in new {
        cached.push(message_tokens(message));
    }
    let over = meter.over_threshold(cached.iter().sum::<u64>());
    cached.truncate(cached.len() - new.len());
    over
}

/// The same without it: every message counted from its text.
fn without_cache(messages: &[Message], meter: &ContextMeter) -> bool {
    meter.over_threshold(messages.iter().map(message_tokens).sum::<u64>())
}

fn per_request(mut f: impl FnMut() -> bool) -> Duration {
    let rounds = 2_000;
    let start = Instant::now();
    for _ in 0..rounds {
        black_box(f());
    }
    start.elapsed() / rounds
}

fn main() {
    let full = !std::env::args().any(|a| a == "--test");
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let meter = ContextMeter::new(200_000, 80);
    let new = turn(9_999);
    let mut group = criterion.benchmark_group("context_bookkeeping");
    for turns in TURNS {
        let messages = history(turns);
        let mut cached: Vec<u64> = messages.iter().map(message_tokens).collect();
        group.bench_with_input(BenchmarkId::new("cached", turns), &turns, |b, _| {
            b.iter(|| with_cache(&mut cached, &new[1..], &meter))
        });
    }
    group.finish();
    if !full {
        return;
    }
    let mut rows = Vec::new();
    for turns in TURNS {
        let messages = history(turns);
        let mut cached: Vec<u64> = messages.iter().map(message_tokens).collect();
        let fast = per_request(|| with_cache(&mut cached, &new[1..], &meter));
        let slow = per_request(|| without_cache(&messages, &meter));
        let per_message = fast.as_nanos() as f64 / messages.len() as f64;
        println!(
            "{turns} turns ({} messages): {:?} per request with the cache ({per_message:.2} ns per message kept), {:?} re-counting every message ({:.0}x)",
            messages.len(),
            fast,
            slow,
            slow.as_nanos() as f64 / fast.as_nanos().max(1) as f64
        );
        rows.push(per_message);
    }
    println!(
        "per-message cost, 200 turns / 50 turns: {:.2} (1 = linear in the history kept)",
        rows[2] / rows[0]
    );
    let messages = history(200);
    let record = CompactionRecord {
        report: CompactionReport {
            trigger: CompactionTrigger::Auto,
            tokens_before: 0,
            tokens_after: 0,
            cleared_outputs: 100,
            summarized_messages: 300,
            kept_messages: 300,
        },
        cleared: (0..100)
            .map(|i| ClearedOutput {
                call_id: format!("toolu_{i}"),
                note: "cleared".into(),
            })
            .collect(),
        kept_from: 300,
        summary: Some("summary".into()),
        focus: None,
    };
    let start = Instant::now();
    for _ in 0..100 {
        let mut copy = messages.clone();
        apply(&mut copy, &record);
        black_box(copy);
    }
    println!(
        "redoing a compaction over 200 turns (a resume): {:?} (with cloning the history)",
        start.elapsed() / 100
    );
}
