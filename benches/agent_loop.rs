//! Loop overhead per tool call: one MCP tool call through the whole agent (pool assembly
//! and system prompt per model call, argument check, policy, session log, events to the
//! front end, the hub round trip) against the bare hub round trip to `toolgate serve docs`.
//! Prints the ratio agent / bare.
//!
//! The model is an in-process stand-in that answers instantly, so what is measured is the
//! loop, not a model.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use toolgate::agent::{self, AgentConfig, AgentHandle};
use toolgate::mcp::{HubOptions, McpHub};
use toolgate::model::{
    ContentBlock, ModelError, ModelProvider, ModelRequest, Role, StopReason, StreamEvent,
};
use toolgate::policy::PersonAnswer;
use toolgate::policy::Policy;
use toolgate::protocol::Event;
use toolgate::protocol::questions::HostRequest;
use toolgate::protocol::{AgentEvent, UiCommand};

/// Tool calls per turn; the per-call time divides a turn by this.
const CALLS_PER_TURN: usize = 10;
const TOOL: &str = "mcp__docs__get_version";

/// Calls `get_version` until the current user message has CALLS_PER_TURN results, then
/// ends the turn.
struct LoopModel;

impl ModelProvider for LoopModel {
    fn label(&self) -> String {
        "bench loop model".into()
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
        let mut done = 0;
        for message in request.messages.iter().rev() {
            if message.role != Role::User {
                continue;
            }
            done += message
                .content
                .iter()
                .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
                .count();
            if message
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::Text { .. }))
            {
                break;
            }
        }
        let events = if done < CALLS_PER_TURN {
            vec![
                StreamEvent::ToolUse {
                    id: format!("call-{done}"),
                    name: TOOL.into(),
                    input: json!({}),
                },
                StreamEvent::Stop(StopReason::ToolUse),
            ]
        } else {
            vec![
                StreamEvent::TextDelta("done".into()),
                StreamEvent::Stop(StopReason::EndTurn),
            ]
        };
        stream::iter(events.into_iter().map(Ok)).boxed()
    }
}

fn hub(workspace: &std::path::Path) -> (McpHub, mpsc::UnboundedReceiver<toolgate::mcp::HubEvent>) {
    let loaded = toolgate::settings::load_servers(&toolgate::settings::LoadOptions {
        workspace: workspace.to_path_buf(),
        ..Default::default()
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        loaded.servers,
        tx,
        HubOptions {
            workspace: workspace.to_path_buf(),
            builtin_exe: env!("CARGO_BIN_EXE_toolgate").into(),
            ..Default::default()
        },
    );
    (hub, rx)
}

/// Drains events until the turn ends; a permission question (if the policy asks about
/// get_version) is answered once for the session.
async fn finish_turn(handle: &mut AgentHandle) {
    loop {
        match handle.events.recv().await {
            Some(AgentEvent::Fact(Event::TurnFinished { .. })) => return,
            Some(AgentEvent::Request(HostRequest::ToolCall(request))) => {
                request.answer(PersonAnswer::AllowSession);
            }
            Some(AgentEvent::Request(other)) => {
                other.dismiss();
            }
            Some(AgentEvent::Fact(Event::Error { message: e })) => panic!("agent error: {e}"),
            Some(_) => {}
            None => panic!("agent stopped"),
        }
    }
}

async fn agent_turn(handle: &mut AgentHandle) {
    handle
        .commands
        .send(UiCommand::Submit("go".into()))
        .await
        .expect("agent running");
    finish_turn(handle).await;
    // Keep the conversation from growing across iterations.
    handle
        .commands
        .send(UiCommand::Clear)
        .await
        .expect("agent running");
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let workspace = tempfile::tempdir().expect("temp dir");
    let state = tempfile::tempdir().expect("temp dir");

    let (bare, _bare_events) = hub(workspace.path());
    rt.block_on(bare.connect("docs"))
        .expect("docs server starts");

    let (agent_hub, agent_events) = hub(workspace.path());
    let mut config = AgentConfig::new(
        Box::new(LoopModel),
        agent_hub,
        agent_events,
        Policy::default(),
        workspace.path().to_path_buf(),
    );
    config.sessions_dir = Some(state.path().join("sessions"));
    // The loop, not the workspace checkpoint an MCP call's turn takes (benches/checkpoint.rs
    // measures that).
    config.checkpoints_dir = None;
    let mut handle = rt.block_on(async { agent::spawn(config) });
    rt.block_on(async {
        handle
            .commands
            .send(UiCommand::Connect("docs".into()))
            .await
            .expect("agent running");
        // Warm-up turn: the connect lands first, a possible question gets its grant.
        agent_turn(&mut handle).await;
    });

    let bare_total = Rc::new(Cell::new((Duration::ZERO, 0u64)));
    let agent_total = Rc::new(Cell::new((Duration::ZERO, 0u64)));
    let mut group = c.benchmark_group("tool_call");
    {
        let totals = bare_total.clone();
        group.bench_function("bare_hub_round_trip", |b| {
            b.iter_custom(|iters| {
                let elapsed = rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let out = bare
                            .call(
                                "docs",
                                "get_version",
                                json!({}),
                                None,
                                CancellationToken::new(),
                            )
                            .await
                            .expect("get_version");
                        assert!(!out.is_error, "{}", out.text);
                    }
                    start.elapsed()
                });
                let (t, n) = totals.get();
                totals.set((t + elapsed, n + iters));
                elapsed
            })
        });
    }
    {
        let totals = agent_total.clone();
        group.bench_function("through_agent_loop", |b| {
            b.iter_custom(|iters| {
                let elapsed = rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        agent_turn(&mut handle).await;
                    }
                    start.elapsed()
                });
                let per_call = elapsed / CALLS_PER_TURN as u32;
                let (t, n) = totals.get();
                totals.set((t + per_call, n + iters));
                per_call
            })
        });
    }
    group.finish();

    let mean = |cell: &Rc<Cell<(Duration, u64)>>| {
        let (total, n) = cell.get();
        total.as_secs_f64() / n.max(1) as f64
    };
    let (bare_mean, agent_mean) = (mean(&bare_total), mean(&agent_total));
    println!(
        "tool call: bare hub {:.1} µs, through the agent loop {:.1} µs, ratio agent/bare = {:.2}",
        bare_mean * 1e6,
        agent_mean * 1e6,
        agent_mean / bare_mean
    );

    rt.block_on(async {
        let _ = handle.commands.send(UiCommand::Shutdown).await;
        while handle.events.recv().await.is_some() {}
        bare.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
