//! The models a provider offers, for `/model` completion: Anthropic's `GET /v1/models` and
//! the OpenAI-compatible `GET /models` both answer `{"data": [{"id": "..."}, ...]}`.
//! Asked once, when the person first completes `/model`; a provider that does not answer
//! leaves the built-in table (`window::known_models`) as the only source.

use futures::FutureExt;
use futures::future::BoxFuture;
use reqwest::RequestBuilder;
use serde_json::Value;

/// At most this many names are kept: a gateway may list thousands.
const MAX_MODELS: usize = 200;

/// Sends `request` and reads the model ids from its answer, in the provider's order.
pub(crate) fn fetch(request: RequestBuilder) -> BoxFuture<'static, Result<Vec<String>, String>> {
    async move {
        let response = request
            .send()
            .await
            .map_err(|e| format!("listing the models failed: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("listing the models failed: HTTP {status}"));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|e| format!("the model list is not JSON: {e}"))?;
        Ok(ids(&body))
    }
    .boxed()
}

/// The `id` of each entry of `data`, without repeats, capped at [`MAX_MODELS`].
fn ids(body: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let entries = body["data"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for id in entries.iter().filter_map(|entry| entry["id"].as_str()) {
        let id = id.trim();
        if !id.is_empty() && !id.contains(char::is_whitespace) && !out.iter().any(|o| o == id) {
            out.push(id.to_string());
        }
        if out.len() == MAX_MODELS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_come_in_the_providers_order_once_each_and_odd_entries_are_skipped() {
        let body = json!({"data": [
            {"id": "claude-opus-4-1", "type": "model"},
            {"id": "claude-sonnet-4-5"},
            {"id": "claude-opus-4-1"},
            {"id": "two words"},
            {"name": "no id"},
            {"id": 7}
        ], "has_more": false});
        assert_eq!(ids(&body), ["claude-opus-4-1", "claude-sonnet-4-5"]);
        assert!(ids(&json!({"error": "nope"})).is_empty());
    }
}
