//! One live connection to a server: its peer, the process behind it (stdio), what it
//! listed, and how it is closed. Its failures are worded here, the same for every request.

use super::task_tools::TaskTools;
use crate::children::GroupChild;
use crate::mcp::auth::{self, Challenge};
use crate::mcp::catalog::Catalog;
use crate::mcp::errors;
use crate::mcp::handler::{HubClient, ProgressRoutes};
use crate::mcp::spawn::stop_child;
use crate::mcp::stderr::StderrTail;
use crate::mcp::types::{McpError, ProgressUpdate};
use crate::pool::ServerTools;
use rmcp::model::{CancelledNotification, CancelledNotificationParam, RequestId};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

pub(super) type Service = RunningService<RoleClient, HubClient>;

pub(super) struct Connection {
    pub(super) name: String,
    pub(super) peer: Peer<RoleClient>,
    pub(super) service: tokio::sync::Mutex<Option<Service>>,
    pub(super) child: tokio::sync::Mutex<Option<GroupChild>>,
    /// The current listing, prepared for the pool once per tools/list and shared from then on.
    pub(super) tools: Mutex<Arc<ServerTools>>,
    /// Resources, templates and prompts as last listed (`resources.rs`).
    pub(super) catalog: Mutex<Arc<Catalog>>,
    pub(super) protocol: String,
    pub(super) stderr: StderrTail,
    pub(super) progress: ProgressRoutes,
    pub(super) call_timeout: Duration,
    /// An HTTP server can fail one request and answer the next (a restart, a proxy blip);
    /// a failed request there is not the end of the connection as a closed pipe is.
    pub(super) over_http: bool,
    /// Set when we close it on purpose, so the watcher does not report a failure.
    pub(super) closing: AtomicBool,
    /// Becomes true when the transport ends (server exited, crashed, closed stdout).
    pub(super) closed: watch::Receiver<bool>,
    /// The `instructions` of its initialize result (the server's own words).
    pub(super) instructions: Option<String>,
    /// It declared the `logging` capability.
    pub(super) logging: bool,
    /// Tools this server wants called as tasks (`execution.taskSupport: "required"`).
    pub(super) task_tools: TaskTools,
}

/// One tool call on one connection: what each attempt of it sends and listens to.
pub(super) struct Call<'a> {
    pub(super) connection: &'a Arc<Connection>,
    pub(super) tool: &'a str,
    pub(super) arguments: Option<Map<String, Value>>,
    pub(super) progress: Option<mpsc::UnboundedSender<ProgressUpdate>>,
    pub(super) cancel: &'a CancellationToken,
}

impl Connection {
    /// Closes it on purpose (the crash watch stays quiet): stdin closed, wait, terminate.
    pub(super) async fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let service = self.service.lock().await.take();
        let child = self.child.lock().await.take();
        shut(service, child).await;
    }

    /// A failed request, with the authorization challenge behind it (HTTP), if any.
    pub(super) fn failure(&self, e: ServiceError) -> (McpError, Option<Challenge>) {
        let challenge = self.over_http.then(|| auth::in_service_error(&e)).flatten();
        (self.error(e), challenge)
    }

    /// A failed request: over HTTP only that request failed; over stdio the pipe is gone.
    pub(super) fn error(&self, e: ServiceError) -> McpError {
        let reason = errors::service_error(&e);
        if self.over_http {
            McpError::Protocol {
                server: self.name.clone().into(),
                message: format!("the request failed: {reason}"),
            }
        } else {
            McpError::Disconnected {
                server: self.name.clone().into(),
                reason,
            }
        }
    }

    /// `tool` ran past the server's call timeout.
    pub(super) fn timeout(&self, tool: &str) -> McpError {
        McpError::Timeout {
            server: self.name.clone().into(),
            tool: tool.to_string(),
            seconds: self.call_timeout.as_secs().max(1),
        }
    }

    /// `notifications/cancelled` for request `id` (best effort, bounded).
    pub(super) async fn send_cancel(&self, id: RequestId, reason: &str) {
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some(reason.to_string()),
        ));
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            self.peer.send_notification(notification.into()),
        )
        .await;
    }
}

/// Resolves once the transport behind `closed` has ended.
pub(super) async fn wait_closed(closed: &mut watch::Receiver<bool>) {
    while !*closed.borrow() {
        if closed.changed().await.is_err() {
            // The sender lives as long as the transport; gone means closed.
            return;
        }
    }
}

/// Stops a service and the process behind it (either may be gone already).
pub(super) async fn shut(service: Option<Service>, child: Option<GroupChild>) {
    if let Some(mut service) = service {
        // Cancelling the service closes the transport, which closes the server's stdin.
        let _ = service.close_with_timeout(Duration::from_secs(2)).await;
    }
    if let Some(child) = child {
        stop_child(child).await;
    }
}
