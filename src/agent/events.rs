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
    /// `/roots add DIR`: a folder servers may work in besides the workspace (relative to
    /// the workspace); connected servers are told the list changed.
    AddRoot(std::path::PathBuf),
    /// `/roots`: the roots, as a notice.
    ListRoots,
    /// `/mcp enable|disable NAME [--save]`: for this session, or written as `"enabled"`
    /// into the file the server's entry came from.
    SetServerEnabled {
        server: String,
        enabled: bool,
        save: bool,
    },
    /// `/mcp reload`: read the server configuration and the permission rules again and
    /// apply what changed.
    ReloadConfig,
    /// `/mcp__server__prompt …`: fetch the prompt with these arguments, put its messages
    /// into the conversation and let the model answer (a turn, like Submit).
    RunPrompt {
        server: String,
        prompt: String,
        arguments: std::collections::HashMap<String, String>,
    },
    /// Complete one argument of a prompt or a resource template (`completion/complete`);
    /// answered with `AgentEvent::Completions` carrying the same `id`. Runs beside a turn.
    Complete {
        id: u64,
        server: String,
        target: crate::mcp::CompletionTarget,
        argument: String,
        value: String,
        /// Arguments already chosen.
        context: std::collections::HashMap<String, String>,
    },
    Shutdown,
}

/// How the pool panel marks a tool besides its badge (pinned definitions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum DefinitionMark {
    /// Its definition is not the one pinned; grants and rules stop covering it.
    Changed { pinned_by: String },
    /// It appeared mid-session; its first call asks.
    New,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMark {
    /// Model-facing name.
    pub tool: String,
    pub mark: DefinitionMark,
}

/// A tool a server listed that its `includeTools` / `excludeTools` keep out of the pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludedTool {
    pub server: String,
    /// Raw name.
    pub tool: String,
    /// e.g. `excludeTools "delete_*"`.
    pub why: String,
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
        config: &crate::config::ServerConfig,
        profile: Option<&crate::sandbox::Profile>,
    ) -> Self {
        match (&config.transport, profile) {
            (crate::config::ServerTransport::Http { .. }, _) => Containment::Remote,
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
    pub fn from_config(config: &crate::config::ServerConfig, containment: Containment) -> Self {
        ServerInfo {
            name: config.name.clone(),
            command_line: config.command_line(),
            containment,
            enabled: config.pool.enabled,
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
        /// Why bash does not run in the sandbox this session (unavailable, or turned off);
        /// None when it does. The console keeps this on its status line.
        sandbox_problem: Option<String>,
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
    /// Images the call returned, sent to the model as images (before its
    /// `ToolCallFinished`); the console names them on the call's card.
    ToolImages {
        call_id: String,
        images: Vec<ImageSummary>,
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
    /// Marks on pool tools (changed or new definitions) and the tools kept out by a
    /// server's filter; sent after PoolChanged when they differ from the last ones.
    PoolMarks {
        marks: Vec<ToolMark>,
        excluded: Vec<ExcludedTool>,
    },
    /// A server was enabled or disabled (`/mcp enable|disable`; `saved`: in its file).
    ServerEnabled {
        server: String,
        enabled: bool,
    },
    /// The MCP tools left out of the model's requests (findable with `search_tools`), in
    /// pool order; sent when that set changes, before the `PoolChanged` of the same change.
    /// Empty when nothing is deferred.
    ToolsDeferred {
        deferred: Vec<PoolEntry>,
    },
    ServerStatus {
        server: String,
        status: ServerStatus,
    },
    /// An HTTP server's sign-in changed ("sign in needed", "signed in (expires …)",
    /// "refresh failed"); `/mcp` shows it.
    ServerAuth {
        server: String,
        status: crate::oauth::AuthStatus,
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
    /// A server's sampling request ended (answered, refused, failed, withdrawn).
    Sampling(super::sampling::report::SamplingReport),
    /// A server's log message (`notifications/message`), at or above the level asked.
    ServerLog {
        server: String,
        level: crate::mcp::LogLevel,
        message: String,
    },
    /// The `instructions` a server gave when it connected (`/mcp` shows them).
    ServerInstructions {
        server: String,
        text: String,
    },
    /// A connected server's resources, templates and prompts as last listed (after its
    /// connect or a `list_changed`); the console completes `@` and `/mcp__…` from them.
    Catalog {
        server: String,
        catalog: std::sync::Arc<crate::mcp::Catalog>,
    },
    /// The answer to `UiCommand::Complete` with that `id` (empty when the server offers
    /// no completion or the request failed).
    Completions {
        id: u64,
        values: Vec<String>,
    },
    Error(String),
    Notice(String),
    /// The server configuration was reloaded: every configured server now (new ones are
    /// not connected; removed ones were disconnected first).
    ServersChanged {
        servers: Vec<ServerInfo>,
    },
}

/// What the console shows of an image a tool returned: its type and size, not its pixels.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImageSummary {
    pub media_type: String,
    /// Decoded size in bytes (from the base64 length).
    pub bytes: usize,
}

impl ImageSummary {
    pub fn of(image: &crate::model::ImageData) -> Self {
        ImageSummary {
            media_type: image.media_type.clone(),
            bytes: image.data.trim_end_matches('=').len() * 3 / 4,
        }
    }

    /// `image/png, 5.3 kB`.
    pub fn describe(&self) -> String {
        let size = if self.bytes >= 1_000_000 {
            format!("{:.1} MB", self.bytes as f64 / 1_000_000.0)
        } else if self.bytes >= 1_000 {
            format!("{:.1} kB", self.bytes as f64 / 1_000.0)
        } else {
            format!("{} bytes", self.bytes)
        };
        format!("{}, {size}", self.media_type)
    }
}
