//! The types that cross between the front ends (console, headless) and the agent task:
//! [`UiCommand`] in, [`AgentEvent`] out, the payloads they carry, the ids that name servers
//! and calls, and the typed [`questions`] a front end answers through each request's own
//! reply channel. Nothing here imports the agent or a front end: both sides import this.
//!
//! `AgentEvent` is the channel's item: a fact as the one [`Event`] the session log and the
//! JSONL output write (`AgentEvent::Fact`), or one of the few things that are not facts
//! ([`Live`], [`View`], [`Reply`], a question). The console imports crossterm's `Event` in
//! the files that match on agent events; there the protocol's is imported as `Fact`.

pub use toolgate_base::{canonical, ids};

pub mod audit;
mod auth_status;
pub mod catalog;
mod changes;
mod context;
pub mod conversation;
mod event;
pub mod form;
pub mod form_schema;
mod instructions;
mod limit;
mod mode;
mod model;
pub mod network;
mod notify;
mod permission_mode;
mod pool;
mod project;
pub mod questions;
mod sampling;
mod servers;
mod tools;
mod verdict;
pub mod window;

pub use crate::ids::{CallId, ServerName, ToolName};
pub use audit::{AuditRecord, Decider, Permit, PersonAnswer};
pub use auth_status::AuthStatus;
pub use catalog::{Catalog, CompletionTarget};
pub use changes::{Change, ChangedSince, FileChange, Since, count_files, lossy_path};
pub use context::{CompactionReport, CompactionTrigger, ContextBreakdown, ContextGauge};
pub use conversation::{
    ContentBlock, ImageData, Message, RetryNotice, RetryReason, Role, StopReason, Usage,
};
pub use event::{Badge, Event, OriginKind, PoolLine, ServerLine};
pub use form_schema::form_from_schema;
pub use instructions::{InstructionsLoaded, RefusedImport};
pub use limit::{GrantEnd, GrantLeft, GrantLimit, GrantLine};
pub use mode::{ModeCause, ModeChange};
pub use model::{ModelRetry, ReplyCut};
pub use network::{NetworkClient, NetworkLine};
pub use notify::NotifySetting;
pub use permission_mode::PermissionMode;
pub use pool::{
    DefinitionMark, ExcludedTool, PoolEntry, PoolParts, PoolTool, PoolUpdate, ToolClaims, ToolMark,
    ToolOrigin,
};
pub use project::{FileCommand, InstructionFile, InstructionScope, ProjectView};
pub use sampling::{SamplingOutcome, SamplingReport, SamplingRequest, SamplingTurn};
pub use servers::{Containment, LogLevel, ServerInfo, ServerLogLine, ServerStatus};
pub use tools::{ImageSummary, PermissionLine, ToolCallStart, ToolOutcome};
pub use verdict::{Decision, FLOW_RULE, RuleSource, Verdict};

use questions::HostRequest;

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
    /// `/compact [focus]`: summarize the conversation now; the focus steers the summary.
    Compact(Option<String>),
    /// `/context`: what fills the window, answered with `Reply::ContextBreakdown`.
    ShowContext,
    /// `/hooks`: the hooks in force, answered with a notice (decision 0086).
    ShowHooks,
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
        server: ServerName,
        enabled: bool,
        save: bool,
    },
    /// `/mcp reload`: read the server configuration and the permission rules again and
    /// apply what changed.
    ReloadConfig,
    /// `/mcp__server__prompt …`: fetch the prompt with these arguments, put its messages
    /// into the conversation and let the model answer (a turn, like Submit).
    RunPrompt {
        server: ServerName,
        prompt: String,
        arguments: std::collections::HashMap<String, String>,
    },
    /// `/model NAME`: the following requests go to this model (same provider); answered
    /// with `View::ModelChanged`, or an error when the provider cannot switch.
    SetModel(String),
    /// The models the provider offers, for `/model` completion (asked once, when it is
    /// first completed); answered with `Reply::ModelNames`. Runs beside a turn.
    ListModels,
    /// Complete one argument of a prompt or a resource template (`completion/complete`);
    /// answered with `Reply::Completions` carrying the same `id`. Runs beside a turn.
    Complete {
        id: u64,
        server: ServerName,
        target: crate::CompletionTarget,
        argument: String,
        value: String,
        /// Arguments already chosen.
        context: std::collections::HashMap<String, String>,
    },
    /// Shift+Tab: the next permission mode the session may take (the agent decides which).
    CyclePermissionMode,
    Shutdown,
}

/// A front end's two ends of the agent task's channels.
pub struct AgentHandle {
    pub commands: tokio::sync::mpsc::Sender<UiCommand>,
    pub events: tokio::sync::mpsc::Receiver<AgentEvent>,
}

/// The `model_label` of the scripted demo model: the console's welcome teaches what to
/// type when it sees it (issue 45), so both ends name it from here.
pub const SCRIPTED_MODEL_LABEL: &str = "scripted demo";

/// Agent → front end: each fact of the session as the one [`Event`] the session log and
/// the JSONL output write, and beside it the few things that are not facts (decision 0097):
/// streaming pieces, a question with its reply channel, what a front end keeps in view, and
/// the answers to its own commands.
#[derive(Debug)]
pub enum AgentEvent {
    /// A fact of the session, the same value the session log and the JSONL output write.
    Fact(Event),
    /// A piece of a reply being streamed, or the context gauge.
    Live(Live),
    /// A question for the person (tool call, workspace trust, project server, …); the
    /// front end answers it through the request's own reply channel.
    Request(HostRequest),
    /// What a front end keeps in view: the session's setup, the pool, servers, catalogs.
    View(View),
    /// The answer to one of the front end's own commands.
    Reply(Reply),
}

impl AgentEvent {
    pub fn notice(message: impl Into<String>) -> AgentEvent {
        AgentEvent::Fact(Event::Notice {
            message: message.into(),
        })
    }

    pub fn error(message: impl Into<String>) -> AgentEvent {
        AgentEvent::Fact(Event::Error {
            message: message.into(),
        })
    }
}

impl From<Event> for AgentEvent {
    fn from(event: Event) -> AgentEvent {
        AgentEvent::Fact(event)
    }
}

/// What streams while a reply is produced: shown at once, never logged (the finished
/// block is a fact of its own in the session log).
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    TextDelta(String),
    /// A piece of the model's thinking, shown collapsed while it streams (decision 0079).
    ThinkingDelta(String),
    /// The assistant finished a text block (lets the UI close a streaming paragraph).
    AssistantMessageDone,
    /// How full the model's context window is (after each model call and each change to
    /// the conversation's size).
    Context(ContextGauge),
}

/// What a front end keeps in view and refreshes when it changes. Not facts of the JSONL
/// stream: the stream derives its `session_start`, `pool_changed` and `tools_deferred`
/// lines from `SessionStarted` and `PoolChanged`.
// Moved through a channel once each; boxing would buy nothing measurable.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum View {
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
    /// The pool changed (its tools, their badges, marks, or the deferred tools); sent
    /// first when the agent starts, then whenever a part changes.
    PoolChanged(PoolUpdate),
    /// A server was enabled or disabled (`/mcp enable|disable`).
    ServerEnabled { server: ServerName, enabled: bool },
    /// The server configuration was reloaded: every configured server now (new ones are
    /// not connected; removed ones were disconnected first).
    ServersChanged { servers: Vec<ServerInfo> },
    /// A connected server's resources, templates and prompts as last listed (after its
    /// connect or a `list_changed`); the console completes `@` and `/mcp__…` from them.
    Catalog {
        server: ServerName,
        catalog: std::sync::Arc<crate::Catalog>,
    },
    /// The project's instruction files and file commands, as loaded at the start (sent
    /// right after `SessionStarted`): `/memory`, `/help` and completion show them.
    Project(crate::ProjectView),
    /// The workspace's files for `@path` completion (listed beside the session's start).
    WorkspaceFiles(Vec<String>),
    /// The session's grants changed (given, spent, ended, revoked): every grant in force
    /// now, as the gate keeps them (`/permissions` lists these).
    GrantsChanged(Vec<crate::GrantLine>),
    /// `/model` switched the model (or a resumed session's switch was redone): the new
    /// label, e.g. `anthropic claude-opus-4-1`.
    ModelChanged { label: String },
}

/// The answer to a front end's command.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The answer to `UiCommand::Complete` with that `id` (empty when the server offers
    /// no completion or the request failed).
    Completions { id: u64, values: Vec<String> },
    /// The answer to `UiCommand::ShowContext`.
    ContextBreakdown(ContextBreakdown),
    /// The provider's own list of models (empty when it offers none or did not answer).
    ModelNames(Vec<String>),
}
