//! The agent loop on a background task. It talks to a front end (console or headless)
//! only through the channels of [`crate::protocol`]: [`UiCommand`] in, [`AgentEvent`] out, and a
//! oneshot inside each permission request.
//!
//! One turn: assemble the pool and system prompt afresh → stream the model → run the
//! tool calls in order (policy first, the user asked when needed) → append the results →
//! repeat until the model stops, the user cancels, or the turn cap is reached.

pub mod attachments;
mod checkpoints;
pub mod compaction;
pub mod context;
mod conversation;
pub mod elicitation;
mod hook_events;
mod host_files;
mod intake;
mod mcp_prompts;
mod mentions;
mod model_switch;
mod modes;
mod network;
mod plan_exit;
mod pool_keeper;
mod project;
mod provenance;
mod reload;
mod resources;
mod roots;
mod runner;
mod sampling;
mod search;
mod server_switch;
mod stream;
mod system_prompt;
mod tool_limits;
mod tool_run;
mod tools;

use std::path::PathBuf;

use tokio::sync::mpsc;

use crate::mcp::{HubEvent, McpHub};
use crate::model::ModelProvider;
use crate::policy::Policy;

pub use crate::journal::ResumeFrom;
pub use modes::ModeStart;
pub use reload::{ConfigReload, RulesReload};

/// Default cap on model calls per user message.
pub const DEFAULT_TURN_CAP: usize = 50;
/// Default number of characters of one tool output the model gets.
pub const DEFAULT_OUTPUT_BUDGET: usize = 100_000;
/// Default estimated tokens of one MCP tool result the model gets (Claude Code's default).
pub const DEFAULT_MCP_OUTPUT_TOKENS: usize = 25_000;
/// Capacity of both channels; the front end drains events continuously.
const CHANNEL_CAPACITY: usize = 256;

/// The front end's side of a running agent.
pub use crate::protocol::AgentHandle;

/// Everything the agent task needs. Build it with [`AgentConfig::new`] and adjust fields.
pub struct AgentConfig {
    pub model: Box<dyn ModelProvider>,
    pub hub: McpHub,
    /// The receiver of the channel the hub was created with; its status events become
    /// [`Event::ServerStatus`](crate::protocol::Event::ServerStatus), its tool-list changes re-assemble the pool.
    pub hub_events: Option<mpsc::UnboundedReceiver<HubEvent>>,
    pub policy: Policy,
    pub workspace: PathBuf,
    /// Where session logs go; None keeps no log (nothing can be resumed later).
    pub sessions_dir: Option<PathBuf>,
    /// Where workspace checkpoints go (`state_dir/checkpoints`); None takes none, and
    /// /undo has nothing to restore.
    pub checkpoints_dir: Option<PathBuf>,
    /// Where the definitions that rules let through are pinned (`state_dir/pins`); None
    /// pins them for the session only. "Always" pins go to the workspace's `.toolgate/`.
    pub pins_dir: Option<PathBuf>,
    /// A session id (see [`crate::journal::resolve`]) whose conversation and connections to restore.
    /// Its log is continued.
    pub resume: Option<String>,
    /// Model calls per user message.
    pub turn_cap: usize,
    /// Characters of one tool output the model gets; the rest is kept in a file.
    pub output_budget: usize,
    pub max_tokens: u32,
    /// `[model] context_window`: overrides the window the model's name gives.
    pub context_window: Option<u64>,
    /// `[model] auto_compact_percent`: the share of the window a request may fill before
    /// the conversation is compacted.
    pub auto_compact_percent: u8,
    /// Non-interactive: an Ask becomes a denial that says how to allow the call.
    pub headless: bool,
    /// How long a tool-call question waits for the person before it is denied (None:
    /// it waits until answered or the turn is cancelled).
    pub ask_timeout: Option<std::time::Duration>,
    /// On resume, replay the restored conversation as events (the console shows it; the
    /// headless front end prints only the new turn).
    pub replay_history: bool,
    /// Problems found while starting (config diagnostics, ignored project files): sent as
    /// notices right after `SessionStarted`, so every front end shows them.
    pub startup_notices: Vec<String>,
    /// The sandbox bash runs in (`[sandbox]` settings and the kernel's status); the
    /// default is the default settings on this machine.
    pub sandbox: crate::sandbox::Sandbox,
    /// `[sampling] max_tokens`: a server's sampling request asking for more is refused.
    pub sampling_max_tokens: u32,
    /// `[flow] enabled`: the flow rule (decision 0098).
    pub flow: crate::settings::FlowSettings,
    /// `[tools]`: when MCP tools are deferred behind `search_tools`.
    pub tool_search: crate::settings::SearchSettings,
    /// Estimated tokens (see [`crate::tokens`]) of one MCP tool result the model gets;
    /// the whole result is kept in a file. `MAX_MCP_OUTPUT_TOKENS` sets it.
    pub mcp_output_tokens: usize,
    /// How to load the server configuration again (`/mcp reload`, and the file watcher
    /// when `watch` is set); None: the configuration is fixed for the session.
    pub reload: Option<ConfigReload>,
    /// The permission mode the session starts in.
    pub permission_mode: ModeStart,
    /// Modes the session may not enter (a managed policy's `disable_auto_mode`).
    pub mode_limits: crate::gate::ModeLimits,
    /// The project's instruction files (into the system prompt) and command files (run
    /// when a message starts with their `/NAME`); empty by default.
    pub project: crate::project::ProjectContext,
    /// `[hooks]` of the config files (decision 0086), and whether the person consented to
    /// the project's (without it they do not run).
    pub hooks: crate::settings::HookSettings,
    pub hooks_project_consent: bool,
}

impl AgentConfig {
    pub fn new(
        model: Box<dyn ModelProvider>,
        hub: McpHub,
        hub_events: mpsc::UnboundedReceiver<HubEvent>,
        policy: Policy,
        workspace: PathBuf,
    ) -> Self {
        AgentConfig {
            model,
            hub,
            hub_events: Some(hub_events),
            policy,
            workspace,
            sessions_dir: crate::journal::default_sessions_dir(),
            checkpoints_dir: crate::checkpoint::default_root(),
            pins_dir: crate::paths::state_dir().map(|d| d.join("pins")),
            resume: None,
            turn_cap: DEFAULT_TURN_CAP,
            output_budget: DEFAULT_OUTPUT_BUDGET,
            max_tokens: 8192,
            context_window: None,
            auto_compact_percent: crate::settings::DEFAULT_AUTO_COMPACT_PERCENT,
            headless: false,
            ask_timeout: None,
            replay_history: true,
            startup_notices: Vec::new(),
            sandbox: crate::sandbox::Sandbox::default(),
            sampling_max_tokens: crate::settings::DEFAULT_SAMPLING_MAX_TOKENS,
            flow: Default::default(),
            permission_mode: ModeStart::default(),
            mode_limits: Default::default(),
            tool_search: Default::default(),
            mcp_output_tokens: DEFAULT_MCP_OUTPUT_TOKENS,
            reload: None,
            project: Default::default(),
            hooks: Default::default(),
            hooks_project_consent: false,
        }
    }
}

/// Starts the agent on a tokio task (call from within a runtime). The task ends after
/// [`UiCommand::Shutdown`] or when the front end drops its command sender; it shuts the
/// hub down (no orphaned servers) and then closes the event channel.
pub fn spawn(config: AgentConfig) -> AgentHandle {
    // Commands: bounded; the reader takes each at once (a Cancel never waits behind a turn:
    // see `intake::read_commands`), so a full channel only slows a front end that floods it.
    let (command_tx, command_rx) = mpsc::channel(CHANNEL_CAPACITY);
    // Events: bounded, so a model streaming faster than the front end draws waits for it
    // rather than piling up text. One sender per task, and a task's events arrive in the
    // order it sent them: a turn's `UserMessage` … `ToolCallStarted` → `PermissionDecided` →
    // `ToolCallFinished` … `TurnFinished`, and every `PoolChanged` after the change it
    // reports. Events from beside the turn (server status, logs, sampling, catalogs) come
    // from the hub forwarder and may interleave with a turn's, never reorder within it.
    let (event_tx, event_rx) = mpsc::channel(CHANNEL_CAPACITY);
    runner::start(config, command_rx, event_tx);
    AgentHandle {
        commands: command_tx,
        events: event_rx,
    }
}
