//! Frame cost against transcript length: the same screen drawn over 100 and over 10,000
//! messages. Wrapped lines are cached per message and only visible lines are touched, so
//! the ratio should stay near 1 (goal <= 1.5). Prints the ratio at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use toolgate::agent::events::{AgentEvent, ToolOutcome};
use toolgate::tui::{App, ConsoleInfo, Msg, update, view};

fn app_with(messages: usize) -> App {
    let mut app = App::new(
        ConsoleInfo {
            no_color: false,
            ..ConsoleInfo::default()
        },
        Instant::now(),
    );
    for i in 0..messages {
        let event = match i % 4 {
            0 => AgentEvent::UserMessage(format!("question number {i}: what does it do?")),
            1 => AgentEvent::TextDelta(format!(
                "## Answer {i}\n\nIt **reads** the `config` and then:\n\n- checks it\n- reports {i}\n"
            )),
            2 => AgentEvent::ToolCallStarted {
                call_id: format!("c{i}"),
                name: "mcp__docs__search".into(),
                server: Some("docs".into()),
                input: json!({"query": format!("topic {i}")}),
            },
            _ => AgentEvent::ToolCallFinished {
                call_id: format!("c{}", i - 1),
                outcome: ToolOutcome::Ok,
                output: "result line one\nresult line two".into(),
            },
        };
        update(&mut app, Msg::Agent(event));
        if i % 4 == 1 {
            update(&mut app, Msg::Agent(AgentEvent::AssistantMessageDone));
        }
    }
    app
}

/// One frame as the console draws it while a reply streams in: a new delta, then a draw.
fn frame(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    update(app, Msg::Agent(AgentEvent::TextDelta("more ".into())));
    terminal
        .draw(|f| view(black_box(app), f))
        .expect("test backend cannot fail");
}

fn mean_frame_time(messages: usize, frames: u32) -> Duration {
    let mut app = app_with(messages);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("test backend");
    // First frame wraps the visible messages once; measure the steady state.
    frame(&mut app, &mut terminal);
    let start = Instant::now();
    for _ in 0..frames {
        frame(&mut app, &mut terminal);
    }
    start.elapsed() / frames
}

fn bench_render(c: &mut Criterion) {
    let mut group = c.benchmark_group("tui_render");
    for messages in [100usize, 10_000] {
        let mut app = app_with(messages);
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("test backend");
        group.bench_function(format!("{messages}_messages"), |b| {
            b.iter(|| frame(&mut app, &mut terminal))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_render);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let small = mean_frame_time(100, 300);
    let large = mean_frame_time(10_000, 300);
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    println!(
        "tui_render: frame with 100 messages {small:?}, with 10,000 messages {large:?}; ratio {ratio:.2} (goal <= 1.5)"
    );
}
