//! `--output-format jsonl`: every line headless mode prints is one [`JsonlEvent`],
//! tagged by `type`. The schema is documented in docs/EVENTS.md; this type is it.

use crate::ids::ServerName;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::mcp::ServerStatus;
use crate::model::Usage;
use crate::policy::Decision;
use crate::protocol::{
    CallId, PermissionLine, PoolEntry, PoolUpdate, ServerLogLine, ToolCallStart, ToolOrigin,
    ToolOutcome,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JsonlEvent {
    /// Always first.
    SessionStart {
        session_id: String,
        /// The model's label, e.g. `scripted demo`.
        model: String,
        workspace: PathBuf,
        servers: Vec<ServerLine>,
        pool: Vec<PoolLine>,
    },
    /// The prompt as submitted.
    User {
        text: String,
    },
    /// One finished assistant text block.
    Text {
        text: String,
    },
    ToolStarted(ToolCallStart),
    ToolProgress {
        call_id: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// Who allowed or refused a tool call, as the policy records it.
    PermissionDecided(PermissionLine),
    /// The permission mode changed (or the run started in one other than default).
    PermissionMode(crate::protocol::ModeChange),
    /// A question for the person that headless mode answered with its safe default.
    RequestDismissed {
        /// The request kind (`tool call`, `project server`, …).
        kind: String,
        /// Who asked.
        origin: String,
        /// What the safe default did.
        outcome: String,
    },
    ToolFinished {
        call_id: CallId,
        name: String,
        outcome: ToolOutcome,
        /// What the model got.
        output: String,
    },
    PoolChanged {
        added: Vec<String>,
        removed: Vec<String>,
        /// Every model-facing name now in the pool.
        pool: Vec<String>,
    },
    /// Images a call returned, which the model got as images (type and size only).
    ToolImages {
        call_id: CallId,
        images: Vec<crate::protocol::ImageSummary>,
    },
    /// The MCP tools left out of the model's requests, findable with `search_tools`.
    ToolsDeferred {
        deferred: Vec<String>,
    },
    ServerStatus {
        server: ServerName,
        status: ServerStatus,
    },
    /// An HTTP server's sign-in changed (never carries a token).
    ServerAuth {
        server: ServerName,
        status: crate::oauth::AuthStatus,
    },
    /// A server's sampling request and how it ended (same fields as the session log's
    /// `sampling` record).
    Sampling(crate::protocol::SamplingReport),
    /// A server's log message.
    ServerLog(ServerLogLine),
    /// A model request failed and is sent again after `wait_ms`.
    ModelRetry(crate::protocol::ModelRetry),
    /// The reply's stream broke off after `text` was shown (not a `text` line: it is not
    /// part of the answer); `retrying`: the same request is sent again.
    ReplyCut(crate::protocol::ReplyCut),
    /// The conversation was compacted to fit the model's window (same fields as the
    /// session log's `compacted` record, without what it needs to redo it).
    Compacted(crate::protocol::CompactionReport),
    /// An instruction file that went into the system prompt: the user's own or the
    /// project's, whether the project is trusted, its imports and refused imports.
    InstructionsLoaded(crate::protocol::InstructionsLoaded),
    /// The instructions a server gave when it connected.
    ServerInstructions {
        server: ServerName,
        text: String,
    },
    Notice {
        message: String,
    },
    Error {
        message: String,
    },
    /// Always last, unless the agent stopped early (then an `error` is last).
    TurnFinished {
        usage: Usage,
        cancelled: bool,
        exit_code: i32,
    },
}

impl JsonlEvent {
    /// The `pool_changed` line of a pool update: its names, and what came and went.
    pub fn pool_changed(update: PoolUpdate) -> JsonlEvent {
        JsonlEvent::PoolChanged {
            added: update.added,
            removed: update.removed,
            pool: update.snapshot.into_iter().map(|e| e.tool.name).collect(),
        }
    }

    /// The `tools_deferred` line of a pool update.
    pub fn deferred(update: &PoolUpdate) -> JsonlEvent {
        JsonlEvent::ToolsDeferred {
            deferred: update
                .deferred
                .iter()
                .map(|e| e.tool.name.clone())
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLine {
    pub name: String,
    pub status: ServerStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OriginKind {
    Builtin,
    Connector,
    Mcp,
}

/// How the policy treats a pool entry before any input is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Badge {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolLine {
    pub name: String,
    pub origin: OriginKind,
    pub server: Option<String>,
    /// The raw MCP tool name.
    pub tool: Option<String>,
    pub decision: Badge,
    pub rule: String,
}

impl From<&PoolEntry> for PoolLine {
    fn from(entry: &PoolEntry) -> PoolLine {
        let (origin, server, tool) = match &entry.tool.origin {
            ToolOrigin::Builtin { connector: true } => (OriginKind::Connector, None, None),
            ToolOrigin::Builtin { connector: false } => (OriginKind::Builtin, None, None),
            ToolOrigin::Mcp { server, tool } => {
                (OriginKind::Mcp, Some(server.clone()), Some(tool.clone()))
            }
        };
        let decision = match entry.verdict.decision {
            Decision::Allow => Badge::Allow,
            Decision::Ask { .. } => Badge::Ask,
            Decision::Deny { .. } => Badge::Deny,
        };
        PoolLine {
            name: entry.tool.name.clone(),
            origin,
            server: server.map(ServerName::into_string),
            tool,
            decision,
            rule: entry.verdict.rule.clone(),
        }
    }
}
