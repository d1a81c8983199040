//! Configured MCP servers as the front ends list them, and what a server says on its own.

use serde::{Deserialize, Serialize};

use crate::ids::ServerName;

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

/// A server's log message (`notifications/message`): the session log's `server_log` record
/// and the JSONL `server_log` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLogLine {
    pub server: ServerName,
    pub level: LogLevel,
    pub message: String,
}

/// Connection state of one configured server, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerStatus {
    /// Configured, never connected in this session.
    Idle,
    Connecting,
    Ready {
        tools: usize,
        /// Negotiated protocol version, e.g. `2025-11-25`.
        protocol: String,
    },
    Failed {
        reason: String,
        /// The last lines the server wrote to stderr (at most 20).
        stderr_tail: Vec<String>,
    },
    Disconnected {
        reason: Option<String>,
    },
}

/// RFC 5424 severities, as MCP names them, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const NAMES: &'static str = "\"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\", \"alert\" or \"emergency\"";

    pub fn parse(text: &str) -> Option<LogLevel> {
        Some(match text {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Error and worse: the pool panel marks the server.
    pub fn is_error(self) -> bool {
        self >= LogLevel::Error
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
