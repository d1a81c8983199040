//! The agent task: its parts (conversation, pool keeper, checkpoints, gate), the session's
//! start and restore, the work loop and the turn loop. The tasks beside it are in
//! `intake.rs`, streaming in `stream.rs`, tool execution in `tools.rs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::AgentConfig;
use super::checkpoints::Checkpoints;
use super::conversation::Conversation;
use super::intake::{Control, Work};
use super::pool_keeper::PoolKeeper;
use super::sampling::SamplingHost;
use super::server_switch::ServerSwitch;
use super::session::{self, Record, SharedLog};
use super::tool_limits::ToolLimits;
use super::tool_run::ToolRun;
use crate::gate::Gate;
use crate::mcp::McpHub;
use crate::model::{
    ContentBlock, Message, ModelProvider, ModelRequest, Role, StopReason, ToolDef, Usage,
};
use crate::pool::{Pool, PoolError};
use crate::protocol::{AgentEvent, Containment, ServerInfo, UiCommand};

pub(super) fn start(
    mut config: AgentConfig,
    commands: mpsc::Receiver<UiCommand>,
    events: mpsc::Sender<AgentEvent>,
) {
    let control = Arc::new(Control::default());
    // Unbounded: the command reader must never wait behind a running turn (a Cancel has to
    // reach it), and its producers are a person typing and the hub's list changes. The
    // queue keeps their order: work runs in the order it was sent.
    let (work_tx, work_rx) = mpsc::unbounded_channel();
    let stopped = CancellationToken::new();
    let shared_log = SharedLog::default();
    let hub_events = config.hub_events.take();
    let hub = config.hub.clone();
    let cap = config.sampling_max_tokens;
    let watcher = super::intake::watch_config(config.reload.as_ref(), work_tx.clone());
    let mut agent = Agent::new(config, events.clone(), control.clone(), shared_log.clone());
    let sampling_config = Arc::new(super::sampling::SamplingConfig::new(cap));
    agent.sampling_config = Some(sampling_config.clone());
    let sampling = Arc::new(SamplingHost {
        model: agent.model.clone(),
        config: sampling_config,
        gate: agent.gate.sampling(),
        log: shared_log,
        events: events.clone(),
    });
    tokio::spawn(super::intake::read_commands(
        commands,
        work_tx.clone(),
        control,
        (hub, events.clone()),
        sampling.clone(),
    ));
    if let Some(hub_events) = hub_events {
        tokio::spawn(super::intake::forward_hub_events(
            hub_events,
            events,
            work_tx,
            stopped.clone(),
            sampling,
        ));
    }
    tokio::spawn(async move {
        // Watching lasts as long as the agent does.
        let _watcher = watcher;
        agent.run(work_rx).await;
        stopped.cancel();
    });
}

pub(super) struct Agent {
    pub(super) model: Arc<dyn ModelProvider>,
    pub(super) hub: McpHub,
    pub(super) gate: Gate,
    pub(super) workspace: PathBuf,
    /// Messages, the session log and its replay.
    pub(super) conversation: Conversation,
    /// The pool last sent, deferred tools and `search_tools`.
    pub(super) pool: PoolKeeper,
    /// Argument checks and output budgets of tool calls.
    pub(super) limits: ToolLimits,
    pub(super) checkpoints: Checkpoints,
    turn_cap: usize,
    max_tokens: u32,
    control: Arc<Control>,
    sessions_dir: Option<PathBuf>,
    resume: Option<String>,
    replay_history: bool,
    startup_notices: Vec<String>,
    pub(super) sandbox: crate::sandbox::Sandbox,
    /// `/mcp enable|disable` for this session.
    pub(super) switch: ServerSwitch,
    pub(super) reload: Option<super::reload::ConfigReload>,
    /// What sampling reads of the configuration (a reload updates it); `None` until the
    /// agent task starts.
    pub(super) sampling_config: Option<Arc<super::sampling::SamplingConfig>>,
}

impl Agent {
    fn new(
        config: AgentConfig,
        events: mpsc::Sender<AgentEvent>,
        control: Arc<Control>,
        shared_log: SharedLog,
    ) -> Self {
        let session_id = super::conversation::session_id(config.resume.as_deref());
        Agent {
            gate: {
                let mut gate = Gate::new(config.policy, config.workspace.clone(), config.headless);
                gate.set_ask_timeout(config.ask_timeout);
                gate.set_sandbox(config.sandbox.clone());
                gate.load_pins(config.pins_dir.as_deref());
                gate
            },
            model: Arc::from(config.model),
            hub: config.hub,
            conversation: Conversation::new(session_id, shared_log, events),
            pool: PoolKeeper::new(config.tool_search),
            limits: ToolLimits::new(config.output_budget, config.mcp_output_tokens),
            checkpoints: Checkpoints::new(config.checkpoints_dir, config.workspace.clone()),
            workspace: config.workspace,
            turn_cap: config.turn_cap.max(1),
            max_tokens: config.max_tokens,
            control,
            sessions_dir: config.sessions_dir,
            resume: config.resume,
            replay_history: config.replay_history,
            startup_notices: config.startup_notices,
            sandbox: config.sandbox,
            switch: ServerSwitch::default(),
            reload: config.reload,
            sampling_config: None,
        }
    }

    /// The channel to the front end (questions carry their own reply channel on it).
    pub(super) fn events(&self) -> &mpsc::Sender<AgentEvent> {
        self.conversation.events()
    }

    pub(super) async fn emit(&self, event: AgentEvent) {
        self.conversation.emit(event).await;
    }

    pub(super) async fn record(&mut self, record: Record) {
        self.conversation.record(record).await;
    }

    /// Configured servers that may be connected now (what the model is offered).
    pub(super) fn connectable(&self) -> Vec<String> {
        self.switch.connectable(&self.hub)
    }

    /// Restores the conversation and reconnects the servers of a resumed session.
    async fn restore(&mut self) {
        let (Some(dir), Some(id)) = (self.sessions_dir.clone(), self.resume.clone()) else {
            return;
        };
        let restored = match session::load(&dir, &id) {
            Ok(restored) => restored,
            Err(e) => {
                self.emit(AgentEvent::Error(format!("cannot resume: {e}")))
                    .await;
                return;
            }
        };
        if self.replay_history {
            for message in &restored.messages {
                self.conversation.replay(message).await;
            }
        }
        self.conversation.messages = restored.messages;
        self.pool.search.restore_loaded(restored.loaded_tools);
        let roots = super::roots::restore(&self.hub, &restored.roots).await;
        self.checkpoints.resume_after(restored.turns);
        let mut notice = format!(
            "Resumed session {id}: {} messages restored",
            self.conversation.messages.len()
        );
        if restored.skipped_lines > 0 {
            notice.push_str(&format!(
                " ({} unreadable log lines skipped)",
                restored.skipped_lines
            ));
        }
        if roots.restored > 0 {
            notice.push_str(&format!(
                "; {} root{} added with /roots add restored",
                roots.restored,
                if roots.restored == 1 { "" } else { "s" }
            ));
        }
        for problem in &roots.problems {
            notice.push_str(&format!("\n  a root was not restored: {problem}"));
        }
        self.emit(AgentEvent::Notice(notice)).await;
        for server in restored.connected {
            let result = self.connect_server(&server, false, None).await;
            if result.is_error() {
                self.emit(AgentEvent::Notice(format!(
                    "Could not reconnect MCP server '{server}': {}",
                    result.text
                )))
                .await;
            }
        }
    }

    async fn run(&mut self, mut work: mpsc::UnboundedReceiver<Work>) {
        let (resumed, model) = (self.resume.is_some(), self.model.label());
        self.conversation
            .open(
                self.sessions_dir.as_deref(),
                resumed,
                self.workspace.clone(),
                model,
            )
            .await;
        self.checkpoints.prime();
        let sandbox_problem = self.sandbox.startup_notice(&self.workspace);
        self.record(Record::Sandbox {
            problem: sandbox_problem.clone(),
            status: self.sandbox.status().describe(),
            bash: self.sandbox.bash_profile(&self.workspace).describe(),
        })
        .await;
        self.emit(AgentEvent::SessionStarted {
            sandbox_problem,
            session_id: self.conversation.session_id.clone(),
            model_label: self.model.label(),
            workspace: self.workspace.clone(),
            servers: self
                .hub
                .configured()
                .iter()
                .filter_map(|name| self.hub.config(name))
                .map(|config| {
                    let profile = self.hub.sandbox_profile(&config.name);
                    ServerInfo::from_config(&config, Containment::of(&config, profile.as_ref()))
                })
                .collect(),
        })
        .await;
        if let Some(problem) = self.gate.take_pins_problem() {
            self.startup_notices.push(problem);
        }
        for notice in std::mem::take(&mut self.startup_notices) {
            self.emit(AgentEvent::Notice(notice)).await;
        }
        self.restore().await;
        // The first snapshot: every front end learns the starting pool from it.
        if let Err(e) = self.refresh_pool().await {
            self.emit(AgentEvent::Error(e.to_string())).await;
        }

        while let Some(item) = work.recv().await {
            if self.control.shutting_down.load(Ordering::SeqCst) && !matches!(item, Work::Shutdown)
            {
                continue;
            }
            match item {
                Work::Submit(text, cancel) => self.run_turn(text, cancel).await,
                Work::Prompt(server, prompt, arguments, cancel) => {
                    let names = (server.as_str(), prompt.as_str());
                    let opening = super::prompts::opening(
                        &self.hub,
                        &self.conversation,
                        names,
                        &arguments,
                        &cancel,
                    )
                    .await;
                    if let Some(opening) = opening {
                        self.run_turn_with(opening, cancel).await;
                    }
                }
                Work::Connect(name) => {
                    let result = self.connect_server(&name, true, None).await;
                    self.report_command(result).await;
                }
                Work::Disconnect(name) => {
                    let result = self.disconnect_server(&name).await;
                    self.report_command(result).await;
                }
                Work::Revoke(name) => {
                    let text = self.gate.revoke(&name);
                    self.emit(AgentEvent::Notice(text)).await;
                    let _ = self.refresh_pool_forced().await;
                }
                Work::Undo(cancel) => {
                    self.checkpoints
                        .undo_last_turn(cancel, &mut self.conversation)
                        .await
                }
                Work::SetEnabled {
                    server,
                    enabled,
                    save,
                } => {
                    let choice = (server.as_str(), enabled, save);
                    if self.switch.set(&self.hub, &self.conversation, choice).await {
                        if !enabled && self.hub.is_connected(&server) {
                            let result = self.disconnect_server(&server).await;
                            self.emit(AgentEvent::Notice(result.text)).await;
                        } else {
                            // connect_mcp's list of servers changed.
                            let _ = self.refresh_pool().await;
                        }
                    }
                }
                Work::Clear => self.conversation.clear().await,
                Work::RootAdded(dir) => self.record(Record::RootAdded { dir }).await,
                Work::RefreshPool => {
                    if let Err(e) = self.refresh_pool().await {
                        self.emit(AgentEvent::Notice(format!(
                            "{e}; the pool keeps its previous tools"
                        )))
                        .await;
                    }
                }
                Work::Reload(cause) => self.reload_config(cause).await,
                Work::Shutdown => break,
            }
        }
        self.hub.shutdown().await;
    }

    async fn report_command(&self, result: ToolRun) {
        let event = if result.is_error() {
            AgentEvent::Error(result.text)
        } else {
            AgentEvent::Notice(result.text)
        };
        self.emit(event).await;
    }

    /// Assembles the pool from the built-ins and the servers connected now; sends it (one
    /// `PoolChanged`) when a part of it differs from what was last sent.
    pub(super) async fn refresh_pool(&mut self) -> Result<Pool, PoolError> {
        self.update_pool(false).await
    }

    /// Like refresh_pool but always sends (a grant changed the verdicts, not the tools).
    pub(super) async fn refresh_pool_forced(&mut self) -> Result<Pool, PoolError> {
        self.update_pool(true).await
    }

    async fn update_pool(&mut self, force: bool) -> Result<Pool, PoolError> {
        let connectable = self.connectable();
        let pool = self.pool.assemble_visible(&self.hub, &connectable)?;
        if let Some(update) = self.pool.update(&pool, force, &mut self.gate, &self.hub) {
            self.emit(AgentEvent::PoolChanged(update)).await;
        }
        Ok(pool)
    }

    /// The pool for the next model call: freshly assembled, or — when a server's changed
    /// tool list no longer fits — the previous one.
    async fn pool_for_call(&mut self) -> Pool {
        match self.refresh_pool().await {
            Ok(pool) => pool,
            Err(e) => {
                self.emit(AgentEvent::Notice(format!(
                    "{e}; the pool keeps its previous tools"
                )))
                .await;
                self.pool.last().cloned().unwrap_or_default()
            }
        }
    }

    fn connected_servers(&self) -> Vec<String> {
        self.hub
            .server_tools()
            .into_iter()
            .map(|s| s.server().to_string())
            .collect()
    }

    async fn run_turn(&mut self, text: String, cancel: CancellationToken) {
        self.emit(AgentEvent::UserMessage(text.clone())).await;
        // `@server:uri` mentions are read and attached after the text.
        let content = self.user_content(text, &cancel).await;
        self.run_turn_with(
            vec![Message {
                role: Role::User,
                content,
            }],
            cancel,
        )
        .await;
    }

    /// A turn that starts with these messages (a typed message, or a prompt's messages).
    /// The model is called only when the last of them is the user's.
    async fn run_turn_with(&mut self, opening: Vec<Message>, cancel: CancellationToken) {
        self.checkpoints.begin_turn();
        let ends_with_user = opening.last().is_some_and(|m| m.role == Role::User);
        for message in opening {
            match message.role {
                Role::User => self.conversation.push_user(message.content).await,
                Role::Assistant => self.conversation.push_assistant(message.content).await,
            }
        }
        let mut usage = Usage::default();
        let mut model_calls = 0;
        let cancelled = loop {
            if !ends_with_user {
                break false;
            }
            if cancel.is_cancelled() {
                break true;
            }
            if model_calls >= self.turn_cap {
                self.emit(AgentEvent::Notice(format!(
                    "Turn cap reached: {} model calls for this message. The turn ends here; send a message to let the agent continue.",
                    self.turn_cap
                )))
                .await;
                break false;
            }
            let pool = self.pool_for_call().await;
            let request = ModelRequest {
                system: super::prompt::system_prompt(
                    &self.workspace,
                    &self.connectable(),
                    &self.connected_servers(),
                    self.pool.search.deferred_count(),
                ) + &super::prompt::server_instructions(&self.hub.instructions()),
                messages: self.conversation.messages.clone(),
                tools: pool
                    .tools
                    .iter()
                    .map(|t| ToolDef {
                        name: t.name.clone(),
                        description: t.description.clone(),
                        input_schema: t.input_schema.clone(),
                    })
                    .collect(),
                max_tokens: self.max_tokens,
                sampling: Default::default(),
            };
            model_calls += 1;
            let events = self.events().clone();
            let reply =
                match super::stream::stream_reply(&*self.model, request, &cancel, &events).await {
                    Ok(reply) => reply,
                    Err(e) => {
                        let message = e.to_string();
                        self.record(Record::Error {
                            message: message.clone(),
                        })
                        .await;
                        self.emit(AgentEvent::Error(message)).await;
                        break false;
                    }
                };
            usage.add(&reply.usage);
            let tool_uses: Vec<(String, String, Value)> = reply
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            if !reply.content.is_empty() {
                self.conversation.push_assistant(reply.content).await;
            }
            if tool_uses.is_empty() {
                if reply.stop == Some(StopReason::MaxTokens) && !reply.cancelled {
                    self.emit(AgentEvent::Notice(
                        "The model stopped at its output token limit.".into(),
                    ))
                    .await;
                }
                break reply.cancelled;
            }
            // Tool calls run even under end_turn; every tool_use gets a result, also when
            // the turn was cancelled while the model was still streaming.
            let mut results = Vec::with_capacity(tool_uses.len());
            for (id, name, input) in tool_uses {
                results.push(self.run_tool_call(&id, &name, input, &pool, &cancel).await);
            }
            self.conversation.push_user(results).await;
            if cancel.is_cancelled() {
                break true;
            }
        };
        self.checkpoints.finish(&mut self.conversation).await;
        self.record(Record::TurnFinished {
            usage,
            cancelled,
            model_calls,
        })
        .await;
        self.emit(AgentEvent::TurnFinished { usage, cancelled })
            .await;
    }
}
