//! How many tokens a model's context window holds, and how an API says a request did not
//! fit. The table covers the models people point toolgate at; `[model] context_window` in
//! config.toml overrides it (proxies, local models, tests), and a refusal that names the
//! limit teaches the session the real one.

use reqwest::StatusCode;

/// Where a model is unknown: the smallest window of the current hosted models, so that an
/// unknown model compacts early rather than overflows.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// Context windows by model-id prefix, most specific first (the first match wins).
/// Figures are the providers' published input windows.
const WINDOWS: &[(&str, u64)] = &[
    // Anthropic: every current Claude model has a 200k window (1M is a beta opt-in).
    ("claude-", 200_000),
    // OpenAI.
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    // Common open models behind OpenAI-compatible servers (Ollama, vLLM, llama.cpp).
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3.3", 128_000),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("qwen3", 40_960),
    ("mistral", 32_768),
    ("deepseek", 128_000),
    ("gemma", 8_192),
];

/// The model names (or their beginnings, such as `claude-`) the table knows: what `/model`
/// completes where the provider offers no list.
pub fn known_models() -> impl Iterator<Item = &'static str> {
    WINDOWS.iter().map(|(prefix, _)| *prefix)
}

/// The context window of `model` in tokens, from the table (by prefix, ignoring case and a
/// `provider/` path such as `openai/gpt-4o` or `library/llama3.1`).
pub fn for_model(model: &str) -> u64 {
    let id = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    WINDOWS
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map_or(DEFAULT_WINDOW, |(_, tokens)| *tokens)
}

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
