//! The agent task: command intake, the turn loop and model streaming. Tool execution is in
//! `tools.rs`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::AgentConfig;
use super::events::{AgentEvent, Containment, PoolEntry, ServerInfo, UiCommand};
use super::sampling::SamplingHost;
use super::session::{self, Record, SessionLog, SharedLog};
use crate::builtin::pool_builtins_with_resources;
use crate::gate::Gate;
use crate::inbox::{Origin, Reply as InboxReply, Request, SignIn, SignInAnswer};
use crate::mcp::{HubEvent, McpHub, ServerStatus, SignInQuestion};
use crate::model::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, Role, StopReason, StreamEvent,
    ToolDef, Usage,
};
use crate::pool::{self, Pool, PoolError, PoolTool, ServerTools};

/// Work for the agent task, in the order the front end sent it.
enum Work {
    /// The token is created when the command arrives, so a Cancel sent right after a
    /// Submit always reaches the turn it was meant for.
    Submit(String, CancellationToken),
    Connect(String),
    Disconnect(String),
    Revoke(String),
    Clear,
    /// `/undo`; the token lets a cancel withdraw its question.
    Undo(CancellationToken),
    /// `/mcp enable|disable NAME [--save]`.
    SetEnabled {
        server: String,
        enabled: bool,
        save: bool,
    },
    /// `/mcp__server__prompt`: server, prompt, arguments; a turn like Submit.
    Prompt(
        String,
        String,
        std::collections::HashMap<String, String>,
        CancellationToken,
    ),
    /// A server's tool list or state changed on its own.
    RefreshPool,
    /// Load the server configuration again (`/mcp reload`, or the watcher saw a change).
    Reload(super::reload::ReloadCause),
    /// `/roots add` added this root (already in force): the session log keeps it, so a
    /// resumed session has it again.
    RootAdded(PathBuf),
    Shutdown,
}

/// Shared between the command reader and the agent task.
struct Control {
    current_turn: Mutex<CancellationToken>,
    shutting_down: AtomicBool,
}

impl Control {
    fn cancel_current(&self) {
        self.current_turn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .cancel();
    }

    fn new_turn(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self
            .current_turn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = token.clone();
        token
    }
}

pub(super) fn start(
    mut config: AgentConfig,
    commands: mpsc::Receiver<UiCommand>,
    events: mpsc::Sender<AgentEvent>,
) {
    let control = Arc::new(Control {
        current_turn: Mutex::new(CancellationToken::new()),
        shutting_down: AtomicBool::new(false),
    });
    let (work_tx, work_rx) = mpsc::unbounded_channel();
    let stopped = CancellationToken::new();
    let shared_log = SharedLog::default();
    let hub_events = config.hub_events.take();
    let hub = config.hub.clone();
    let cap = config.sampling_max_tokens;
    let watcher = watch_config(&config, work_tx.clone());
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
    tokio::spawn(read_commands(
        commands,
        work_tx.clone(),
        control,
        (hub, events.clone()),
        sampling.clone(),
    ));
    if let Some(hub_events) = hub_events {
        tokio::spawn(forward_hub_events(
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

async fn read_commands(
    mut commands: mpsc::Receiver<UiCommand>,
    work: mpsc::UnboundedSender<Work>,
    control: Arc<Control>,
    // Completions and roots are answered here, beside a running turn, not queued behind it.
    (hub, events): (McpHub, mpsc::Sender<AgentEvent>),
    sampling: Arc<SamplingHost>,
) {
    while let Some(command) = commands.recv().await {
        let item = match command {
            UiCommand::Cancel => {
                control.cancel_current();
                continue;
            }
            UiCommand::Submit(text) => Work::Submit(text, control.new_turn()),
            UiCommand::Connect(name) => Work::Connect(name),
            UiCommand::Disconnect(name) => Work::Disconnect(name),
            // Sampling grants may be in use during a turn: revoked at once, not after it.
            UiCommand::RevokeGrant(name) if crate::gate::is_sampling_grant(&name) => {
                let text = sampling.gate.grants().revoke(&name);
                let _ = events.send(AgentEvent::Notice(text)).await;
                continue;
            }
            UiCommand::RevokeGrant(name) => Work::Revoke(name),
            UiCommand::Clear => Work::Clear,
            UiCommand::Undo => Work::Undo(control.new_turn()),
            // Roots change beside a running turn: a server may be waiting for them.
            UiCommand::AddRoot(dir) => {
                let (hub, events, work) = (hub.clone(), events.clone(), work.clone());
                tokio::spawn(async move {
                    if let Some(root) = super::roots::add(hub, dir, events).await {
                        let _ = work.send(Work::RootAdded(root));
                    }
                });
                continue;
            }
            UiCommand::ListRoots => {
                let _ = events.send(super::roots::list(&hub)).await;
                continue;
            }
            UiCommand::SetServerEnabled {
                server,
                enabled,
                save,
            } => Work::SetEnabled {
                server,
                enabled,
                save,
            },
            UiCommand::ReloadConfig => Work::Reload(super::reload::ReloadCause::Asked),
            UiCommand::RunPrompt {
                server,
                prompt,
                arguments,
            } => Work::Prompt(server, prompt, arguments, control.new_turn()),
            UiCommand::Complete {
                id,
                server,
                target,
                argument,
                value,
                context,
            } => {
                let (hub, events) = (hub.clone(), events.clone());
                tokio::spawn(async move {
                    let values = hub
                        .complete(&server, &target, &argument, &value, &context)
                        .await
                        .unwrap_or_else(|e| {
                            tracing::info!("completion on {server} failed: {e}");
                            Vec::new()
                        });
                    let _ = events.send(AgentEvent::Completions { id, values }).await;
                });
                continue;
            }
            UiCommand::Shutdown => break,
        };
        if work.send(item).is_err() {
            return;
        }
    }
    // Shutdown, or the front end went away: stop what runs and let the agent clean up.
    control.shutting_down.store(true, Ordering::SeqCst);
    control.cancel_current();
    let _ = work.send(Work::Shutdown);
}

/// Starts the config watcher when the front end wants one; its batches become reloads.
/// A watcher that cannot start is logged: `/mcp reload` still works.
fn watch_config(
    config: &AgentConfig,
    work: mpsc::UnboundedSender<Work>,
) -> Option<crate::config::watch::ConfigWatcher> {
    let reload = config.reload.as_ref().filter(|r| r.watch)?;
    let files = reload.watched_files();
    let on_change = move |changed: Vec<PathBuf>| {
        let _ = work.send(Work::Reload(super::reload::ReloadCause::Files(changed)));
    };
    match crate::config::watch::watch(files, on_change) {
        Ok(watcher) => Some(watcher),
        Err(e) => {
            tracing::warn!("cannot watch the configuration files: {e}");
            None
        }
    }
}

async fn forward_hub_events(
    mut hub_events: mpsc::UnboundedReceiver<HubEvent>,
    events: mpsc::Sender<AgentEvent>,
    work: mpsc::UnboundedSender<Work>,
    stopped: CancellationToken,
    sampling: Arc<SamplingHost>,
) {
    loop {
        let event = tokio::select! {
            () = stopped.cancelled() => return,
            event = hub_events.recv() => match event {
                Some(event) => event,
                None => return,
            },
        };
        match event {
            HubEvent::Status { server, status } => {
                let pool_may_change = matches!(
                    status,
                    ServerStatus::Failed { .. } | ServerStatus::Disconnected { .. }
                );
                if events
                    .send(AgentEvent::ServerStatus { server, status })
                    .await
                    .is_err()
                {
                    return;
                }
                if pool_may_change {
                    let _ = work.send(Work::RefreshPool);
                }
            }
            HubEvent::ToolsChanged { .. } => {
                let _ = work.send(Work::RefreshPool);
            }
            HubEvent::CatalogChanged { server, catalog } => {
                for problem in &catalog.problems {
                    let notice = format!(
                        "MCP server '{server}': {problem}; what it lists is left out of @ and / completion (its tools still work)"
                    );
                    if events.send(AgentEvent::Notice(notice)).await.is_err() {
                        return;
                    }
                }
                if events
                    .send(AgentEvent::Catalog { server, catalog })
                    .await
                    .is_err()
                {
                    return;
                }
                let _ = work.send(Work::RefreshPool);
            }
            HubEvent::Log {
                server,
                level,
                message,
            } => {
                tracing::info!(target: "toolgate::mcp", server = %server, %level, "{message}");
                session::append_shared(
                    &sampling.log,
                    Record::ServerLog {
                        server: server.clone(),
                        level,
                        message: message.clone(),
                    },
                );
                let event = AgentEvent::ServerLog {
                    server,
                    level,
                    message,
                };
                if events.send(event).await.is_err() {
                    return;
                }
            }
            // Each on its own task: the person may take a while, and other servers (and
            // this server's other requests, up to its bound) must not wait behind it.
            HubEvent::Sampling(question) => {
                tokio::spawn(sampling.clone().handle(question));
            }
            HubEvent::SamplingRefused {
                server,
                max_tokens,
                reason,
            } => {
                sampling.refused_early(server, max_tokens, reason).await;
            }
            HubEvent::Instructions { server, text } => {
                let event = AgentEvent::ServerInstructions { server, text };
                if events.send(event).await.is_err() {
                    return;
                }
            }
            HubEvent::SignIn(question) => {
                if !ask_sign_in(question, &events).await {
                    return;
                }
            }
            HubEvent::Elicitation(question) => {
                if !super::elicitation::ask_elicitation(question, &events).await {
                    return;
                }
            }
            HubEvent::SignedIn { server } => {
                let _ = work.send(Work::Connect(server));
            }
            HubEvent::SignInStarted { server, url } => {
                let notice = format!(
                    "Sign in to '{server}' in your browser (opening it now); if it does not open, visit:\n{url}"
                );
                if events.send(AgentEvent::Notice(notice)).await.is_err() {
                    return;
                }
            }
            HubEvent::Auth { server, status } => {
                if events
                    .send(AgentEvent::ServerAuth { server, status })
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

/// How long a sign-in question stays in the inbox before it counts as "not now".
const SIGN_IN_QUESTION_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Puts the hub's sign-in question into the inbox and relays the answer, without holding up
/// the other hub events (and so the other servers). False when the front end is gone.
async fn ask_sign_in(question: SignInQuestion, events: &mpsc::Sender<AgentEvent>) -> bool {
    let now = std::time::Instant::now();
    let (request, answer) = Request::new(
        Origin::Server {
            server: question.server.clone(),
        },
        SignIn {
            server: question.server.clone(),
            url: question.url.clone(),
            authorization_server: question.authorization_server.clone(),
            scopes: question.scopes.clone(),
            step_up: question.step_up,
        },
        now,
        Some(now + SIGN_IN_QUESTION_LIMIT),
    );
    if events
        .send(AgentEvent::Request(request.into()))
        .await
        .is_err()
    {
        question.answer(false);
        return false;
    }
    tokio::spawn(async move {
        tokio::select! {
            reply = answer => question.answer(matches!(reply, Ok(InboxReply::Person(SignInAnswer::SignIn)))),
            // The hub stopped waiting: dropping `answer` withdraws the request.
            () = question.withdrawn() => {}
        }
    });
    true
}

/// A finished model reply.
#[derive(Default)]
struct Reply {
    content: Vec<ContentBlock>,
    stop: Option<StopReason>,
    usage: Usage,
    cancelled: bool,
}

pub(super) struct Agent {
    pub(super) model: Arc<dyn ModelProvider>,
    pub(super) hub: McpHub,
    pub(super) gate: Gate,
    pub(super) workspace: PathBuf,
    pub(super) events: mpsc::Sender<AgentEvent>,
    pub(super) log: Option<SessionLog>,
    pub(super) session_id: String,
    pub(super) messages: Vec<Message>,
    pub(super) last_pool: Option<Pool>,
    pub(super) output_budget: usize,
    /// Compiled input schemas by tool name (with the schema they were compiled from), so a
    /// call does not recompile its tool's schema.
    pub(super) validators:
        std::collections::HashMap<String, (crate::pool::Schema, Arc<jsonschema::Validator>)>,
    pub(super) checkpoints: super::checkpoints::Checkpoints,
    turn_cap: usize,
    max_tokens: u32,
    control: Arc<Control>,
    sessions_dir: Option<PathBuf>,
    resume: Option<String>,
    replay_history: bool,
    startup_notices: Vec<String>,
    pub(super) sandbox: crate::sandbox::Sandbox,
    /// The log's second handle, for sampling and server logs (see [`SharedLog`]).
    shared_log: SharedLog,
    /// `/mcp enable|disable` for this session, by server name (`server_switch.rs`).
    pub(super) server_overrides: std::collections::HashMap<String, bool>,
    /// Deferred tools and `search_tools` (see `search.rs`).
    pub(super) tool_search: super::search::ToolSearch,
    /// Estimated tokens of one MCP tool result the model gets; the rest is kept in a file.
    pub(super) mcp_output_tokens: usize,
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
            workspace: config.workspace,
            events,
            log: None,
            session_id: config
                .resume
                .clone()
                .unwrap_or_else(session::new_session_id),
            messages: Vec::new(),
            last_pool: None,
            output_budget: config.output_budget.max(1),
            validators: Default::default(),
            checkpoints: super::checkpoints::Checkpoints::new(config.checkpoints_dir),
            turn_cap: config.turn_cap.max(1),
            max_tokens: config.max_tokens,
            control,
            sessions_dir: config.sessions_dir,
            resume: config.resume,
            replay_history: config.replay_history,
            startup_notices: config.startup_notices,
            sandbox: config.sandbox,
            shared_log,
            server_overrides: Default::default(),
            tool_search: super::search::ToolSearch::new(config.tool_search),
            mcp_output_tokens: config.mcp_output_tokens.max(1),
            reload: config.reload,
            sampling_config: None,
        }
    }

    pub(super) async fn emit(&self, event: AgentEvent) {
        // A front end that went away gets its Shutdown from the command reader.
        let _ = self.events.send(event).await;
    }

    /// Appends to the session log; a failing log is reported once and then left alone,
    /// so a full disk never stops the conversation.
    pub(super) async fn record(&mut self, record: Record) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        if let Err(e) = log.append(record) {
            tracing::warn!("session log: {e}");
            self.log = None;
            self.emit(AgentEvent::Notice(format!(
                "{e}; the rest of this session is not saved"
            )))
            .await;
        }
    }

    async fn open_session(&mut self) {
        let Some(dir) = self.sessions_dir.clone() else {
            return;
        };
        match SessionLog::open(&dir, &self.session_id) {
            Ok(log) => {
                self.log = Some(log);
                if let Ok(second) = SessionLog::open(&dir, &self.session_id) {
                    *self
                        .shared_log
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(second);
                }
            }
            Err(e) => {
                self.emit(AgentEvent::Notice(format!(
                    "{e}; this session is not saved"
                )))
                .await;
                return;
            }
        }
        let model = self.model.label();
        let record = if self.resume.is_some() {
            Record::Resumed { model }
        } else {
            Record::SessionStart {
                session_id: self.session_id.clone(),
                workspace: self.workspace.clone(),
                model,
            }
        };
        self.record(record).await;
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
                self.replay(message).await;
            }
        }
        self.messages = restored.messages;
        self.tool_search.restore_loaded(restored.loaded_tools);
        let roots = super::roots::restore(&self.hub, &restored.roots).await;
        self.checkpoints.resume_after(restored.turns);
        let mut notice = format!(
            "Resumed session {id}: {} messages restored",
            self.messages.len()
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

    async fn replay(&self, message: &Message) {
        for block in &message.content {
            match (message.role, block) {
                // What `@server:uri` attached was never a line the person typed.
                (Role::User, ContentBlock::Text { text })
                    if super::resources::is_attachment_text(text) => {}
                (Role::User, ContentBlock::Text { text }) => {
                    self.emit(AgentEvent::UserMessage(text.clone())).await;
                }
                (Role::Assistant, ContentBlock::Text { text }) => {
                    self.emit(AgentEvent::TextDelta(text.clone())).await;
                    self.emit(AgentEvent::AssistantMessageDone).await;
                }
                _ => {}
            }
        }
    }

    async fn run(&mut self, mut work: mpsc::UnboundedReceiver<Work>) {
        self.open_session().await;
        self.prime_checkpoints();
        let sandbox_problem = self.sandbox.startup_notice(&self.workspace);
        self.record(Record::Sandbox {
            problem: sandbox_problem.clone(),
            status: self.sandbox.status().describe(),
            bash: self.sandbox.bash_profile(&self.workspace).describe(),
        })
        .await;
        self.emit(AgentEvent::SessionStarted {
            sandbox_problem,
            session_id: self.session_id.clone(),
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
                    self.run_prompt(&server, &prompt, &arguments, cancel).await
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
                Work::Undo(cancel) => self.undo_last_turn(cancel).await,
                Work::SetEnabled {
                    server,
                    enabled,
                    save,
                } => self.set_server_enabled(&server, enabled, save).await,
                Work::Clear => {
                    self.messages.clear();
                    self.record(Record::Cleared).await;
                    self.emit(AgentEvent::Notice("Conversation cleared.".into()))
                        .await;
                }
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

    async fn report_command(&self, result: super::tools::ToolRun) {
        let event = if result.is_error() {
            AgentEvent::Error(result.text)
        } else {
            AgentEvent::Notice(result.text)
        };
        self.emit(event).await;
    }

    /// Assembles the pool from the built-ins and the servers connected now; emits
    /// PoolChanged when it differs from the last one sent.
    pub(super) async fn refresh_pool(&mut self) -> Result<Pool, PoolError> {
        let pool = self.assemble_visible()?;
        self.observe_listings();
        let marks = self.pool_marks(&pool);
        // Deferred before loaded: a tool moving from one to the other never shows in both.
        self.announce_deferred().await;
        // New marks change badges too (a changed definition asks), so the pool goes along.
        if self.last_pool.as_ref() != Some(&pool) || marks.is_some() {
            self.send_pool(&pool).await;
        }
        if let Some(marks) = marks {
            self.emit(marks).await;
        }
        Ok(pool)
    }

    /// Like refresh_pool but always sends (a grant changed the verdicts, not the tools).
    pub(super) async fn refresh_pool_forced(&mut self) -> Result<Pool, PoolError> {
        let pool = self.assemble_visible()?;
        self.observe_listings();
        let marks = self.pool_marks(&pool);
        self.announce_deferred().await;
        self.send_pool(&pool).await;
        if let Some(marks) = marks {
            self.emit(marks).await;
        }
        Ok(pool)
    }

    /// Lets the gate see the listings (new tools, changed definitions).
    fn observe_listings(&mut self) {
        let hub = self.hub.clone();
        self.gate.observe_listings(&hub.server_tools(), |server| {
            hub.config(server).is_some_and(|c| c.pool.trust_new_tools)
        });
    }

    /// The panel's marks (changed and new definitions, filtered tools) when they changed.
    fn pool_marks(&mut self, pool: &Pool) -> Option<AgentEvent> {
        let listings = self.hub.server_tools();
        let deferred = self.tool_search.deferred().to_vec();
        let (marks, excluded) = self.gate.pool_marks(pool, &deferred, &listings)?;
        Some(AgentEvent::PoolMarks { marks, excluded })
    }

    async fn send_pool(&mut self, pool: &Pool) {
        let old: Vec<&str> = self
            .last_pool
            .as_ref()
            .map(|p| p.names())
            .unwrap_or_default();
        let new = pool.names();
        // Sets for membership: a pool can hold thousands of tools.
        let (old_set, new_set): (HashSet<&str>, HashSet<&str>) =
            (old.iter().copied().collect(), new.iter().copied().collect());
        let added = new
            .iter()
            .filter(|n| !old_set.contains(*n))
            .map(|n| n.to_string())
            .collect();
        let removed = old
            .iter()
            .filter(|n| !new_set.contains(*n))
            .map(|n| n.to_string())
            .collect();
        let snapshot = pool
            .tools
            .iter()
            .map(|tool| PoolEntry {
                // The front end owns (and sanitizes) its copy; this runs only when the
                // pool changed, not before every call.
                tool: PoolTool::clone(tool),
                verdict: self.gate.badge(tool),
            })
            .collect();
        self.last_pool = Some(pool.clone());
        self.emit(AgentEvent::PoolChanged {
            snapshot,
            added,
            removed,
        })
        .await;
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
                self.last_pool.clone().unwrap_or_default()
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

    /// Appends a user message, merging into a trailing user message (left by a failed or
    /// cancelled turn) because model APIs want roles to alternate.
    async fn push_user(&mut self, content: Vec<ContentBlock>) {
        self.record(Record::Message {
            message: Message {
                role: Role::User,
                content: content.clone(),
            },
        })
        .await;
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(content),
            _ => self.messages.push(Message {
                role: Role::User,
                content,
            }),
        }
    }

    async fn push_assistant(&mut self, content: Vec<ContentBlock>) {
        let message = Message {
            role: Role::Assistant,
            content,
        };
        self.record(Record::Message {
            message: message.clone(),
        })
        .await;
        self.messages.push(message);
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
    pub(super) async fn run_turn_with(&mut self, opening: Vec<Message>, cancel: CancellationToken) {
        self.checkpoints.begin_turn();
        let ends_with_user = opening.last().is_some_and(|m| m.role == Role::User);
        for message in opening {
            match message.role {
                Role::User => self.push_user(message.content).await,
                Role::Assistant => self.push_assistant(message.content).await,
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
                    self.tool_search.deferred_count(),
                ) + &super::prompt::server_instructions(&self.hub.instructions()),
                messages: self.messages.clone(),
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
            let reply = match self.stream_reply(request, &cancel).await {
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
                self.push_assistant(reply.content).await;
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
            self.push_user(results).await;
            if cancel.is_cancelled() {
                break true;
            }
        };
        self.finish_checkpoint().await;
        self.record(Record::TurnFinished {
            usage,
            cancelled,
            model_calls,
        })
        .await;
        self.emit(AgentEvent::TurnFinished { usage, cancelled })
            .await;
    }

    async fn stream_reply(
        &mut self,
        request: ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<Reply, ModelError> {
        let mut stream = self.model.stream(request);
        let mut reply = Reply::default();
        let mut text = String::new();
        let mut streamed_text = false;
        let result = loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    reply.cancelled = true;
                    break Ok(());
                }
                next = stream.next() => next,
            };
            match next {
                None => break Ok(()),
                Some(Err(e)) => break Err(e),
                Some(Ok(StreamEvent::TextDelta(delta))) => {
                    streamed_text = true;
                    text.push_str(&delta);
                    self.emit(AgentEvent::TextDelta(delta)).await;
                }
                Some(Ok(StreamEvent::ToolUseStarted { .. })) => {}
                Some(Ok(StreamEvent::ToolUse { id, name, input })) => {
                    flush_text(&mut text, &mut reply.content);
                    reply
                        .content
                        .push(ContentBlock::ToolUse { id, name, input });
                }
                // Providers report usage cumulatively within one message (input at the
                // start, output growing), so the largest value of each is the total.
                Some(Ok(StreamEvent::Usage(u))) => {
                    reply.usage.input_tokens = reply.usage.input_tokens.max(u.input_tokens);
                    reply.usage.output_tokens = reply.usage.output_tokens.max(u.output_tokens);
                    reply.usage.cache_read_input_tokens = reply
                        .usage
                        .cache_read_input_tokens
                        .max(u.cache_read_input_tokens);
                    reply.usage.cache_creation_input_tokens = reply
                        .usage
                        .cache_creation_input_tokens
                        .max(u.cache_creation_input_tokens);
                }
                Some(Ok(StreamEvent::Stop(reason))) => reply.stop = Some(reason),
            }
        };
        // Dropping the stream closes the HTTP response (that is how a cancel stops it).
        drop(stream);
        flush_text(&mut text, &mut reply.content);
        if streamed_text {
            self.emit(AgentEvent::AssistantMessageDone).await;
        }
        result.map(|()| reply)
    }
}

fn flush_text(text: &mut String, content: &mut Vec<ContentBlock>) {
    if !text.is_empty() {
        content.push(ContentBlock::Text {
            text: std::mem::take(text),
        });
    }
}

/// The pool for these connections: built-ins (with disconnect_mcp while something is
/// connected, the resource tools while a connected server has resources), then every
/// connected server's tools.
pub(super) fn assemble_for(
    configured: &[String],
    servers: &[Arc<ServerTools>],
    with_resources: &[String],
) -> Result<Pool, PoolError> {
    let connected: Vec<String> = servers.iter().map(|s| s.server().to_string()).collect();
    pool::assemble(
        &pool_builtins_with_resources(configured, &connected, with_resources),
        servers,
    )
}
