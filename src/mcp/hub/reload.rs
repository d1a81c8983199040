//! Replacing the configured servers while the hub runs (a reloaded configuration).

use super::{McpHub, lock};
use crate::mcp::ServerStatus;
use crate::settings::ServerConfig;

impl McpHub {
    /// Replaces the configured servers with `configs`. Live connections are not touched:
    /// the caller disconnects removed and changed servers first (a connection whose name
    /// is no longer configured could not be disconnected afterwards). New names start as
    /// not connected; removed names lose their status.
    pub fn replace_configs(&self, configs: Vec<ServerConfig>) {
        let mut statuses = lock(&self.inner.statuses);
        statuses.retain(|name, _| configs.iter().any(|c| &c.name == name));
        for config in &configs {
            statuses
                .entry(config.name.clone())
                .or_insert(ServerStatus::Idle);
        }
        *lock(&self.inner.configs) = configs;
    }

    /// The configured servers, in configuration order.
    pub fn configs(&self) -> Vec<ServerConfig> {
        lock(&self.inner.configs).clone()
    }
}
