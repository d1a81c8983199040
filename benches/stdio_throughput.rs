//! Tool calls over stdio, side by side: toolgate's client (`McpHub::call`) and the official
//! TypeScript SDK client (tests/interop/bench_client.mjs) against the same servers in the
//! same run — `toolgate serve docs` (search) and `@modelcontextprotocol/server-everything`
//! (echo) — plus connect time for 1 and 10 servers in parallel. Prints ratios and a summary
//! table; criterion measures the per-call time of toolgate's client as well.
//!
//! Needs the pinned npm packages: run `.ci/interop-setup.sh` first.
//! Run: `cargo bench --bench stdio_throughput`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use criterion::Criterion;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate::mcp::{HubOptions, McpHub};
use toolgate::settings::{ConfigSource, ServerConfig, ServerTransport};

/// Sequential calls per client and server: enough for a stable p99, short enough for CI.
const CALLS: usize = 2_000;
const WARMUP: usize = 50;
/// Connect measurements are repeated; the median is reported.
const CONNECT_ROUNDS: usize = 5;
const PARALLEL_SERVERS: usize = 10;

fn toolgate_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_toolgate"))
}

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

fn everything_entry() -> PathBuf {
    let path =
        interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file()
            && interop_dir()
                .join("node_modules/@modelcontextprotocol/sdk")
                .is_dir(),
        "{} is missing: run .ci/interop-setup.sh (needs node and npm) before this benchmark",
        path.display()
    );
    path
}

/// One server to benchmark against, the tool called on it and that tool's arguments.
struct Target {
    label: &'static str,
    tool: &'static str,
    arguments: Value,
    command: String,
    args: Vec<String>,
}

impl Target {
    fn config(&self, name: &str) -> ServerConfig {
        ServerConfig {
            name: name.to_string(),
            transport: ServerTransport::Stdio {
                command: self.command.clone(),
                args: self.args.clone(),
                env: BTreeMap::new(),
                cwd: None,
            },
            source: ConfigSource::Embedded,
            call_timeout_ms: 30_000,
            sandbox: Default::default(),
            pool: Default::default(),
            always_load: false,
        }
    }
}

fn targets() -> Vec<Target> {
    vec![
        Target {
            label: "toolgate serve docs / search",
            tool: "search",
            arguments: json!({"query": "deny rule precedence", "limit": 5}),
            command: toolgate_exe().display().to_string(),
            args: vec!["serve".into(), "docs".into()],
        },
        // A near-free tool on a Rust server: what is left is mostly the two clients' own cost.
        Target {
            label: "toolgate serve docs / get_version",
            tool: "get_version",
            arguments: json!({}),
            command: toolgate_exe().display().to_string(),
            args: vec!["serve".into(), "docs".into()],
        },
        Target {
            label: "server-everything / echo",
            tool: "echo",
            arguments: json!({"message": "hello from the benchmark"}),
            command: "node".into(),
            args: vec![everything_entry().display().to_string(), "stdio".into()],
        },
    ]
}

#[derive(Debug, Clone, Copy)]
struct CallStats {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn hub(configs: Vec<ServerConfig>) -> McpHub {
    let (events, _ignored) = mpsc::unbounded_channel();
    let options = HubOptions {
        builtin_exe: toolgate_exe(),
        ..HubOptions::default()
    };
    McpHub::with_options(configs, events, options)
}

async fn call_once(hub: &McpHub, target: &Target) {
    let out = hub
        .call(
            "bench",
            target.tool,
            target.arguments.clone(),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", target.label));
    assert!(!out.is_error, "{}: {}", target.label, out.text);
}

async fn toolgate_calls(target: &Target) -> CallStats {
    let hub = hub(vec![target.config("bench")]);
    hub.connect("bench")
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", target.label));
    for _ in 0..WARMUP {
        call_once(&hub, target).await;
    }
    let mut latencies = Vec::with_capacity(CALLS);
    let start = Instant::now();
    for _ in 0..CALLS {
        let t0 = Instant::now();
        call_once(&hub, target).await;
        latencies.push(t0.elapsed());
    }
    let total = start.elapsed();
    hub.shutdown().await;
    latencies.sort();
    CallStats {
        calls_per_sec: CALLS as f64 / total.as_secs_f64(),
        p50: percentile(&latencies, 50.0),
        p99: percentile(&latencies, 99.0),
    }
}

/// Runs the TypeScript SDK client script and returns its JSON stats.
fn typescript(mode_args: &[String], target: &Target) -> Value {
    let output = Command::new("node")
        .arg(interop_dir().join("bench_client.mjs"))
        .args(mode_args)
        .arg("--")
        .arg(&target.command)
        .args(&target.args)
        .output()
        .expect("spawn node for bench_client.mjs");
    assert!(
        output.status.success(),
        "bench_client.mjs failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("bench_client.mjs prints JSON")
}

fn micros(v: &Value, key: &str) -> Duration {
    Duration::from_micros(v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}")))
}

fn typescript_calls(target: &Target) -> CallStats {
    let args: Vec<String> = [
        "calls",
        "--calls",
        &CALLS.to_string(),
        "--warmup",
        &WARMUP.to_string(),
        "--tool",
        target.tool,
        "--args",
        &target.arguments.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let v = typescript(&args, target);
    CallStats {
        calls_per_sec: v["calls_per_sec"].as_f64().expect("calls_per_sec"),
        p50: micros(&v, "p50_us"),
        p99: micros(&v, "p99_us"),
    }
}

/// Wall time to connect `n` servers at once (spawn, handshake, tools/list), median of rounds.
async fn toolgate_connect(target: &Target, n: usize) -> Duration {
    let mut rounds = Vec::with_capacity(CONNECT_ROUNDS);
    for _ in 0..CONNECT_ROUNDS {
        let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
        let hub = hub(names.iter().map(|name| target.config(name)).collect());
        let start = Instant::now();
        let connected = futures::future::join_all(names.iter().map(|name| hub.connect(name))).await;
        rounds.push(start.elapsed());
        for result in connected {
            result.unwrap_or_else(|e| panic!("connect {}: {e}", target.label));
        }
        hub.shutdown().await;
    }
    rounds.sort();
    rounds[rounds.len() / 2]
}

/// Diagnostic only, never used for the goal: the same `n` servers, each through its own hub,
/// shows how much of the single-hub figure is the hub's connect lock rather than the
/// processes and handshakes themselves.
async fn toolgate_connect_separate_hubs(target: &Target, n: usize) -> Duration {
    let mut rounds = Vec::with_capacity(CONNECT_ROUNDS);
    for _ in 0..CONNECT_ROUNDS {
        let hubs: Vec<McpHub> = (0..n).map(|_| hub(vec![target.config("s")])).collect();
        let start = Instant::now();
        let connected = futures::future::join_all(hubs.iter().map(|h| h.connect("s"))).await;
        rounds.push(start.elapsed());
        for result in connected {
            result.unwrap_or_else(|e| panic!("connect {}: {e}", target.label));
        }
        futures::future::join_all(hubs.iter().map(|h| h.shutdown())).await;
    }
    rounds.sort();
    rounds[rounds.len() / 2]
}

fn typescript_connect(target: &Target, n: usize) -> Duration {
    let mut rounds: Vec<Duration> = (0..CONNECT_ROUNDS)
        .map(|_| {
            let v = typescript(
                &["connect".into(), "--servers".into(), n.to_string()],
                target,
            );
            micros(&v, "total_us")
        })
        .collect();
    rounds.sort();
    rounds[rounds.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn criterion_per_call(c: &mut Criterion, rt: &Runtime, targets: &[Target]) {
    let mut group = c.benchmark_group("toolgate_stdio_call");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for target in targets {
        let hub = hub(vec![target.config("bench")]);
        rt.block_on(hub.connect("bench"))
            .unwrap_or_else(|e| panic!("connect {}: {e}", target.label));
        group.bench_function(target.label, |b| {
            b.to_async(rt).iter(|| call_once(&hub, target))
        });
        rt.block_on(hub.shutdown());
    }
    group.finish();
}

fn main() {
    // The hub resolves `serve` through $TOOLGATE_EXE when its own executable is not toolgate.
    // SAFETY: set before the runtime or any other thread exists.
    unsafe { std::env::set_var("TOOLGATE_EXE", toolgate_exe()) };
    let rt = Runtime::new().expect("tokio runtime");
    let targets = targets();

    let mut rows = Vec::new();
    for target in &targets {
        let ours = rt.block_on(toolgate_calls(target));
        let theirs = typescript_calls(target);
        rows.push((target.label, ours, theirs));
    }
    let docs = &targets[0];
    let mut connect = Vec::new();
    for n in [1, PARALLEL_SERVERS] {
        connect.push((
            n,
            rt.block_on(toolgate_connect(docs, n)),
            typescript_connect(docs, n),
        ));
    }

    let separate_hubs = rt.block_on(toolgate_connect_separate_hubs(docs, PARALLEL_SERVERS));

    let mut c = Criterion::default().configure_from_args();
    criterion_per_call(&mut c, &rt, &targets);
    c.final_summary();

    println!();
    println!("== stdio tool calls: {CALLS} sequential calls after {WARMUP} warm-up calls ==");
    println!(
        "{:<34} {:<10} {:>11} {:>11} {:>11}  {:>22}",
        "server / tool", "client", "calls/s", "p50", "p99", "throughput vs TS SDK"
    );
    for (label, ours, theirs) in &rows {
        let ratio = ours.calls_per_sec / theirs.calls_per_sec;
        let verdict = if ratio >= 2.0 {
            "goal >= 2x met"
        } else {
            "goal >= 2x MISSED"
        };
        println!(
            "{label:<34} {:<10} {:>11.0} {:>11} {:>11}  {ratio:>6.2}x ({verdict})",
            "toolgate",
            ours.calls_per_sec,
            ms(ours.p50),
            ms(ours.p99)
        );
        println!(
            "{:<34} {:<10} {:>11.0} {:>11} {:>11}",
            "",
            "TS SDK",
            theirs.calls_per_sec,
            ms(theirs.p50),
            ms(theirs.p99)
        );
        println!(
            "{:<34} {:<10} {:>11} {:>11.2}x {:>10.2}x  (TS latency / toolgate latency)",
            "",
            "",
            "",
            theirs.p50.as_secs_f64() / ours.p50.as_secs_f64(),
            theirs.p99.as_secs_f64() / ours.p99.as_secs_f64()
        );
    }
    println!();
    println!(
        "== connect (spawn + handshake + tools/list) to `toolgate serve docs`, median of {CONNECT_ROUNDS} =="
    );
    println!(
        "{:<22} {:>12} {:>12} {:>16}",
        "servers in parallel", "toolgate", "TS SDK", "toolgate vs TS"
    );
    for (n, ours, theirs) in &connect {
        println!(
            "{n:<22} {:>12} {:>12} {:>15.2}x",
            ms(*ours),
            ms(*theirs),
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }
    println!(
        "{:<22} {:>12}   (diagnostic: one McpHub per server, not the product path)",
        format!("{PARALLEL_SERVERS}, separate hubs"),
        ms(separate_hubs)
    );
    let one = connect[0].1.as_secs_f64();
    let ten = connect[1].1.as_secs_f64();
    let factor = ten / one;
    println!(
        "toolgate: {PARALLEL_SERVERS} servers take {factor:.2}x the time of one ({})",
        if factor <= 2.0 {
            "goal <= 2x met"
        } else {
            "goal <= 2x MISSED"
        }
    );
}
