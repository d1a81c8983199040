//! The agent task: its parts (the conversation, the tool host, the reloader), the session's
//! start, the work loop and the turn loop. The tasks beside it are in
//! `intake.rs`, streaming in `stream.rs`, the tool side (calls, servers, pool) in `tools.rs`,
//! a resumed session's restore in `runner/restore.rs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::AgentConfig;
use super::checkpoints::Checkpoints;
use super::compaction::{self, Ask};
use super::context::{self, ContextMeter};
use super::conversation::Conversation;
use super::intake::{Control, Work};
use super::pool_keeper::PoolKeeper;
use super::reload::Reloader;
use super::sampling::SamplingHost;
use super::server_switch::ServerSwitch;
use super::tool_limits::ToolLimits;
use super::tool_run::ToolRun;
use super::tools::ToolHost;
use crate::gate::Gate;
use crate::journal::{Journal, Record, SharedLog};
use crate::model::{
    ContentBlock, Message, ModelError, ModelProvider, ModelRequest, Role, StopReason, ToolDef,
    Usage,
};
use crate::pool::Pool;
use crate::protocol::Event;
use crate::protocol::{AgentEvent, CompactionTrigger, ContextBreakdown, UiCommand};
use crate::protocol::{Live, Reply, View};

mod restore;

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
    if !config.headless {
        super::project::list_files(&config.workspace, events.clone());
    }
    let watcher = super::intake::watch_config(config.reload.as_ref(), work_tx.clone());
    let mut agent = Agent::new(config, events.clone(), control.clone(), shared_log.clone());
    let sampling_config = Arc::new(super::sampling::SamplingConfig::new(cap));
    agent.reloader.sampling_config = Some(sampling_config.clone());
    // The network gate serves every proxied process of the session (bash calls, hooks,
    // servers the hub starts), beside the agent loop.
    agent
        .tools
        .sandbox
        .set_proxy_host(Arc::new(super::network::NetworkHost {
            gate: agent.tools.gate.network(),
            log: shared_log.clone(),
            events: events.downgrade(),
        }));
    let sampling = Arc::new(SamplingHost {
        model: agent.model.clone(),
        config: sampling_config,
        gate: agent.tools.gate.sampling(),
        log: shared_log,
        events: events.clone(),
    });
    tokio::spawn(super::intake::read_commands(
        commands,
        work_tx.clone(),
        control,
        (hub, events.clone()),
        sampling.clone(),
        agent.tools.gate.mode().clone(),
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
    model: Arc<dyn ModelProvider>,
    /// Messages, the session log and its replay.
    conversation: Conversation,
    /// Everything a tool call touches (hub, gate, pool keeper, checkpoints, sandbox).
    tools: ToolHost,
    /// Reloading the configuration while the session runs.
    reloader: Reloader,
    /// How full the model's window is; when to compact.
    context: ContextMeter,
    turn_cap: usize,
    max_tokens: u32,
    control: Arc<Control>,
    sessions_dir: Option<PathBuf>,
    resume: Option<String>,
    replay_history: bool,
    startup_notices: Vec<String>,
    /// The starting mode, in force from the start, announced once the session is open.
    mode_start: super::modes::PendingStart,
    /// Instruction files and command files, read at the start.
    project: crate::project::ProjectContext,
}

impl Agent {
    fn new(
        config: AgentConfig,
        events: mpsc::Sender<AgentEvent>,
        control: Arc<Control>,
        shared_log: SharedLog,
    ) -> Self {
        let session_id = super::conversation::session_id(config.resume.as_deref());
        let window = config
            .context_window
            .unwrap_or_else(|| config.model.context_window());
        let hooks = super::hook_events::hooks(&config);
        let gate = {
            let mut gate = Gate::new(config.policy, config.workspace.clone(), config.headless);
            gate.set_ask_timeout(config.ask_timeout);
            gate.set_flow(config.flow.clone());
            gate.set_sandbox(config.sandbox.clone());
            gate.load_pins(config.pins_dir.as_deref());
            gate
        };
        let mode_start =
            super::modes::apply_start(gate.mode(), config.permission_mode, config.mode_limits);
        Agent {
            model: Arc::from(config.model),
            conversation: Conversation::new(session_id, shared_log, events),
            tools: ToolHost {
                hub: config.hub,
                gate,
                pool: PoolKeeper::new(config.tool_search),
                limits: ToolLimits::new(config.output_budget, config.mcp_output_tokens),
                checkpoints: Checkpoints::new(config.checkpoints_dir, config.workspace.clone()),
                workspace: config.workspace,
                sandbox: config.sandbox,
                switch: ServerSwitch::default(),
                hooks,
            },
            reloader: Reloader::new(config.reload),
            context: ContextMeter::new(window, config.auto_compact_percent),
            turn_cap: config.turn_cap.max(1),
            max_tokens: config.max_tokens,
            control,
            sessions_dir: config.sessions_dir,
            resume: config.resume,
            replay_history: config.replay_history,
            startup_notices: config.startup_notices,
            mode_start,
            project: config.project,
        }
    }

    pub(super) async fn emit(&self, event: AgentEvent) {
        self.conversation.emit(event).await;
    }

    pub(super) async fn record(&mut self, record: impl Into<Record>) {
        self.conversation.record(record).await;
    }

    async fn run(&mut self, mut work: mpsc::UnboundedReceiver<Work>) {
        let (resumed, model) = (self.resume.is_some(), self.model.label());
        self.conversation
            .open(
                self.sessions_dir.as_deref(),
                resumed,
                self.tools.workspace.clone(),
                model,
            )
            .await;
        self.tools.checkpoints.prime();
        let sandbox_problem = self.tools.sandbox.startup_notice(&self.tools.workspace);
        self.record(Journal::Sandbox {
            problem: sandbox_problem.clone(),
            status: self.tools.sandbox.status().describe(),
            bash: self
                .tools
                .sandbox
                .bash_profile(&self.tools.workspace)
                .describe(),
        })
        .await;
        self.emit(AgentEvent::View(View::SessionStarted {
            sandbox_problem,
            session_id: self.conversation.session_id.clone(),
            model_label: self.model.label(),
            workspace: self.tools.workspace.clone(),
            servers: self
                .tools
                .hub
                .configured()
                .iter()
                .filter_map(|name| self.tools.hub.config(name))
                .map(|config| {
                    let profile = self.tools.hub.sandbox_profile(&config.name);
                    crate::views::server_info(&config, profile.as_ref())
                })
                .collect(),
        }))
        .await;
        if let Some(problem) = self.tools.gate.take_pins_problem() {
            self.startup_notices.push(problem);
        }
        super::project::announce(&mut self.conversation, &self.project).await;
        for notice in std::mem::take(&mut self.startup_notices) {
            self.emit(AgentEvent::Fact(Event::Notice { message: notice }))
                .await;
        }
        let resumed_mode = self.restore().await;
        let modes = self.tools.gate.mode();
        self.mode_start
            .announce(modes, &mut self.conversation, resumed_mode)
            .await;
        let resumed = self.resume.is_some();
        let headless = self.tools.gate.is_headless();
        super::hook_events::session_started(
            &mut self.tools.hooks,
            headless,
            &self.conversation,
            resumed,
        )
        .await;
        // The first snapshot: every front end learns the starting pool from it.
        if let Err(e) = self.tools.refresh_pool(&self.conversation).await {
            self.emit(AgentEvent::Fact(Event::Error {
                message: e.to_string(),
            }))
            .await;
        }
        let (_, system, tools) = self.request_parts().await;
        self.send_gauge(context::est(&system) + context::tool_tokens(&tools))
            .await;

        while let Some(item) = work.recv().await {
            if self.control.shutting_down.load(Ordering::SeqCst) && !matches!(item, Work::Shutdown)
            {
                continue;
            }
            match item {
                Work::Submit(text, cancel) => self.run_turn(text, cancel).await,
                Work::Prompt(server, prompt, arguments, cancel) => {
                    let names = (server.as_str(), prompt.as_str());
                    let opening = super::mcp_prompts::opening(
                        &self.tools.hub,
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
                    let result = self
                        .tools
                        .connect_server(&mut self.conversation, &name, true, None)
                        .await;
                    self.report_command(result).await;
                }
                Work::Disconnect(name) => {
                    let result = self
                        .tools
                        .disconnect_server(&mut self.conversation, &name)
                        .await;
                    self.report_command(result).await;
                }
                Work::Revoke(name) => {
                    let text = self.tools.gate.revoke(&name);
                    self.emit(AgentEvent::Fact(Event::Notice { message: text }))
                        .await;
                    if let Some(event) = self.tools.gate.grants_changed() {
                        self.emit(event).await;
                    }
                    let _ = self.tools.refresh_pool_forced(&self.conversation).await;
                }
                Work::Undo(cancel) => {
                    self.tools
                        .checkpoints
                        .undo_last_turn(cancel, &mut self.conversation)
                        .await
                }
                Work::SetEnabled {
                    server,
                    enabled,
                    save,
                } => {
                    let choice = (server.as_str(), enabled, save);
                    if self
                        .tools
                        .switch
                        .set(&self.tools.hub, &self.conversation, choice)
                        .await
                    {
                        if !enabled && self.tools.hub.is_connected(&server) {
                            let result = self
                                .tools
                                .disconnect_server(&mut self.conversation, &server)
                                .await;
                            self.emit(AgentEvent::Fact(Event::Notice {
                                message: result.text,
                            }))
                            .await;
                        } else {
                            // connect_mcp's list of servers changed.
                            let _ = self.tools.refresh_pool(&self.conversation).await;
                        }
                    }
                }
                Work::Clear => {
                    self.conversation.clear().await;
                    let (_, system, tools) = self.request_parts().await;
                    self.send_gauge(context::est(&system) + context::tool_tokens(&tools))
                        .await;
                }
                Work::Compact(focus, cancel) => {
                    let (_, system, tools) = self.request_parts().await;
                    let fixed = context::est(&system) + context::tool_tokens(&tools);
                    self.compact(CompactionTrigger::Manual, focus, fixed, &cancel)
                        .await;
                }
                Work::ShowHooks => {
                    super::hook_events::show(&self.tools.hooks, &self.conversation).await
                }
                Work::ShowContext => {
                    let breakdown = self.breakdown().await;
                    self.emit(AgentEvent::Reply(Reply::ContextBreakdown(breakdown)))
                        .await;
                }
                Work::RootAdded(dir) => self.record(Journal::RootAdded { dir }).await,
                Work::ModeChanged => {
                    let _ = self.tools.refresh_pool_forced(&self.conversation).await;
                }
                Work::RefreshPool => {
                    if let Err(e) = self.tools.refresh_pool(&self.conversation).await {
                        self.emit(AgentEvent::Fact(Event::Notice {
                            message: format!("{e}; the pool keeps its previous tools"),
                        }))
                        .await;
                    }
                }
                Work::Reload(cause) => {
                    self.reloader
                        .reload(cause, &mut self.tools, &mut self.conversation)
                        .await
                }
                Work::SetModel(name) => self.set_model(&name, true).await,
                Work::Shutdown => break,
            }
        }
        super::hook_events::session_end(&mut self.tools.hooks, &self.conversation).await;
        self.tools.hub.shutdown().await;
    }

    /// `/model NAME` (`record`: into the session log; a resume redoes the last one).
    async fn set_model(&mut self, name: &str, record: bool) {
        match super::model_switch::switch(&mut self.model, &mut self.context, name) {
            Ok(label) => {
                if record {
                    let model = name.trim().to_string();
                    self.record(Journal::ModelSwitched { model }).await;
                    let (_, system, tools) = self.request_parts().await;
                    self.send_gauge(context::est(&system) + context::tool_tokens(&tools))
                        .await;
                }
                self.emit(AgentEvent::View(View::ModelChanged { label }))
                    .await;
            }
            Err(e) => {
                self.emit(AgentEvent::Fact(Event::Error { message: e }))
                    .await
            }
        }
    }

    async fn report_command(&self, result: ToolRun) {
        let event = if result.is_error() {
            AgentEvent::Fact(Event::Error {
                message: result.text,
            })
        } else {
            AgentEvent::Fact(Event::Notice {
                message: result.text,
            })
        };
        self.emit(event).await;
    }

    async fn run_turn(&mut self, text: String, cancel: CancellationToken) {
        self.emit(AgentEvent::Fact(Event::User { text: text.clone() }))
            .await;
        let conv = &self.conversation;
        let Some(context) =
            super::hook_events::prompt_submitted(&mut self.tools.hooks, conv, &text).await
        else {
            return;
        };
        let (text, model) =
            super::project::expand_command(&self.conversation, &self.project, text).await;
        // A command file's `model:` holds for its turn only.
        let conv = &self.conversation;
        let before =
            super::model_switch::for_turn(&mut self.model, &mut self.context, conv, model).await;
        // `@server:uri` mentions are read and attached after the text.
        let mut content =
            super::mentions::user_content(&mut self.tools, &mut self.conversation, text, &cancel)
                .await;
        content.extend(context);
        self.run_turn_with(
            vec![Message {
                role: Role::User,
                content,
            }],
            cancel,
        )
        .await;
        super::model_switch::back(&mut self.model, &mut self.context, before);
    }

    /// A turn that starts with these messages (a typed message, or a prompt's messages).
    /// The model is called only when the last of them is the user's.
    async fn run_turn_with(&mut self, opening: Vec<Message>, cancel: CancellationToken) {
        self.tools.checkpoints.begin_turn();
        let ends_with_user = opening.last().is_some_and(|m| m.role == Role::User);
        super::provenance::note_person(&mut self.tools, &opening);
        for message in opening {
            match message.role {
                Role::User => self.conversation.push_user(message.content).await,
                Role::Assistant => self.conversation.push_assistant(message.content).await,
            }
        }
        let mut usage = Usage::default();
        let mut model_calls = 0;
        // The last request was refused as too long (one retry after a compaction).
        let mut overflowed = false;
        let mut stop_blocks = 0;
        let cancelled = loop {
            if !ends_with_user {
                break false;
            }
            if cancel.is_cancelled() {
                break true;
            }
            if model_calls >= self.turn_cap {
                self.emit(AgentEvent::Fact(Event::Notice { message: format!(
                    "Turn cap reached: {} model calls for this message. The turn ends here; send a message to let the agent continue.",
                    self.turn_cap
                ) }))
                .await;
                break false;
            }
            let (pool, system, tools) = self.request_parts().await;
            let fixed = context::est(&system) + context::tool_tokens(&tools);
            if self
                .context
                .over_threshold(fixed + self.conversation.estimate())
            {
                self.compact(CompactionTrigger::Auto, None, fixed, &cancel)
                    .await;
            }
            let estimate = fixed + self.conversation.estimate();
            let request = ModelRequest {
                system,
                messages: self.conversation.messages().to_vec(),
                tools,
                max_tokens: self.max_tokens,
                sampling: Default::default(),
            };
            model_calls += 1;
            let reply = match super::stream::stream_reply(
                &*self.model,
                request,
                &cancel,
                &mut self.conversation,
            )
            .await
            {
                Ok(reply) => {
                    overflowed = false;
                    self.context.calibrate(estimate, &reply.usage);
                    reply
                }
                // Too long after all (the estimate was low, or the window smaller than
                // known): compact and send it once more.
                Err(ModelError::ContextOverflow { limit, .. }) if !overflowed => {
                    overflowed = true;
                    model_calls -= 1;
                    self.context.learn_overflow(limit, estimate);
                    self.compact(CompactionTrigger::Overflow, None, fixed, &cancel)
                        .await;
                    continue;
                }
                Err(e) => {
                    let mut message = e.to_string();
                    if matches!(e, ModelError::ContextOverflow { .. }) {
                        message.push_str(
                            ". Compacting did not bring the request under the model's limit; /compact with a focus, or /clear, lets the session go on.",
                        );
                    }
                    self.conversation.tell(Event::Error { message }).await;
                    break false;
                }
            };
            usage.add(&reply.usage);
            self.send_gauge(fixed).await;
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
                    self.emit(AgentEvent::Fact(Event::Notice {
                        message: "The model stopped at its output token limit.".into(),
                    }))
                    .await;
                }
                let (hooks, conv) = (&mut self.tools.hooks, &mut self.conversation);
                if reply.cancelled
                    || !super::hook_events::stop_blocked(hooks, conv, &mut stop_blocks).await
                {
                    break reply.cancelled;
                }
                continue;
            }
            // Tool calls run even under end_turn; every tool_use gets a result, also when
            // the turn was cancelled while the model was still streaming.
            let mut results = Vec::with_capacity(tool_uses.len());
            for (id, name, input) in tool_uses {
                results.push(
                    self.tools
                        .run_tool_call(&mut self.conversation, &id, &name, input, &pool, &cancel)
                        .await,
                );
            }
            self.conversation.push_user(results).await;
            self.send_gauge(fixed).await;
            if cancel.is_cancelled() {
                break true;
            }
        };
        self.tools.checkpoints.finish(&mut self.conversation).await;
        self.conversation
            .tell(Event::TurnFinished {
                usage,
                cancelled,
                model_calls: Some(model_calls),
                exit_code: None,
            })
            .await;
    }

    /// What the next request carries besides the messages: the pool it is made from, the
    /// system prompt and the tool definitions.
    async fn request_parts(&mut self) -> (Pool, String, Vec<ToolDef>) {
        let pool = self.tools.pool_for_call(&self.conversation).await;
        let system = super::system_prompt::system_prompt(
            &self.tools.workspace,
            &self.tools.connectable(),
            &self.tools.connected_servers(),
            self.tools.pool.search.deferred_count(),
        ) + &self.project.instructions.section
            + &super::system_prompt::server_instructions(&self.tools.hub.instructions());
        let tools = pool.tools.iter().map(|t| ToolDef::from(&**t)).collect();
        (pool, system, tools)
    }

    /// Tells the front ends how full the window is (when that changed); `fixed`: the
    /// estimate of the request beyond its messages.
    async fn send_gauge(&mut self, fixed: u64) {
        let estimate = fixed + self.conversation.estimate();
        if let Some(gauge) = self.context.changed(estimate) {
            self.emit(AgentEvent::Live(Live::Context(gauge))).await;
        }
    }

    /// Compacts the conversation (see `compaction`); a failure is said and the
    /// conversation goes on as it was.
    async fn compact(
        &mut self,
        trigger: CompactionTrigger,
        focus: Option<String>,
        fixed: u64,
        cancel: &CancellationToken,
    ) {
        super::hook_events::pre_compact(&mut self.tools.hooks, &self.conversation, trigger).await;
        let state = compaction::kept_state(
            self.tools.connected_servers(),
            self.tools.pool.search.loaded(),
        );
        let files_dir = self.conversation.log().map(|log| log.files_dir.clone());
        let ask = Ask {
            trigger,
            focus,
            fixed,
            state: &state,
            files_dir: files_dir.as_deref(),
        };
        let planned = compaction::compact(
            &*self.model,
            self.conversation.messages(),
            &self.context,
            ask,
            cancel,
        )
        .await;
        match planned {
            Ok(Some(record)) => self.conversation.apply_compaction(record).await,
            Ok(None) if trigger == CompactionTrigger::Manual => {
                self.emit(AgentEvent::Fact(Event::Notice {
                    message: "Nothing to compact yet: the conversation is all recent.".into(),
                }))
                .await;
            }
            Ok(None) => {}
            Err(e) => {
                self.emit(AgentEvent::Fact(Event::Error { message: format!(
                    "Could not compact the conversation ({e}); it goes on as it was. /clear starts afresh."
                ) }))
                .await;
            }
        }
        self.send_gauge(fixed).await;
    }

    /// `/context`: what fills the window.
    async fn breakdown(&mut self) -> ContextBreakdown {
        let (_, system, tools) = self.request_parts().await;
        let deferred = self.tools.pool.search.deferred().iter();
        let deferred: Vec<ToolDef> = deferred.map(|t| ToolDef::from(&**t)).collect();
        let conv = &self.conversation;
        let estimate = conv.estimate();
        (self.context).breakdown(&system, &tools, &deferred, conv.messages(), estimate)
    }
}
