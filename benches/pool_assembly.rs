//! Pool assembly at 1, 10 and 100 connected servers x 20 tools each. The pool is rebuilt
//! before every model call, so its cost per tool must stay flat as servers are added.
//! Prints per-tool time for each size and the ratio per-tool(100) / per-tool(1).

use criterion::{BenchmarkId, Criterion, Throughput};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolgate::pool::{McpToolInfo, PoolTool, ServerTools, ToolClaims, assemble};

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

fn servers(count: usize) -> Vec<ServerTools> {
    (0..count)
        .map(|i| ServerTools {
            server: server_name(i),
            tools: (0..TOOLS_PER_SERVER)
                .map(|j| McpToolInfo {
                    name: tool_name(j),
                    description: format!(
                        "Tool {j} of server {i}: searches the indexed project data and returns \
                         ranked matches with their location and a short snippet of context."
                    ),
                    input_schema: schema(j),
                    claims: ToolClaims {
                        read_only: Some(j % 2 == 0),
                        ..ToolClaims::default()
                    },
                })
                .collect(),
        })
        .collect()
}

struct Case {
    servers: usize,
    tools: usize,
    builtins: Vec<PoolTool>,
    listed: Vec<ServerTools>,
}

fn cases() -> Vec<Case> {
    SIZES
        .iter()
        .map(|&n| {
            let listed = servers(n);
            let names: Vec<String> = listed.iter().map(|s| s.server.clone()).collect();
            let builtins = toolgate::builtin::builtin_tools(&names);
            let tools = builtins.len() + n * TOOLS_PER_SERVER;
            // A broken fixture would benchmark the error path; refuse to measure that.
            let pool = assemble(&builtins, &listed).expect("benchmark pool assembles");
            assert_eq!(pool.tools.len(), tools);
            Case {
                servers: n,
                tools,
                builtins,
                listed,
            }
        })
        .collect()
}

fn bench(c: &mut Criterion, cases: &[Case]) {
    let mut group = c.benchmark_group("pool_assembly");
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

/// Median per-tool time over batches of repeated assemblies, measured outside criterion so
/// the ratio can be printed next to it.
fn per_tool_ns(case: &Case, batches: usize, batch_time: Duration) -> f64 {
    let mut reps = 1usize;
    loop {
        let start = Instant::now();
        for _ in 0..reps {
            black_box(assemble(black_box(&case.builtins), black_box(&case.listed)).ok());
        }
        if start.elapsed() >= batch_time || reps >= 1 << 20 {
            break;
        }
        reps *= 2;
    }
    let mut samples: Vec<f64> = (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..reps {
                black_box(assemble(black_box(&case.builtins), black_box(&case.listed)).ok());
            }
            start.elapsed().as_nanos() as f64 / (reps * case.tools) as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
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
        (21, Duration::from_millis(50))
    } else {
        (3, Duration::from_millis(1))
    };
    println!("\npool assembly, per tool (median of {batches} batches):");
    let per_tool: Vec<f64> = cases
        .iter()
        .map(|case| {
            let ns = per_tool_ns(case, batches, batch_time);
            println!(
                "  {:>3} servers x {TOOLS_PER_SERVER} tools ({:>4} tools in pool): {:>8.1} ns/tool",
                case.servers, case.tools, ns
            );
            ns
        })
        .collect();
    println!(
        "ratio per-tool(100 servers) / per-tool(1 server): {:.2} (goal: close to 1)",
        per_tool[2] / per_tool[0]
    );
}
