//! Sending a model request with retries. Only the request itself is retried — once a 2xx
//! response is returned its body is streamed to the agent, and a failure after that is a
//! stream error, never a silent replay of text the user has already seen.

use super::ModelError;
use rand::Rng;
use reqwest::{RequestBuilder, Response, StatusCode};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts including the first (at least 1).
    pub max_attempts: u32,
    /// The delay before the first retry; doubled for each further retry, with jitter.
    pub base_delay: Duration,
    /// Upper bound for any single wait, including one asked for by `retry-after`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first retry): exponential backoff
    /// with "equal jitter" (half fixed, half random) so that many clients hit by the same
    /// overload do not come back in lockstep.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(16)));
        let capped = exp.min(self.max_delay);
        let half = capped / 2;
        let jitter = rand::rng().random_range(0.0..=1.0);
        half + half.mul_f64(jitter)
    }
}

/// Statuses worth trying again: rate limits, transient server errors and Anthropic's
/// `529 overloaded`.
pub fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504 | 529)
}

/// `retry-after` in seconds (the HTTP-date form is not used by model APIs).
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    let seconds: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
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

/// Sends the request built by `build` until it succeeds, a non-retryable status comes back,
/// or the attempts run out. Returns the successful response with its body unread.
///
/// `attempts_used` is shared with the caller so that a response whose body fails before
/// its first event can be retried within the same budget (see `http::stream_sse`).
pub async fn send_with_retry(
    provider: &str,
    policy: &RetryPolicy,
    attempts_used: &mut u32,
    build: &impl Fn() -> RequestBuilder,
) -> Result<Response, ModelError> {
    let attempts = policy.max_attempts.max(1);
    let mut last_problem = String::from("no attempt left");
    while *attempts_used < attempts {
        let attempt = *attempts_used;
        *attempts_used += 1;
        let wait = match build().send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let asked_wait = retry_after(&response);
                let body = response.text().await.unwrap_or_default();
                let message = error_message_from_body(status, &body);
                if !is_retryable_status(status) {
                    return Err(ModelError::Api {
                        provider: provider.to_string(),
                        status: status.as_u16(),
                        message,
                    });
                }
                last_problem = format!("HTTP {}: {message}", status.as_u16());
                asked_wait
                    .map(|d| d.min(policy.max_delay))
                    .unwrap_or_else(|| policy.backoff(attempt))
            }
            Err(err) if err.is_builder() => {
                return Err(ModelError::Config(format!(
                    "{provider}: cannot build the request: {err}"
                )));
            }
            Err(err) => {
                last_problem = describe_send_error(&err);
                policy.backoff(attempt)
            }
        };
        if *attempts_used >= attempts {
            break;
        }
        tracing::warn!(
            provider,
            attempt = *attempts_used,
            wait_ms = wait.as_millis() as u64,
            problem = %last_problem,
            "model request failed; retrying"
        );
        tokio::time::sleep(wait).await;
    }
    Err(gave_up(provider, attempts, &last_problem))
}

pub fn gave_up(provider: &str, attempts: u32, last_problem: &str) -> ModelError {
    ModelError::Unavailable {
        provider: provider.to_string(),
        message: format!("gave up after {attempts} attempts; last error: {last_problem}"),
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

    #[test]
    fn backoff_grows_and_stays_within_bounds() {
        let policy = RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
        };
        for _ in 0..50 {
            let first = policy.backoff(0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(2);
            assert!(third >= Duration::from_millis(175) && third <= Duration::from_millis(350));
            assert!(policy.backoff(40) <= Duration::from_millis(350));
        }
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
