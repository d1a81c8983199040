//! Pool assembly at 1, 10 and 100 connected servers x 20 tools each. The pool is rebuilt
//! before every model call, so its cost per tool must stay flat as servers are added.
//! Prints per-tool time for each size and the ratio per-tool(100) / per-tool(1), and the
//! same for preparing a listing (done once per tools/list, not per call).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use criterion::{BenchmarkId, Criterion, Throughput};
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;
use toolgate::pool::{McpToolInfo, PoolTool, ServerTools, ToolClaims, assemble, model_facing_name};

const TOOLS_PER_SERVER: usize = 20;
const SIZES: [usize; 3] = [1, 10, 100];

/// Server names as users write them; every 7th is long enough that most of its tool names
/// need shortening.
fn server_name(i: usize) -> String {
    if i % 7 == 3 {
        format!("enterprise-knowledge-base-{i:03}")
    } else {
        format!("srv-{i:03}")
    }
}

/// A mix of plain, dotted (normalized) and long (shortened) tool names, unique per server.
fn tool_name(j: usize) -> String {
    match j % 5 {
        0 => format!("search_{j}"),
        1 => format!("files.read_text.v{j}"),
        2 => format!("issues.list.open_{j}"),
        3 => format!("analytics.warehouse.query_materialized_view_with_partition_pruning_{j}"),
        _ => format!("get-status-{j}"),
    }
}

/// A schema shaped like real MCP tools: several typed properties with descriptions, an
/// enum, a nested object and an array, and a required list.
fn schema(j: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": format!("What to look for (tool {j}); plain words or a quoted phrase")},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Maximum number of results"},
            "sort": {"type": "string", "enum": ["relevance", "newest", "oldest"], "description": "Order of the results"},
            "filters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Only results under this path"},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels that must all be present"},
                    "since": {"type": "string", "format": "date-time"}
                },
                "additionalProperties": false
            },
            "include_archived": {"type": "boolean", "default": false}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// Raw listings as servers send them: (server name, tools).
fn listings(count: usize) -> Vec<(String, Vec<McpToolInfo>)> {
    (0..count)
        .map(|i| {
            let tools = (0..TOOLS_PER_SERVER)
                .map(|j| McpToolInfo {
                    name: tool_name(j),
                    description: format!(
                        "Tool {j} of server {i}: searches the indexed project data and returns \
                         ranked matches with their location and a short snippet of context."
                    ),
                    input_schema: schema(j).into(),
                    claims: ToolClaims {
                        read_only: Some(j % 2 == 0),
                        ..ToolClaims::default()
                    },
                })
                .collect();
            (server_name(i), tools)
        })
        .collect()
}

/// Listings prepared as the hub keeps them.
fn servers(count: usize) -> Vec<Arc<ServerTools>> {
    listings(count)
        .into_iter()
        .map(|(server, tools)| Arc::new(ServerTools::new(server, tools)))
        .collect()
}

struct Case {
    servers: usize,
    /// Built-ins plus MCP tools: what `assemble` produces.
    tools: usize,
    /// MCP tools only: what the naming and schema-copy parts touch.
    mcp_tools: usize,
    builtins: Vec<PoolTool>,
    raw: Vec<(String, Vec<McpToolInfo>)>,
    listed: Vec<Arc<ServerTools>>,
}

fn cases() -> Vec<Case> {
    SIZES
        .iter()
        .map(|&n| {
            let listed = servers(n);
            let names: Vec<String> = listed.iter().map(|s| s.server().to_string()).collect();
            let builtins = toolgate::pool::builtin_tools(&names);
            let tools = builtins.len() + n * TOOLS_PER_SERVER;
            // A broken fixture would benchmark the error path; refuse to measure that.
            let pool = assemble(&builtins, &listed).expect("benchmark pool assembles");
            assert_eq!(pool.tools.len(), tools);
            Case {
                servers: n,
                tools,
                mcp_tools: n * TOOLS_PER_SERVER,
                builtins,
                raw: listings(n),
                listed,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion, cases: &[Case]) {
    let mut group = c.benchmark_group("pool_assembly");
    group.sample_size(20);
    for case in cases {
        group.throughput(Throughput::Elements(case.tools as u64));
        group.bench_with_input(
            BenchmarkId::new("servers_x20_tools", case.servers),
            case,
            |b, case| b.iter(|| assemble(black_box(&case.builtins), black_box(&case.listed))),
        );
    }
    group.finish();
}

/// CPU time of this thread: the machine is shared, and wall time would charge other
/// processes' preemption to whichever size happened to run then.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Minor page faults of this thread so far: memory the allocator handed back to the kernel
/// and has to fault in again shows up here.
fn thread_minor_faults() -> u64 {
    // SAFETY: getrusage writes only into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    usage.ru_minflt as u64
}

/// The parts of the work, timed separately so a non-flat total can be explained.
#[derive(Clone, Copy)]
enum Part {
    /// `assemble` as the agent calls it before every model call.
    Assemble,
    /// Preparing every listing (`ServerTools::new`), as the hub does once per tools/list;
    /// includes copying the raw lists, which the hub does not need to do.
    Prepare,
    /// Only the model-facing names (normalize, format, hash when shortened).
    Naming,
}

const PARTS: [(Part, &str); 3] = [
    (Part::Assemble, "assemble"),
    (Part::Prepare, "prepare listings"),
    (Part::Naming, "naming only"),
];

fn run_part(part: Part, case: &Case) {
    match part {
        Part::Assemble => {
            black_box(assemble(black_box(&case.builtins), black_box(&case.listed)).ok());
        }
        Part::Prepare => {
            for (server, tools) in black_box(&case.raw) {
                black_box(ServerTools::new(server.clone(), tools.clone()));
            }
        }
        Part::Naming => {
            for (server, tools) in black_box(&case.raw) {
                for tool in tools {
                    black_box(model_facing_name(server, &tool.name));
                }
            }
        }
    }
}

/// Median per-tool CPU time of each part for each size. Sizes are interleaved batch by
/// batch so load from other processes hits all of them alike.
fn per_tool_ns(cases: &[Case], batches: usize, batch_time: Duration) -> Vec<PartTimes> {
    // Repetitions per batch so one batch of each size takes about `batch_time`.
    let reps: Vec<usize> = cases
        .iter()
        .map(|case| {
            let start = thread_cpu();
            run_part(Part::Assemble, case);
            let once = (thread_cpu() - start).max(Duration::from_nanos(1));
            ((batch_time.as_nanos() / once.as_nanos()) as usize).max(1)
        })
        .collect();
    let mut samples = vec![[const { Vec::new() }; 3]; cases.len()];
    let mut faults = vec![[0u64; 3]; cases.len()];
    let mut runs = vec![0usize; cases.len()];
    for _ in 0..batches {
        for (i, case) in cases.iter().enumerate() {
            for (p, (part, _)) in PARTS.iter().enumerate() {
                let (start, faults_before) = (thread_cpu(), thread_minor_faults());
                for _ in 0..reps[i] {
                    run_part(*part, case);
                }
                let ns = (thread_cpu() - start).as_nanos() as f64;
                faults[i][p] += thread_minor_faults() - faults_before;
                let per = match part {
                    Part::Assemble => case.tools,
                    Part::Prepare | Part::Naming => case.mcp_tools,
                };
                samples[i][p].push(ns / (reps[i] * per) as f64);
            }
            runs[i] += reps[i];
        }
    }
    samples
        .into_iter()
        .enumerate()
        .map(|(i, mut parts)| PartTimes {
            ns: parts.each_mut().map(|s| {
                s.sort_by(f64::total_cmp);
                s[s.len() / 2]
            }),
            // Per tool of the pool, for every part alike (faults are rare; a rough figure).
            faults: faults[i].map(|f| f as f64 / (runs[i] * cases[i].tools) as f64),
        })
        .collect()
}

/// Per-tool figures of each part for one size.
struct PartTimes {
    ns: [f64; 3],
    faults: [f64; 3],
}

fn main() {
    let cases = cases();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut criterion, &cases);
    criterion.final_summary();

    // Under `cargo test --benches` criterion runs each bench once; keep the summary quick.
    let full = std::env::args().any(|a| a == "--bench");
    let (batches, batch_time) = if full {
        (21, Duration::from_millis(40))
    } else {
        (3, Duration::from_millis(1))
    };
    println!(
        "\npool assembly, thread CPU time per tool (median of {batches} interleaved batches):"
    );
    let per_tool = per_tool_ns(&cases, batches, batch_time);
    for (case, parts) in cases.iter().zip(&per_tool) {
        let detail: Vec<String> = PARTS
            .iter()
            .enumerate()
            .map(|(p, (_, label))| {
                format!(
                    "{label} {:>6.0} ns ({:.3} page faults)",
                    parts.ns[p], parts.faults[p]
                )
            })
            .collect();
        println!(
            "  {:>3} servers x {TOOLS_PER_SERVER} tools ({:>4} tools): {}",
            case.servers,
            case.tools,
            detail.join(", ")
        );
    }
    let (first, last) = (&per_tool[0], &per_tool[per_tool.len() - 1]);
    for (p, (_, label)) in PARTS.iter().enumerate() {
        println!(
            "ratio per-tool(100 servers) / per-tool(1 server), {label}: {:.2}",
            last.ns[p] / first.ns[p]
        );
    }
    println!("(goal for assemble: close to 1; below 1 when the fixed built-in part dominates)");
    // The built-ins are a fixed part of every assembly, which flatters the per-tool figure
    // of the big pools; the cost each added MCP tool brings shows flatness without it.
    let total = |i: usize| per_tool[i].ns[0] * cases[i].tools as f64;
    let marginal =
        |a: usize, b: usize| (total(b) - total(a)) / (cases[b].tools - cases[a].tools) as f64;
    let (small, large) = (marginal(0, 1), marginal(1, 2));
    println!(
        "assemble, cost per added MCP tool: {} -> {} servers {small:.1} ns, {} -> {} servers {large:.1} ns, ratio {:.2}",
        cases[0].servers,
        cases[1].servers,
        cases[1].servers,
        cases[2].servers,
        large / small
    );

    // The same 1-server assembly, but rotating over as many separate copies as the
    // 100-server case holds, so its working set is as large. If per-tool cost then matches
    // the 100-server figure, the growth comes from memory (cache misses), not from work
    // that grows with the pool.
    let copies = SIZES[SIZES.len() - 1];
    let rotation: Vec<Vec<Arc<ServerTools>>> = (0..copies).map(|_| servers(1)).collect();
    let builtins = &cases[0].builtins;
    let tools = cases[0].tools;
    let rounds = if full { 200 } else { 1 };
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = thread_cpu();
            for listed in &rotation {
                black_box(assemble(black_box(builtins), black_box(listed)).ok());
            }
            (thread_cpu() - start).as_nanos() as f64 / (copies * tools) as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let cold = samples[samples.len() / 2];
    println!(
        "1 server x {TOOLS_PER_SERVER} tools rotating over {copies} copies (same working set as {copies} servers): \
         assemble {cold:.0} ns/tool, {:.2}x the warm 1-server figure",
        cold / first.ns[0]
    );
}
