//! The agent's tool side ([`ToolHost`]): running one tool call (argument check, permission
//! gate, execution of connectors, built-ins and MCP tools, output budget, events and
//! session records), connecting and disconnecting servers, and keeping the pool.

use crate::beneath::FileTarget;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::checkpoints::{CallWatch, Checkpoints};
use super::conversation::Conversation;
use super::host_files::HostFiles;
use super::pool_keeper::PoolKeeper;
use super::pool_keeper::assemble_for;
use super::server_switch::ServerSwitch;
use super::tool_limits::ToolLimits;
use super::tool_run::ToolRun;
use crate::builtin::{AgentJob, Judgement, LocalCall, RunsIn};
use crate::gate::{Decided, Gate, GateCall, GateOutcome, Gated, Judged};
use crate::journal::Journal;
use crate::mcp::{McpError, McpHub};
use crate::model::ContentBlock;
use crate::pool::{Pool, PoolError, PoolTool, ServerTools, ToolOrigin};
use crate::protocol::Event;
use crate::protocol::View;
use crate::protocol::{
    AgentEvent, CallId, ImageSummary, PermissionLine, PermissionMode, ServerName, ToolCallStart,
    ToolOutcome,
};
use crate::sandbox::Sandbox;
use crate::sandbox::WriteLog;

/// After a cancel, how long a tool may take to wind down before the agent stops waiting.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Everything one tool call touches, owned in one place: the hub, the gate, the pool keeper,
/// argument checks and output budgets, checkpoints, the sandbox and `/mcp enable|disable`.
/// The conversation stays with the turn loop and is lent to each call: a call is recorded
/// in its log and reported on its channel, in the order the calls run.
pub(super) struct ToolHost {
    pub(super) hub: McpHub,
    pub(super) gate: Gate,
    pub(super) workspace: PathBuf,
    /// The pool last sent, deferred tools and `search_tools`.
    pub(super) pool: PoolKeeper,
    /// Argument checks and output budgets of tool calls.
    pub(super) limits: ToolLimits,
    pub(super) checkpoints: Checkpoints,
    pub(super) sandbox: Sandbox,
    /// `/mcp enable|disable` for this session.
    pub(super) switch: ServerSwitch,
    /// The hooks in force (decision 0086); those of a tool call run in the gate's pipeline.
    pub(super) hooks: crate::hooks::Hooks,
}

impl ToolHost {
    /// Configured servers that may be connected now (what the model is offered).
    pub(super) fn connectable(&self) -> Vec<String> {
        self.switch.connectable(&self.hub)
    }

    /// The servers connected now, in the hub's order.
    pub(super) fn connected_servers(&self) -> Vec<String> {
        self.hub
            .server_tools()
            .into_iter()
            .map(|s| s.server().to_string())
            .collect()
    }

    /// Assembles the pool from the built-ins and the servers connected now; sends it (one
    /// `PoolChanged`) when a part of it differs from what was last sent.
    pub(super) async fn refresh_pool(&mut self, conv: &Conversation) -> Result<Pool, PoolError> {
        self.update_pool(conv, false).await
    }

    /// Like refresh_pool but always sends (a grant changed the verdicts, not the tools).
    pub(super) async fn refresh_pool_forced(
        &mut self,
        conv: &Conversation,
    ) -> Result<Pool, PoolError> {
        self.update_pool(conv, true).await
    }

    async fn update_pool(&mut self, conv: &Conversation, force: bool) -> Result<Pool, PoolError> {
        let connectable = self.connectable();
        let plan = self.gate.mode().current() == crate::protocol::PermissionMode::Plan;
        let pool = self.pool.assemble_visible(&self.hub, &connectable, plan)?;
        if let Some(update) = self.pool.update(&pool, force, &mut self.gate, &self.hub) {
            conv.emit(AgentEvent::View(View::PoolChanged(update))).await;
        }
        Ok(pool)
    }

    /// The pool for the next model call: freshly assembled, or — when a server's changed
    /// tool list no longer fits — the previous one.
    pub(super) async fn pool_for_call(&mut self, conv: &Conversation) -> Pool {
        match self.refresh_pool(conv).await {
            Ok(pool) => pool,
            Err(e) => {
                conv.emit(AgentEvent::Fact(Event::Notice {
                    message: format!("{e}; the pool keeps its previous tools"),
                }))
                .await;
                self.pool.last().cloned().unwrap_or_default()
            }
        }
    }

    /// Runs one tool_use and returns its tool_result block. Never fails: every problem
    /// becomes an error result the model can read.
    pub(super) async fn run_tool_call(
        &mut self,
        conv: &mut Conversation,
        call_id: &str,
        name: &str,
        input: Value,
        pool: &Pool,
        cancel: &CancellationToken,
    ) -> ContentBlock {
        let tool = pool.get(name).cloned();
        let call_number = self.gate.flow_labels().next_call();
        let flow_input = input.clone();
        let start = ToolCallStart {
            call_id: CallId::from(call_id),
            name: name.to_string().into(),
            server: tool.as_ref().and_then(|t| t.server().map(ServerName::from)),
            input: input.clone(),
        };
        let start = Event::ToolStarted(start);
        conv.record(start.clone()).await;
        let run = if cancel.is_cancelled() {
            // Not started: the turn was cancelled before this call's turn came.
            ToolRun::cancelled()
        } else {
            conv.emit(AgentEvent::Fact(start)).await;
            match tool {
                None => self.pool.search.unknown_tool(name),
                Some(tool) => self.gated_run(conv, call_id, &tool, input, cancel).await,
            }
        };
        // Server content (tool results, resources read) counts against the token budget.
        let is_mcp = match pool.get(name).map(|t| &t.origin) {
            Some(ToolOrigin::Mcp { .. }) => true,
            Some(ToolOrigin::Builtin(kind)) => {
                kind.judgement() == Judgement::Resource { reads: true }
            }
            None => false,
        };
        let (output, full_output_path) = self.fit_budget(conv, call_id, run.text.clone(), is_mcp);
        let finished = super::tool_run::Finished {
            call_id,
            call: call_number,
            tool: pool.get(name),
            name,
            input: &flow_input,
            outcome: run.outcome,
            // The whole result, not only what fitted: the rest is kept in a file the model
            // can read with a built-in (whose results are trusted).
            output: &run.text,
        };
        self.label_result(conv, finished).await;
        if !run.images.is_empty() {
            conv.emit(AgentEvent::Fact(Event::ToolImages {
                call_id: call_id.into(),
                images: run.images.iter().map(ImageSummary::of).collect(),
            }))
            .await;
        }
        conv.tell(Event::ToolFinished {
            call_id: call_id.into(),
            name: name.to_string(),
            outcome: run.outcome,
            output: output.clone(),
            full_output_path,
        })
        .await;
        ContentBlock::ToolResult {
            tool_use_id: call_id.to_string(),
            content: output,
            is_error: run.outcome != ToolOutcome::Ok,
            images: run.images,
        }
    }

    async fn gated_run(
        &mut self,
        conv: &mut Conversation,
        call_id: &str,
        tool: &PoolTool,
        input: Value,
        cancel: &CancellationToken,
    ) -> ToolRun {
        if let Err(problem) = self.limits.check(tool, &input) {
            return ToolRun::error(format!("Invalid arguments for {}: {problem}", tool.name));
        }
        let limits = &mut self.limits;
        let mut check_arguments = |input: &Value| {
            limits
                .check(tool, input)
                .map_err(|problem| problem.to_string())
        };
        let call = GateCall {
            call_id,
            tool,
            input,
            events: conv.events(),
            cancel,
            hooks: &mut self.hooks,
            check_arguments: &mut check_arguments,
        };
        let Decided {
            outcome,
            input,
            after_run,
        } = match self.gate.judge(call).await {
            Judged::Invalid(problem) => return ToolRun::error(problem),
            Judged::Decided(decided) => *decided,
        };
        let GateOutcome {
            decision: gated,
            audit: decided,
            notices,
            decided_in,
            target,
        } = outcome;
        if let Some(record) = decided {
            conv.tell(Event::PermissionDecided(PermissionLine {
                call_id: call_id.into(),
                record,
            }))
            .await;
        }
        for notice in notices {
            conv.emit(AgentEvent::Fact(Event::Notice { message: notice }))
                .await;
        }
        // The workspace as the call starts and ends: only what changed in between is the
        // turn's (the person's edits between calls are not).
        let watch = if matches!(gated, Gated::Run | Gated::RunUnconfined)
            && super::checkpoints::may_change_workspace(&tool.origin)
        {
            self.checkpoints
                .before_call(&tool.origin, &input, conv)
                .await
        } else {
            None
        };
        let mut run = match gated {
            Gated::Cancelled => ToolRun::cancelled(),
            Gated::Refused(text) => ToolRun {
                outcome: ToolOutcome::Denied,
                text,
                images: Vec::new(),
            },
            Gated::Run => {
                let run = Execution {
                    call_id,
                    tool,
                    input,
                    cancel,
                    confined: Confined::In(decided_in),
                    trace: watch.as_ref().map(CallWatch::trace),
                    target: target.as_ref(),
                };
                self.guarded_execute(conv, run).await
            }
            // The person saw the command and let it run as it is (unconfined: not traced).
            Gated::RunUnconfined => {
                let run = Execution {
                    call_id,
                    tool,
                    input,
                    cancel,
                    confined: Confined::Not(decided_in),
                    trace: None,
                    target: None,
                };
                self.execute(conv, run).await
            }
        };
        self.checkpoints.after_call(watch, conv).await;
        // The pipeline's last stage: PostToolUse hooks see what ran.
        if matches!(run.outcome, ToolOutcome::Ok | ToolOutcome::Error) {
            run.text = after_run
                .run(&mut self.hooks, conv.events(), run.text)
                .await;
        }
        run
    }

    /// Runs a call that nobody was asked about file by file (a bash command, an MCP tool)
    /// and puts toolgate's own configuration back if the call changed it.
    async fn guarded_execute(&mut self, conv: &mut Conversation, run: Execution<'_>) -> ToolRun {
        let tool = run.tool;
        let may_change_files = match tool.origin {
            ToolOrigin::Builtin(kind) => kind.is_shell(),
            ToolOrigin::Mcp { .. } => true,
        };
        if !may_change_files {
            return self.execute(conv, run).await;
        }
        let workspace = self.workspace.clone();
        let before = tokio::task::spawn_blocking(move || HostFiles::snapshot(&workspace))
            .await
            .ok();
        let mut run = self.execute(conv, run).await;
        let restored = match before {
            Some(before) => tokio::task::spawn_blocking(move || before.restore_changes())
                .await
                .unwrap_or_default(),
            None => Default::default(),
        };
        if let Some(report) = restored.report(&tool.name) {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: report.clone(),
            }))
            .await;
            run.text = format!("{}\n{report}", run.text.trim_end());
            if run.outcome == ToolOutcome::Ok {
                run.outcome = ToolOutcome::Error;
            }
        }
        run
    }

    /// Runs a call the gate let run, as `run` says.
    async fn execute(&mut self, conv: &mut Conversation, run: Execution<'_>) -> ToolRun {
        let Execution {
            call_id,
            tool,
            input,
            cancel,
            confined,
            trace,
            target,
        } = run;
        let kind = match &tool.origin {
            ToolOrigin::Mcp { server, tool: raw } => {
                return self
                    .call_mcp(conv, call_id, server, raw, input, cancel)
                    .await;
            }
            ToolOrigin::Builtin(kind) => *kind,
        };
        match kind.runs_in() {
            RunsIn::Agent(AgentJob::ConnectServer) => match self.connector_server(tool, &input) {
                Ok(server) => self.connect_server(conv, &server, true, Some(cancel)).await,
                Err(invalid) => invalid,
            },
            RunsIn::Agent(AgentJob::DisconnectServer) => {
                match self.connector_server(tool, &input) {
                    Ok(server) => self.disconnect_server(conv, &server).await,
                    Err(invalid) => invalid,
                }
            }
            RunsIn::Agent(AgentJob::SearchTools) => self.search_tools(conv, &input).await,
            RunsIn::Agent(AgentJob::ReviewPlan) => {
                let modes = self.gate.mode().clone();
                super::plan_exit::run(&modes, conv, &input, cancel).await
            }
            RunsIn::Agent(job @ (AgentJob::ListResources | AgentJob::ReadResource)) => {
                let reads = job == AgentJob::ReadResource;
                super::resources::run_resource_tool(&self.hub, reads, &input, cancel).await
            }
            RunsIn::Here => {
                // The call's connections through the network gate are this call's.
                let sandbox = confined.sandbox(&self.sandbox).for_call(call_id);
                let call = kind.handler().run(LocalCall {
                    input: &input,
                    workspace: &self.workspace,
                    sandbox: &sandbox,
                    cancel: cancel.child_token(),
                    trace,
                    target,
                });
                let output = tokio::select! {
                    output = call => Some(output),
                    () = grace_after(cancel) => None,
                };
                match output {
                    _ if cancel.is_cancelled() => ToolRun::cancelled(),
                    Some(output) if output.is_error => ToolRun::error(output.text),
                    Some(output) => ToolRun::ok(output.text),
                    None => ToolRun::cancelled(),
                }
            }
        }
    }

    async fn call_mcp(
        &self,
        conv: &Conversation,
        call_id: &str,
        server: &str,
        raw_tool: &str,
        input: Value,
        cancel: &CancellationToken,
    ) -> ToolRun {
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
        let call = self.hub.call(
            server,
            raw_tool,
            input,
            Some(progress_tx),
            cancel.child_token(),
        );
        tokio::pin!(call);
        let grace = grace_after(cancel);
        tokio::pin!(grace);
        let result = loop {
            tokio::select! {
                result = &mut call => break Some(result),
                Some(update) = progress_rx.recv() => {
                    conv.emit(AgentEvent::Fact(Event::ToolProgress {
                        call_id: call_id.into(),
                        progress: update.progress,
                        total: update.total,
                        message: update.message,
                    }))
                    .await;
                }
                () = &mut grace => break None,
            }
        };
        match result {
            _ if cancel.is_cancelled() => ToolRun::cancelled(),
            None | Some(Err(McpError::Cancelled)) => ToolRun::cancelled(),
            Some(Err(e)) => ToolRun::error(e.to_string()),
            Some(Ok(output)) => ToolRun {
                outcome: if output.is_error {
                    ToolOutcome::Error
                } else {
                    ToolOutcome::Ok
                },
                text: output.text,
                images: output.images,
            },
        }
    }

    /// connect_mcp (and the front end's Connect). A connection whose tools would not fit
    /// the pool is closed again and the pool stays as it was. `announce` sends the new
    /// pool right away (a resume sends one pool after all reconnects instead).
    /// `cancel` is the turn's token when the agent connects (a cancelled turn withdraws
    /// the project-server question); None for the person's own /connect.
    pub(super) async fn connect_server(
        &mut self,
        conv: &mut Conversation,
        name: &str,
        announce: bool,
        cancel: Option<&CancellationToken>,
    ) -> ToolRun {
        let configured = self.hub.configured();
        if !configured.iter().any(|c| c == name) {
            return ToolRun::error(unknown_server(name, &configured));
        }
        if let Some(refusal) = self.switch.disabled_refusal(&self.hub, name) {
            return ToolRun::error(refusal);
        }
        // Before the project-server question: nobody is asked about a server that the
        // managed policy never lets start (decision 0082).
        if let Some(reason) = self.hub.blocked_reason(name) {
            return ToolRun::error(reason);
        }
        if self.hub.is_connected(name) {
            let tools = self.raw_tools_of(name);
            return ToolRun::ok(format!(
                "MCP server '{name}' is already connected ({} tools: {}).",
                tools.len(),
                tools.join(", ")
            ));
        }
        if let Some(config) = self.hub.config(name)
            && let Err(why) = self
                .gate
                .approve_project_server(&config, conv.events(), cancel)
                .await
        {
            return ToolRun::error(why.to_string());
        }
        // The hub keeps the new connection only if the pool still assembles with it, so a
        // colliding server never becomes visible, not even for a moment.
        let connectable = self.connectable();
        let accept = |servers: &[Arc<ServerTools>]| {
            assemble_for(&connectable, servers, &[], false)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let tools = match self.hub.connect_checked(name, accept).await {
            Ok(tools) => tools,
            Err(McpError::Refused { reason, .. }) => {
                return ToolRun::error(format!(
                    "{reason}. The connection to MCP server '{name}' was refused; the tool pool is unchanged."
                ));
            }
            Err(e) => return ToolRun::error(e.to_string()),
        };
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        conv.record(Journal::Connect {
            server: name.to_string().into(),
            tools: names.clone(),
        })
        .await;
        if announce {
            // The hub checked this same pool, so it cannot fail here unless the server's
            // list changed in between; then the next refresh reports it.
            let _ = self.refresh_pool(conv).await;
        }
        ToolRun::ok(format!(
            "Connected to MCP server '{name}'. Discovered {} tool{}: {}",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ))
    }

    pub(super) async fn disconnect_server(
        &mut self,
        conv: &mut Conversation,
        name: &str,
    ) -> ToolRun {
        let configured = self.hub.configured();
        if !configured.iter().any(|c| c == name) {
            return ToolRun::error(unknown_server(name, &configured));
        }
        if !self.hub.is_connected(name) {
            return ToolRun::error(format!("MCP server '{name}' is not connected."));
        }
        let before: Vec<String> = self
            .pool
            .last()
            .map(|p| {
                p.tools
                    .iter()
                    .filter(|t| t.server() == Some(name))
                    .map(|t| t.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        if let Err(e) = self.hub.disconnect(name).await {
            return ToolRun::error(e.to_string());
        }
        conv.record(Journal::Disconnect {
            server: name.to_string().into(),
        })
        .await;
        let _ = self.refresh_pool(conv).await;
        if before.is_empty() {
            ToolRun::ok(format!("Disconnected from MCP server '{name}'."))
        } else {
            ToolRun::ok(format!(
                "Disconnected from MCP server '{name}'. Removed from the pool: {}",
                before.join(", ")
            ))
        }
    }

    fn raw_tools_of(&self, server: &str) -> Vec<String> {
        self.hub
            .server_tools()
            .into_iter()
            .find(|s| s.server() == server)
            .map(|s| s.tools().iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default()
    }

    /// `search_tools` (the pool keeper's search): what it loaded is recorded (a resumed
    /// session has it again), and the panel shows the pool with it now, not only at the
    /// next model call.
    async fn search_tools(&mut self, conv: &mut Conversation, input: &Value) -> ToolRun {
        let (run, found) = self.pool.search.search_tools(input);
        let Some(loaded) = found else {
            return run;
        };
        if !loaded.is_empty() {
            conv.record(Journal::ToolsLoaded { tools: loaded }).await;
        }
        if let Err(e) = self.refresh_pool(conv).await {
            tracing::warn!("pool after search_tools: {e}");
        }
        run
    }

    /// Cuts an output to the budget (see [`ToolLimits::fit`]), keeping the whole text beside
    /// the session log.
    pub(super) fn fit_budget(
        &mut self,
        conv: &Conversation,
        call_id: &str,
        text: String,
        is_mcp: bool,
    ) -> (String, Option<PathBuf>) {
        let files_dir = conv.log().map(|log| log.files_dir.as_path());
        self.limits.fit(call_id, text, is_mcp, files_dir)
    }

    /// The server a connector call names, or the error result listing the configured ones.
    fn connector_server(&self, tool: &PoolTool, input: &Value) -> Result<String, ToolRun> {
        server_argument(input).ok_or_else(|| {
            ToolRun::error(format!(
                "Invalid arguments for {}: expected {{\"name\": \"<server>\"}}; available servers: {}",
                tool.name,
                self.hub.configured().join(", ")
            ))
        })
    }
}

/// Resolves after `cancel` fires plus a grace period; never before the cancel.
async fn grace_after(cancel: &CancellationToken) {
    cancel.cancelled().await;
    tokio::time::sleep(CANCEL_GRACE).await;
}

fn unknown_server(name: &str, configured: &[String]) -> String {
    if configured.is_empty() {
        format!("Unknown MCP server '{name}'. No MCP servers are configured.")
    } else {
        format!(
            "Unknown MCP server '{name}'. Available servers: {}",
            configured.join(", ")
        )
    }
}

fn server_argument(input: &Value) -> Option<String> {
    ["name", "server"]
        .iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A call the gate let run, as it is executed.
struct Execution<'a> {
    call_id: &'a str,
    tool: &'a PoolTool,
    /// The input the gate decided on.
    input: Value,
    cancel: &'a CancellationToken,
    /// The sandbox a bash command runs in.
    confined: Confined,
    /// Where a confined bash records the paths it asks to change.
    trace: Option<&'a WriteLog>,
    /// The location the gate decided a file tool's call on, which the tool opens.
    target: Option<&'a FileTarget>,
}

/// The sandbox a call the gate let run goes into: the one of the mode it was decided in
/// (plan: bash read-only), confined or, when the person allowed it, not.
#[derive(Debug, Clone, Copy)]
enum Confined {
    In(PermissionMode),
    Not(PermissionMode),
}

impl Confined {
    /// The session's sandbox narrowed to this call. Leaving the sandbox keeps a mode's
    /// read-only rule (the gate never lets a plan-mode call leave; this holds if it did).
    fn sandbox(self, session: &Sandbox) -> Sandbox {
        match self {
            Confined::In(mode) => session.with_bash_writes(crate::gate::bash_writes(mode)),
            Confined::Not(mode) => session
                .with_bash_writes(crate::gate::bash_writes(mode))
                .without_confinement(),
        }
    }
}
