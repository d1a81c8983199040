//! `notifications/tools/list_changed`: the server's tools are listed again and the change
//! is reported by raw name. A notice that arrives while the server is still connecting is
//! kept until the connection is registered.

use super::coalesce::Coalescer;
use super::locks::lock;
use super::task_tools::with_tasks;
use super::{Inner, McpHub};
use crate::mcp::handler::ListChangedHook;
use crate::mcp::listing::list_all_tools;
use crate::mcp::types::{HubEvent, ServerStatus};
use crate::pool::{McpToolInfo, ServerTools, ToolFilter};
use rmcp::{Peer, RoleClient};
use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Weak};

impl McpHub {
    /// A hook that runs `run` on a fresh task when the server says a list changed, with at
    /// most one run in flight and one more queued ([`Coalescer`]): a server that sends
    /// thousands of notifications costs a couple of listings, not thousands. It holds the
    /// hub weakly, so a connection's handler does not keep the hub alive.
    pub(super) fn weak_hook<F, Fut>(&self, server: &str, run: F) -> ListChangedHook
    where
        F: Fn(McpHub, String, Peer<RoleClient>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let server = server.to_string();
        let run = Arc::new(run);
        let coalescer = Arc::new(Coalescer::default());
        Arc::new(move |peer: Peer<RoleClient>| {
            if !coalescer.request() {
                return;
            }
            let weak = weak.clone();
            let server = server.clone();
            let run = run.clone();
            let coalescer = coalescer.clone();
            tokio::spawn(async move {
                loop {
                    let Some(inner) = weak.upgrade() else {
                        // The hub is gone; leave the state idle for good measure.
                        while coalescer.finished() {}
                        return;
                    };
                    run(McpHub { inner }, server.clone(), peer.clone()).await;
                    if !coalescer.finished() {
                        return;
                    }
                }
            });
        })
    }

    pub(super) fn list_changed_hook(&self, server: &str) -> ListChangedHook {
        self.weak_hook(server, |hub, server, peer| async move {
            hub.relist(&server, peer).await;
        })
    }

    pub(super) async fn relist(&self, server: &str, peer: Peer<RoleClient>) {
        let servers = &self.inner.servers;
        let Some(connection) = servers.connection(server) else {
            // Still connecting: re-list once the connection is registered.
            if servers.status(server) == ServerStatus::Connecting {
                servers.relist_later(server);
            }
            return;
        };
        let (listed, invalid) =
            match tokio::time::timeout(connection.call_timeout, list_all_tools(&peer)).await {
                Ok(Ok(listing)) => (
                    with_tasks(&listing.tools, &connection.task_tools),
                    listing.invalid,
                ),
                Ok(Err(e)) => {
                    tracing::warn!(server, "re-listing tools after list_changed failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::warn!(server, "re-listing tools after list_changed timed out");
                    return;
                }
            };
        let filter = servers
            .config(server)
            .map_or_else(ToolFilter::all, |c| ToolFilter::of(&c.pool));
        let (added, removed, count, left_out) = {
            let mut current = lock(&connection.tools);
            let (added, removed) = name_changes(current.listed(), &listed);
            let fresh = ServerTools::filtered(server, listed, &filter).with_unreadable(invalid);
            let changed = !added.is_empty()
                || !removed.is_empty()
                || current.listed() != fresh.listed()
                || current.invalid() != fresh.invalid();
            if !changed {
                return;
            }
            // Told again only when the set of left-out tools changed.
            let left_out = (current.invalid() != fresh.invalid() && !fresh.invalid().is_empty())
                .then(|| fresh.invalid().to_vec());
            *current = Arc::new(fresh);
            (added, removed, current.tools().len(), left_out)
        };
        if let Some(tools) = left_out {
            let _ = self.inner.events.send(HubEvent::ToolsLeftOut {
                server: server.to_string().into(),
                tools,
            });
        }
        servers.set_status(
            server,
            ServerStatus::Ready {
                tools: count,
                protocol: connection.protocol.clone(),
            },
        );
        let _ = self.inner.events.send(HubEvent::ToolsChanged {
            server: server.to_string().into(),
            added,
            removed,
        });
    }
}

/// Raw names in `new` but not in `old` (added) and in `old` but not in `new` (removed), each
/// in listing order. Sets, not nested scans: a server may list thousands of tools.
fn name_changes(old: &[McpToolInfo], new: &[McpToolInfo]) -> (Vec<String>, Vec<String>) {
    let old_names: HashSet<&str> = old.iter().map(|t| t.name.as_str()).collect();
    let new_names: HashSet<&str> = new.iter().map(|t| t.name.as_str()).collect();
    let added = new
        .iter()
        .filter(|t| !old_names.contains(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    let removed = old
        .iter()
        .filter(|t| !new_names.contains(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    (added, removed)
}
