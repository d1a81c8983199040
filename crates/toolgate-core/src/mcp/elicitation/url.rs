//! URL elicitation that a tool call requires (MCP 2025-11-25): a server refuses a
//! `tools/call` with error `-32042` and, in its data, the pages the person must visit first
//! (`{"elicitations": [{"mode": "url", "elicitationId", "url", "message"}]}`), typically to
//! connect a third-party account. It later says `notifications/elicitation/complete` with
//! the `elicitationId` when the page is done. This module reads the error and keeps track
//! of the completions; the hub (`hub/url_required.rs`) asks the person and retries.

use rmcp::model::ErrorData;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// The JSON-RPC error code of "this call needs the person at a URL first".
pub const URL_ELICITATION_REQUIRED: i32 = -32042;

/// The method of the notification that a page is done.
pub const COMPLETE_METHOD: &str = "notifications/elicitation/complete";

/// How long a call waits, after the person opened the page, for the server to say that it
/// was completed (signing in to another service takes a person minutes, not hours).
pub const COMPLETION_WAIT: Duration = Duration::from_secs(600);

/// One page the server needs the person to visit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequiredPage {
    pub elicitation_id: String,
    pub url: String,
    pub message: String,
}

impl RequiredPage {
    /// The page as the params of an `elicitation/create` in URL mode: asked exactly like one.
    pub fn as_request(&self) -> Value {
        json!({
            "mode": "url",
            "elicitationId": self.elicitation_id,
            "url": self.url,
            "message": self.message,
        })
    }
}

/// The pages a `-32042` error names; an error that names none (or only pages of another
/// mode) cannot be acted on, and says why.
pub fn required_pages(error: &ErrorData) -> Result<Vec<RequiredPage>, String> {
    let listed = error
        .data
        .as_ref()
        .and_then(|d| d.get("elicitations"))
        .and_then(Value::as_array)
        .ok_or("it names no page to visit (no data.elicitations)")?;
    let mut pages = Vec::new();
    for (i, entry) in listed.iter().enumerate() {
        let field = |name: &str| entry.get(name).and_then(Value::as_str);
        if field("mode") != Some("url") {
            return Err(format!("elicitation {i} is not in URL mode"));
        }
        let (Some(id), Some(url)) = (field("elicitationId"), field("url")) else {
            return Err(format!("elicitation {i} lacks its elicitationId or url"));
        };
        pages.push(RequiredPage {
            elicitation_id: id.to_string(),
            url: url.to_string(),
            message: field("message").unwrap_or_default().to_string(),
        });
    }
    if pages.is_empty() {
        return Err("its list of pages to visit is empty".into());
    }
    Ok(pages)
}

/// The elicitation IDs a server said were completed, and a wake-up for whoever waits.
#[derive(Debug, Default)]
pub struct Completions {
    done: Mutex<HashSet<String>>,
    changed: Notify,
}

impl Completions {
    /// The server said this page is done.
    pub fn complete(&self, elicitation_id: &str) {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(elicitation_id.to_string());
        self.changed.notify_waiters();
    }

    /// Resolves once the server said `elicitation_id` is done (at once if it already did).
    pub async fn wait(&self, elicitation_id: &str) {
        loop {
            // Registered before the check, so a completion between the two is not missed.
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self
                .done
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(elicitation_id)
            {
                return;
            }
            changed.await;
        }
    }
}

/// The `elicitationId` of a `notifications/elicitation/complete`.
pub fn completed_id(params: Option<&Value>) -> Option<&str> {
    params?.get("elicitationId")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;
    use std::sync::Arc;

    fn error(data: Value) -> ErrorData {
        ErrorData::new(
            ErrorCode(URL_ELICITATION_REQUIRED),
            "connect first",
            Some(data),
        )
    }

    #[test]
    fn the_pages_of_the_error_are_read_and_bad_ones_refused_with_the_reason() {
        let pages = required_pages(&error(json!({"elicitations": [
            {"mode": "url", "elicitationId": "e1", "url": "https://a.test/c", "message": "Connect"}
        ]})))
        .unwrap();
        assert_eq!(
            pages,
            [RequiredPage {
                elicitation_id: "e1".into(),
                url: "https://a.test/c".into(),
                message: "Connect".into()
            }]
        );
        assert_eq!(pages[0].as_request()["mode"], "url");
        for (data, why) in [
            (json!({}), "no data.elicitations"),
            (json!({"elicitations": []}), "empty"),
            (
                json!({"elicitations": [{"mode": "form", "elicitationId": "e"}]}),
                "not in URL mode",
            ),
            (
                json!({"elicitations": [{"mode": "url", "url": "https://a.test"}]}),
                "lacks its elicitationId",
            ),
        ] {
            let err = required_pages(&error(data)).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[tokio::test]
    async fn a_waiter_wakes_on_its_completion_and_one_that_came_first_counts() {
        let completions = Arc::new(Completions::default());
        completions.complete("early");
        completions.wait("early").await;
        let waiter = tokio::spawn({
            let completions = Arc::clone(&completions);
            async move { completions.wait("late").await }
        });
        tokio::task::yield_now().await;
        completions.complete("other");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        completions.complete("late");
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .unwrap();
    }
}
