//! `"enabled"` of a server entry and `/mcp enable|disable NAME [--save]`: a disabled server
//! cannot be connected (connect_mcp says why and how to enable it) and is left out of what
//! the model is told it can connect.

use std::collections::HashMap;

use super::conversation::Conversation;
use crate::mcp::McpHub;
use crate::protocol::AgentEvent;
use crate::protocol::{Event, View};
use crate::settings::ConfigSource;
use crate::settings::edit::{EditError, ServerFile};

/// The session's `/mcp enable|disable` choices, by server name.
#[derive(Default)]
pub(super) struct ServerSwitch {
    overrides: HashMap<String, bool>,
}

impl ServerSwitch {
    /// The session's `/mcp enable|disable` if given, else the entry's `"enabled"`.
    pub(super) fn enabled(&self, hub: &McpHub, name: &str) -> bool {
        self.overrides
            .get(name)
            .copied()
            .or_else(|| hub.config(name).map(|c| c.pool.enabled))
            .unwrap_or(false)
    }

    /// Configured servers that may be connected now (what the model is offered).
    pub(super) fn connectable(&self, hub: &McpHub) -> Vec<String> {
        hub.configured()
            .into_iter()
            .filter(|name| self.enabled(hub, name))
            .collect()
    }

    /// Why `name` cannot be connected, if it is disabled, and how to enable it.
    pub(super) fn disabled_refusal(&self, hub: &McpHub, name: &str) -> Option<String> {
        if self.enabled(hub, name) {
            return None;
        }
        let how = format!(
            "the user can enable it with /mcp enable {name} in the console (this session) or /mcp enable {name} --save"
        );
        Some(match self.overrides.get(name) {
            Some(false) => format!(
                "MCP server '{name}' is disabled for this session (/mcp disable {name}); {how}."
            ),
            _ => {
                let file = hub
                    .config(name)
                    .and_then(|c| source_file(&c.source))
                    .map_or_else(|| "its entry".to_string(), |p| p.display().to_string());
                format!(
                    "MCP server '{name}' is disabled (\"enabled\": false in {file}); {how} (which writes \"enabled\": true there)."
                )
            }
        })
    }

    /// `/mcp enable|disable NAME [--save]`: takes the choice (and writes it when `save`)
    /// and says so; false for an unknown server. The caller then disconnects a disabled
    /// server or shows the pool with the changed `connect_mcp`.
    pub(super) async fn set(
        &mut self,
        hub: &McpHub,
        conv: &Conversation,
        (name, enabled, save): (&str, bool, bool),
    ) -> bool {
        let Some(config) = hub.config(name) else {
            let configured = hub.configured().join(", ");
            conv.emit(AgentEvent::Fact(Event::Error {
                message: format!("Unknown MCP server '{name}'. Available servers: {configured}"),
            }))
            .await;
            return false;
        };
        self.overrides.insert(name.to_string(), enabled);
        let word = if enabled { "enabled" } else { "disabled" };
        let mut notice = format!("MCP server '{name}' {word} for this session.");
        if save {
            match source_file(&config.source) {
                None => {
                    conv.emit(AgentEvent::Fact(Event::Error { message: format!(
                        "'{name}' comes from toolgate's embedded defaults, which cannot be edited; add an entry for it to .mcp.json to change it for good. {notice}"
                    ) }))
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
                            conv.emit(AgentEvent::Fact(Event::Error {
                                message: format!(
                                    "{}: {e}; '{name}' is {word} for this session only.",
                                    path.display()
                                ),
                            }))
                            .await;
                            notice.clear();
                        }
                        Err(e) => {
                            conv.emit(AgentEvent::Fact(Event::Error { message: format!(
                                "writing {} failed ({e}); '{name}' is {word} for this session only.",
                                path.display()
                            ) }))
                            .await;
                            notice.clear();
                        }
                    }
                }
            }
        }
        conv.emit(AgentEvent::View(View::ServerEnabled {
            server: name.to_string().into(),
            enabled,
        }))
        .await;
        if !notice.is_empty() {
            conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
                .await;
        }
        true
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
