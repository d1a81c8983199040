//! Tool search quality on the task set (benches/data): recall@5 and MRR of the ranking over
//! the corpus of published MCP tool lists, on the tasks the method was tuned on and on the
//! held-out ones, so neither can regress silently. The floors are the measured figures
//! (rounded down), not the goal of issue 16 (recall@5 >= 0.95): the held-out set is below
//! it, see docs/BENCHMARKS.md.

#[path = "../../benches/support/search_eval.rs"]
mod search_eval;

use search_eval::{blind_tasks, corpus, fresh_tasks, quality, replicated, tasks, unseen_tasks};
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

/// Many instances of the same servers (the bench's 1,000-tool corpus) must not drown the
/// ranking: a query naming the server still finds that server's tool.
#[test]
fn replicated_corpus_still_ranks_by_server() {
    let index = ToolIndex::new(&replicated(1000));
    assert!(index.len() >= 1000);
    let hits = index.search("post a message to the slack-3 channel", 5);
    assert_eq!(
        hits[0].tool.name, "mcp__slack-3__slack_post_message",
        "{hits:?}"
    );
}

#[test]
fn tuned_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let tasks = tasks();
    let q = quality(&index, tasks.iter().filter(|t| !t.holdout));
    report("tune", &q);
    assert!(q.tasks >= 100, "{} tasks", q.tasks);
    assert!(q.recall_at_k >= 0.98, "recall@5 {:.3}", q.recall_at_k);
    assert!(q.mrr >= 0.80, "MRR {:.3}", q.mrr);
}

#[test]
fn held_out_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let tasks = tasks();
    let q = quality(&index, tasks.iter().filter(|t| t.holdout));
    report("holdout", &q);
    assert!(q.tasks >= 50, "{} tasks", q.tasks);
    assert!(q.recall_at_k >= 0.92, "recall@5 {:.3}", q.recall_at_k);
    assert!(q.mrr >= 0.75, "MRR {:.3}", q.mrr);
}

/// The third set, written after tuning (benches/data/tool_tasks_fresh.json): the floor is
/// its measurement with the meaning-based ranking (0.800 before the issue-16 recall work,
/// 0.844 with words only), never tuned on.
#[test]
fn fresh_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let q = quality(&index, fresh_tasks().iter());
    eprintln!(
        "fresh: {} tasks, recall@5 {:.3}, MRR {:.3}",
        q.tasks, q.recall_at_k, q.mrr
    );
    assert!(q.tasks >= 45, "{} tasks", q.tasks);
    assert!(
        q.recall_at_k >= FRESH_RECALL,
        "recall@5 {:.3}",
        q.recall_at_k
    );
    assert!(q.mrr >= 0.64, "MRR {:.3}", q.mrr);
}

const FRESH_RECALL: f64 = 0.91;

/// The fourth set (benches/data/tool_tasks_unseen.json), written from the corpus tools'
/// purposes before the issue-16 recall work: measured before it (recall@5 0.790, MRR 0.702),
/// after the word-ranking changes (0.806, 0.714) and with meaning; the floors are the last
/// measurement, rounded down.
#[test]
fn unseen_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let q = quality(&index, unseen_tasks().iter());
    eprintln!(
        "unseen: {} tasks, recall@5 {:.3}, MRR {:.3}",
        q.tasks, q.recall_at_k, q.mrr
    );
    assert!(q.tasks >= 50, "{} tasks", q.tasks);
    assert!(
        q.recall_at_k >= UNSEEN_RECALL,
        "recall@5 {:.3}",
        q.recall_at_k
    );
    assert!(q.mrr >= UNSEEN_MRR, "MRR {:.3}", q.mrr);
}

const UNSEEN_RECALL: f64 = 0.90;
const UNSEEN_MRR: f64 = 0.78;

/// The fifth set (benches/data/tool_tasks_blind.json), written by a helper that never saw the
/// method, its code or its results, after the meaning-based ranking was built; measured once.
/// The floors are that measurement, rounded down.
#[test]
fn blind_tasks_find_their_tools() {
    let index = ToolIndex::new(&corpus());
    let q = quality(&index, blind_tasks().iter());
    let words = quality(
        &ToolIndex::new(&corpus()).words_only(),
        blind_tasks().iter(),
    );
    eprintln!(
        "blind: {} tasks, recall@5 {:.3}, MRR {:.3} (words only: {:.3}, {:.3})",
        q.tasks, q.recall_at_k, q.mrr, words.recall_at_k, words.mrr
    );
    assert!(q.tasks >= 80, "{} tasks", q.tasks);
    assert!(
        q.recall_at_k >= BLIND_RECALL,
        "recall@5 {:.3}",
        q.recall_at_k
    );
    assert!(q.mrr >= BLIND_MRR, "MRR {:.3}", q.mrr);
}

const BLIND_RECALL: f64 = 0.81;
const BLIND_MRR: f64 = 0.53;
