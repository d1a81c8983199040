//! A `tools/call` refused with `-32042` (URL elicitation required): each page the error
//! names is put to the person exactly like an `elicitation/create` in URL mode (the full
//! URL, its domain, nothing opens before they choose Open); once they opened it, the call
//! waits for the server's `notifications/elicitation/complete` and is sent again. A page
//! declined, or not completed within [`COMPLETION_WAIT`], ends the call with a tool error
//! that names the URL, so the model and the person can see what the server wanted.

use super::McpHub;
use crate::mcp::elicitation::url::{COMPLETION_WAIT, required_pages};
use crate::mcp::types::{McpError, ProgressUpdate};
use rmcp::model::{ElicitationAction, ErrorData};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How the pages of a `-32042` refusal went.
pub(super) enum PagesVisited {
    /// All opened and completed: the call can be sent again.
    Done,
    /// The call ends with this tool error.
    Refused(String),
}

impl McpHub {
    /// Asks the person to visit each page `error` names and waits for each to be completed.
    /// `Err` only when the call was cancelled meanwhile.
    pub(super) async fn visit_required_pages(
        &self,
        server: &str,
        error: &ErrorData,
        progress: Option<&mpsc::UnboundedSender<ProgressUpdate>>,
        cancel: &CancellationToken,
    ) -> Result<PagesVisited, McpError> {
        let refused = |why: String| {
            PagesVisited::Refused(format!(
                "MCP error {}: {} ({why})",
                error.code.0, error.message
            ))
        };
        let pages = match required_pages(error) {
            Ok(pages) => pages,
            Err(why) => return Ok(refused(format!("toolgate cannot act on it: {why}"))),
        };
        let elicitor = self.inner.servers.elicitor(server);
        for page in pages {
            let request = page.as_request();
            let answer = tokio::select! {
                answer = elicitor.ask_raw(&request, cancel.child_token()) => answer,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            };
            match answer {
                Ok(result) if result.action == ElicitationAction::Accept => {}
                Ok(result) => {
                    let what = match result.action {
                        ElicitationAction::Cancel => "cancelled",
                        _ => "declined",
                    };
                    return Ok(refused(format!(
                        "the server needs {} visited first; the person {what} opening it",
                        page.url
                    )));
                }
                Err(e) => {
                    return Ok(refused(format!(
                        "the server needs {} visited first; {}",
                        page.url, e.message
                    )));
                }
            }
            if let Some(progress) = progress {
                let _ = progress.send(ProgressUpdate {
                    progress: 0.0,
                    total: None,
                    message: Some(format!(
                        "waiting for '{server}' to say the page you opened is done"
                    )),
                });
            }
            tokio::select! {
                () = elicitor.completions().wait(&page.elicitation_id) => {}
                () = tokio::time::sleep(COMPLETION_WAIT) => {
                    return Ok(refused(format!(
                        "the server did not say within {} minutes that {} was completed",
                        COMPLETION_WAIT.as_secs() / 60,
                        page.url
                    )));
                }
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            }
        }
        Ok(PagesVisited::Done)
    }
}
