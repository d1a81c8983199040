//! The channel protocol between the agent task and a front end.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::inbox::HostRequest;
use crate::mcp::ServerStatus;
use crate::model::Usage;
use crate::policy::{AuditRecord, Verdict};
use crate::pool::PoolTool;

/// Front end → agent.
#[derive(Debug)]
pub enum UiCommand {
    Submit(String),
    /// Cancel the running turn (stream and in-flight tool calls).
    Cancel,
    Connect(String),
    Disconnect(String),
    /// Revoke a session grant by tool name.
    RevokeGrant(String),
    /// Forget the conversation (keeps connections).
    Clear,
    /// `/undo`: restore the files the last turn changed, after the person confirms the
    /// list (an inbox request); the outcome comes back as a notice.
    Undo,
    Shutdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok,
    Error,
    Denied,
    Cancelled,
}

/// One entry of a pool snapshot: the tool plus how the host policy treats it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolEntry {
    pub tool: PoolTool,
    pub verdict: Verdict,
}

/// A configured MCP server as `/mcp` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    pub name: String,
    pub command_line: String,
}

impl ServerInfo {
    pub fn from_config(config: &crate::config::ServerConfig) -> Self {
        ServerInfo {
            name: config.name.clone(),
            command_line: config.command_line(),
        }
    }
}

/// Agent → front end.
// Events are moved through a channel once each; boxing the larger variants would buy
// nothing measurable and make every match noisier.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AgentEvent {
    SessionStarted {
        session_id: String,
        /// e.g. `scripted demo`, `anthropic claude-sonnet-4-5`.
        model_label: String,
        workspace: std::path::PathBuf,
        /// Every configured server, as the agent loaded them (after the trust question:
        /// the front end's own preview may predate the project's servers).
        servers: Vec<ServerInfo>,
    },
    /// A user message as recorded (also replayed on resume).
    UserMessage(String),
    TextDelta(String),
    /// The assistant finished a text block (lets the UI close a streaming paragraph).
    AssistantMessageDone,
    ToolCallStarted {
        call_id: String,
        name: String,
        server: Option<String>,
        input: Value,
    },
    ToolProgress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    ToolCallFinished {
        call_id: String,
        outcome: ToolOutcome,
        output: String,
    },
    PoolChanged {
        snapshot: Vec<PoolEntry>,
        added: Vec<String>,
        removed: Vec<String>,
    },
    ServerStatus {
        server: String,
        status: ServerStatus,
    },
    /// A question for the person (tool call, workspace trust, project server, …); the
    /// front end answers it through the request's own reply channel.
    Request(HostRequest),
    /// A tool call's permission was decided; the record says by whom (rule and its file,
    /// default, the person, a session grant, headless).
    PermissionDecided {
        call_id: String,
        record: AuditRecord,
    },
    TurnFinished {
        usage: Usage,
        cancelled: bool,
    },
    Error(String),
    Notice(String),
}
