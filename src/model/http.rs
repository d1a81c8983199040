//! What the two HTTP providers share: the client and the loop that turns a streamed SSE
//! body into [`StreamEvent`]s through a provider-specific decoder.

use super::retry::{RetryPolicy, describe_send_error, send_with_retry};
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

/// Sends `build` with retries and streams the response through `decoder`. Each item is
/// yielded as soon as its SSE event is complete; after the first error the stream ends.
pub(crate) fn stream_sse<D: SseDecoder>(
    provider: String,
    retry: RetryPolicy,
    build: impl Fn() -> RequestBuilder + Send + 'static,
    mut decoder: D,
) -> BoxStream<'static, Result<StreamEvent, ModelError>> {
    let stream = async_stream::stream! {
        let response = match send_with_retry(&provider, &retry, build).await {
            Ok(response) => response,
            Err(err) => {
                yield Err(err);
                return;
            }
        };
        let mut body = response.bytes_stream();
        let mut parser = SseParser::new();
        while let Some(chunk) = body.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(err) => {
                    yield Err(ModelError::Stream {
                        provider: provider.clone(),
                        message: format!("connection lost mid-response: {}", describe_send_error(&err)),
                    });
                    return;
                }
            };
            for event in parser.feed(&chunk) {
                match decoder.on_event(&event) {
                    Ok(items) => {
                        for item in items {
                            yield Ok(item);
                        }
                    }
                    Err(err) => {
                        yield Err(err);
                        return;
                    }
                }
                if decoder.is_done() {
                    return;
                }
            }
        }
        let tail = parser.finish();
        let mut outcome = Ok(Vec::new());
        if let Some(event) = tail {
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
            }
            Err(err) => yield Err(err),
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
