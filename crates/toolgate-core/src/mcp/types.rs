//! The hub's own words, as its users see them: what it reports ([`HubEvent`],
//! [`ServerStatus`]), what a call reports on the way ([`ProgressUpdate`]) and returns
//! ([`CallOutput`]), and how an operation fails ([`McpError`]).

use super::auth::SignInQuestion;
use super::catalog::Catalog;
use super::elicitation::question::ElicitationQuestion;
use super::sampling::SamplingQuestion;
use crate::ids::ServerName;
use crate::settings::LogLevel;
use serde::{Deserialize, Serialize};

pub use crate::protocol::ServerStatus;

/// Progress reported by a server for a running call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A finished tool call as the model will get it: text and images. `is_error` covers
/// both `isError: true` results and JSON-RPC errors (e.g. unknown tool), which reach the
/// model alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallOutput {
    pub text: String,
    pub is_error: bool,
    /// Images the result carried (MCP `image` content, image blobs of embedded
    /// resources), for providers that take images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<crate::model::ImageData>,
}

/// Something a server did on its own that the agent (and so the UI) should know.
#[derive(Debug, Clone, PartialEq)]
pub enum HubEvent {
    Status {
        server: ServerName,
        status: ServerStatus,
    },
    /// The server's tool list changed (after `notifications/tools/list_changed` and a
    /// re-list); `added`/`removed` are raw tool names.
    ToolsChanged {
        server: ServerName,
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// Tools of the server's listing that no pool takes (their input schema cannot go to
    /// a model API), on connect and when a re-list changes them. The other tools work.
    ToolsLeftOut {
        server: ServerName,
        tools: Vec<crate::pool::InvalidTool>,
    },
    /// A server's resources, templates or prompts were listed (after connect or a
    /// `list_changed`); `problems` in it say what could not be listed.
    CatalogChanged {
        server: ServerName,
        catalog: std::sync::Arc<Catalog>,
    },
    /// `notifications/message` from a server.
    Log {
        server: ServerName,
        level: LogLevel,
        message: String,
    },
    /// `sampling/createMessage`: the server asks the host's model. Answer through the
    /// question (dropping it unanswered refuses).
    Sampling(SamplingQuestion),
    /// A sampling request refused before anyone was asked (unreadable, or too many of
    /// this server's waiting); the server got `reason`.
    SamplingRefused {
        server: ServerName,
        max_tokens: u32,
        reason: String,
    },
    /// The `instructions` of the server's initialize result, on connect.
    Instructions { server: ServerName, text: String },
    /// The server asks for a sign-in: may toolgate go ahead? Answer through the question
    /// (no answer, or dropping it, is no).
    SignIn(SignInQuestion),
    /// A sign-in is under way: the page the person has to open (also opened in the
    /// browser). It carries no secret: the code comes back to the loopback listener.
    SignInStarted { server: ServerName, url: String },
    /// A sign-in asked for while connecting succeeded: connect the server now (through
    /// the same checks as any connect).
    SignedIn { server: ServerName },
    /// The server asks the person for input (a form or a page to open). Answer through
    /// the question; no answer, or dropping it, declines.
    Elicitation(ElicitationQuestion),
    /// The server's sign-in changed (signed in, needed, refresh failed).
    Auth {
        server: ServerName,
        status: crate::oauth::AuthStatus,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("unknown MCP server '{name}'; available servers: {available}")]
    UnknownServer { name: String, available: String },
    #[error("MCP server '{0}' is not connected")]
    NotConnected(String),
    #[error("MCP server '{server}' failed to start: {reason}")]
    Start { server: ServerName, reason: String },
    #[error("MCP server '{server}': tool call '{tool}' timed out after {seconds} s")]
    Timeout {
        server: ServerName,
        tool: String,
        seconds: u64,
    },
    #[error("connection to MCP server '{server}' refused: {reason}")]
    Refused { server: ServerName, reason: String },
    #[error("tool call cancelled")]
    Cancelled,
    #[error("MCP server '{server}': {message}")]
    Protocol { server: ServerName, message: String },
    #[error("MCP server '{server}' disconnected: {reason}")]
    Disconnected { server: ServerName, reason: String },
}
