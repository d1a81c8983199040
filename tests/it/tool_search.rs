//! Tool search quality on the task set (benches/data): recall@5 and MRR of the ranking over
//! the corpus of published MCP tool lists, on the tasks the method was tuned on and on the
//! held-out ones, so neither can regress silently. The floors are the measured figures
//! (rounded down), not the goal of issue 16 (recall@5 >= 0.95): the held-out set is below
//! it, see docs/BENCHMARKS.md.

#[path = "../../benches/support/search_eval.rs"]
mod search_eval;

use search_eval::{
    Ranker, blind_tasks, blind2_tasks, compound_heldout_tasks, compound_quality,
    compound_tune_tasks, compound_tune2_tasks, corpus, fresh_tasks, quality, quality_with,
    replicated, tasks, tune2_tasks, tune3_tasks, tune4_tasks, unseen_tasks,
};
use toolgate::pool::search::ToolIndex;

/// Prints a set's aggregate as `search_tools` ranks (split and merged) and as one query (the
/// ranking before issue 28); the misses only for the tuned set, so that the others stay unseen.
fn report<'a>(
    label: &str,
    index: &ToolIndex,
    set: impl IntoIterator<Item = &'a search_eval::Task> + Clone,
) -> search_eval::Quality {
    let q = quality(index, set.clone());
    let single = quality_with(index, set.clone(), Ranker::Single);
    eprintln!(
        "{label}: {} tasks, recall@5 {:.3} (one query {:.3}), with the named siblings {:.3}, MRR {:.3} ({:.3})",
        q.tasks, q.recall_at_k, single.recall_at_k, q.reach_at_k, q.mrr, single.mrr
    );
    if label.starts_with("tune") {
        for (task, rank) in &q.misses {
            eprintln!("  miss: {task:?} (rank {rank:?})");
            let wanted = set.clone().into_iter().find(|t| &t.task == task);
            let top: Vec<String> = index
                .find(&toolgate::pool::search::SearchRequest::query(task), 3)
                .hits
                .iter()
                .map(|h| format!("{}/{}", h.tool.server, h.tool.raw_name))
                .collect();
            eprintln!("    wanted {:?}, top 3 {top:?}", wanted.map(|t| &t.tools));
        }
    }
    q
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

/// What a set must keep: its size, and recall@5 and MRR as `search_tools` ranks.
struct Floor {
    tasks: usize,
    recall: f64,
    mrr: f64,
}

/// Ranks `set` over the corpus, prints its aggregate (see [`report`]) and checks the floor.
fn meets<'a>(
    label: &str,
    set: impl IntoIterator<Item = &'a search_eval::Task> + Clone,
    floor: Floor,
) {
    let index = ToolIndex::new(&corpus());
    let q = report(label, &index, set);
    assert!(q.tasks >= floor.tasks, "{label}: {} tasks", q.tasks);
    assert!(
        q.recall_at_k >= floor.recall,
        "{label}: recall@5 {:.3}",
        q.recall_at_k
    );
    assert!(q.mrr >= floor.mrr, "{label}: MRR {:.3}", q.mrr);
}

#[test]
fn tuned_tasks_find_their_tools() {
    let tasks = tasks();
    let floor = Floor {
        tasks: 100,
        recall: 0.98,
        mrr: 0.80,
    };
    meets("tune", tasks.iter().filter(|t| !t.holdout), floor);
}

/// The second tuning set (issue 28), written by a helper blind to the method. Measured when
/// written: 0.853; after run 7's changes, 0.900; after the third pass 0.907 (MRR 0.770).
#[test]
fn second_tuning_set_finds_its_tools() {
    let floor = Floor {
        tasks: 150,
        recall: 0.90,
        mrr: 0.76,
    };
    meets("tune 2", tune2_tasks().iter(), floor);
}

/// The third tuning set (issue 28, third pass), written by a helper blind to the method:
/// 0.732 when written (ranking of run 7); 0.895 (MRR 0.653) after the third pass.
#[test]
fn third_tuning_set_finds_its_tools() {
    let floor = Floor {
        tasks: 200,
        recall: 0.89,
        mrr: 0.65,
    };
    meets("tune 3", tune3_tasks().iter(), floor);
}

/// The fourth tuning set (issue 28, third pass), written by a helper blind to the method:
/// 0.840 with run 7's ranking, 0.865 with the third pass's changes made before it was read
/// (decision 0075), 0.915 (MRR 0.691) after.
#[test]
fn fourth_tuning_set_finds_its_tools() {
    let floor = Floor {
        tasks: 200,
        recall: 0.91,
        mrr: 0.69,
    };
    meets("tune 4", tune4_tasks().iter(), floor);
}

/// 0.922 (MRR 0.758) before issue 28; 0.941 (0.797) after its third pass.
#[test]
fn held_out_tasks_find_their_tools() {
    let tasks = tasks();
    let floor = Floor {
        tasks: 50,
        recall: 0.94,
        mrr: 0.79,
    };
    meets("holdout", tasks.iter().filter(|t| t.holdout), floor);
}

/// The third set, written after tuning (benches/data/tool_tasks_fresh.json): the floor is
/// its measurement with the meaning-based ranking (0.800 before the issue-16 recall work,
/// 0.844 with words only), never tuned on.
#[test]
fn fresh_tasks_find_their_tools() {
    let floor = Floor {
        tasks: 45,
        recall: 0.91,
        mrr: 0.64,
    };
    meets("fresh", fresh_tasks().iter(), floor);
}

/// The fourth set (benches/data/tool_tasks_unseen.json), written from the corpus tools'
/// purposes before the issue-16 recall work: measured before it (recall@5 0.790, MRR 0.702),
/// after the word-ranking changes (0.806, 0.714), with meaning (0.903, 0.787) and after issue
/// 28's third pass (0.903, 0.819); the floors are the last measurement, rounded down.
#[test]
fn unseen_tasks_find_their_tools() {
    let floor = Floor {
        tasks: 50,
        recall: 0.90,
        mrr: 0.81,
    };
    meets("unseen", unseen_tasks().iter(), floor);
}

/// The fifth set (benches/data/tool_tasks_blind.json), written by a helper that never saw the
/// method, its code or its results, after the meaning-based ranking was built. recall@5 0.812
/// and MRR 0.532 when first measured; 0.825 and 0.540 after run 7's changes; 0.863 and 0.630
/// after the third pass (each decided on the tuned sets only, read once after).
#[test]
fn blind_tasks_find_their_tools() {
    let words = quality(
        &ToolIndex::new(&corpus()).words_only(),
        blind_tasks().iter(),
    );
    eprintln!(
        "blind, words only: recall@5 {:.3}, MRR {:.3}",
        words.recall_at_k, words.mrr
    );
    let floor = Floor {
        tasks: 80,
        recall: 0.86,
        mrr: 0.63,
    };
    meets("blind", blind_tasks().iter(), floor);
}

/// The sixth set (benches/data/tool_tasks_blind2.json), written by a helper that never saw the
/// method, its code or any result, while issue 28's third pass was tuned on other sets; only
/// this aggregate is read: 0.800 (MRR 0.634) with the ranking before issue 28 (f232793), 0.850
/// (0.661) with the third pass's.
#[test]
fn second_blind_set_finds_its_tools() {
    let floor = Floor {
        tasks: 200,
        recall: 0.85,
        mrr: 0.66,
    };
    meets("blind 2", blind2_tasks().iter(), floor);
}

/// Issue 28: tasks that need two tools (benches/data/tool_tasks_compound_*.json, written
/// before the split-and-merge search). Held out: only this aggregate is read. The request is
/// ranked as `search_tools` ranks it (split into parts, merged) and, for comparison, as one
/// query; the floor is the measurement, rounded down.
#[test]
fn compound_tune_tasks_find_a_tool_for_every_part() {
    compound("compound tune", &compound_tune_tasks(), COMPOUND_TUNE, true);
}

/// The second tuning set, written by a helper blind to the method; its misses are read.
#[test]
fn compound_tune2_tasks_find_a_tool_for_every_part() {
    compound(
        "compound tune 2",
        &compound_tune2_tasks(),
        COMPOUND_TUNE2,
        true,
    );
}

/// Held out: only the aggregate is printed.
#[test]
fn compound_heldout_tasks_find_a_tool_for_every_part() {
    compound(
        "compound held-out",
        &compound_heldout_tasks(),
        COMPOUND_HELDOUT,
        false,
    );
}

fn compound(label: &str, set: &[search_eval::CompoundTask], floor: f64, show_misses: bool) {
    let index = ToolIndex::new(&corpus());
    let single = compound_quality(&index, set.iter(), Ranker::Single);
    let split = compound_quality(&index, set.iter(), Ranker::Split);
    eprintln!(
        "{label}: {} tasks, every part in the top 5 {:.3} (one query: {:.3}), with the named siblings {:.3}; parts found {:.3} ({:.3})",
        split.tasks,
        split.all_parts,
        single.all_parts,
        split.all_parts_reach,
        split.parts,
        single.parts
    );
    if show_misses {
        for task in set.iter().filter(|t| split.misses.contains(&t.task)) {
            explain_miss(&index, task);
        }
    }
    assert!(split.tasks >= 30, "{} tasks", split.tasks);
    assert!(split.all_parts >= floor, "{label}: {:.3}", split.all_parts);
    assert!(
        split.all_parts_reach >= split.all_parts,
        "naming siblings cannot lose a tool"
    );
}

/// Measured 2026-12-06 (docs/BENCHMARKS.md, "Tool search run 7"): tune 0.933 (one query
/// 0.867); second tune set 0.720 (0.600); held-out 0.775 (0.725), read once after tuning.
const COMPOUND_TUNE: f64 = 0.93;
const COMPOUND_TUNE2: f64 = 0.72;
const COMPOUND_HELDOUT: f64 = 0.77;

/// Why a tuned compound task missed: the parts the host split it into, and where each
/// missing part's tools rank for the whole text and for each part alone.
fn explain_miss(index: &ToolIndex, task: &search_eval::CompoundTask) {
    use toolgate::pool::search::{IndexedTool, SearchRequest};
    let key = |t: &IndexedTool| format!("{}/{}", t.server, t.raw_name);
    let request = SearchRequest::query(&task.task);
    let top: Vec<String> = index
        .find(&request, 5)
        .hits
        .iter()
        .map(|h| key(h.tool))
        .collect();
    eprintln!(
        "  miss: {:?}\n    parts {:?}, top 5 {top:?}",
        task.task,
        request.parts()
    );
    for want in task
        .parts
        .iter()
        .filter(|p| !top.iter().any(|t| p.contains(t)))
    {
        let rank = |text: &str| {
            index
                .search(text, 30)
                .iter()
                .position(|h| want.contains(&key(h.tool)))
                .map(|p| p + 1)
        };
        let mut line = format!("    {want:?}: whole {:?}", rank(&task.task));
        for part in request.parts() {
            line.push_str(&format!(", {part:?} {:?}", rank(part)));
        }
        eprintln!("{line}");
    }
}
