//! How an API says a request did not fit the model's window; the table of windows is the
//! protocol's (`/model` completes from it).

use reqwest::StatusCode;

pub use crate::protocol::window::{DEFAULT_WINDOW, for_model, known_models};

/// A refusal because the request was longer than the model takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    /// The limit the API named, when it named one (tokens).
    pub limit: Option<u64>,
}

/// Reads an error response as an overflow: Anthropic answers 400 `invalid_request_error`
/// "prompt is too long: 210000 tokens > 200000 maximum" (413 `request_too_large` for a body
/// over its byte limit); OpenAI answers 400 with `code: context_length_exceeded` ("This
/// model's maximum context length is 128000 tokens…"), and compatible servers use the
/// same words.
pub fn overflow_in(status: StatusCode, body: &str) -> Option<Overflow> {
    if status != StatusCode::BAD_REQUEST && status != StatusCode::PAYLOAD_TOO_LARGE {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let said = [
        "context_length_exceeded",
        "prompt is too long",
        "maximum context length",
        "context window",
        "request_too_large",
        "too many tokens",
    ]
    .iter()
    .any(|words| lower.contains(words));
    said.then(|| Overflow {
        limit: named_limit(&lower),
    })
}

/// The limit in "… > 200000 maximum" or "maximum context length is 128000 tokens".
fn named_limit(lower: &str) -> Option<u64> {
    if let Some(at) = lower.find(" maximum")
        && let Some(gt) = lower[..at].rfind('>')
    {
        return lower[gt + 1..at].trim().parse().ok();
    }
    let after = lower.split("maximum context length is").nth(1)?;
    let digits: String = after
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_come_from_the_table_by_prefix() {
        assert_eq!(for_model("claude-sonnet-4-5"), 200_000);
        assert_eq!(for_model("gpt-4o-mini"), 128_000);
        assert_eq!(for_model("openai/gpt-4.1-mini"), 1_047_576);
        assert_eq!(for_model("gpt-4-0613"), 8_192);
        assert_eq!(for_model("Llama3.1:8b"), 128_000);
        assert_eq!(for_model("something-new"), DEFAULT_WINDOW);
    }

    #[test]
    fn both_apis_refusals_are_read_with_their_limits() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert_eq!(
            overflow_in(StatusCode::BAD_REQUEST, anthropic),
            Some(Overflow {
                limit: Some(200_000)
            })
        );
        let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(
            overflow_in(StatusCode::BAD_REQUEST, openai),
            Some(Overflow {
                limit: Some(128_000)
            })
        );
        let too_large = r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#;
        assert_eq!(
            overflow_in(StatusCode::PAYLOAD_TOO_LARGE, too_large),
            Some(Overflow { limit: None })
        );
        let other = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}"#;
        assert_eq!(overflow_in(StatusCode::BAD_REQUEST, other), None);
        assert_eq!(overflow_in(StatusCode::UNAUTHORIZED, anthropic), None);
    }
}
