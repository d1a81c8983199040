//! Tool-call round trip through `McpHub` to `toolgate serve docs` over stdio: criterion's
//! estimate, then calls/s and p50/p99 latency from a separate loop of sequential calls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use criterion::Criterion;
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{HubOptions, McpHub};
use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

const SERVER: &str = "docs";
const TIMED_CALLS: usize = 2_000;

fn hub() -> McpHub {
    let config = ServerConfig {
        name: SERVER.to_string(),
        transport: ServerTransport::Builtin {
            server: "docs".to_string(),
            args: vec![],
        },
        source: ConfigSource::Embedded,
        call_timeout_ms: 60_000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    };
    // Events are not needed here; the hub tolerates a closed receiver.
    let (events, _) = mpsc::unbounded_channel();
    let options = HubOptions {
        builtin_exe: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
        ..HubOptions::default()
    };
    McpHub::with_options(vec![config], events, options)
}

async fn call(hub: &McpHub, tool: &str, arguments: serde_json::Value) {
    let out = hub
        .call(SERVER, tool, arguments, None, CancellationToken::new())
        .await
        .expect("docs call");
    // A benchmark of error answers would be meaningless.
    assert!(!out.is_error, "{tool} failed: {}", out.text);
}

fn search_arguments() -> serde_json::Value {
    json!({ "query": "permission rules", "limit": 5 })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Sequential calls, each timed: calls/s and latency percentiles, printed.
fn timed_loop(
    runtime: &tokio::runtime::Runtime,
    hub: &McpHub,
    calls: usize,
    tool: &str,
    arguments: serde_json::Value,
) {
    let mut latencies = Vec::with_capacity(calls);
    let total = runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..calls {
            let t = Instant::now();
            call(hub, tool, arguments.clone()).await;
            latencies.push(t.elapsed());
        }
        start.elapsed()
    });
    latencies.sort();
    println!(
        "docs {tool} round trip over stdio, {calls} sequential calls: {:.0} calls/s, p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        calls as f64 / total.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e6,
        percentile(&latencies, 0.99).as_secs_f64() * 1e6,
        latencies[latencies.len() - 1].as_secs_f64() * 1e6,
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let hub = hub();
    let tools = runtime
        .block_on(hub.connect(SERVER))
        .expect("connect to toolgate serve docs");
    assert!(tools.iter().any(|t| t.name == "search"));

    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    criterion.bench_function("docs_search_roundtrip", |b| {
        b.to_async(&runtime)
            .iter(|| call(&hub, "search", search_arguments()))
    });
    criterion.final_summary();

    let full = std::env::args().any(|a| a == "--bench");
    let calls = if full { TIMED_CALLS } else { 20 };
    println!();
    timed_loop(&runtime, &hub, calls, "search", search_arguments());
    // Next to no work on the server: what the transport and both rmcp stacks cost alone.
    timed_loop(&runtime, &hub, calls, "get_version", json!({}));
    runtime.block_on(hub.shutdown());
}
