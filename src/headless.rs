//! The non-interactive front end (`toolgate -p PROMPT`): the same agent runtime as the
//! console, one user message, output on stdout, never waiting for input. A call the policy
//! would ask about is denied with a message that names the `--allow` rule to pass.
//!
//! Exit codes: 0 the turn finished, 1 an error (model error, failed resume, …),
//! 2 a usage error (empty prompt, unreadable stdin, unknown session id).
//!
//! # `--output-format jsonl`
//!
//! One JSON object per line on stdout, flushed per line, each with a `type`:
//!
//! | `type`               | fields |
//! |----------------------|--------|
//! | `session_start`      | `session_id`, `model` (label, e.g. `scripted demo`), `workspace`, `servers` `[{name, status}]` (status as in `server_status`), `pool` `[{name, origin: "builtin"\|"connector"\|"mcp", server, tool (raw MCP name), decision: "allow"\|"ask"\|"deny", rule}]` |
//! | `user`               | `text` — the prompt as submitted |
//! | `text`               | `text` — one finished assistant text block |
//! | `tool_started`       | `call_id`, `name`, `server` (null for built-ins), `input` |
//! | `tool_progress`      | `call_id`, `progress`, `total`, `message` |
//! | `permission_decided` | `call_id`, `tool`, `decision` (`allow`\|`deny`), `decider` (`rule`\|`default`\|`user`\|`headless`), `rule` |
//! | `tool_finished`      | `call_id`, `name`, `outcome` (`ok`\|`error`\|`denied`\|`cancelled`), `output` (what the model got) |
//! | `pool_changed`       | `added`, `removed` (model-facing names), `pool` (all names) |
//! | `server_status`      | `server`, `status` `{state: "connecting"\|"ready"\|"failed"\|"disconnected"\|"idle", …}` |
//! | `notice`             | `message` |
//! | `error`              | `message` |
//! | `turn_finished`      | `usage` `{input_tokens, output_tokens}`, `cancelled`, `exit_code` |
//!
//! `session_start` comes first, `turn_finished` last (unless the agent stopped early, in
//! which case an `error` is last and the exit code is 1).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::agent::events::{AgentEvent, PoolEntry, ToolOutcome, UiCommand, UserDecision};
use crate::agent::session::{self, ResumeFrom};
use crate::agent::{AgentConfig, DEFAULT_OUTPUT_BUDGET, DEFAULT_TURN_CAP};
use crate::mcp::{McpHub, ServerStatus};
use crate::policy::{Decision, Policy};
use crate::pool::ToolOrigin;
use crate::sanitize::for_terminal;

pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// The assistant's text on stdout; tool activity, notices and errors on stderr.
    #[default]
    Text,
    Jsonl,
}

impl std::str::FromStr for OutputFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(OutputFormat::Text),
            "jsonl" | "stream-json" => Ok(OutputFormat::Jsonl),
            other => Err(format!(
                "unknown output format '{other}' (expected text or jsonl)"
            )),
        }
    }
}

/// Everything `toolgate -p` needs, already parsed from the command line.
#[derive(Debug, Clone)]
pub struct HeadlessOptions {
    /// The user message; `-` reads it from stdin.
    pub prompt: String,
    pub output_format: OutputFormat,
    /// `--allow RULE` (repeatable, policy rule syntax).
    pub allow: Vec<String>,
    /// `--deny RULE` (repeatable).
    pub deny: Vec<String>,
    pub workspace: PathBuf,
    /// `--continue` → `Some(Latest)`, `--resume ID` → `Some(Id)`.
    pub resume: Option<ResumeFrom>,
    /// `--mcp-config FILE` (repeatable).
    pub mcp_config: Vec<PathBuf>,
    /// Whether the workspace's own `.mcp.json` may be read.
    pub trust_project: bool,
    /// `--provider NAME`; None selects by environment (see `crate::model::select`).
    pub provider: Option<String>,
    /// `--model ID` (else `$MODEL_ID`, else the provider's default).
    pub model: Option<String>,
    /// `--max-turns N`: model calls for this message.
    pub turn_cap: usize,
    pub output_budget: usize,
}

impl HeadlessOptions {
    pub fn new(prompt: impl Into<String>, workspace: PathBuf) -> Self {
        HeadlessOptions {
            prompt: prompt.into(),
            output_format: OutputFormat::Text,
            allow: Vec::new(),
            deny: Vec::new(),
            workspace,
            resume: None,
            mcp_config: Vec::new(),
            trust_project: false,
            provider: None,
            model: None,
            turn_cap: DEFAULT_TURN_CAP,
            output_budget: DEFAULT_OUTPUT_BUDGET,
        }
    }
}

/// Runs one headless turn and returns the process exit code. Call inside a tokio runtime.
pub async fn run(opts: HeadlessOptions) -> i32 {
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let prompt = match read_prompt(&opts.prompt, &mut std::io::stdin()) {
        Ok(prompt) => prompt,
        Err(message) => {
            let _ = writeln!(stderr, "toolgate: {message}");
            return EXIT_USAGE;
        }
    };
    let config = match prepare(&opts) {
        Ok(config) => config,
        Err((code, message)) => {
            let _ = writeln!(stderr, "toolgate: {message}");
            return code;
        }
    };
    run_with(config, prompt, opts.output_format, &mut stdout, &mut stderr).await
}

/// The prompt text; `-` reads all of stdin. An empty prompt is a usage error.
pub fn read_prompt(prompt: &str, stdin: &mut dyn Read) -> Result<String, String> {
    let text = if prompt == "-" {
        let mut text = String::new();
        stdin
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
        text
    } else {
        prompt.to_string()
    };
    if text.trim().is_empty() {
        return Err("the prompt is empty (pass PROMPT, or - to read it from stdin)".into());
    }
    Ok(text)
}

/// Builds the agent runtime from the options: servers, hub, policy, model, session to
/// resume. Errors carry the exit code (2 for usage errors) and the message to print.
pub fn prepare(opts: &HeadlessOptions) -> Result<AgentConfig, (i32, String)> {
    let loaded = crate::config::load_servers(&crate::config::LoadOptions {
        workspace: opts.workspace.clone(),
        user_config_dir: crate::paths::user_config_dir(),
        flag_files: opts.mcp_config.clone(),
        trust_project: opts.trust_project,
    });
    let mut notices: Vec<String> = loaded
        .diagnostics
        .iter()
        .map(|d| format!("config: {d}"))
        .collect();
    notices.extend(loaded.ignored_project_files.iter().map(|f| {
        format!(
            "{} is ignored: this folder is not trusted (pass --trust-project)",
            f.display()
        )
    }));
    let (policy, policy_notices) = build_policy(opts)?;
    notices.extend(policy_notices);
    let model = select_model(opts)?;
    let (hub_tx, hub_rx) = mpsc::unbounded_channel();
    let hub = McpHub::with_options(
        loaded.servers,
        hub_tx,
        crate::mcp::HubOptions {
            workspace: opts.workspace.clone(),
            ..Default::default()
        },
    );
    let mut config = AgentConfig::new(model, hub, hub_rx, policy, opts.workspace.clone());
    config.headless = true;
    config.replay_history = false;
    config.startup_notices = notices;
    config.turn_cap = opts.turn_cap;
    config.output_budget = opts.output_budget;
    if let Some(from) = &opts.resume {
        let dir = config
            .sessions_dir
            .clone()
            .ok_or((EXIT_USAGE, session::SessionError::NoStateDir.to_string()))?;
        let id = session::resolve(&dir, &opts.workspace, from)
            .map_err(|e| (EXIT_USAGE, e.to_string()))?;
        config.resume = Some(id);
    }
    Ok(config)
}

/// The host policy: shipped defaults < user config < project config (when trusted) <
/// `--allow` / `--deny`. Problems in the rule files are warnings; bad flag rules are usage
/// errors, since the user typed them just now.
fn build_policy(opts: &HeadlessOptions) -> Result<(Policy, Vec<String>), (i32, String)> {
    let mut load = crate::policy::LoadOptions::new(&opts.workspace, opts.trust_project);
    load.allow_flags = opts.allow.clone();
    load.deny_flags = opts.deny.clone();
    let (policy, diagnostics) = crate::policy::load(&load);
    let mut flag_problems = Vec::new();
    let mut notices = Vec::new();
    for diagnostic in diagnostics {
        if diagnostic.file.starts_with("--allow ") || diagnostic.file.starts_with("--deny ") {
            flag_problems.push(diagnostic.to_string());
        } else {
            notices.push(format!("permissions: {diagnostic}"));
        }
    }
    if !flag_problems.is_empty() {
        return Err((EXIT_USAGE, flag_problems.join("\n")));
    }
    Ok((policy, notices))
}

fn select_model(
    opts: &HeadlessOptions,
) -> Result<Box<dyn crate::model::ModelProvider>, (i32, String)> {
    let mut provider = crate::model::ProviderOptions::from_env();
    provider.provider_flag = opts.provider.clone();
    if opts.model.is_some() {
        provider.model = opts.model.clone();
    }
    // Every selection error is about what the user asked for (unknown provider, missing
    // key, unreadable scenario), so it is a usage error.
    crate::model::select(&provider).map_err(|e| (EXIT_USAGE, e.to_string()))
}

/// Runs one turn on an already configured agent, writing to `out` / `err`. This is
/// [`run`] without the process edges, so tests can drive it in-process.
pub async fn run_with(
    mut config: AgentConfig,
    prompt: String,
    format: OutputFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    // Never waits for input, whatever the caller set.
    config.headless = true;
    let configured = config.hub.configured();
    let hub = config.hub.clone();
    let mut agent = crate::agent::spawn(config);
    let mut printer = Printer {
        format,
        out,
        err,
        tool_names: HashMap::new(),
        text: String::new(),
        failed: false,
    };

    // Until the first pool snapshot the agent is still starting (session, resume).
    let mut started: Option<(String, String, PathBuf)> = None;
    let mut submitted = false;
    let mut early = Vec::new();
    let mut finished = false;
    while let Some(event) = agent.events.recv().await {
        match event {
            AgentEvent::SessionStarted {
                session_id,
                model_label,
                workspace,
                ..
            } => started = Some((session_id, model_label, workspace)),
            AgentEvent::PoolChanged { snapshot, .. } if !submitted => {
                let (id, model, workspace) = started.clone().unwrap_or_default();
                let servers = configured
                    .iter()
                    .map(|name| (name.clone(), hub.status(name)))
                    .collect::<Vec<_>>();
                printer.session_start(&id, &model, &workspace, &servers, &snapshot);
                // What happened while starting (resume notices, reconnects) follows it.
                for event in early.drain(..) {
                    printer.event(event);
                }
                submitted = true;
                if agent
                    .commands
                    .send(UiCommand::Submit(prompt.clone()))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            AgentEvent::PermissionRequest(request) => {
                // The agent denies Asks itself in headless mode; refuse anything that
                // still arrives rather than hang.
                let _ = request.reply.send(UserDecision::Deny);
            }
            AgentEvent::TurnFinished { usage, cancelled } => {
                printer.finish_text();
                let code = if printer.failed { EXIT_ERROR } else { EXIT_OK };
                printer.line(json!({
                    "type": "turn_finished",
                    "usage": usage,
                    "cancelled": cancelled,
                    "exit_code": code,
                }));
                finished = true;
                break;
            }
            other if !submitted => early.push(other),
            other => printer.event(other),
        }
    }
    // Close the agent: it shuts the servers down, then ends its event stream.
    let _ = agent.commands.send(UiCommand::Shutdown).await;
    while let Some(event) = agent.events.recv().await {
        if let AgentEvent::PermissionRequest(request) = event {
            let _ = request.reply.send(UserDecision::Deny);
        }
    }
    if !finished {
        printer.error("the agent stopped before the turn finished");
    }
    if printer.failed { EXIT_ERROR } else { EXIT_OK }
}

struct Printer<'a> {
    format: OutputFormat,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    tool_names: HashMap<String, String>,
    /// Text of the assistant block being streamed (jsonl prints it whole).
    text: String,
    failed: bool,
}

impl Printer<'_> {
    fn line(&mut self, value: Value) {
        if self.format == OutputFormat::Jsonl {
            // A closed stdout (`| head`) is not an error of the run.
            let _ = writeln!(self.out, "{value}");
            let _ = self.out.flush();
        }
    }

    fn note(&mut self, text: &str) {
        if self.format == OutputFormat::Text {
            let _ = writeln!(self.err, "{}", for_terminal(text));
        }
    }

    fn error(&mut self, message: &str) {
        self.failed = true;
        self.finish_text();
        self.line(json!({"type": "error", "message": message}));
        self.note(&format!("toolgate: error: {message}"));
    }

    fn finish_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        match self.format {
            OutputFormat::Jsonl => self.line(json!({"type": "text", "text": text})),
            OutputFormat::Text => {
                if !text.ends_with('\n') {
                    let _ = writeln!(self.out);
                }
                let _ = self.out.flush();
            }
        }
    }

    fn session_start(
        &mut self,
        id: &str,
        model: &str,
        workspace: &std::path::Path,
        servers: &[(String, ServerStatus)],
        pool: &[PoolEntry],
    ) {
        let servers: Vec<Value> = servers
            .iter()
            .map(|(name, status)| json!({"name": name, "status": status}))
            .collect();
        let pool: Vec<Value> = pool.iter().map(pool_entry_json).collect();
        self.line(json!({
            "type": "session_start",
            "session_id": id,
            "model": model,
            "workspace": workspace,
            "servers": servers,
            "pool": pool,
        }));
        self.note(&format!("toolgate: session {id}, model {model}"));
    }

    fn event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::UserMessage(text) => self.line(json!({"type": "user", "text": text})),
            AgentEvent::TextDelta(delta) => {
                if self.format == OutputFormat::Text {
                    let _ = write!(self.out, "{}", for_terminal(&delta));
                    let _ = self.out.flush();
                }
                self.text.push_str(&delta);
            }
            AgentEvent::AssistantMessageDone => self.finish_text(),
            AgentEvent::ToolCallStarted {
                call_id,
                name,
                server,
                input,
            } => {
                self.finish_text();
                self.tool_names.insert(call_id.clone(), name.clone());
                self.line(json!({
                    "type": "tool_started",
                    "call_id": call_id,
                    "name": name,
                    "server": server,
                    "input": input,
                }));
                self.note(&format!("[tool] {name} {input}"));
            }
            AgentEvent::ToolProgress {
                call_id,
                progress,
                total,
                message,
            } => self.line(json!({
                "type": "tool_progress",
                "call_id": call_id,
                "progress": progress,
                "total": total,
                "message": message,
            })),
            AgentEvent::ToolCallFinished {
                call_id,
                outcome,
                output,
            } => {
                let name = self.tool_names.get(&call_id).cloned().unwrap_or_default();
                self.line(json!({
                    "type": "tool_finished",
                    "call_id": call_id,
                    "name": name,
                    "outcome": outcome,
                    "output": output,
                }));
                let label = match outcome {
                    ToolOutcome::Ok => "ok",
                    ToolOutcome::Error => "error",
                    ToolOutcome::Denied => "denied",
                    ToolOutcome::Cancelled => "cancelled",
                };
                let first_line = output.lines().next().unwrap_or("");
                if outcome == ToolOutcome::Ok {
                    self.note(&format!("[{label}] {name}"));
                } else {
                    self.note(&format!("[{label}] {name}: {first_line}"));
                }
            }
            AgentEvent::PermissionDecided {
                call_id,
                tool,
                decision,
                decider,
                rule,
                ..
            } => self.line(json!({
                "type": "permission_decided",
                "call_id": call_id,
                "tool": tool,
                "decision": decision,
                "decider": decider,
                "rule": rule,
            })),
            AgentEvent::PoolChanged {
                snapshot,
                added,
                removed,
            } => {
                let pool: Vec<&str> = snapshot.iter().map(|e| e.tool.name.as_str()).collect();
                self.line(json!({
                    "type": "pool_changed",
                    "added": added,
                    "removed": removed,
                    "pool": pool,
                }));
            }
            AgentEvent::ServerStatus { server, status } => {
                if let ServerStatus::Failed { reason, .. } = &status {
                    self.note(&format!("[server] {server} failed: {reason}"));
                }
                self.line(json!({"type": "server_status", "server": server, "status": status}));
            }
            AgentEvent::Notice(message) => {
                self.line(json!({"type": "notice", "message": message}));
                self.note(&format!("toolgate: {message}"));
            }
            AgentEvent::Error(message) => self.error(&message),
            AgentEvent::SessionStarted { .. }
            | AgentEvent::PermissionRequest(_)
            | AgentEvent::TurnFinished { .. } => {}
        }
    }
}

fn pool_entry_json(entry: &PoolEntry) -> Value {
    let (origin, server, tool) = match &entry.tool.origin {
        ToolOrigin::Builtin(_) => (entry.tool.origin.as_str(), None, None),
        ToolOrigin::Mcp { server, tool } => ("mcp", Some(server.as_str()), Some(tool.as_str())),
    };
    let decision = match entry.verdict.decision {
        Decision::Allow => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny { .. } => "deny",
    };
    json!({
        "name": entry.tool.name,
        "origin": origin,
        "server": server,
        "tool": tool,
        "decision": decision,
        "rule": entry.verdict.rule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_dash_reads_stdin_and_empty_is_refused() {
        let mut stdin: &[u8] = b"from stdin\n";
        assert_eq!(read_prompt("-", &mut stdin).unwrap(), "from stdin\n");
        let mut empty: &[u8] = b"  \n";
        assert!(read_prompt("-", &mut empty).unwrap_err().contains("empty"));
        assert_eq!(read_prompt("hi", &mut empty).unwrap(), "hi");
    }

    #[test]
    fn output_format_parses() {
        assert_eq!("jsonl".parse::<OutputFormat>(), Ok(OutputFormat::Jsonl));
        assert!("xml".parse::<OutputFormat>().is_err());
    }
}
