//! Tool search quality on the task set (benches/data): recall@5 and MRR of the ranking over
//! the corpus of published MCP tool lists, on the tasks the method was tuned on and on the
//! held-out ones, so neither can regress silently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

#[path = "../benches/support/search_eval.rs"]
mod search_eval;

use search_eval::{corpus, quality, replicated, tasks};
use toolgate::pool::search::ToolIndex;

fn report(label: &str, q: &search_eval::Quality) {
    eprintln!(
        "{label}: {} tasks, recall@5 {:.3}, MRR {:.3}",
        q.tasks, q.recall_at_k, q.mrr
    );
    for (task, rank) in &q.misses {
        eprintln!("  miss: {task:?} (rank {rank:?})");
    }
}

#[test]
fn tuned_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let tasks = tasks();
    let q = quality(&index, tasks.iter().filter(|t| !t.holdout));
    report("tune", &q);
    assert!(q.tasks >= 100, "{} tasks", q.tasks);
    assert!(q.recall_at_k >= 0.95, "recall@5 {:.3}", q.recall_at_k);
    assert!(q.mrr >= 0.80, "MRR {:.3}", q.mrr);
}

#[test]
fn held_out_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let tasks = tasks();
    let q = quality(&index, tasks.iter().filter(|t| t.holdout));
    report("holdout", &q);
    assert!(q.tasks >= 50, "{} tasks", q.tasks);
    assert!(q.recall_at_k >= 0.95, "recall@5 {:.3}", q.recall_at_k);
    assert!(q.mrr >= 0.80, "MRR {:.3}", q.mrr);
}
