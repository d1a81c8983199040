//! What the front ends are told about the model's context window: how full it is (the
//! status line's gauge), what fills it (`/context`), and each compaction (the transcript's
//! marker, the JSONL `compacted` line, the session log's `compacted` record).

use serde::{Deserialize, Serialize};

/// How full the window is, as the next request would fill it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextGauge {
    /// Tokens in use: the API's last reported input plus an estimate of what came since.
    pub used: u64,
    /// The model's context window.
    pub window: u64,
    /// Tokens at which the conversation is compacted before the next request.
    pub compact_at: u64,
}

impl ContextGauge {
    /// The share of the window in use, in whole percent (past 100 when the estimate runs
    /// past the window).
    pub fn percent(&self) -> u64 {
        (self.used * 100).checked_div(self.window).unwrap_or(0)
    }

    /// Near the threshold: the status line turns a warning colour (from 90% of it).
    pub fn near_limit(&self) -> bool {
        self.used * 10 >= self.compact_at * 9
    }
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next request would have passed the threshold.
    Auto,
    /// `/compact`.
    Manual,
    /// The API refused a request as too long.
    Overflow,
}

/// One compaction, as the front ends show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionReport {
    pub trigger: CompactionTrigger,
    /// Estimated tokens of the request before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Old tool outputs replaced by a note (their full text stays in the session folder).
    pub cleared_outputs: usize,
    /// Messages replaced by the summary (0: outputs were cleared, nothing summarized).
    pub summarized_messages: usize,
    /// Messages kept as they were.
    pub kept_messages: usize,
}

impl CompactionReport {
    /// The transcript's marker: "conversation compacted (auto): 95k → 12k tokens;
    /// 40 messages summarized, 6 kept, 12 old tool outputs cleared".
    pub fn describe(&self) -> String {
        let trigger = match self.trigger {
            CompactionTrigger::Auto => "near the context limit",
            CompactionTrigger::Manual => "/compact",
            CompactionTrigger::Overflow => "the model refused a too-long request",
        };
        let mut parts = Vec::new();
        if self.summarized_messages > 0 {
            parts.push(format!(
                "{} messages summarized, {} kept",
                self.summarized_messages, self.kept_messages
            ));
        }
        if self.cleared_outputs > 0 {
            parts.push(format!(
                "{} old tool output{} cleared (kept in the session folder)",
                self.cleared_outputs,
                if self.cleared_outputs == 1 { "" } else { "s" }
            ));
        }
        if parts.is_empty() {
            parts.push("nothing left to shed".into());
        }
        format!(
            "conversation compacted ({trigger}): {} → {} tokens; {}",
            short(self.tokens_before),
            short(self.tokens_after),
            parts.join("; ")
        )
    }
}

/// What fills the window (`/context`), in estimated tokens scaled by the API's reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextBreakdown {
    pub gauge: ContextGauge,
    pub system_prompt: u64,
    /// Definitions sent with every request.
    pub loaded_tools: u64,
    pub loaded_tool_count: usize,
    /// Tools behind `search_tools`: not sent, shown for what they would cost.
    pub deferred_tools: u64,
    pub deferred_tool_count: usize,
    /// The conversation's text and tool calls.
    pub messages: u64,
    pub tool_results: u64,
}

impl ContextBreakdown {
    /// `/context` as lines of text.
    pub fn lines(&self) -> Vec<String> {
        let g = &self.gauge;
        let row = |name: &str, tokens: u64| {
            let share = (tokens * 100).checked_div(g.window).unwrap_or(0);
            format!("  {name:<28} {:>8}  {share:>3}%", short(tokens))
        };
        vec![
            format!(
                "Context: {} of {} tokens ({}%); compacts at {}",
                short(g.used),
                short(g.window),
                g.percent(),
                short(g.compact_at)
            ),
            row("system prompt", self.system_prompt),
            row(
                &format!("tool definitions ({})", self.loaded_tool_count),
                self.loaded_tools,
            ),
            row("messages", self.messages),
            row("tool results", self.tool_results),
            format!(
                "  deferred tools ({}, not sent)  {:>8}",
                self.deferred_tool_count,
                short(self.deferred_tools)
            ),
        ]
    }
}

/// 95300 → "95.3k", 812 → "812".
fn short(tokens: u64) -> String {
    if tokens >= 10_000 {
        format!("{}k", tokens / 1000)
    } else if tokens >= 1000 {
        format!("{:.1}k", tokens as f64 / 1000.0)
    } else {
        tokens.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gauge_reads_as_a_share_and_warns_near_the_threshold() {
        let gauge = ContextGauge {
            used: 50_000,
            window: 200_000,
            compact_at: 160_000,
        };
        assert_eq!(gauge.percent(), 25);
        assert!(!gauge.near_limit());
        let near = ContextGauge {
            used: 150_000,
            ..gauge
        };
        assert_eq!(near.percent(), 75);
        assert!(near.near_limit());
    }

    #[test]
    fn the_marker_says_what_was_kept_and_shed() {
        let report = CompactionReport {
            trigger: CompactionTrigger::Auto,
            tokens_before: 95_300,
            tokens_after: 12_400,
            cleared_outputs: 12,
            summarized_messages: 40,
            kept_messages: 6,
        };
        assert_eq!(
            report.describe(),
            "conversation compacted (near the context limit): 95k → 12k tokens; 40 messages summarized, 6 kept; 12 old tool outputs cleared (kept in the session folder)"
        );
    }
}
