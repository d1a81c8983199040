//! [`Event`]: each fact of a session, once. The same value is a line of the JSONL output
//! (`toolgate -p … --output-format jsonl`, docs/EVENTS.md) and a record of the session log
//! (the journal writes it beside its own journal-only records); tagged by `type`,
//! snake_case. Old session logs named three facts differently; the aliases read them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ids::{CallId, ServerName};
use crate::{
    AuthStatus, CompactionReport, Decision, ImageSummary, InstructionsLoaded, ModeChange,
    ModelRetry, NetworkLine, PermissionLine, PoolEntry, PoolUpdate, ReplyCut, SamplingReport,
    ServerLogLine, ServerStatus, ToolCallStart, ToolOrigin, ToolOutcome, Usage,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Always first. The JSONL line carries the servers and the pool; the session log's
    /// record leaves them out (its `connect` records say which servers were connected).
    SessionStart {
        session_id: String,
        /// The model's label, e.g. `scripted demo`.
        model: String,
        workspace: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        servers: Option<Vec<ServerLine>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pool: Option<Vec<PoolLine>>,
    },
    /// The prompt as submitted.
    User {
        text: String,
    },
    /// One finished assistant text block.
    Text {
        text: String,
    },
    /// A tool call as it starts (the session log's `tool_call` before decision 0097).
    #[serde(alias = "tool_call")]
    ToolStarted(ToolCallStart),
    ToolProgress {
        call_id: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// Who allowed or refused a tool call, as the policy records it (the session log's
    /// `permission` before decision 0097).
    #[serde(alias = "permission")]
    PermissionDecided(PermissionLine),
    /// The permission mode changed (or the run started in one other than default).
    PermissionMode(ModeChange),
    /// A question for the person that headless mode answered with its safe default.
    RequestDismissed {
        /// The request kind (`tool call`, `project server`, …).
        kind: String,
        /// Who asked.
        origin: String,
        /// What the safe default did.
        outcome: String,
    },
    /// How a tool call ended (the session log's `tool_result` before decision 0097, which
    /// had no `name`).
    #[serde(alias = "tool_result")]
    ToolFinished {
        call_id: CallId,
        #[serde(default)]
        name: String,
        outcome: ToolOutcome,
        /// What the model got.
        output: String,
        /// Where the full output went when the model got it truncated (session log only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        full_output_path: Option<PathBuf>,
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
        images: Vec<ImageSummary>,
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
        status: AuthStatus,
    },
    /// A server's sampling request and how it ended.
    Sampling(SamplingReport),
    /// A sandboxed process asked toolgate's proxy for a connection: who decided it.
    NetworkDecided(NetworkLine),
    /// An admitted connection ended: the bytes each way.
    NetworkClosed(NetworkLine),
    /// A server's log message.
    ServerLog(ServerLogLine),
    /// A model request failed and is sent again after `wait_ms`.
    ModelRetry(ModelRetry),
    /// The reply's stream broke off after `text` was shown (not a `text` line: it is not
    /// part of the answer); `retrying`: the same request is sent again.
    ReplyCut(ReplyCut),
    /// The conversation was compacted to fit the model's window. (The session log keeps
    /// its own `compacted` record, which adds what a resume needs to redo it.)
    Compacted(CompactionReport),
    /// An instruction file that went into the system prompt: the user's own or the
    /// project's, whether the project is trusted, its imports and refused imports.
    InstructionsLoaded(InstructionsLoaded),
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
    /// Always last in the JSONL output, unless the agent stopped early (then an `error`
    /// is last). `exit_code` is the JSONL line's; `model_calls` the session log's.
    TurnFinished {
        usage: Usage,
        cancelled: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model_calls: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
}

impl Event {
    /// The event as a JSONL line: without what only the session log keeps
    /// (`tool_finished`'s `full_output_path`, `turn_finished`'s `model_calls`), so the
    /// agent sends one event to the log and the front ends and the stream's schema holds.
    pub fn for_stream(&self) -> std::borrow::Cow<'_, Event> {
        use std::borrow::Cow;
        match self {
            Event::ToolFinished {
                full_output_path: Some(_),
                ..
            }
            | Event::TurnFinished {
                model_calls: Some(_),
                ..
            } => {
                let mut event = self.clone();
                match &mut event {
                    Event::ToolFinished {
                        full_output_path, ..
                    } => *full_output_path = None,
                    Event::TurnFinished { model_calls, .. } => *model_calls = None,
                    _ => {}
                }
                Cow::Owned(event)
            }
            _ => Cow::Borrowed(self),
        }
    }

    /// The `pool_changed` line of a pool update: its names, and what came and went.
    pub fn pool_changed(update: PoolUpdate) -> Event {
        Event::PoolChanged {
            added: update.added,
            removed: update.removed,
            pool: update.snapshot.into_iter().map(|e| e.tool.name).collect(),
        }
    }

    /// The `tools_deferred` line of a pool update.
    pub fn deferred(update: &PoolUpdate) -> Event {
        Event::ToolsDeferred {
            deferred: update
                .deferred
                .iter()
                .map(|e| e.tool.name.clone())
                .collect(),
        }
    }
}

/// A server as the JSONL `session_start` line lists it.
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

/// A pool entry as the JSONL `session_start` line lists it.
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
