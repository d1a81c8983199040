//! How connections end: on request (`disconnect`, `shutdown`, no orphans left behind) or
//! on their own (the crash watch reports the exit status and stderr).

use super::McpHub;
use super::connection::{Connection, wait_closed};
use crate::mcp::types::{McpError, ServerStatus};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl McpHub {
    pub async fn disconnect(&self, name: &str) -> Result<(), McpError> {
        let servers = &self.inner.servers;
        if servers.config(name).is_none() {
            return Err(servers.unknown(name));
        }
        let _one_at_a_time = servers.lifecycle_lock(name).await;
        let Some(connection) = servers.remove(name) else {
            return Err(McpError::NotConnected(name.to_string()));
        };
        connection.close().await;
        servers.set_status(name, ServerStatus::Disconnected { reason: None });
        Ok(())
    }

    /// Closes every connection (stdin closed, wait, then terminate): no orphans.
    pub async fn shutdown(&self) {
        let connections = self.inner.servers.take_all();
        let closing = connections.iter().map(|c| c.close());
        futures::future::join_all(closing).await;
        for c in &connections {
            self.inner
                .servers
                .set_status(&c.name, ServerStatus::Disconnected { reason: None });
        }
    }

    /// When a server's stream ends without us closing it, it crashed or exited: report it
    /// with its exit status and stderr, and drop it from the pool.
    pub(super) fn watch_for_exit(&self, connection: Arc<Connection>) {
        let hub = self.clone();
        let mut closed = connection.closed.clone();
        tokio::spawn(async move {
            wait_closed(&mut closed).await;
            if connection.closing.load(Ordering::SeqCst) {
                return;
            }
            hub.inner.servers.note_lost(&connection);
            hub.inner.servers.forget(&connection);
            // Whatever the server left running in its group is stopped with it.
            let child = connection.child.lock().await.take();
            let exit = match child {
                Some(mut child) => {
                    let status = child.wait_exit(Duration::from_secs(2)).await;
                    child.terminate().await;
                    status.map(|status| status.to_string())
                }
                None => None,
            };
            // Let the stderr reader drain what the process wrote before dying.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let reason = match exit {
                Some(status) => format!("server exited ({status})"),
                None => "connection closed by the server".to_string(),
            };
            hub.inner.servers.set_status(
                &connection.name,
                ServerStatus::Failed {
                    reason,
                    stderr_tail: connection.stderr.lines(),
                },
            );
        });
    }
}
