//! Running one tool call: argument check, permission gate, execution (connectors through
//! the hub, built-ins, MCP tools), output budget, events and session records.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, ImageSummary, ToolOutcome};
use super::host_files::HostFiles;
use super::runner::{Agent, assemble_for};
use super::session::Record;
use crate::builtin::BuiltinTool;
use crate::gate::{GateOutcome, Gated};
use crate::mcp::McpError;
use crate::model::{ContentBlock, ImageData};
use crate::pool::{Pool, PoolTool, ServerTools, ToolOrigin};

/// After a cancel, how long a tool may take to wind down before the agent stops waiting.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

pub(super) const CANCELLED_TEXT: &str = "Cancelled by the user";

/// A finished call as the model will see it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolRun {
    pub outcome: ToolOutcome,
    pub text: String,
    /// Images for the model besides the text (an MCP tool's image content,
    /// read_mcp_resource of an image).
    pub images: Vec<ImageData>,
}

impl ToolRun {
    pub(super) fn ok(text: impl Into<String>) -> Self {
        ToolRun {
            outcome: ToolOutcome::Ok,
            text: text.into(),
            images: Vec::new(),
        }
    }
    pub(super) fn error(text: impl Into<String>) -> Self {
        ToolRun {
            outcome: ToolOutcome::Error,
            text: text.into(),
            images: Vec::new(),
        }
    }
    pub(super) fn cancelled() -> Self {
        ToolRun {
            outcome: ToolOutcome::Cancelled,
            text: CANCELLED_TEXT.into(),
            images: Vec::new(),
        }
    }
    pub fn is_error(&self) -> bool {
        self.outcome != ToolOutcome::Ok
    }
}

impl Agent {
    /// Runs one tool_use and returns its tool_result block. Never fails: every problem
    /// becomes an error result the model can read.
    pub(super) async fn run_tool_call(
        &mut self,
        call_id: &str,
        name: &str,
        input: Value,
        pool: &Pool,
        cancel: &CancellationToken,
    ) -> ContentBlock {
        let tool = pool.get(name).cloned();
        let server = tool.as_ref().and_then(|t| t.server().map(str::to_string));
        self.record(Record::ToolCall {
            call_id: call_id.to_string(),
            name: name.to_string(),
            server: server.clone(),
            input: input.clone(),
        })
        .await;
        let run = if cancel.is_cancelled() {
            // Not started: the turn was cancelled before this call's turn came.
            ToolRun::cancelled()
        } else {
            self.emit(AgentEvent::ToolCallStarted {
                call_id: call_id.to_string(),
                name: name.to_string(),
                server,
                input: input.clone(),
            })
            .await;
            match tool {
                None => self.unknown_tool(name),
                Some(tool) => self.gated_run(call_id, &tool, input, cancel).await,
            }
        };
        // Server content (tool results, resources read) counts against the token budget.
        let is_mcp = matches!(
            pool.get(name).map(|t| &t.origin),
            Some(ToolOrigin::Mcp { .. } | ToolOrigin::Builtin(BuiltinTool::ReadMcpResource))
        );
        let (output, full_output_path) = self.fit_budget(call_id, run.text.clone(), is_mcp).await;
        if !run.images.is_empty() {
            self.emit(AgentEvent::ToolImages {
                call_id: call_id.to_string(),
                images: run.images.iter().map(ImageSummary::of).collect(),
            })
            .await;
        }
        self.record(Record::ToolResult {
            call_id: call_id.to_string(),
            outcome: run.outcome,
            output: output.clone(),
            full_output_path,
        })
        .await;
        self.emit(AgentEvent::ToolCallFinished {
            call_id: call_id.to_string(),
            outcome: run.outcome,
            output: output.clone(),
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
        call_id: &str,
        tool: &PoolTool,
        input: Value,
        cancel: &CancellationToken,
    ) -> ToolRun {
        // A malformed call is refused before anyone is asked about it. Connector
        // arguments are checked by the connector itself, whose answer to an unknown
        // server lists the available ones (the schema's enum would only say "not one of").
        let checked = match tool.origin {
            ToolOrigin::Builtin(kind) if kind.is_connector() => require_object(&input),
            ToolOrigin::Builtin(_) | ToolOrigin::Mcp { .. } => self
                .validator(tool)
                .map_or_else(|| require_object(&input), |v| check_arguments(&v, &input)),
        };
        if let Err(problem) = checked {
            return ToolRun::error(format!("Invalid arguments for {}: {problem}", tool.name));
        }
        let GateOutcome {
            decision: gated,
            audit: decided,
            notices,
        } = self
            .gate
            .check(tool, &input, call_id, &self.events, cancel)
            .await;
        if let Some(record) = decided {
            self.record(Record::Permission {
                call_id: call_id.to_string(),
                record: record.clone(),
            })
            .await;
            self.emit(AgentEvent::PermissionDecided {
                call_id: call_id.to_string(),
                record,
            })
            .await;
        }
        for notice in notices {
            self.emit(AgentEvent::Notice(notice)).await;
        }
        if matches!(gated, Gated::Run | Gated::RunUnconfined)
            && super::checkpoints::may_change_workspace(&tool.origin)
        {
            self.checkpoint_before_change().await;
        }
        match gated {
            Gated::Cancelled => ToolRun::cancelled(),
            Gated::Refused(text) => ToolRun {
                outcome: ToolOutcome::Denied,
                text,
                images: Vec::new(),
            },
            Gated::Run => self.guarded_execute(call_id, tool, input, cancel).await,
            // The person saw the command and let it run as it is.
            Gated::RunUnconfined => self.execute(call_id, tool, input, cancel, true).await,
        }
    }

    /// Runs a call that nobody was asked about file by file (a bash command, an MCP tool)
    /// and puts toolgate's own configuration back if the call changed it.
    async fn guarded_execute(
        &mut self,
        call_id: &str,
        tool: &PoolTool,
        input: Value,
        cancel: &CancellationToken,
    ) -> ToolRun {
        let may_change_files = matches!(
            tool.origin,
            ToolOrigin::Builtin(BuiltinTool::Bash) | ToolOrigin::Mcp { .. }
        );
        if !may_change_files {
            return self.execute(call_id, tool, input, cancel, false).await;
        }
        let workspace = self.workspace.clone();
        let before = tokio::task::spawn_blocking(move || HostFiles::snapshot(&workspace))
            .await
            .ok();
        let mut run = self.execute(call_id, tool, input, cancel, false).await;
        let restored = match before {
            Some(before) => tokio::task::spawn_blocking(move || before.restore_changes())
                .await
                .unwrap_or_default(),
            None => Default::default(),
        };
        if let Some(report) = restored.report(&tool.name) {
            self.emit(AgentEvent::Notice(report.clone())).await;
            run.text = format!("{}\n{report}", run.text.trim_end());
            if run.outcome == ToolOutcome::Ok {
                run.outcome = ToolOutcome::Error;
            }
        }
        run
    }

    /// `unconfined`: the person approved running this bash command outside the sandbox.
    async fn execute(
        &mut self,
        call_id: &str,
        tool: &PoolTool,
        input: Value,
        cancel: &CancellationToken,
        unconfined: bool,
    ) -> ToolRun {
        match &tool.origin {
            ToolOrigin::Builtin(BuiltinTool::ConnectMcp) => {
                match self.connector_server(tool, &input) {
                    Ok(server) => self.connect_server(&server, true, Some(cancel)).await,
                    Err(invalid) => invalid,
                }
            }
            ToolOrigin::Builtin(BuiltinTool::DisconnectMcp) => {
                match self.connector_server(tool, &input) {
                    Ok(server) => self.disconnect_server(&server).await,
                    Err(invalid) => invalid,
                }
            }
            ToolOrigin::Builtin(BuiltinTool::SearchTools) => self.search_tools(&input).await,
            ToolOrigin::Builtin(
                kind @ (BuiltinTool::ListMcpResources | BuiltinTool::ReadMcpResource),
            ) => self.run_resource_tool(*kind, &input, cancel).await,
            ToolOrigin::Builtin(
                kind @ (BuiltinTool::Bash
                | BuiltinTool::ReadFile
                | BuiltinTool::WriteFile
                | BuiltinTool::EditFile
                | BuiltinTool::Glob),
            ) => {
                let sandbox = if unconfined {
                    self.sandbox.without_confinement()
                } else {
                    self.sandbox.clone()
                };
                let call = crate::builtin::run_with(
                    *kind,
                    &input,
                    &self.workspace,
                    &sandbox,
                    cancel.child_token(),
                );
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
            ToolOrigin::Mcp { server, tool: raw } => {
                self.call_mcp(call_id, server, raw, input, cancel).await
            }
        }
    }

    async fn call_mcp(
        &self,
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
                    self.emit(AgentEvent::ToolProgress {
                        call_id: call_id.to_string(),
                        progress: update.progress,
                        total: update.total,
                        message: update.message,
                    })
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
        name: &str,
        announce: bool,
        cancel: Option<&CancellationToken>,
    ) -> ToolRun {
        let configured = self.hub.configured();
        if !configured.iter().any(|c| c == name) {
            return ToolRun::error(unknown_server(name, &configured));
        }
        if let Some(refusal) = self.disabled_refusal(name) {
            return ToolRun::error(refusal);
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
                .approve_project_server(&config, &self.events, cancel)
                .await
        {
            return ToolRun::error(why);
        }
        // The hub keeps the new connection only if the pool still assembles with it, so a
        // colliding server never becomes visible, not even for a moment.
        let connectable = self.connectable();
        let accept = |servers: &[Arc<ServerTools>]| {
            assemble_for(&connectable, servers, &[])
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
        self.record(Record::Connect {
            server: name.to_string(),
            tools: names.clone(),
        })
        .await;
        if announce {
            // The hub checked this same pool, so it cannot fail here unless the server's
            // list changed in between; then the next refresh reports it.
            let _ = self.refresh_pool().await;
        }
        ToolRun::ok(format!(
            "Connected to MCP server '{name}'. Discovered {} tool{}: {}",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ))
    }

    pub(super) async fn disconnect_server(&mut self, name: &str) -> ToolRun {
        let configured = self.hub.configured();
        if !configured.iter().any(|c| c == name) {
            return ToolRun::error(unknown_server(name, &configured));
        }
        if !self.hub.is_connected(name) {
            return ToolRun::error(format!("MCP server '{name}' is not connected."));
        }
        let before: Vec<String> = self
            .last_pool
            .as_ref()
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
        self.record(Record::Disconnect {
            server: name.to_string(),
        })
        .await;
        let _ = self.refresh_pool().await;
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

    /// Cuts an output to the budget, keeping the whole text in a file of the session: every
    /// output to `output_budget` characters, an MCP tool's also to `mcp_output_tokens`
    /// estimated tokens (whichever cuts first; the marker says which).
    pub(super) async fn fit_budget(
        &mut self,
        call_id: &str,
        text: String,
        is_mcp: bool,
    ) -> (String, Option<PathBuf>) {
        let char_cut = text
            .char_indices()
            .nth(self.output_budget)
            .map(|(at, _)| at);
        let token_cut = if is_mcp {
            Some(crate::tokens::prefix_within(&text, self.mcp_output_tokens))
                .filter(|&at| at < text.len())
        } else {
            None
        };
        let (cut, by_tokens) = match (char_cut, token_cut) {
            (None, None) => return (text, None),
            (Some(chars), Some(tokens)) if tokens < chars => (tokens, true),
            (Some(chars), _) => (chars, false),
            (None, Some(tokens)) => (tokens, true),
        };
        let saved = match &self.log {
            Some(log) => {
                let dir = log.files_dir.join("tool-outputs");
                let path = dir.join(format!("{}.txt", crate::pool::normalize(call_id)));
                match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &text)) {
                    Ok(()) => Some(path),
                    Err(e) => {
                        tracing::warn!("saving full tool output: {e}");
                        None
                    }
                }
            }
            None => None,
        };
        let whereabouts = match &saved {
            Some(path) => format!("the full output is saved in {}", path.display()),
            None => "the full output was not saved".to_string(),
        };
        let mut shown = text[..cut].to_string();
        let marker = if by_tokens {
            format!(
                "\n\n[output truncated: showing about the first {} of about {} tokens (MAX_MCP_OUTPUT_TOKENS); {whereabouts}]",
                self.mcp_output_tokens,
                crate::tokens::estimate(&text)
            )
        } else {
            format!(
                "\n\n[output truncated: showing the first {} of {} characters; {whereabouts}]",
                self.output_budget,
                text.chars().count()
            )
        };
        shown.push_str(&marker);
        (shown, saved)
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

impl Agent {
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

    /// The compiled input schema of a tool; None when the schema does not compile (that
    /// is the server's problem: the call goes through unchecked).
    fn validator(&mut self, tool: &PoolTool) -> Option<Arc<jsonschema::Validator>> {
        if let Some((schema, validator)) = self.validators.get(&tool.name)
            // Same Arc when the pool was re-assembled from the same listing.
            && (Arc::ptr_eq(schema, &tool.input_schema) || **schema == *tool.input_schema)
        {
            return Some(validator.clone());
        }
        let validator = Arc::new(jsonschema::validator_for(&tool.input_schema).ok()?);
        self.validators.insert(
            tool.name.clone(),
            (tool.input_schema.clone(), validator.clone()),
        );
        Some(validator)
    }
}

/// Checks the model's arguments against the tool's input schema, so a malformed call gets
/// a precise message instead of whatever the tool would make of it.
fn check_arguments(validator: &jsonschema::Validator, input: &Value) -> Result<(), String> {
    require_object(input)?;
    let problems: Vec<String> = validator
        .iter_errors(input)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn require_object(input: &Value) -> Result<(), String> {
    if input.is_object() {
        Ok(())
    } else {
        Err(format!("expected a JSON object, got {input}"))
    }
}
