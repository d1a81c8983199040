//! Configured MCP servers as the front ends list them, and what a server says on its own.

use serde::{Deserialize, Serialize};

use crate::ids::ServerName;
use crate::mcp::LogLevel;

/// How a server's process is contained, as the pool panel and `/mcp` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// Runs under an OS sandbox profile (its description: what it may write, network).
    Confined { profile: String },
    /// A local process with the person's full rights.
    Unsandboxed,
    /// An HTTP server: not a process of ours.
    Remote,
}

impl Containment {
    pub fn of(
        config: &crate::settings::ServerConfig,
        profile: Option<&crate::sandbox::Profile>,
    ) -> Self {
        match (&config.transport, profile) {
            (crate::settings::ServerTransport::Http { .. }, _) => Containment::Remote,
            (_, Some(p)) if p.is_confined() => Containment::Confined {
                profile: p.describe(),
            },
            _ => Containment::Unsandboxed,
        }
    }

    /// One line for the person.
    pub fn label(&self) -> String {
        match self {
            Containment::Confined { profile } => format!("sandboxed: {profile}"),
            Containment::Unsandboxed => "NOT sandboxed: runs with your full rights".into(),
            Containment::Remote => "remote (HTTP): not a local process".into(),
        }
    }
}

/// A configured MCP server as `/mcp` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub name: String,
    pub command_line: String,
    pub containment: Containment,
    /// `"enabled"` of its entry (a disabled server cannot be connected).
    pub enabled: bool,
}

impl ServerInfo {
    pub fn from_config(config: &crate::settings::ServerConfig, containment: Containment) -> Self {
        ServerInfo {
            name: config.name.clone(),
            command_line: config.command_line(),
            containment,
            enabled: config.pool.enabled,
        }
    }
}

/// A server's log message (`notifications/message`): the session log's `server_log` record
/// and the JSONL `server_log` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLogLine {
    pub server: ServerName,
    pub level: LogLevel,
    pub message: String,
}
