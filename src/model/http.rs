//! What the two HTTP providers share: the client and the loop that turns a streamed SSE
//! body into [`StreamEvent`]s through a provider-specific decoder.

use super::retry::{RetryPolicy, describe_send_error, gave_up, send_with_retry};
use super::sse::{SseEvent, SseParser};
use super::{ModelError, StreamEvent};
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::RequestBuilder;
use std::time::Duration;

pub(crate) fn build_client() -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        // Between two chunks, not for the whole response: Anthropic pings every few
        // seconds, but a local model on a CPU may think for minutes before its first token.
        .read_timeout(Duration::from_secs(300))
        .build()
        .map_err(|e| ModelError::Config(format!("cannot create the HTTP client: {e}")))
}

/// Turns one provider's SSE events into stream events.
pub(crate) trait SseDecoder: Send + 'static {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ModelError>;
    /// The provider's end-of-message marker was seen; nothing after it matters.
    fn is_done(&self) -> bool;
    /// The body ended without the end marker: either finish cleanly or say why not.
    fn on_body_end(&mut self) -> Result<Vec<StreamEvent>, ModelError>;
}

/// Sends `build` with retries and streams the response through a fresh decoder. Each item
/// is yielded as soon as its SSE event is complete; after the first error the stream ends.
///
/// A response that fails before yielding anything (the connection drops, or Anthropic
/// sends an `overloaded_error` event right after `message_start`) is retried within the
/// same attempt budget; once anything was yielded, a failure is final, because the user
/// has already seen part of the answer.
pub(crate) fn stream_sse<D: SseDecoder + Default>(
    provider: String,
    retry: RetryPolicy,
    build: impl Fn() -> RequestBuilder + Send + Sync + 'static,
) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
    let stream = async_stream::stream! {
        let mut attempts_used = 0u32;
        loop {
            let response = match send_with_retry(&provider, &retry, &mut attempts_used, &build).await {
                Ok(response) => response,
                Err(err) => {
                    yield Err(err);
                    return;
                }
            };
            let mut decoder = D::default();
            let mut yielded_any = false;
            let mut body = response.bytes_stream();
            let mut parser = SseParser::new();
            // Set when the body fails; `true` when trying again could help.
            let mut failure: Option<(ModelError, bool)> = None;
            'body: while let Some(chunk) = body.next().await {
                let chunk = match chunk {
                    Ok(chunk) => chunk,
                    Err(err) => {
                        let message = format!(
                            "connection lost mid-response: {}",
                            describe_send_error(&err)
                        );
                        failure = Some((
                            ModelError::Stream { provider: provider.clone(), message },
                            true,
                        ));
                        break 'body;
                    }
                };
                for event in parser.feed(&chunk) {
                    match decoder.on_event(&event) {
                        Ok(items) => {
                            for item in items {
                                yielded_any = true;
                                yield Ok(item);
                            }
                        }
                        Err(err) => {
                            let transient = matches!(err, ModelError::Unavailable { .. });
                            failure = Some((err, transient));
                            break 'body;
                        }
                    }
                    if decoder.is_done() {
                        return;
                    }
                }
            }
            if failure.is_none() {
                let mut outcome = Ok(Vec::new());
                if let Some(event) = parser.finish() {
                    outcome = decoder.on_event(&event);
                }
                let outcome = outcome.and_then(|mut items| {
                    if !decoder.is_done() {
                        items.extend(decoder.on_body_end()?);
                    }
                    Ok(items)
                });
                match outcome {
                    Ok(items) => {
                        for item in items {
                            yield Ok(item);
                        }
                        return;
                    }
                    Err(err) => failure = Some((err, false)),
                }
            }
            let Some((err, transient)) = failure else { return };
            let budget_left = attempts_used < retry.max_attempts.max(1);
            if !transient || yielded_any || !budget_left {
                let err = if transient && !yielded_any {
                    let problem = match &err {
                        ModelError::Unavailable { message, .. } | ModelError::Stream { message, .. } => {
                            message.clone()
                        }
                        other => other.to_string(),
                    };
                    gave_up(&provider, attempts_used, &problem)
                } else {
                    err
                };
                yield Err(err);
                return;
            }
            let wait = retry.backoff(attempts_used.saturating_sub(1));
            tracing::warn!(
                provider = %provider,
                attempt = attempts_used,
                wait_ms = wait.as_millis() as u64,
                problem = %err,
                "model response failed before its first event; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    };
    stream.boxed()
}

/// True for base URLs that point at this machine (Ollama, llama.cpp server, vLLM on
/// localhost), where an API key is usually not needed.
pub(crate) fn is_local_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".localhost"),
    }
}
