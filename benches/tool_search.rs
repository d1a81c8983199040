//! Tool search (issue 16): what deferring tools saves per model call, how well the ranking
//! finds the tools a task needs, and how fast it answers at 1,000 tools.
//!
//! Corpus: benches/data/tool_corpus.json (published tool lists of public MCP servers).
//! Tasks: benches/data/tool_tasks.json (requests in users' words, with the tools that do them;
//! every third task is held out from tuning) and the fresh, unseen and blind sets, never tuned
//! on. Each set is ranked by words alone and by words and meaning in the same run. Prints a
//! summary, then runs criterion groups.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

#[path = "support/search_eval.rs"]
mod search_eval;

use criterion::Criterion;
use search_eval::{
    K, Ranker, Task, all_tools_bytes, answer_bytes, blind_tasks, builtin_bytes,
    compound_heldout_tasks, compound_quality, compound_tune_tasks, corpus, deferred_bytes,
    fresh_tasks, quality, quality_with, replicated, tasks, unseen_tasks,
};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate::pool::ServerTools;
use toolgate::pool::search::{SearchRequest, ToolIndex};

/// Timed single searches per task at 1,000 tools for the latency percentiles.
const ROUNDS: usize = 20;

/// CPU time this thread has used. Wall-clock percentiles on a shared machine measure the
/// scheduler as much as the search (a search preempted once takes a whole time slice), so
/// the summary gives both.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn summary() {
    // Latency alone (no recall figure printed): for tuning without reading the held-out sets.
    if std::env::var_os("TOOL_SEARCH_LATENCY_ONLY").is_some() {
        let texts: Vec<String> = tasks()
            .iter()
            .chain(&fresh_tasks())
            .chain(&unseen_tasks())
            .chain(&blind_tasks())
            .map(|t| t.task.clone())
            .chain(compound_heldout_tasks().into_iter().map(|t| t.task))
            .collect();
        latency_at(500, &texts);
        bytes_at(500, &tasks());
        std::process::exit(0);
    }
    let servers = corpus();
    let tools: usize = servers.iter().map(|s| s.tools().len()).sum();
    let index = ToolIndex::new(&servers);
    let tasks = tasks();
    let (fresh, unseen, blind) = (fresh_tasks(), unseen_tasks(), blind_tasks());

    let all = all_tools_bytes(&servers);
    let deferred: Vec<usize> = tasks
        .iter()
        .map(|t| deferred_bytes(&servers, &index, t))
        .collect();
    let mean = deferred.iter().sum::<usize>() as f64 / deferred.len() as f64;
    let max = *deferred.iter().max().unwrap();
    println!(
        "tool search: corpus {} servers, {tools} tools; {} tasks",
        servers.len(),
        tasks.len()
    );
    println!(
        "  tool bytes per call: all tools {all}; search_tools + {K} loaded: mean {mean:.0}, max {max} ({:.1}% fewer at the mean, {:.1}% at the max)",
        100.0 * (1.0 - mean / all as f64),
        100.0 * (1.0 - max as f64 / all as f64)
    );
    let builtins = builtin_bytes(&servers);
    println!(
        "  whole tools array with the {} bytes of built-ins: {} vs {:.0} ({:.1}% fewer at the mean)",
        builtins,
        all + builtins,
        mean + builtins as f64,
        100.0 * (1.0 - (mean + builtins as f64) / (all + builtins) as f64)
    );
    // Each set ranked by words alone and by words and meaning, in this one run.
    let words_only = ToolIndex::new(&servers).words_only();
    let sets: [(&str, Vec<&Task>); 6] = [
        ("tuned", tasks.iter().filter(|t| !t.holdout).collect()),
        ("held-out", tasks.iter().filter(|t| t.holdout).collect()),
        ("all", tasks.iter().collect()),
        ("fresh", fresh.iter().collect()),
        ("unseen", unseen.iter().collect()),
        ("blind", blind.iter().collect()),
    ];
    for (label, set) in &sets {
        let words = quality(&words_only, set.iter().copied());
        let single = quality_with(&index, set.iter().copied(), Ranker::Single);
        let q = quality(&index, set.iter().copied());
        println!(
            "  {label:>8}: {:>3} tasks, recall@{K} {:.3} (one query {:.3}, words only {:.3}), with named siblings {:.3}; MRR {:.3} ({:.3}, {:.3})",
            q.tasks,
            q.recall_at_k,
            single.recall_at_k,
            words.recall_at_k,
            q.reach_at_k,
            q.mrr,
            single.mrr,
            words.mrr
        );
    }
    for (label, set) in [
        ("compound tune", compound_tune_tasks()),
        ("compound held-out", compound_heldout_tasks()),
    ] {
        let single = compound_quality(&index, set.iter(), Ranker::Single);
        let split = compound_quality(&index, set.iter(), Ranker::Split);
        println!(
            "  {label}: {} tasks, every part in the top {K} {:.3} (one query {:.3}), with named siblings {:.3}",
            split.tasks, split.all_parts, single.all_parts, split.all_parts_reach
        );
    }
    let texts: Vec<String> = tasks
        .iter()
        .chain(&fresh)
        .chain(&unseen)
        .chain(&blind)
        .map(|t| t.task.clone())
        .chain(compound_heldout_tasks().into_iter().map(|t| t.task))
        .collect();
    let answers: Vec<usize> = texts.iter().map(|t| answer_bytes(&index, t)).collect();
    println!(
        "  search_tools answer text: mean {:.0} B, max {} B over {} requests",
        answers.iter().sum::<usize>() as f64 / answers.len() as f64,
        answers.iter().max().unwrap(),
        answers.len()
    );
    latency_at(500, &texts);
    bytes_at(500, &tasks);

    let big = replicated(1000);
    let big_tools: usize = big.iter().map(|s| s.tools().len()).sum();
    let started = Instant::now();
    let big_index = ToolIndex::new(&big);
    let build = started.elapsed();
    let q = quality(&big_index, tasks.iter());
    let big_words_only = quality(&big_index.clone().words_only(), tasks.iter());
    let mut times = Vec::with_capacity(ROUNDS * tasks.len());
    let mut cpu_times = Vec::with_capacity(ROUNDS * tasks.len());
    for _ in 0..ROUNDS {
        for task in &tasks {
            let cpu_started = thread_cpu_time();
            let started = Instant::now();
            black_box(big_index.search(black_box(&task.task), K));
            times.push(started.elapsed());
            cpu_times.push(thread_cpu_time().saturating_sub(cpu_started));
        }
    }
    times.sort();
    cpu_times.sort();
    println!(
        "  at {big_tools} tools ({} servers): index build {:.2} ms; search p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs ({} searches); recall@{K} {:.3}, words only {:.3} (any copy of the tool counts)",
        big.len(),
        build.as_secs_f64() * 1e3,
        percentile(&times, 0.50).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
        times.last().unwrap().as_secs_f64() * 1e6,
        times.len(),
        q.recall_at_k,
        big_words_only.recall_at_k,
    );
    println!(
        "  the same searches in thread CPU time: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        percentile(&cpu_times, 0.50).as_secs_f64() * 1e6,
        percentile(&cpu_times, 0.99).as_secs_f64() * 1e6,
        cpu_times.last().unwrap().as_secs_f64() * 1e6,
    );
}

/// The corpus replicated and cut to exactly `n` tools.
fn exactly(n: usize) -> Vec<Arc<ServerTools>> {
    let mut left = n;
    replicated(n)
        .into_iter()
        .filter_map(|server| {
            let take = server.tools().len().min(left);
            left -= take;
            (take > 0).then(|| {
                Arc::new(ServerTools::new(
                    server.server(),
                    server.tools()[..take].to_vec(),
                ))
            })
        })
        .collect()
}

/// p50 / p99 of one `search_tools` ranking (split, merged, siblings) at `n` tools, over every
/// task text of every set, `ROUNDS` times.
fn latency_at(n: usize, texts: &[String]) {
    let servers = exactly(n);
    let index = ToolIndex::new(&servers);
    let mut times = Vec::with_capacity(ROUNDS * texts.len());
    let mut cpu_times = Vec::with_capacity(ROUNDS * texts.len());
    for _ in 0..ROUNDS {
        for text in texts {
            let cpu_started = thread_cpu_time();
            let started = Instant::now();
            black_box(index.find(&SearchRequest::query(black_box(text)), K));
            times.push(started.elapsed());
            cpu_times.push(thread_cpu_time().saturating_sub(cpu_started));
        }
    }
    times.sort();
    cpu_times.sort();
    println!(
        "  search_tools ranking at {} tools: wall p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs; thread CPU p50 {:.1} µs, p99 {:.1} µs ({} searches)",
        index.len(),
        percentile(&times, 0.50).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
        times.last().unwrap().as_secs_f64() * 1e6,
        percentile(&cpu_times, 0.50).as_secs_f64() * 1e6,
        percentile(&cpu_times, 0.99).as_secs_f64() * 1e6,
        times.len(),
    );
}

/// Tool bytes per call at exactly `n` tools (the corpus replicated): all definitions vs
/// `search_tools` + the K tools one search loads, over the tasks.
fn bytes_at(n: usize, tasks: &[Task]) {
    let servers = exactly(n);
    let index = ToolIndex::new(&servers);
    let all = all_tools_bytes(&servers);
    let per: Vec<usize> = tasks
        .iter()
        .map(|t| deferred_bytes(&servers, &index, t))
        .collect();
    let mean = per.iter().sum::<usize>() as f64 / per.len() as f64;
    let max = *per.iter().max().unwrap();
    println!(
        "  tool bytes per call at {} tools: all {all}; search_tools + {K} loaded mean {mean:.0} ({:.2}%), max {max} ({:.2}%)",
        index.len(),
        100.0 * mean / all as f64,
        100.0 * max as f64 / all as f64
    );
}

fn main() {
    summary();
    let big = replicated(1000);
    let index = ToolIndex::new(&big);
    let tasks = tasks();
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    c.bench_function("tool_search/search_1000_tools_all_tasks", |b| {
        b.iter(|| {
            for task in &tasks {
                black_box(index.search(black_box(&task.task), K));
            }
        })
    });
    let at_500 = ToolIndex::new(&exactly(500));
    let compound = compound_heldout_tasks();
    c.bench_function("tool_search/find_500_tools_compound_tasks", |b| {
        b.iter(|| {
            for task in &compound {
                black_box(at_500.find(&SearchRequest::query(black_box(&task.task)), K));
            }
        })
    });
    c.bench_function("tool_search/build_index_1000_tools", |b| {
        b.iter(|| black_box(ToolIndex::new(black_box(&big))))
    });
    c.final_summary();
}
