//! The managed policy's server lists (decision 0082): a server they do not admit is never
//! started or contacted, whoever asks (the agent at start, `connect_mcp`, `/connect`,
//! `toolgate mcp`), and each of them is told why.

use super::McpHub;
use crate::mcp::types::{McpError, ServerStatus};
use crate::settings::ServerConfig;

impl McpHub {
    /// Why the managed policy keeps `name` from starting (None: it may start, or it is
    /// not configured).
    pub fn blocked_reason(&self, name: &str) -> Option<String> {
        let config = self.config(name)?;
        self.inner
            .managed_servers
            .check(&config)
            .err()
            .map(|refused| refused.to_string())
    }

    /// Refuses a server the managed policy does not admit, before anything is spawned or
    /// any URL is contacted; its status says why.
    pub(super) fn refuse_blocked(&self, config: &ServerConfig) -> Result<(), McpError> {
        let Err(refused) = self.inner.managed_servers.check(config) else {
            return Ok(());
        };
        let reason = refused.to_string();
        self.inner.servers.set_status(
            &config.name,
            ServerStatus::Failed {
                reason: reason.clone(),
                stderr_tail: Vec::new(),
            },
        );
        Err(McpError::Refused {
            server: config.name.clone().into(),
            reason,
        })
    }
}
