//! Calls of tools that must run as tasks (MCP 2025-11-25): `tools/call` with a `task`
//! parameter creates the task, `tasks/get` is polled at the server's `pollInterval`,
//! `tasks/result` fetches the result, `tasks/cancel` ends it on cancel or timeout. Status
//! messages are reported as the call's progress.
//!
//! rmcp 3.11 models tasks as the 2026-07-28 extension (SEP-2663), so the 2025-11-25
//! shapes are read from raw JSON here. Which tools need this: [`super::task_tools`].

use std::time::Duration;

use rmcp::model::{CallToolResult, ClientRequest, CustomRequest, CustomResult, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::McpHub;
use super::connection::{Call, Connection, wait_closed};
use crate::mcp::convert::call_output;
use crate::mcp::types::{CallOutput, McpError, ProgressUpdate};
use std::sync::Arc;

/// How long a finished task's result is kept for us (the `ttl` we ask for).
const TASK_TTL_MS: u64 = 10 * 60 * 1000;
/// Poll bounds around the server's `pollInterval` (default 1 s).
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(10);
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// A task as `tools/call` and `tasks/get` describe it (2025-11-25: `{task: {...}}` and the
/// task's fields; 2026-07-28: the fields flattened).
#[derive(Debug, Clone, PartialEq)]
struct TaskState {
    id: String,
    status: String,
    message: Option<String>,
    /// The server's `pollInterval`, bounded; None when the answer had none (rmcp's typed
    /// `tasks/get` result drops the 2025-11-25 field, so the one from creation stays).
    poll: Option<Duration>,
}

fn task_state(raw: &Value) -> Option<TaskState> {
    let task = raw.get("task").filter(|t| t.is_object()).unwrap_or(raw);
    let poll_ms = task
        .get("pollInterval")
        .or_else(|| task.get("pollIntervalMs"))
        .and_then(Value::as_u64);
    Some(TaskState {
        id: task.get("taskId")?.as_str()?.to_string(),
        status: task.get("status")?.as_str()?.to_string(),
        message: task
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_string),
        poll: poll_ms.map(|ms| Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL)),
    })
}

/// Any answer as JSON (typed ones serialised back), to read task fields from.
fn raw_result(result: ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        other => serde_json::to_value(other).unwrap_or_default(),
    }
}

impl McpHub {
    /// One task-augmented call, from creation to result. `cancel` and the server's call
    /// timeout end it with `tasks/cancel`.
    pub(super) async fn call_as_task(&self, call: &Call<'_>) -> Result<CallOutput, McpError> {
        let Call {
            connection,
            tool,
            cancel,
            ..
        } = *call;
        let (arguments, progress) = (call.arguments.clone(), call.progress.clone());
        let deadline = tokio::time::sleep(connection.call_timeout);
        tokio::pin!(deadline);
        let mut closed = connection.closed.clone();
        let params = json!({
            "name": tool,
            "arguments": arguments.map(Value::Object).unwrap_or_else(|| json!({})),
            "task": {"ttl": TASK_TTL_MS},
        });
        let created = self
            .task_request(connection, "tools/call", params, cancel, &mut closed)
            .await?;
        let mut state = task_state(&created).ok_or_else(|| McpError::Protocol {
            server: connection.name.clone().into(),
            message: format!(
                "tools/call for the task tool '{tool}' answered without a task: {}",
                short(&created)
            ),
        })?;
        let mut poll = state.poll.unwrap_or(DEFAULT_POLL);
        let mut updates = 0.0;
        let mut last_message = None;
        let outcome = loop {
            if state.message.is_some() && state.message != last_message {
                last_message = state.message.clone();
                updates += 1.0;
                if let Some(progress) = &progress {
                    let _ = progress.send(ProgressUpdate {
                        progress: updates,
                        total: None,
                        message: state.message.clone(),
                    });
                }
            }
            match state.status.as_str() {
                // input_required: the server's questions come through tasks/result.
                "completed" | "input_required" => {
                    break tokio::select! {
                        result = self.task_result(connection, &state.id, cancel, &mut closed) => result,
                        () = &mut deadline => Err(connection.timeout(tool)),
                    };
                }
                "failed" => {
                    break Ok(CallOutput {
                        text: format!(
                            "the task failed: {}",
                            state.message.as_deref().unwrap_or("no reason given")
                        ),
                        is_error: true,
                        images: Vec::new(),
                    });
                }
                "cancelled" => {
                    break Ok(CallOutput {
                        text: "the server cancelled the task".into(),
                        is_error: true,
                        images: Vec::new(),
                    });
                }
                _ => {}
            }
            tokio::select! {
                () = tokio::time::sleep(poll) => {}
                () = &mut deadline => break Err(connection.timeout(tool)),
                () = cancel.cancelled() => break Err(McpError::Cancelled),
            }
            let raw = self
                .task_request(
                    connection,
                    "tasks/get",
                    json!({"taskId": state.id}),
                    cancel,
                    &mut closed,
                )
                .await;
            match raw.map(|raw| task_state(&raw)) {
                Ok(Some(next)) => {
                    poll = next.poll.unwrap_or(poll);
                    state = next;
                }
                Ok(None) => {
                    break Err(McpError::Protocol {
                        server: connection.name.clone().into(),
                        message: "tasks/get answered without a task".into(),
                    });
                }
                Err(e) => break Err(e),
            }
        };
        if matches!(outcome, Err(McpError::Cancelled | McpError::Timeout { .. })) {
            // Best effort: the task may already be over, and the server may be gone.
            let request = ClientRequest::CustomRequest(CustomRequest::new(
                "tasks/cancel",
                Some(json!({"taskId": state.id})),
            ));
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                connection.peer.send_request(request),
            )
            .await;
        }
        outcome
    }

    /// `tasks/result`: waits until the task is over and returns the tool's result.
    async fn task_result(
        &self,
        connection: &Arc<Connection>,
        task_id: &str,
        cancel: &CancellationToken,
        closed: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Result<CallOutput, McpError> {
        let raw = self
            .task_request(
                connection,
                "tasks/result",
                json!({"taskId": task_id}),
                cancel,
                closed,
            )
            .await?;
        let result: CallToolResult =
            serde_json::from_value(raw.clone()).map_err(|e| McpError::Protocol {
                server: connection.name.clone().into(),
                message: format!("tasks/result is not a tool result ({e}): {}", short(&raw)),
            })?;
        Ok(call_output(&result))
    }

    /// One request of the task protocol, as raw JSON; a JSON-RPC error is an error
    /// output's worth of text, as for plain calls.
    async fn task_request(
        &self,
        connection: &Arc<Connection>,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
        closed: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Result<Value, McpError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let handle = connection
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| connection.error(e))?;
        let id = handle.id.clone();
        tokio::select! {
            response = handle.rx => match response {
                Ok(Ok(result)) => Ok(raw_result(result)),
                Ok(Err(rmcp::ServiceError::McpError(error))) => Err(McpError::Protocol {
                    server: connection.name.clone().into(),
                    message: format!("{method}: MCP error {}: {}", error.code.0, error.message),
                }),
                Ok(Err(e)) => Err(connection.error(e)),
                Err(_) => Err(self.inner.servers.disconnected(connection).await),
            },
            () = wait_closed(closed) => Err(self.inner.servers.disconnected(connection).await),
            () = cancel.cancelled() => {
                connection.send_cancel(id, "cancelled by the user").await;
                Err(McpError::Cancelled)
            }
        }
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::super::task_tools::refuses_plain_call;
    use super::*;

    #[test]
    fn task_states_of_both_eras() {
        let old = json!({"task": {"taskId": "t1", "status": "working", "statusMessage": "Gathering sources...",
                                  "createdAt": "x", "lastUpdatedAt": "x", "ttl": 300000, "pollInterval": 1000}});
        assert_eq!(
            task_state(&old),
            Some(TaskState {
                id: "t1".into(),
                status: "working".into(),
                message: Some("Gathering sources...".into()),
                poll: Some(Duration::from_secs(1)),
            })
        );
        let flat = json!({"resultType": "task", "taskId": "t2", "status": "completed", "pollIntervalMs": 5});
        let state = task_state(&flat).unwrap();
        assert_eq!((state.id.as_str(), state.poll), ("t2", Some(MIN_POLL)));
        assert_eq!(task_state(&json!({"content": []})), None);
        assert!(refuses_plain_call(
            "Tool simulate-research-query requires task augmentation (taskSupport: 'required')"
        ));
    }
}
