//! Console frame cost against what is on screen and what changed. Each case is drawn in two
//! sizes and the ratio printed at the end (one run, so the ratios compare like with like):
//!
//! - transcript length: the same screen over 100 and over 10,000 messages (wrapped lines are
//!   cached per message and only visible lines touched; goal <= 1.5);
//! - pool size: a frame with 6 tools and with 500 tools in the pool (groups and schemas are
//!   computed when the snapshot arrives, the panel builds only its visible rows; goal <= 1.2);
//! - streamed message length: one delta plus its frame on a 20-line and on a 20,000-line
//!   message still streaming (finished blocks are kept, only the last block is rendered
//!   again; goal <= 1.5).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
// crossterm's `Event` is the terminal's in this file; the agent's facts are `Fact`.
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use toolgate::protocol::Event as Fact;

use toolgate::policy::{Decision, RuleSource, Verdict};
use toolgate::protocol::{AgentEvent, PoolEntry, PoolTool, PoolUpdate, ToolOrigin, ToolOutcome};
use toolgate::protocol::{Live, ToolCallStart, View};
use toolgate::tui::{App, ConsoleInfo, Msg, update, view};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

fn send(app: &mut App, msg: Msg) {
    let _ = update(app, msg);
}

fn new_app() -> App {
    let mut app = App::new(
        ConsoleInfo {
            no_color: false,
            ..ConsoleInfo::default()
        },
        Instant::now(),
    );
    send(&mut app, Msg::Terminal(Event::Resize(WIDTH, HEIGHT)));
    app
}

fn app_with(messages: usize) -> App {
    let mut app = new_app();
    for i in 0..messages {
        let event = match i % 4 {
            0 => AgentEvent::Fact(Fact::User {
                text: format!("question number {i}: what does it do?"),
            }),
            1 => AgentEvent::Live(Live::TextDelta(format!(
                "## Answer {i}\n\nIt **reads** the `config` and then:\n\n- checks it\n- reports {i}\n"
            ))),
            2 => AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
                call_id: format!("c{i}").into(),
                name: "mcp__docs__search".into(),
                server: Some("docs".into()),
                input: json!({"query": format!("topic {i}")}),
            })),
            _ => AgentEvent::Fact(Fact::ToolFinished {
                call_id: format!("c{}", i - 1).into(),
                outcome: ToolOutcome::Ok,
                output: "result line one\nresult line two".into(),
                full_output_path: None,
                name: String::new(),
            }),
        };
        send(&mut app, Msg::Agent(event));
        if i % 4 == 1 {
            send(
                &mut app,
                Msg::Agent(AgentEvent::Live(Live::AssistantMessageDone)),
            );
        }
    }
    app
}

fn verdict(decision: Decision) -> Verdict {
    Verdict {
        decision,
        rule: "default: unlisted MCP tool".into(),
        source: RuleSource::Default,
    }
}

/// The six starting tools, plus `mcp_tools` tools spread over servers of 38 tools each.
fn pool(mcp_tools: usize) -> Vec<PoolEntry> {
    let mut out: Vec<PoolEntry> = ["bash", "read_file", "write_file", "edit_file", "glob"]
        .into_iter()
        .map(|name| PoolEntry {
            tool: PoolTool::builtin(name, "a built-in", json!({"type": "object"})),
            verdict: verdict(Decision::Allow),
        })
        .collect();
    let connect = PoolTool {
        origin: ToolOrigin::Builtin { connector: true },
        ..PoolTool::builtin("connect_mcp", "connect", json!({"type": "object"}))
    };
    out.push(PoolEntry {
        tool: connect,
        verdict: verdict(Decision::Allow),
    });
    for i in 0..mcp_tools {
        let server = format!("server{:02}", i / 38);
        let name = format!("tool_{i:03}");
        let properties: serde_json::Map<String, serde_json::Value> = (0..8)
            .map(|p| {
                (
                    format!("field_{p}"),
                    json!({"type": "string", "description": "a field"}),
                )
            })
            .collect();
        let mut tool = PoolTool {
            name: format!("mcp__{server}__{name}"),
            ..PoolTool::builtin(
                "bash",
                "Does one thing on the server",
                json!({"type": "object", "properties": properties}),
            )
        };
        tool.origin = ToolOrigin::Mcp {
            server: server.into(),
            tool: name,
        };
        out.push(PoolEntry {
            tool,
            verdict: verdict(Decision::Ask {
                why: "unlisted MCP tool".into(),
            }),
        });
    }
    out
}

/// A console with 100 messages and a pool of `tools` tools; with `focused` the pool has the
/// keyboard, its last tool is selected and its details cover the conversation.
fn app_with_pool(tools: usize, focused: bool) -> App {
    let mut app = app_with(100);
    send(
        &mut app,
        Msg::Agent(AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot: pool(tools - 6),
            added: vec![],
            removed: vec![],
            ..Default::default()
        }))),
    );
    if focused {
        let key = |code| Msg::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        send(&mut app, key(KeyCode::Tab));
        for _ in 0..tools {
            send(&mut app, key(KeyCode::Down));
        }
    }
    app
}

/// Markdown as a model writes it, `lines` lines long, ending in a paragraph still open.
fn long_answer(lines: usize) -> String {
    let mut text = String::new();
    let mut count = 0;
    let mut section = 0;
    while count + 14 <= lines {
        text.push_str(&format!(
            "## Step {section}\n\nThe service **reads** its `config` and checks every entry\n\
             against the schema before it starts.\n\n- first it loads the file\n\
             - then it validates section {section}\n\n```rust\nfn step_{section}() {{\n    \
             run({section});\n}}\n```\n\n"
        ));
        count += 14;
        section += 1;
    }
    while count + 1 < lines {
        text.push_str("One more line of the closing paragraph.\n");
        count += 1;
    }
    text.push_str("The answer continues");
    text
}

/// A console in the middle of streaming a `lines`-line answer.
fn app_streaming(lines: usize) -> App {
    let mut app = app_with(100);
    let text = long_answer(lines);
    // Delivered in pieces like a stream; only the end result matters here.
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let mut cut = rest.len().min(4096);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        send(
            &mut app,
            Msg::Agent(AgentEvent::Live(Live::TextDelta(rest[..cut].into()))),
        );
        rest = &rest[cut..];
    }
    app
}

/// What a model streams: words, with a paragraph break every 48 deltas (so the open
/// paragraph stays the size of a real one however many frames are measured).
const WORDS: [&str; 8] = [
    "The ",
    "service ",
    "reads ",
    "its ",
    "**config** ",
    "and ",
    "checks ",
    "it. ",
];

/// One frame as the console draws it while a reply streams in: a new delta, then a draw.
fn frame(app: &mut App, terminal: &mut Terminal<TestBackend>, n: &mut usize) {
    *n += 1;
    let delta = if n.is_multiple_of(48) {
        "\n\n"
    } else {
        WORDS[*n % WORDS.len()]
    };
    send(
        app,
        Msg::Agent(AgentEvent::Live(Live::TextDelta(delta.into()))),
    );
    terminal
        .draw(|f| view(black_box(app), f))
        .expect("test backend cannot fail");
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test backend")
}

/// Mean time of one frame for each of two consoles, measured in alternating batches (so a
/// change in machine load hits both alike); the median of 9 batch means each.
fn compare_frame_times(mut a: App, mut b: App, frames: u32) -> (Duration, Duration) {
    let (mut ta, mut tb) = (terminal(), terminal());
    let (mut na, mut nb) = (0, 0);
    // First frames wrap what is visible once; measure the steady state.
    for _ in 0..20 {
        frame(&mut a, &mut ta, &mut na);
        frame(&mut b, &mut tb, &mut nb);
    }
    let batch = |app: &mut App, terminal: &mut Terminal<TestBackend>, n: &mut usize| {
        let start = Instant::now();
        for _ in 0..frames {
            frame(app, terminal, n);
        }
        start.elapsed() / frames
    };
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        sa.push(batch(&mut a, &mut ta, &mut na));
        sb.push(batch(&mut b, &mut tb, &mut nb));
    }
    sa.sort();
    sb.sort();
    (sa[4], sb[4])
}

fn bench_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("tui_render");
    let mut run = |name: String, mut app: App| {
        let mut terminal = terminal();
        let mut n = 0;
        group.bench_function(name, |b| b.iter(|| frame(&mut app, &mut terminal, &mut n)));
    };
    for messages in [100usize, 10_000] {
        run(format!("{messages}_messages"), app_with(messages));
    }
    for tools in [6usize, 500] {
        run(format!("{tools}_tools"), app_with_pool(tools, false));
    }
    for lines in [20usize, 20_000] {
        run(
            format!("delta_on_{lines}_line_message"),
            app_streaming(lines),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_render);

fn ratio_line(what: &str, small: (&str, Duration), large: (&str, Duration), goal: f64) {
    let ratio = large.1.as_secs_f64() / small.1.as_secs_f64();
    println!(
        "tui_render: {what}: {} {:?}, {} {:?}; ratio {ratio:.2} (goal <= {goal})",
        small.0, small.1, large.0, large.1
    );
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let (small, large) = compare_frame_times(app_with(100), app_with(10_000), 200);
    ratio_line(
        "frame by transcript length",
        ("100 messages", small),
        ("10,000 messages", large),
        1.5,
    );
    let (six, many) = compare_frame_times(app_with_pool(6, false), app_with_pool(500, false), 200);
    ratio_line(
        "frame by pool size",
        ("6 tools", six),
        ("500 tools", many),
        1.2,
    );
    // Diagnostic: from 50 tools on the panel is full, so what is left between 6 and 500 is
    // drawing a full panel rather than a short one, not the size of the pool.
    let (fifty, many) =
        compare_frame_times(app_with_pool(50, false), app_with_pool(500, false), 200);
    ratio_line(
        "frame by pool size, panel full in both",
        ("50 tools", fifty),
        ("500 tools", many),
        1.2,
    );
    // The pool focused, its last tool selected and that tool's details shown (with 6 tools
    // the last one is a built-in with a one-line schema, a different screen; 50 is alike).
    let (fifty, many) = compare_frame_times(app_with_pool(50, true), app_with_pool(500, true), 200);
    ratio_line(
        "frame by pool size, pool focused, last tool's details shown",
        ("50 tools", fifty),
        ("500 tools", many),
        1.2,
    );
    let (short, long) = compare_frame_times(app_streaming(20), app_streaming(20_000), 200);
    ratio_line(
        "delta + frame by streamed message length",
        ("20 lines", short),
        ("20,000 lines", long),
        1.5,
    );
}
