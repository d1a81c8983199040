//! rmcp's errors, worded for people. Its transport errors print the full Rust type of the
//! transport (`Transport [toolgate::mcp::transport::GuardedTransport<…>]`), which tells a
//! user nothing; what they need is the cause at the bottom ("Connection refused", "401").

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::error::Error;

/// Why a handshake failed, e.g. `error sending request for url (http://…): client error
/// (Connect): tcp connect error: Connection refused (os error 111) (while sending the
/// discover request)`.
pub(super) fn init_error(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, context } => {
            format!(
                "{} (while {})",
                transport_chain(error.error.as_ref()),
                while_doing(context)
            )
        }
        other => other.to_string(),
    }
}

/// Why a request failed after the handshake.
pub(super) fn service_error(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(error) => transport_chain(error.error.as_ref()),
        ServiceError::TransportClosed => "the connection closed".to_string(),
        other => other.to_string(),
    }
}

/// rmcp's HTTP client error keeps reqwest's error without declaring it a source, so the
/// cause ("Connection refused") would be cut off; reach into it.
fn transport_chain(error: &(dyn Error + Send + Sync + 'static)) -> String {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => chain(inner),
        _ => chain(error),
    }
}

/// An error and its sources, outermost first, leaving out a source whose text the error
/// already repeats (many wrappers print their source themselves).
fn chain(error: &(dyn Error + 'static)) -> String {
    // Some messages end in ": " followed by an empty body ("HTTP 401 Unauthorized: ").
    let text_of = |e: &dyn Error| e.to_string().trim_end_matches([' ', ':']).to_string();
    let mut parts: Vec<String> = vec![text_of(error)];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = text_of(cause);
        if !parts.last().is_some_and(|outer| outer.contains(&text)) && !text.is_empty() {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// rmcp's contexts read "send initialize request", "send discover request"; say them as an
/// activity.
fn while_doing(context: &str) -> String {
    match context.strip_prefix("send ") {
        Some(rest) => format!("sending the {rest}"),
        None => context.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    #[test]
    fn chain_reaches_the_cause_without_repeating_it() {
        let error = Layer(
            "error sending request",
            Some(Box::new(Layer(
                "tcp connect error: Connection refused",
                Some(Box::new(Layer("Connection refused", None))),
            ))),
        );
        assert_eq!(
            chain(&error),
            "error sending request: tcp connect error: Connection refused"
        );
    }

    #[test]
    fn contexts_read_as_activities() {
        assert_eq!(
            while_doing("send discover request"),
            "sending the discover request"
        );
        assert_eq!(
            while_doing("initialized notification"),
            "initialized notification"
        );
    }
}
