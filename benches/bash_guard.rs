//! The bash guard: what `Policy::decide` costs for a bash call (the line's analysis, the
//! rules met by every command it can run, the mode's classification), on typical lines and
//! on a 1 KB line. Criterion gives means; a plain timed loop afterwards prints p50/p99 and
//! lines per second, since the goal (issue 41) is a p99 under 1 ms at 1 KB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

use toolgate::policy::{Policy, PolicyContext, PolicyRule, Rule, RuleList, RuleSource};
use toolgate::pool::PoolTool;
use toolgate::protocol::PermissionMode;

const TYPICAL: &[(&str, &str)] = &[
    ("ls", "ls -la"),
    ("pipeline", "ls -la | grep x | wc -l"),
    ("cargo", "cargo test --lib policy:: 2>&1 | tail -n 40"),
    (
        "git_and",
        "git status && git diff --stat && git log --oneline -5",
    ),
    (
        "substitution",
        "echo \"$(date +%s) $(git rev-parse HEAD)\" > build/stamp.txt",
    ),
    (
        "for_loop",
        "for f in src/*.rs; do wc -l \"$f\"; grep -c fn \"$f\"; done",
    ),
    (
        "nested_shell",
        "bash -o pipefail -c 'find . -name \"*.o\" -exec rm {} + && echo done'",
    ),
];

/// A realistic 1 KB line: a build script pasted as one call.
fn one_kb_line() -> String {
    let mut line = String::from("set -e; cd \"$(git rev-parse --show-toplevel)\"; ");
    let pieces = [
        "for f in $(find src -name '*.rs' -newer target/stamp); do rustfmt --check \"$f\" || echo \"fmt: $f\" >> build/report.txt; done; ",
        "if [ -d node_modules ]; then npm run build -- --mode production 2>&1 | tee build/npm.log; else echo skip; fi; ",
        "cat <<EOF > build/info.txt\nrev: $(git rev-parse HEAD)\ndate: `date -u`\nEOF\n",
        "grep -rn 'TODO\\|FIXME' src tests | sort | uniq -c | sort -rn | head -n 20 > build/todo.txt; ",
        "env RUST_LOG=debug timeout 60 cargo test --quiet -- --test-threads=1 | grep -v '^test ' || true; ",
    ];
    let mut i = 0;
    while line.len() < 1024 {
        line.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    line.push_str("echo done");
    line
}

fn policy_with_rules() -> Policy {
    let mut p = Policy::default();
    p.add_rules(
        [
            (RuleList::Deny, "Bash(rm:*)"),
            (RuleList::Deny, "Bash(git push:*)"),
            (RuleList::Ask, "Bash(npm run *)"),
            (RuleList::Allow, "Bash(cargo:*)"),
            (RuleList::Allow, "Bash(git status:*)"),
        ]
        .into_iter()
        .map(|(list, text)| PolicyRule {
            rule: Rule::parse(text).unwrap(),
            list,
            source: RuleSource::Flag,
        }),
    );
    p
}

fn percentiles(policy: &Policy, tool: &PoolTool, input: &Value, ctx: &PolicyContext<'_>) {
    // Warm up, then time each call on its own.
    for _ in 0..200 {
        black_box(policy.decide(tool, input, ctx));
    }
    let runs = 5_000;
    let mut times: Vec<Duration> = Vec::with_capacity(runs);
    let started = Instant::now();
    for _ in 0..runs {
        let t = Instant::now();
        black_box(policy.decide(tool, input, ctx));
        times.push(t.elapsed());
    }
    let total = started.elapsed();
    times.sort();
    let at = |q: f64| times[((runs as f64 * q) as usize).min(runs - 1)];
    println!(
        "bash_guard timed loop: {} bytes, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs, {:.0} lines/s",
        input["command"].as_str().map_or(0, str::len),
        at(0.50).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        times[runs - 1].as_secs_f64() * 1e6,
        runs as f64 / total.as_secs_f64(),
    );
}

fn bench(c: &mut Criterion) {
    let tool = PoolTool::builtin(
        toolgate::builtin::tools::bash::ID,
        "",
        json!({"type": "object"}),
    );
    let workspace = Path::new("/work/ws");
    let plain = Policy::default();
    let ruled = policy_with_rules();
    let default_ctx = PolicyContext::new(workspace);
    let plan_ctx = PolicyContext::new(workspace).with_mode(PermissionMode::Plan);
    let big = one_kb_line();
    assert!(big.len() >= 1024, "{}", big.len());

    let mut group = c.benchmark_group("bash_guard");
    for (name, line) in TYPICAL {
        let input = json!({ "command": line });
        group.bench_function(format!("decide_{name}"), |b| {
            b.iter(|| black_box(ruled.decide(&tool, &input, &default_ctx)));
        });
    }
    let big_input = json!({ "command": big });
    group.bench_function("decide_1kb_default", |b| {
        b.iter(|| black_box(plain.decide(&tool, &big_input, &default_ctx)));
    });
    group.bench_function("decide_1kb_rules", |b| {
        b.iter(|| black_box(ruled.decide(&tool, &big_input, &default_ctx)));
    });
    group.bench_function("decide_1kb_plan", |b| {
        b.iter(|| black_box(ruled.decide(&tool, &big_input, &plan_ctx)));
    });
    group.finish();

    percentiles(
        &ruled,
        &tool,
        &json!({ "command": TYPICAL[2].1 }),
        &default_ctx,
    );
    percentiles(&ruled, &tool, &big_input, &default_ctx);
    percentiles(&ruled, &tool, &big_input, &plan_ctx);
}

criterion_group!(benches, bench);
criterion_main!(benches);
