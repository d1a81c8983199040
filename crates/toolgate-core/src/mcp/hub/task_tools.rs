//! Which tools must run as tasks (MCP 2025-11-25, `execution.taskSupport: "required"`).
//!
//! rmcp 3.11's `Tool` has no `execution` field, so this is read from raw JSON: from the
//! stdio listing itself ([`ListingSniffer`]), or, for a server whose listing toolgate
//! cannot see raw (Streamable HTTP), from the server's refusal of a plain call ("requires
//! task augmentation"), after which the call is made again as a task. Tools that merely
//! allow tasks (`optional`) stay plain calls.

use super::locks::lock;
use crate::mcp::convert::tool_info;
use crate::pool::McpToolInfo;
use serde_json::Value;
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Raw names of a connection's tools that require task augmentation.
pub(super) type TaskTools = Arc<Mutex<HashSet<String>>>;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
