//! What the session tells every server, connected now or later: its roots
//! (`notifications/roots/list_changed` when one is added) and its log level
//! (`logging/setLevel`).

use super::McpHub;
use super::locks::lock;
use crate::mcp::roots::RootError;
use crate::settings::LogLevel;
use rmcp::{Peer, RoleClient};
use std::path::{Path, PathBuf};
use std::time::Duration;

impl McpHub {
    /// The session's roots: the workspace first, then the folders added since.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.inner.roots.list()
    }

    /// Adds a root and, when it is new, sends `notifications/roots/list_changed` to every
    /// connected server. Returns the canonical folder and how many servers were told
    /// (None when it was a root already).
    pub async fn add_root(&self, dir: &Path) -> Result<(PathBuf, Option<usize>), RootError> {
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.workspace().join(dir)
        };
        let (added, canonical) = self.inner.roots.add(&dir)?;
        if !added {
            return Ok((canonical, None));
        }
        let peers: Vec<Peer<RoleClient>> = self.inner.servers.each(|c| Some(c.peer.clone()));
        let told = futures::future::join_all(peers.iter().map(|peer| async move {
            tokio::time::timeout(Duration::from_secs(2), peer.notify_roots_list_changed())
                .await
                .is_ok_and(|sent| sent.is_ok())
        }))
        .await;
        Ok((canonical, Some(told.into_iter().filter(|ok| *ok).count())))
    }

    /// The level asked of servers that log; None: `off`.
    pub(super) fn log_level(&self) -> Option<LogLevel> {
        *lock(&self.inner.log_level)
    }

    /// Sets `[mcp] log_level` for this session: servers that connect later get it, and the
    /// connected ones that log are sent `logging/setLevel` now. `None` (`off`) sends
    /// nothing (the protocol has no "stop logging"; their messages are then not shown).
    /// Returns how many servers were told.
    pub fn set_log_level(&self, level: Option<LogLevel>) -> usize {
        *lock(&self.inner.log_level) = level;
        let Some(level) = level else {
            return 0;
        };
        let logging: Vec<(Peer<RoleClient>, String)> = self
            .inner
            .servers
            .each(|c| c.logging.then(|| (c.peer.clone(), c.name.clone())));
        for (peer, server) in &logging {
            tokio::spawn(set_log_level(peer.clone(), server.clone(), level));
        }
        logging.len()
    }
}

/// `logging/setLevel` (deprecated by the newest spec, still what 2025-11-25 servers take).
#[allow(deprecated)]
pub(super) async fn set_log_level(peer: Peer<RoleClient>, server: String, level: LogLevel) {
    let params = rmcp::model::SetLevelRequestParams::new(crate::mcp::logging::to_mcp(level));
    match tokio::time::timeout(Duration::from_secs(10), peer.set_level(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(server, "logging/setLevel failed: {e}"),
        Err(_) => tracing::warn!(server, "logging/setLevel timed out"),
    }
}
