//! `"enabled"` of a server entry and `/mcp enable|disable NAME [--save]`: a disabled server
//! cannot be connected (connect_mcp says why and how to enable it) and is left out of what
//! the model is told it can connect.

use super::events::AgentEvent;
use super::runner::Agent;
use crate::settings::ConfigSource;
use crate::settings::edit::{EditError, ServerFile};

impl Agent {
    /// The session's `/mcp enable|disable` if given, else the entry's `"enabled"`.
    pub(super) fn server_enabled(&self, name: &str) -> bool {
        self.server_overrides
            .get(name)
            .copied()
            .or_else(|| self.hub.config(name).map(|c| c.pool.enabled))
            .unwrap_or(false)
    }

    /// Configured servers that may be connected now (what the model is offered).
    pub(super) fn connectable(&self) -> Vec<String> {
        self.hub
            .configured()
            .into_iter()
            .filter(|name| self.server_enabled(name))
            .collect()
    }

    /// Why `name` cannot be connected, if it is disabled, and how to enable it.
    pub(super) fn disabled_refusal(&self, name: &str) -> Option<String> {
        if self.server_enabled(name) {
            return None;
        }
        let how = format!(
            "the user can enable it with /mcp enable {name} in the console (this session) or /mcp enable {name} --save"
        );
        Some(match self.server_overrides.get(name) {
            Some(false) => format!(
                "MCP server '{name}' is disabled for this session (/mcp disable {name}); {how}."
            ),
            _ => {
                let file = self
                    .hub
                    .config(name)
                    .and_then(|c| source_file(&c.source))
                    .map_or_else(|| "its entry".to_string(), |p| p.display().to_string());
                format!(
                    "MCP server '{name}' is disabled (\"enabled\": false in {file}); {how} (which writes \"enabled\": true there)."
                )
            }
        })
    }

    /// `/mcp enable|disable NAME [--save]`.
    pub(super) async fn set_server_enabled(&mut self, name: &str, enabled: bool, save: bool) {
        let Some(config) = self.hub.config(name) else {
            let configured = self.hub.configured().join(", ");
            self.emit(AgentEvent::Error(format!(
                "Unknown MCP server '{name}'. Available servers: {configured}"
            )))
            .await;
            return;
        };
        self.server_overrides.insert(name.to_string(), enabled);
        let word = if enabled { "enabled" } else { "disabled" };
        let mut notice = format!("MCP server '{name}' {word} for this session.");
        if save {
            match source_file(&config.source) {
                None => {
                    self.emit(AgentEvent::Error(format!(
                        "'{name}' comes from toolgate's embedded defaults, which cannot be edited; add an entry for it to .mcp.json to change it for good. {notice}"
                    )))
                    .await;
                    notice.clear();
                }
                Some(path) => {
                    let file = path.clone();
                    let server = name.to_string();
                    let written =
                        tokio::task::spawn_blocking(move || write_enabled(&file, &server, enabled))
                            .await;
                    match written {
                        Ok(Ok(())) => {
                            notice = format!(
                                "MCP server '{name}' {word}: wrote \"enabled\": {enabled} to {}.",
                                path.display()
                            );
                        }
                        Ok(Err(e)) => {
                            self.emit(AgentEvent::Error(format!(
                                "{}: {e}; '{name}' is {word} for this session only.",
                                path.display()
                            )))
                            .await;
                            notice.clear();
                        }
                        Err(e) => {
                            self.emit(AgentEvent::Error(format!(
                                "writing {} failed ({e}); '{name}' is {word} for this session only.",
                                path.display()
                            )))
                            .await;
                            notice.clear();
                        }
                    }
                }
            }
        }
        self.emit(AgentEvent::ServerEnabled {
            server: name.to_string(),
            enabled,
        })
        .await;
        if !notice.is_empty() {
            self.emit(AgentEvent::Notice(notice)).await;
        }
        if !enabled && self.hub.is_connected(name) {
            let result = self.disconnect_server(name).await;
            self.emit(AgentEvent::Notice(result.text)).await;
        } else {
            // connect_mcp's list of servers changed.
            let _ = self.refresh_pool().await;
        }
    }
}

/// The file a server's entry came from; None for the embedded defaults.
fn source_file(source: &ConfigSource) -> Option<std::path::PathBuf> {
    match source {
        ConfigSource::Embedded => None,
        ConfigSource::User(p) | ConfigSource::Project(p) | ConfigSource::Flag(p) => Some(p.clone()),
    }
}

/// Writes `"enabled"` into the entry through the CLI's file editor (formatting kept).
fn write_enabled(path: &std::path::Path, server: &str, enabled: bool) -> Result<(), String> {
    let mut file = ServerFile::open(path).map_err(|e: EditError| e.to_string())?;
    if !file.set_enabled(server, enabled) {
        return Err(format!("no \"mcpServers\" entry named '{server}'"));
    }
    file.save().map_err(|e| e.to_string())
}
