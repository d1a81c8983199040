//! When and how long to wait before sending a model request again. The policy bounds the
//! attempts and the total time; [`Retrier`] applies it to one request: exponential backoff
//! with full jitter, or the wait the server asks for (`retry-after-ms`, `retry-after` in
//! seconds or as an HTTP date). The loop that sends and streams is `http::stream_sse`.

use super::{ModelError, RetryNotice, RetryReason};
use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first (at least 1).
    pub max_attempts: u32,
    /// No retry starts later than this after the first attempt began; a wait that would
    /// end beyond it is shortened (backoff) or not made (a longer `retry-after`).
    pub max_total: Duration,
    /// The ceiling of the first backoff; doubled for each further retry.
    pub base_delay: Duration,
    /// Upper bound for one backoff wait (not for a wait the server asks for: the budget
    /// bounds that).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            // `[model] retry_max_attempts` and `retry_max_seconds` (settings owns the
            // defaults: the configuration docs and this policy cannot drift apart).
            max_attempts: crate::settings::DEFAULT_RETRY_MAX_ATTEMPTS,
            max_total: Duration::from_secs(crate::settings::DEFAULT_RETRY_MAX_SECONDS),
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(20),
        }
    }
}

impl RetryPolicy {
    /// The default policy with the limits of `[model]`.
    pub fn from_settings(settings: &crate::settings::ModelSettings) -> RetryPolicy {
        RetryPolicy {
            max_attempts: settings.retry_max_attempts,
            max_total: settings.retry_max,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (0 for the first retry): exponential backoff
    /// with "full jitter" (uniform between 0 and the exponential ceiling), which spreads
    /// many clients hit by the same overload best.
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(16)))
            .min(self.max_delay);
        ceiling.mul_f64(rand::rng().random_range(0.0..=1.0))
    }

    /// How the limits read in an error: "at most 10 attempts within 60s".
    fn describe(&self) -> String {
        format!(
            "at most {} within {}",
            attempts(self.max_attempts.max(1)),
            seconds(self.max_total)
        )
    }
}

/// `1 attempt`, `4 attempts`.
fn attempts(n: u32) -> String {
    format!("{n} attempt{}", if n == 1 { "" } else { "s" })
}

/// `60s`, `0.5s`.
pub fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Statuses worth trying again: rate limits, transient server errors and Anthropic's
/// `529 overloaded`.
pub fn is_retryable_status(status: StatusCode) -> bool {
    RetryReason::of_status(status.as_u16()).is_some()
}

/// The wait a response asks for: `retry-after-ms` (OpenAI, Anthropic SDKs), else
/// `retry-after` as seconds or as an HTTP date (RFC 9110; a date in the past is no wait).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") is an RFC 2822 date with zone GMT.
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::from(date);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// One failed attempt, as the retry loop sees it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub reason: RetryReason,
    /// What went wrong, e.g. `HTTP 529: Overloaded`.
    pub detail: String,
    /// The wait the server asked for, if it did.
    pub asked_wait: Option<Duration>,
}

/// The retry state of one request: attempts made and when the first began.
pub struct Retrier {
    provider: String,
    policy: RetryPolicy,
    started: Instant,
    attempts: u32,
}

impl Retrier {
    pub fn new(provider: &str, policy: RetryPolicy) -> Retrier {
        Retrier {
            provider: provider.to_string(),
            policy,
            started: Instant::now(),
            attempts: 0,
        }
    }

    /// Counts an attempt about to be made.
    pub fn begin_attempt(&mut self) {
        self.attempts += 1;
    }

    /// After a failed attempt: the retry to announce (with its wait), or the final error
    /// when the attempts or the time budget are spent.
    pub fn after_failure(&self, failure: &Failure) -> Result<RetryNotice, ModelError> {
        let max_attempts = self.policy.max_attempts.max(1);
        if self.attempts >= max_attempts {
            return Err(self.gave_up("", &failure.detail));
        }
        let left = self.policy.max_total.saturating_sub(self.started.elapsed());
        let wait = match failure.asked_wait {
            Some(asked) if asked > left => {
                let why = format!(
                    ": the server asked to wait {}, more than is left of the {} retry budget",
                    seconds(asked),
                    seconds(self.policy.max_total)
                );
                return Err(self.gave_up(&why, &failure.detail));
            }
            Some(asked) => asked,
            None if left.is_zero() => {
                let why = format!(
                    ": the {} retry budget is spent",
                    seconds(self.policy.max_total)
                );
                return Err(self.gave_up(&why, &failure.detail));
            }
            None => self.policy.backoff(self.attempts - 1).min(left),
        };
        Ok(RetryNotice {
            attempt: self.attempts + 1,
            max_attempts,
            wait,
            reason: failure.reason,
            detail: failure.detail.clone(),
        })
    }

    fn gave_up(&self, why: &str, last_problem: &str) -> ModelError {
        ModelError::Unavailable {
            provider: self.provider.clone(),
            message: format!(
                "gave up after {}{why} ({}); last error: {last_problem}",
                attempts(self.attempts),
                self.policy.describe()
            ),
        }
    }
}

/// The API's own explanation from an error body: `error.message` (Anthropic and OpenAI
/// both use it), else a trimmed excerpt of the body, else the status text.
pub fn error_message_from_body(status: StatusCode, body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(body) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error").filter(|e| e.is_string()));
        if let Some(message) = message.and_then(|m| m.as_str()) {
            return message.to_string();
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return status
            .canonical_reason()
            .unwrap_or("no error message in the response")
            .to_string();
    }
    let excerpt: String = trimmed.chars().take(300).collect();
    if excerpt.len() < trimmed.len() {
        format!("{excerpt}…")
    } else {
        excerpt
    }
}

/// reqwest's Display omits the cause ("error sending request"); the chain says why.
pub fn describe_send_error(err: &reqwest::Error) -> String {
    let mut text = if err.is_connect() {
        "connection failed".to_string()
    } else if err.is_timeout() {
        "timed out".to_string()
    } else {
        err.to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max_attempts: u32, max_total: Duration) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            max_total,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        }
    }

    #[test]
    fn backoff_is_full_jitter_under_a_growing_ceiling() {
        let policy = policy(4, Duration::from_secs(60));
        let mut seen_third_above_first_ceiling = false;
        for _ in 0..200 {
            assert!(policy.backoff(0) <= Duration::from_millis(100));
            let third = policy.backoff(2);
            assert!(third <= Duration::from_millis(350));
            seen_third_above_first_ceiling |= third > Duration::from_millis(100);
            assert!(policy.backoff(40) <= Duration::from_millis(350));
        }
        assert!(seen_third_above_first_ceiling);
    }

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // 06 Nov 1994 08:49:37
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, reqwest::header::HeaderValue::from_static(value));
            }
            map
        };
        let at = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(at(&[("retry-after", "7")]), Some(Duration::from_secs(7)));
        assert_eq!(at(&[("retry-after", "0")]), Some(Duration::ZERO));
        assert_eq!(
            at(&[("retry-after", "3"), ("retry-after-ms", "250")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            at(&[("retry-after", "Sun, 06 Nov 1994 08:50:07 GMT")]),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            at(&[("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(at(&[("retry-after", "soon")]), None);
        assert_eq!(at(&[]), None);
    }

    fn overloaded(asked_wait: Option<Duration>) -> Failure {
        Failure {
            reason: RetryReason::Overloaded,
            detail: "HTTP 529: Overloaded".into(),
            asked_wait,
        }
    }

    #[test]
    fn retrier_announces_retries_then_names_attempts_and_budget() {
        let mut retrier = Retrier::new("anthropic", policy(3, Duration::from_secs(60)));
        retrier.begin_attempt();
        let notice = retrier
            .after_failure(&overloaded(Some(Duration::from_secs(2))))
            .unwrap();
        assert_eq!(
            (notice.attempt, notice.max_attempts, notice.wait),
            (2, 3, Duration::from_secs(2))
        );
        retrier.begin_attempt();
        assert!(retrier.after_failure(&overloaded(None)).is_ok());
        retrier.begin_attempt();
        assert_eq!(
            retrier
                .after_failure(&overloaded(None))
                .unwrap_err()
                .to_string(),
            "anthropic: gave up after 3 attempts (at most 3 attempts within 60s); last error: HTTP 529: Overloaded"
        );
    }

    #[test]
    fn a_wait_beyond_the_budget_is_not_made() {
        let mut retrier = Retrier::new("openai", policy(10, Duration::from_secs(30)));
        retrier.begin_attempt();
        assert_eq!(
            retrier
                .after_failure(&overloaded(Some(Duration::from_secs(120))))
                .unwrap_err()
                .to_string(),
            "openai: gave up after 1 attempt: the server asked to wait 120s, more than is left of the 30s retry budget (at most 10 attempts within 30s); last error: HTTP 529: Overloaded"
        );
        let mut spent = Retrier::new("openai", policy(10, Duration::ZERO));
        spent.begin_attempt();
        assert!(
            spent
                .after_failure(&overloaded(None))
                .unwrap_err()
                .to_string()
                .contains(": the 0s retry budget is spent")
        );
    }

    #[test]
    fn error_message_prefers_the_apis_own_text() {
        let status = StatusCode::UNAUTHORIZED;
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(
            error_message_from_body(status, anthropic),
            "invalid x-api-key"
        );
        assert_eq!(
            error_message_from_body(status, r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            error_message_from_body(status, "  plain text  "),
            "plain text"
        );
        assert_eq!(error_message_from_body(status, ""), "Unauthorized");
    }
}
