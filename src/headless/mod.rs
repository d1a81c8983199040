//! The non-interactive front end (`toolgate -p PROMPT`): the same agent runtime as the
//! console, one user message, output on stdout, never waiting for input. A call the policy
//! would ask about is denied with a message that names the `--allow` rule to pass.
//!
//! Exit codes are those of [`crate::error`]: 0 the turn finished, 1 an error (model
//! error, failed resume, an MCP server that crashed or exited while connected, …), 2 a
//! usage error (empty prompt, unreadable stdin, unknown session id). A tool call that
//! fails is the model's to read and does not change the code (decision 0067).
//!
//! `--output-format jsonl` prints one protocol [`Event`] per line, flushed per line (the
//! same type the session log writes for the same facts); the schema is documented in
//! docs/EVENTS.md.

use std::io::{Read, Write};
use std::path::PathBuf;

use crate::agent::AgentConfig;
use crate::cli::bootstrap::{FrontEnd, StartOptions};
use crate::error::{Failure, FailureKind};
use crate::mcp::ServerStatus;
use crate::protocol::{
    AgentEvent, Event, Live, PoolEntry, PoolLine, ServerLine, ToolOutcome, UiCommand, View,
};
use crate::sanitize::for_terminal;

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
    /// What the console takes too: workspace, rules, provider, resume…
    pub start: StartOptions,
}

impl HeadlessOptions {
    pub fn new(prompt: impl Into<String>, workspace: PathBuf) -> Self {
        HeadlessOptions {
            prompt: prompt.into(),
            output_format: OutputFormat::Text,
            start: StartOptions::new(workspace),
        }
    }
}

/// Runs one headless turn. Call inside a tokio runtime.
pub async fn run(opts: HeadlessOptions) -> Result<(), Failure> {
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let prompt = read_prompt(&opts.prompt, &mut std::io::stdin())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let config = crate::cli::bootstrap::prepare(&opts.start, FrontEnd::Headless)?;
    run_with(config, prompt, opts.output_format, &mut stdout, &mut stderr).await
}

/// The prompt text; `-` reads all of stdin. An empty prompt is a usage error.
pub fn read_prompt(prompt: &str, stdin: &mut dyn Read) -> Result<String, PromptError> {
    let text = if prompt == "-" {
        let mut text = String::new();
        stdin
            .read_to_string(&mut text)
            .map_err(PromptError::Stdin)?;
        text
    } else {
        prompt.to_string()
    };
    if text.trim().is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(text)
}

/// Why there is no prompt to run (a usage error).
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read the prompt from stdin: {0}")]
    Stdin(#[source] std::io::Error),
    #[error("the prompt is empty (pass PROMPT, or - to read it from stdin)")]
    Empty,
}

/// Runs one turn on an already configured agent, writing to `out` / `err`. This is
/// [`run`] without the process edges, so tests can drive it in-process. A failure is
/// already reported on `out`/`err` when this returns.
pub async fn run_with(
    mut config: AgentConfig,
    prompt: String,
    format: OutputFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
    // Never waits for input, whatever the caller set.
    config.headless = true;
    let configured = config.hub.configured();
    let hub = config.hub.clone();
    let mut agent = crate::agent::spawn(config);
    let mut printer = Printer {
        format,
        out,
        err,
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
            AgentEvent::View(View::SessionStarted {
                session_id,
                model_label,
                workspace,
                ..
            }) => started = Some((session_id, model_label, workspace)),
            AgentEvent::View(View::PoolChanged(update)) if !submitted => {
                let (session_id, model, workspace) = started.clone().unwrap_or_default();
                let servers = configured
                    .iter()
                    .map(|name| ServerLine {
                        name: name.clone(),
                        status: hub.status(name),
                    })
                    .collect();
                printer.session_start(session_id, model, workspace, servers, &update.snapshot);
                // What happened while starting (resume notices, reconnects) follows it, and
                // then the starting pool's deferred tools.
                for event in early.drain(..) {
                    printer.event(event);
                }
                if update.changed.deferred {
                    printer.line(&Event::deferred(&update));
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
            AgentEvent::Fact(mut last @ Event::TurnFinished { .. }) => {
                printer.finish_text();
                // A server lost mid-run may have taken work with it (its call's effects are
                // unknown), so the run is not a success even if the model carried on.
                for server in hub.lost_servers() {
                    printer.error(&format!(
                        "the MCP server '{server}' stopped during the run ({})",
                        lost_reason(&hub.status(&server))
                    ));
                }
                // The run's exit code is the stream's own field of the agent's event.
                if let Event::TurnFinished { exit_code, .. } = &mut last {
                    *exit_code = Some(if printer.failed {
                        i32::from(FailureKind::Run.code())
                    } else {
                        0
                    });
                }
                printer.line(&last);
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
        if let AgentEvent::Request(request) = event {
            request.dismiss();
        }
    }
    if !finished {
        printer.error("the agent stopped before the turn finished");
    }
    if printer.failed {
        Err(Failure::Reported(FailureKind::Run))
    } else {
        Ok(())
    }
}

/// Why a lost server stopped, as far as the hub knows yet (the crash watch may still be
/// waiting for its exit status).
fn lost_reason(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Failed { reason, .. } => reason.clone(),
        _ => "its connection closed".to_string(),
    }
}

struct Printer<'a> {
    format: OutputFormat,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// Text of the assistant block being streamed (jsonl prints it whole).
    text: String,
    failed: bool,
}

impl Printer<'_> {
    fn line(&mut self, event: &Event) {
        if self.format == OutputFormat::Jsonl {
            // Every field is a string, number, bool or JSON value: serializing cannot fail.
            let Ok(line) = serde_json::to_string(&event.for_stream()) else {
                return;
            };
            // A closed stdout (`| head`) is not an error of the run.
            let _ = writeln!(self.out, "{line}");
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
        self.line(&Event::Error {
            message: message.to_string(),
        });
        self.note(&format!("toolgate: error: {message}"));
    }

    fn finish_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        match self.format {
            OutputFormat::Jsonl => self.line(&Event::Text { text }),
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
        session_id: String,
        model: String,
        workspace: PathBuf,
        servers: Vec<ServerLine>,
        pool: &[PoolEntry],
    ) {
        self.note(&format!("toolgate: session {session_id}, model {model}"));
        self.line(&Event::SessionStart {
            session_id,
            model,
            workspace,
            servers: Some(servers),
            pool: Some(pool.iter().map(PoolLine::from).collect()),
        });
    }

    fn event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::Fact(fact) => self.fact(fact),
            AgentEvent::Live(Live::TextDelta(delta)) => {
                if self.format == OutputFormat::Text {
                    let _ = write!(self.out, "{}", for_terminal(&delta));
                    let _ = self.out.flush();
                }
                self.text.push_str(&delta);
            }
            // Not part of the answer; the JSONL schema has no thinking event (yet).
            AgentEvent::Live(Live::ThinkingDelta(_)) => {}
            AgentEvent::Live(Live::AssistantMessageDone) => self.finish_text(),
            // The gauge is the console's; `-p` reports compactions and usage.
            AgentEvent::Live(Live::Context(_)) => {}
            AgentEvent::Request(request) => {
                // The agent denies Asks itself in headless mode; anything that still
                // arrives gets its safe default rather than a hang, and is reported.
                let origin = request.meta().origin.to_string();
                let closed = request.dismiss();
                self.note(&format!(
                    "toolgate: {} from {origin} answered with its safe default: {}",
                    closed.kind, closed.outcome
                ));
                self.line(&Event::RequestDismissed {
                    kind: closed.kind.to_string(),
                    origin,
                    outcome: closed.outcome,
                });
            }
            AgentEvent::View(View::PoolChanged(update)) => {
                // As the two separate events printed them: the deferred tools first.
                if update.changed.deferred {
                    self.line(&Event::deferred(&update));
                }
                if update.changed.tools {
                    self.line(&Event::pool_changed(update));
                }
            }
            // What the console keeps in view, and the answers to its own commands.
            AgentEvent::View(_) | AgentEvent::Reply(_) => {}
        }
    }

    /// A fact, printed as the agent sent it (text mode: a line on stderr for the ones a
    /// person running `-p` wants to see).
    fn fact(&mut self, fact: Event) {
        match &fact {
            Event::ReplyCut(cut) => {
                // Text mode printed the cut text as it came: the mark ends it there.
                // JSONL prints it once, as the cut it was, never as a `text` line.
                self.text.clear();
                if self.format == OutputFormat::Text {
                    let _ = writeln!(self.out, "\n{}", cut.mark());
                    let _ = self.out.flush();
                }
            }
            Event::Compacted(report) => {
                self.finish_text();
                self.note(&format!("toolgate: {}", report.describe()));
            }
            Event::ModelRetry(retry) => self.note(&format!(
                "toolgate: {} ({})",
                retry.countdown(retry.wait()),
                retry.detail
            )),
            Event::ToolStarted(start) => {
                self.finish_text();
                self.note(&format!("[tool] {} {}", start.name, start.input));
            }
            Event::ToolFinished {
                name,
                outcome,
                output,
                ..
            } => {
                let label = match outcome {
                    ToolOutcome::Ok => "ok",
                    ToolOutcome::Error => "error",
                    ToolOutcome::Denied => "denied",
                    ToolOutcome::Cancelled => "cancelled",
                };
                let note = if *outcome == ToolOutcome::Ok {
                    format!("[{label}] {name}")
                } else {
                    let first_line = output.lines().next().unwrap_or("");
                    format!("[{label}] {name}: {first_line}")
                };
                self.note(&note);
            }
            Event::ServerStatus {
                server,
                status: ServerStatus::Failed { reason, .. },
            } => self.note(&format!("[server] {server} failed: {reason}")),
            Event::ServerAuth { server, status }
                if !matches!(status, crate::oauth::AuthStatus::SignedIn { .. }) =>
            {
                self.note(&format!("[server] {server}: {status}"));
            }
            Event::Notice { message } => self.note(&format!("toolgate: {message}")),
            Event::Sampling(report) => self.note(&format!("toolgate: {}", report.summary())),
            Event::NetworkDecided(line) if !line.allowed() => {
                self.note(&format!("toolgate: {}", line.summary()))
            }
            Event::ServerLog(log) => self.note(&format!(
                "[server] {} {}: {}",
                log.server, log.level, log.message
            )),
            Event::Error { message } => {
                let message = message.clone();
                return self.error(&message);
            }
            _ => {}
        }
        self.line(&fact);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_dash_reads_stdin_and_empty_is_refused() {
        let mut stdin: &[u8] = b"from stdin\n";
        assert_eq!(read_prompt("-", &mut stdin).unwrap(), "from stdin\n");
        let mut empty: &[u8] = b"  \n";
        assert!(
            read_prompt("-", &mut empty)
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert_eq!(read_prompt("hi", &mut empty).unwrap(), "hi");
    }

    #[test]
    fn output_format_parses() {
        assert_eq!("jsonl".parse::<OutputFormat>(), Ok(OutputFormat::Jsonl));
        assert!("xml".parse::<OutputFormat>().is_err());
    }
}
