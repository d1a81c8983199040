//! How full the model's context window is. A request's size is estimated from its parts
//! (system prompt, tool definitions, messages: see [`crate::tokens`]), and the estimate is
//! calibrated by what the API last reported for a request it took: the tokens in use are
//! the reported count plus an estimate for what was added since. The per-message estimates
//! are kept beside the messages (see `Conversation`), so a request costs one sum over the
//! history kept, not a re-count of its text.

use crate::model::{ContentBlock, Message, ToolDef, Usage};
use crate::protocol::ContextGauge;
use crate::tokens;

/// What an image costs in the window, roughly: Anthropic counts about (width × height) /
/// 750 tokens and scales images down to about 1.15 megapixels, so at most ~1,600.
const IMAGE_TOKENS: u64 = 1_600;
/// A content block's framing (type, ids) beyond its text.
const BLOCK_TOKENS: u64 = 4;

/// Estimated tokens of one message.
pub fn message_tokens(message: &Message) -> u64 {
    message.content.iter().map(block_tokens).sum()
}

fn block_tokens(block: &ContentBlock) -> u64 {
    BLOCK_TOKENS
        + match block {
            ContentBlock::Text { text } => est(text),
            ContentBlock::ToolUse { name, input, .. } => est(name) + est(&input.to_string()),
            ContentBlock::ToolResult {
                content, images, ..
            } => est(content) + IMAGE_TOKENS * images.len() as u64,
            ContentBlock::Image(_) => IMAGE_TOKENS,
            ContentBlock::Thinking { thinking, .. } => est(thinking),
            ContentBlock::RedactedThinking { data } => est(data),
        }
}

/// Estimated tokens of the tool results in one message.
pub(super) fn tool_result_tokens(message: &Message) -> u64 {
    message
        .content
        .iter()
        .filter(|b| matches!(b, ContentBlock::ToolResult { .. }))
        .map(block_tokens)
        .sum()
}

/// Estimated tokens of tool definitions as a request carries them.
pub(super) fn tool_tokens<'a>(tools: impl IntoIterator<Item = &'a ToolDef>) -> u64 {
    tools
        .into_iter()
        .map(|t| {
            BLOCK_TOKENS + est(&t.name) + est(&t.description) + est(&t.input_schema.to_string())
        })
        .sum()
}

pub(super) fn est(text: &str) -> u64 {
    tokens::estimate(text) as u64
}

/// The window, the threshold and the calibration of estimates against the API's counts.
pub struct ContextMeter {
    window: u64,
    compact_percent: u8,
    /// Reported ÷ estimated tokens of the last request the API counted (1 until then).
    calibration: f64,
    /// The last gauge sent to the front ends (none is sent again when nothing changed).
    last_sent: Option<ContextGauge>,
}

impl ContextMeter {
    /// `/context`: what fills the window; `estimate` is the conversation's estimate of
    /// `messages`.
    pub(super) fn breakdown(
        &self,
        system: &str,
        tools: &[ToolDef],
        deferred: &[ToolDef],
        messages: &[Message],
        estimate: u64,
    ) -> crate::protocol::ContextBreakdown {
        let system = est(system);
        let fixed = system + tool_tokens(tools);
        let results: u64 = messages.iter().map(tool_result_tokens).sum();
        crate::protocol::ContextBreakdown {
            gauge: self.gauge(fixed + estimate),
            system_prompt: self.tokens(system),
            loaded_tools: self.tokens(tool_tokens(tools)),
            loaded_tool_count: tools.len(),
            deferred_tools: self.tokens(tool_tokens(deferred)),
            deferred_tool_count: deferred.len(),
            messages: self.tokens(estimate.saturating_sub(results)),
            tool_results: self.tokens(results),
        }
    }

    pub fn new(window: u64, compact_percent: u8) -> Self {
        ContextMeter {
            window: window.max(1_000),
            compact_percent: compact_percent.clamp(10, 100),
            calibration: 1.0,
            last_sent: None,
        }
    }

    pub fn window(&self) -> u64 {
        self.window
    }

    /// Another model took over (`/model`): its window, and estimates not yet calibrated
    /// against its counts (another model may count tokens differently).
    pub fn switch_window(&mut self, window: u64) {
        self.window = window.max(1_000);
        self.calibration = 1.0;
        self.last_sent = None;
    }

    /// Tokens at which the conversation is compacted before a request.
    pub fn compact_at(&self) -> u64 {
        self.window * u64::from(self.compact_percent) / 100
    }

    /// What a compaction aims for: half the threshold, so that the next one is many
    /// requests away.
    pub fn target(&self) -> u64 {
        self.compact_at() / 2
    }

    /// Estimated tokens as the API would count them.
    pub fn tokens(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.calibration).ceil() as u64
    }

    /// The estimate that corresponds to `tokens` as the API counts them.
    pub fn estimate_for(&self, tokens: u64) -> u64 {
        (tokens as f64 / self.calibration).floor() as u64
    }

    pub fn over_threshold(&self, estimate: u64) -> bool {
        self.tokens(estimate) > self.compact_at()
    }

    /// Learns from a request the API took: `estimate` was ours, `usage` its count. The
    /// factor is bounded so that one odd report (a provider that counts nothing, say)
    /// cannot make the gauge useless.
    pub fn calibrate(&mut self, estimate: u64, usage: &Usage) {
        let reported =
            usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
        if reported > 0 && estimate > 0 {
            self.calibration = (reported as f64 / estimate as f64).clamp(0.5, 4.0);
        }
    }

    /// The API refused a request as too long: the window is at most what it named, and
    /// the request's estimate, as counted, was past it.
    pub fn learn_overflow(&mut self, limit: Option<u64>, estimate: u64) {
        if let Some(limit) = limit.filter(|l| *l >= 1_000) {
            self.window = self.window.min(limit);
        }
        // Our count said it fits where the API said it does not: count higher from now on.
        let counted = self.tokens(estimate);
        if counted > 0 && counted <= self.window {
            self.calibration =
                (self.calibration * self.window as f64 / counted as f64 * 1.05).min(4.0);
        }
    }

    pub fn gauge(&self, estimate: u64) -> ContextGauge {
        ContextGauge {
            used: self.tokens(estimate),
            window: self.window,
            compact_at: self.compact_at(),
        }
    }

    /// The gauge for `estimate` when it differs from the last one sent.
    pub fn changed(&mut self, estimate: u64) -> Option<ContextGauge> {
        let gauge = self.gauge(estimate);
        (self.last_sent != Some(gauge)).then(|| {
            self.last_sent = Some(gauge);
            gauge
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apis_count_calibrates_later_estimates() {
        let mut meter = ContextMeter::new(100_000, 80);
        assert_eq!(meter.compact_at(), 80_000);
        assert!(!meter.over_threshold(70_000));
        meter.calibrate(
            70_000,
            &Usage {
                input_tokens: 10_000,
                cache_read_input_tokens: 80_000,
                ..Default::default()
            },
        );
        // The API counts 90k where we counted 70k: 70k estimated is over 80k counted.
        assert!(meter.over_threshold(70_000));
        assert_eq!(meter.gauge(70_000).used, 90_000);
        assert_eq!(meter.estimate_for(90_000), 70_000);
    }

    #[test]
    fn a_refusal_lowers_the_window_to_the_named_limit_and_counts_higher() {
        let mut meter = ContextMeter::new(200_000, 80);
        meter.learn_overflow(Some(100_000), 95_000);
        assert_eq!(meter.window(), 100_000);
        // 95k estimated was refused at a 100k limit: it now counts past the limit.
        assert!(meter.tokens(95_000) > 100_000);
        assert_eq!(meter.compact_at(), 80_000);
    }

    #[test]
    fn messages_count_their_text_tool_input_results_and_images() {
        let message = Message {
            role: crate::model::Role::User,
            content: vec![
                ContentBlock::Text {
                    text: "x".repeat(400),
                },
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "y".repeat(4_000),
                    is_error: false,
                    images: vec![],
                },
            ],
        };
        assert_eq!(message_tokens(&message), 100 + 1_000 + 2 * BLOCK_TOKENS);
        assert_eq!(tool_result_tokens(&message), 1_000 + BLOCK_TOKENS);
    }
}
