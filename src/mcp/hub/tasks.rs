//! Tools that must run as tasks (MCP 2025-11-25, `execution.taskSupport: "required"`):
//! `tools/call` with a `task` parameter creates the task, `tasks/get` is polled at the
//! server's `pollInterval`, `tasks/result` fetches the result, `tasks/cancel` ends it on
//! cancel or timeout. Status messages are reported as the call's progress.
//!
//! rmcp 3.11 models tasks as the 2026-07-28 extension (SEP-2663) and its `Tool` has no
//! `execution` field, so the 2025-11-25 shapes are read from raw JSON here: which tools
//! require tasks comes from the stdio listing itself ([`ListingSniffer`]), or, for a
//! server whose listing toolgate cannot see raw (Streamable HTTP), from the server's
//! refusal of a plain call ("requires task augmentation"), after which the call is made
//! again as a task. Tools that merely allow tasks (`optional`) stay plain calls.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{CallToolResult, ClientRequest, CustomRequest, CustomResult, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use super::call::Call;
use super::connection::{Connection, wait_closed};
use super::{McpHub, lock};
use crate::mcp::convert::{call_output, tool_info};
use crate::mcp::types::{CallOutput, McpError, ProgressUpdate};
use crate::pool::McpToolInfo;

/// Raw names of a connection's tools that require task augmentation.
pub(super) type TaskTools = Arc<Mutex<HashSet<String>>>;

/// How long a finished task's result is kept for us (the `ttl` we ask for).
const TASK_TTL_MS: u64 = 10 * 60 * 1000;
/// Poll bounds around the server's `pollInterval` (default 1 s).
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(10);
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// Lines longer than this are not looked at: a tool listing is never that big, results are.
const SNIFF_LIMIT: usize = 8 * 1024 * 1024;

/// Whether a JSON-RPC error says the tool must be called as a task (the TypeScript SDK:
/// "Tool X requires task augmentation (taskSupport: 'required')").
pub(super) fn refuses_plain_call(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("task augmentation") || message.contains("tasksupport: 'required'")
}

/// How far into a line the listing's key must appear (it is near the start of the message
/// whatever the key order: `{"jsonrpc":"2.0","id":N,"result":{"tools":[` or
/// `{"result":{"tools":[…`). Lines that do not have it there are not kept.
const HEAD: usize = 256;

fn may_be_listing(head: &[u8]) -> bool {
    let head = &head[..head.len().min(HEAD)];
    head.windows(8).any(|w| w == b"\"tools\":") || head.windows(9).any(|w| w == b"\"tools\" :")
}

/// Records, from each `tools/list` answer that passes, which tools require tasks.
fn record_listing(line: &[u8], found: &TaskTools) {
    if !may_be_listing(line) {
        return;
    }
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let Some(tools) = message
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
    else {
        return;
    };
    let mut set = lock(found);
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let required = tool
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
            == Some("required");
        if required {
            set.insert(name.to_string());
        } else {
            set.remove(name);
        }
    }
}

/// Passes a stdio server's stdout through unchanged, noting task-required tools of every
/// tool listing on the way (rmcp's typed `Tool` drops `execution`).
pub(super) struct ListingSniffer<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line passed [`SNIFF_LIMIT`]: skip to its end.
    skipping: bool,
    found: TaskTools,
}

impl<R> ListingSniffer<R> {
    pub(super) fn new(inner: R, found: TaskTools) -> Self {
        ListingSniffer {
            inner,
            line: Vec::new(),
            skipping: false,
            found,
        }
    }

    fn look_at(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = chunk.last() == Some(&b'\n');
            if !self.skipping {
                let mut rest = chunk;
                if self.line.len() < HEAD {
                    // Tool results, however big, are dropped after their first bytes.
                    let take = (HEAD - self.line.len()).min(rest.len());
                    self.line.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if self.line.len() >= HEAD && !may_be_listing(&self.line) {
                        self.skipping = true;
                        self.line.clear();
                    }
                }
                if !self.skipping && !rest.is_empty() {
                    if self.line.len() + rest.len() > SNIFF_LIMIT {
                        self.skipping = true;
                        self.line = Vec::new();
                    } else {
                        self.line.extend_from_slice(rest);
                    }
                }
            }
            if ends {
                if !self.skipping {
                    record_listing(&self.line, &self.found);
                }
                self.line.clear();
                self.skipping = false;
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for ListingSniffer<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.look_at(&buf.filled()[before..]);
        }
        polled
    }
}

/// The listing for the pool, task-required tools marked (the raw listing passed the
/// sniffer before rmcp decoded it, so the set is up to date).
pub(super) fn with_tasks(tools: &[rmcp::model::Tool], task_tools: &TaskTools) -> Vec<McpToolInfo> {
    let required = lock(task_tools);
    tools
        .iter()
        .map(|tool| {
            let mut info = tool_info(tool);
            info.claims.task_required = required.contains(&info.name);
            info
        })
        .collect()
}

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
            server: connection.name.clone(),
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
                        server: connection.name.clone(),
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
                server: connection.name.clone(),
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
                    server: connection.name.clone(),
                    message: format!("{method}: MCP error {}: {}", error.code.0, error.message),
                }),
                Ok(Err(e)) => Err(connection.error(e)),
                Err(_) => Err(connection.disconnected(&self.inner.servers).await),
            },
            () = wait_closed(closed) => Err(connection.disconnected(&self.inner.servers).await),
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
    use super::*;

    #[test]
    fn the_sniffer_notes_task_tools_across_reads_and_skips_other_lines() {
        let found = TaskTools::default();
        let mut sniffer = ListingSniffer::new(tokio::io::empty(), found.clone());
        let listing = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "plain", "inputSchema": {"type": "object"}},
            {"name": "research", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
            {"name": "maybe", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "optional"}},
        ]}})
        .to_string()
            + "\n";
        let (a, b) = listing.as_bytes().split_at(40);
        sniffer.look_at(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n");
        sniffer.look_at(a);
        assert!(lock(&found).is_empty(), "nothing before the line ends");
        sniffer.look_at(b);
        assert_eq!(
            lock(&found).iter().cloned().collect::<Vec<_>>(),
            vec!["research".to_string()]
        );
        // A later listing where the tool no longer requires tasks.
        sniffer.look_at(
            (json!({"result": {"tools": [{"name": "research", "inputSchema": {}}]}, "id": 3})
                .to_string()
                + "\n")
                .as_bytes(),
        );
        assert!(lock(&found).is_empty());
        // A big result is not kept past its first bytes.
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}",
            "x".repeat(100_000)
        );
        sniffer.look_at(big.as_bytes());
        assert!(
            sniffer.line.capacity() < 4 * HEAD,
            "{}",
            sniffer.line.capacity()
        );
        sniffer.look_at(b"\"}]}}\n");
        assert!(sniffer.line.is_empty() && !sniffer.skipping);
    }

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
