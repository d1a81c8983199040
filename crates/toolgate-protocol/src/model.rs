//! What the front ends are told about the model call itself: a retry on its way (with the
//! wait the console counts down) and a reply that broke off after part of it was shown.
//! The JSONL output and the session log reuse these as they are.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{RetryNotice, RetryReason};

/// A model request failed and is sent again after `wait_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRetry {
    /// The attempt that follows the wait (2 for the first retry).
    pub attempt: u32,
    pub max_attempts: u32,
    pub wait_ms: u64,
    pub reason: RetryReason,
    /// What went wrong, e.g. `HTTP 529: Overloaded`.
    pub detail: String,
}

impl From<&RetryNotice> for ModelRetry {
    fn from(notice: &RetryNotice) -> Self {
        ModelRetry {
            attempt: notice.attempt,
            max_attempts: notice.max_attempts,
            wait_ms: u64::try_from(notice.wait.as_millis()).unwrap_or(u64::MAX),
            reason: notice.reason,
            detail: notice.detail.clone(),
        }
    }
}

impl ModelRetry {
    pub fn wait(&self) -> Duration {
        Duration::from_millis(self.wait_ms)
    }

    /// The status line while `left` of the wait remains: "overloaded, retrying in 12s
    /// (attempt 3)". Whole seconds, rounded up, so the count never shows 0 while waiting.
    pub fn countdown(&self, left: Duration) -> String {
        let secs = left.as_millis().div_ceil(1000);
        if secs == 0 {
            format!(
                "{}, retrying (attempt {})",
                self.reason.label(),
                self.attempt
            )
        } else {
            format!(
                "{}, retrying in {secs}s (attempt {})",
                self.reason.label(),
                self.attempt
            )
        }
    }
}

/// Part of a reply was shown, then its stream broke off. The text is kept for the
/// transcript and the session log, never for the conversation the model sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyCut {
    /// The text shown before the cut.
    pub text: String,
    /// True when the same request is being sent again; false when the turn gave up.
    pub retrying: bool,
}

impl ReplyCut {
    /// The mark under the cut text.
    pub fn mark(&self) -> &'static str {
        if self.retrying {
            "— reply cut, retrying"
        } else {
            "— reply cut"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_reads_like_a_status_line() {
        let retry = ModelRetry {
            attempt: 3,
            max_attempts: 10,
            wait_ms: 12_000,
            reason: RetryReason::Overloaded,
            detail: "HTTP 529: Overloaded".into(),
        };
        assert_eq!(
            retry.countdown(Duration::from_millis(11_200)),
            "overloaded, retrying in 12s (attempt 3)"
        );
        assert_eq!(
            retry.countdown(Duration::ZERO),
            "overloaded, retrying (attempt 3)"
        );
    }
}
