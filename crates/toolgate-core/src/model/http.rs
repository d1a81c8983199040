//! What the two HTTP providers share: the client and the loop that turns a streamed SSE
//! body into [`StreamEvent`]s through a provider-specific decoder.

use super::retry::{
    Failure, Retrier, RetryPolicy, describe_send_error, error_message_from_body, retry_after,
};
use super::sse::{SseEvent, SseParser};
use super::{ModelError, RetryReason, StreamEvent};
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

/// Sends `build` and streams the response through a fresh decoder, each item yielded as
/// soon as its SSE event is complete. A failure worth trying again (429, 5xx, 529, a
/// connection error, an `overloaded_error` event, a body cut before the provider's end
/// marker) is announced as [`StreamEvent::Retrying`] and the same request is sent again
/// within the policy's attempts and time budget; any other failure, or a spent budget,
/// is the stream's last item.
///
/// A retry after part of the reply was yielded starts the reply over: the caller was told
/// (by `Retrying`) to drop what it had, and the request is the one the model saw, never
/// extended by the text it had produced.
pub(crate) fn stream_sse<D: SseDecoder + Default>(
    provider: String,
    retry: RetryPolicy,
    build: impl Fn() -> RequestBuilder + Send + Sync + 'static,
) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
    let stream = async_stream::stream! {
        let mut retrier = Retrier::new(&provider, retry);
        loop {
            retrier.begin_attempt();
            let failure = match build().send().await {
                Ok(response) if response.status().is_success() => {
                    let mut decoder = D::default();
                    let mut yielded_any = false;
                    let mut body = response.bytes_stream();
                    let mut parser = SseParser::new();
                    // Why the body failed; None when it ended without a word (see below).
                    let mut failure: Option<Result<Failure, ModelError>> = None;
                    'body: while let Some(chunk) = body.next().await {
                        let chunk = match chunk {
                            Ok(chunk) => chunk,
                            Err(err) => {
                                failure = Some(Ok(Failure {
                                    reason: if yielded_any {
                                        RetryReason::Cut
                                    } else {
                                        RetryReason::Connection
                                    },
                                    detail: format!(
                                        "connection lost mid-response: {}",
                                        describe_send_error(&err)
                                    ),
                                    asked_wait: None,
                                }));
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
                                    failure = Some(transient(err));
                                    break 'body;
                                }
                            }
                            if decoder.is_done() {
                                return;
                            }
                        }
                    }
                    let failure = match failure {
                        Some(failure) => failure,
                        None => {
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
                                // The body ended before the end marker: the server or a
                                // proxy closed it mid-reply, which a new request may not.
                                Err(ModelError::Stream { message, .. }) => Ok(Failure {
                                    reason: RetryReason::Cut,
                                    detail: message,
                                    asked_wait: None,
                                }),
                                Err(err) => transient(err),
                            }
                        }
                    };
                    match failure {
                        Ok(failure) => failure,
                        Err(err) => {
                            yield Err(err);
                            return;
                        }
                    }
                }
                Ok(response) => {
                    let status = response.status();
                    let asked_wait = retry_after(response.headers(), std::time::SystemTime::now());
                    let body = response.text().await.unwrap_or_default();
                    let message = error_message_from_body(status, &body);
                    if let Some(overflow) = super::window::overflow_in(status, &body) {
                        yield Err(ModelError::ContextOverflow {
                            provider: provider.clone(),
                            message,
                            limit: overflow.limit,
                        });
                        return;
                    }
                    let Some(reason) = RetryReason::of_status(status.as_u16()) else {
                        yield Err(ModelError::Api {
                            provider: provider.clone(),
                            status: status.as_u16(),
                            message,
                        });
                        return;
                    };
                    Failure {
                        reason,
                        detail: format!("HTTP {}: {message}", status.as_u16()),
                        asked_wait,
                    }
                }
                Err(err) if err.is_builder() => {
                    yield Err(ModelError::Config(format!(
                        "{provider}: cannot build the request: {err}"
                    )));
                    return;
                }
                Err(err) => Failure {
                    reason: RetryReason::Connection,
                    detail: describe_send_error(&err),
                    asked_wait: None,
                },
            };
            match retrier.after_failure(&failure) {
                Ok(notice) => {
                    tracing::warn!(
                        provider = %provider,
                        attempt = notice.attempt,
                        wait_ms = notice.wait.as_millis() as u64,
                        problem = %failure.detail,
                        "model request failed; retrying"
                    );
                    let wait = notice.wait;
                    yield Ok(StreamEvent::Retrying(notice));
                    tokio::time::sleep(wait).await;
                }
                Err(err) => {
                    yield Err(err);
                    return;
                }
            }
        }
    };
    stream.boxed()
}

/// A decoder's error: a failure to retry when the decoder says it is transient, else the
/// final error (a malformed frame would come back the same).
fn transient(err: ModelError) -> Result<Failure, ModelError> {
    match err {
        ModelError::Transient {
            reason, message, ..
        } => Ok(Failure {
            reason,
            detail: message,
            asked_wait: None,
        }),
        other => Err(other),
    }
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
