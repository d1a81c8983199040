//! The client side of MCP on `rmcp`: servers, transports (stdio child processes and
//! Streamable HTTP), both protocol eras, timeouts, cancellation and `list_changed`.
//! Knows nothing of policy or of the UI.

use serde::{Deserialize, Serialize};

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

/// Progress reported by a server for a running call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A finished tool call as text for the model. `is_error` covers both `isError: true`
/// results and JSON-RPC errors (e.g. unknown tool), which reach the model alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallOutput {
    pub text: String,
    pub is_error: bool,
}

use crate::config::ServerConfig;
use crate::pool::{McpToolInfo, ServerTools};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Something a server did on its own that the agent (and so the UI) should know.
#[derive(Debug, Clone, PartialEq)]
pub enum HubEvent {
    Status { server: String, status: ServerStatus },
    /// The server's tool list changed (after `notifications/tools/list_changed` and a
    /// re-list); `added`/`removed` are raw tool names.
    ToolsChanged {
        server: String,
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// `notifications/message` from a server.
    Log { server: String, message: String },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("unknown MCP server '{name}'; available servers: {available}")]
    UnknownServer { name: String, available: String },
    #[error("MCP server '{0}' is not connected")]
    NotConnected(String),
    #[error("MCP server '{server}' failed to start: {reason}")]
    Start { server: String, reason: String },
    #[error("MCP server '{server}': tool call '{tool}' timed out after {seconds} s")]
    Timeout { server: String, tool: String, seconds: u64 },
    #[error("tool call cancelled")]
    Cancelled,
    #[error("MCP server '{server}': {message}")]
    Protocol { server: String, message: String },
    #[error("MCP server '{server}' disconnected: {reason}")]
    Disconnected { server: String, reason: String },
}

/// All configured servers and the live connections. Cheap to clone (shared inside).
// CONTRACT: implemented in the MCP core work; signatures are stable.
#[derive(Clone)]
pub struct McpHub {
    _configs: std::sync::Arc<Vec<ServerConfig>>,
    _events: mpsc::UnboundedSender<HubEvent>,
}

impl McpHub {
    pub fn new(configs: Vec<ServerConfig>, events: mpsc::UnboundedSender<HubEvent>) -> Self {
        McpHub {
            _configs: std::sync::Arc::new(configs),
            _events: events,
        }
    }

    /// Names of all configured servers, in configuration order.
    pub fn configured(&self) -> Vec<String> {
        self._configs.iter().map(|c| c.name.clone()).collect()
    }

    pub fn config(&self, name: &str) -> Option<ServerConfig> {
        self._configs.iter().find(|c| c.name == name).cloned()
    }

    /// Starts the server, handshakes (either era) and lists its tools to the last page.
    pub async fn connect(&self, name: &str) -> Result<Vec<McpToolInfo>, McpError> {
        Err(McpError::Start {
            server: name.into(),
            reason: "not implemented yet".into(),
        })
    }

    pub async fn disconnect(&self, _name: &str) -> Result<(), McpError> {
        Ok(())
    }

    pub fn is_connected(&self, _name: &str) -> bool {
        false
    }

    /// Tool lists of connected servers, in connection order.
    pub fn server_tools(&self) -> Vec<ServerTools> {
        Vec::new()
    }

    pub fn status(&self, _name: &str) -> ServerStatus {
        ServerStatus::Idle
    }

    /// Calls `tool` (raw name) on `server`. Honors the per-server timeout; on `cancel` sends
    /// `notifications/cancelled` and drops late messages.
    pub async fn call(
        &self,
        server: &str,
        _tool: &str,
        _arguments: Value,
        _progress: Option<mpsc::UnboundedSender<ProgressUpdate>>,
        _cancel: CancellationToken,
    ) -> Result<CallOutput, McpError> {
        Err(McpError::NotConnected(server.into()))
    }

    /// Closes every connection (stdin closed, wait, then terminate): no orphans.
    pub async fn shutdown(&self) {}
}
