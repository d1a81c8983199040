//! The permission gate in front of every tool call: the host policy's verdict, session
//! grants, and — for Ask — the user's answer through the front end (or, headless, a
//! denial that says how to allow the call).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod pins;

use super::ask::ask;
use crate::agent::events::AgentEvent;
use crate::builtin::BuiltinTool;
use crate::inbox::{
    Escalation, EscalationReason, Origin, ProjectServer, ProjectServerAnswer, Reply, Request,
    ToolCall,
};
use crate::policy::{
    AlwaysRule, AuditRecord, Decider, Decision, Permit, PersonAnswer, Policy, PolicyContext,
    PolicyError, Verdict, always_rule, resolve_target, store,
};
use crate::pool::{PoolTool, ToolOrigin};
use crate::sandbox::Sandbox;
use crate::settings::SandboxMode;

/// What the gate lets happen to one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Gated {
    Run,
    /// bash, outside the OS sandbox: the person approved it (the environment is still
    /// scrubbed of secrets).
    RunUnconfined,
    /// Refused; the text is the tool_result the model gets.
    Refused(String),
    /// The turn was cancelled while the question was open.
    Cancelled,
}

pub struct Gate {
    policy: Policy,
    workspace: PathBuf,
    headless: bool,
    /// How long a tool-call question waits before its safe default (deny) applies.
    ask_timeout: Option<Duration>,
    /// The session's sandbox: whether bash can run confined here.
    sandbox: Sandbox,
    /// The person allowed unsandboxed bash for the rest of the session.
    unsandboxed_granted: bool,
    /// Pinned definitions and new tools (see `gate/pins.rs`).
    pub(super) pinning: super::pinning::Pinning,
}

/// What the session grant for unsandboxed bash is recorded as.
const UNSANDBOXED_GRANT: &str = "bash (outside the sandbox)";

impl Gate {
    /// Puts the rules of `fresh` (the rule files loaded again) in force; see
    /// [`Policy::reload_rules`].
    /// The rules in force (for the sampling host, which reads only its `sampling` rules).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn reload_rules(
        &mut self,
        fresh: Policy,
        read: &[std::path::PathBuf],
    ) -> crate::policy::RuleChanges {
        self.policy.reload_rules(fresh, read)
    }

    /// A server defined by the (trusted) project starts a program of the project's
    /// choosing: the first connect of it in a session asks, showing its command line.
    /// Headless runs only reach project servers with `--trust-project`, which is the
    /// user's consent given up front. Returns `Err(why)` when it was not approved.
    pub async fn approve_project_server(
        &mut self,
        config: &crate::settings::ServerConfig,
        events: &mpsc::Sender<AgentEvent>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(), String> {
        let Some(question) = self.policy.project_server_question(config) else {
            return Ok(());
        };
        if self.headless {
            self.policy.approve_project_server(config);
            return Ok(());
        }
        let server = question.server.clone();
        let command_line = question.command_line.clone();
        let (request, answer) = Request::new(
            Origin::Project {
                server: server.clone(),
            },
            ProjectServer {
                server: question.server,
                command_line: question.command_line,
                why: question.why,
            },
            Instant::now(),
            None,
        );
        match ask(events, request, answer, cancel).await {
            Some(Reply::Person(ProjectServerAnswer::Start)) => {
                self.policy.approve_project_server(config);
                Ok(())
            }
            None => Err(format!(
                "Cancelled: project server '{server}' was not started"
            )),
            Some(_) => Err(format!(
                "Permission denied: the user did not approve starting the project's MCP server '{server}' ({command_line})"
            )),
        }
    }

    /// A connected project server whose definition changed on disk: reconnecting it starts
    /// the new definition, so the person is asked first, whatever was approved before
    /// (the environment or headers may have changed under the same command line). True
    /// when approved; the new command line then counts as approved for the session.
    pub async fn approve_changed_project_server(
        &mut self,
        config: &crate::settings::ServerConfig,
        events: &mpsc::Sender<AgentEvent>,
    ) -> bool {
        if self.headless {
            self.policy.approve_project_server(config);
            return true;
        }
        let command_line = config.command_line();
        let (request, answer) = Request::new(
            Origin::Project {
                server: config.name.clone(),
            },
            ProjectServer {
                server: config.name.clone(),
                why: format!(
                    "the project changed the definition of '{}' in its .mcp.json; reconnecting runs: {command_line}",
                    config.name
                ),
                command_line,
            },
            Instant::now(),
            None,
        );
        let approved = matches!(
            ask(events, request, answer, None).await,
            Some(Reply::Person(ProjectServerAnswer::Start))
        );
        if approved {
            self.policy.approve_project_server(config);
        }
        approved
    }

    pub fn new(policy: Policy, workspace: PathBuf, headless: bool) -> Self {
        Gate {
            policy,
            headless,
            ask_timeout: None,
            sandbox: Sandbox::default(),
            unsandboxed_granted: false,
            pinning: super::pinning::Pinning::default(),
            workspace,
        }
    }

    pub fn set_sandbox(&mut self, sandbox: Sandbox) {
        self.sandbox = sandbox;
    }

    /// Reads the pinned definitions of this workspace (`pins_dir`: where rules' first uses
    /// are pinned; None keeps those in memory).
    pub fn load_pins(&mut self, pins_dir: Option<&std::path::Path>) {
        self.pinning = super::pinning::Pinning::load(&self.workspace, pins_dir);
    }

    pub fn set_ask_timeout(&mut self, timeout: Option<Duration>) {
        self.ask_timeout = timeout;
    }

    /// The policy's context for one call. A file tool's path is resolved here (file-system
    /// metadata: symlinks, `..`), so the policy's decision itself does no I/O.
    fn context(&self, tool: &PoolTool, input: &Value) -> PolicyContext<'_> {
        PolicyContext::new(&self.workspace).with_target(resolve_target(
            &self.workspace,
            tool,
            input,
        ))
    }

    /// The policy's verdict for one call (session grants included).
    pub fn verdict(&self, tool: &PoolTool, input: &Value) -> Verdict {
        self.policy.decide(tool, input, &self.context(tool, input))
    }

    /// How the pool panel shows a tool before any input is known (a changed or new
    /// definition asks whatever the rules say).
    pub fn badge(&self, tool: &PoolTool) -> Verdict {
        let verdict = self
            .policy
            .badge(tool, &PolicyContext::new(&self.workspace));
        self.pinned_badge(tool, verdict)
    }

    /// "Always allow": works out the rule, writes it into the workspace's config file on a
    /// blocking thread (never on the async executor), then applies it to this session.
    async fn save_always(
        &mut self,
        tool: &PoolTool,
        input: &Value,
    ) -> Result<AlwaysRule, PolicyError> {
        let rule = always_rule(&self.policy, tool, input, &self.context(tool, input))?;
        let (file, text) = (rule.file.clone(), rule.text.clone());
        tokio::task::spawn_blocking(move || store::append_allow_rule(&file, &text))
            .await
            .map_err(|e| PolicyError::Io {
                path: rule.file.clone(),
                source: std::io::Error::other(e),
            })??;
        self.policy.apply_always(&rule)?;
        Ok(rule)
    }

    pub fn revoke(&mut self, tool: &str) -> bool {
        self.pinning.forget_session(tool);
        self.policy.revoke(tool)
    }

    /// Decides one call, asking the person when the policy says Ask. Returns the outcome, the
    /// decision record (None when cancelled before anyone decided) and notices for the user.
    pub async fn check(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Gated, Option<AuditRecord>, Vec<String>) {
        let verdict = self.verdict(tool, input);
        if !matches!(verdict.decision, Decision::Deny { .. })
            && tool.builtin_kind() == Some(BuiltinTool::Bash)
        {
            match self.escalation_reason(input) {
                Ok(None) => {}
                Ok(Some(reason)) => {
                    return self
                        .escalate(tool, input, call_id, reason, &verdict, events, cancel)
                        .await;
                }
                Err(problem) => return (Gated::Refused(problem), None, Vec::new()),
            }
        }
        if let Some(news) = self.definition_news(tool, &verdict) {
            return self
                .ask_definition(tool, input, call_id, news, verdict, events, cancel)
                .await;
        }
        match verdict.decision.clone() {
            Decision::Allow => (
                Gated::Run,
                AuditRecord::from_verdict(&tool.name, input, &verdict),
                self.pin_on_rule_use(tool, &verdict).await,
            ),
            Decision::Deny { why } => (
                Gated::Refused(format!("Permission denied: {why}")),
                AuditRecord::from_verdict(&tool.name, input, &verdict),
                Vec::new(),
            ),
            Decision::Ask { why } if self.headless => {
                let rule = always_rule(&self.policy, tool, input, &self.context(tool, input))
                    .map_or_else(|_| suggested_rule(tool, input), |always| always.text);
                let record = AuditRecord::new(
                    &tool.name,
                    input,
                    Permit::Deny,
                    Some(format!(
                        "{why}; approval is unavailable in non-interactive mode"
                    )),
                    Decider::Headless {
                        asked_by: verdict.rule.clone(),
                    },
                );
                (
                    Gated::Refused(format!(
                        "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow {rule}"
                    )),
                    Some(record),
                    Vec::new(),
                )
            }
            Decision::Ask { why } => {
                self.ask_person(tool, input, call_id, why, verdict, events, cancel)
                    .await
            }
        }
    }

    /// Why this bash call would run outside the sandbox, if it would: the model asked for
    /// it, or the sandbox cannot confine bash on this machine. A sandbox the person turned
    /// off in their configuration is their decision, not a question.
    fn escalation_reason(&self, input: &Value) -> Result<Option<EscalationReason>, String> {
        let requested = input.get("unsandboxed").and_then(Value::as_bool) == Some(true);
        if requested {
            let justification = input
                .get("justification")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|j| !j.is_empty());
            return match justification {
                Some(j) => Ok(Some(EscalationReason::Requested {
                    justification: j.to_string(),
                })),
                None => Err("Invalid arguments for bash: `unsandboxed: true` needs a one-line `justification` saying why the command cannot run in the sandbox"
                    .into()),
            };
        }
        if self.sandbox.settings().mode == SandboxMode::Off {
            return Ok(None);
        }
        Ok(self.sandbox.check_bash(&self.workspace).err().map(|e| {
            EscalationReason::SandboxUnavailable {
                why: e.reason().to_string(),
            }
        }))
    }

    /// Running bash outside the sandbox: never by a rule, only by the person (or their
    /// grant for this session); headless mode cannot ask, so it refuses, saying why.
    #[allow(clippy::too_many_arguments)]
    async fn escalate(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        reason: EscalationReason,
        verdict: &Verdict,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Gated, Option<AuditRecord>, Vec<String>) {
        let asked_by = match &reason {
            EscalationReason::Requested { .. } => "sandbox: the model asked to leave it",
            EscalationReason::SandboxUnavailable { .. } => "sandbox: unavailable",
        }
        .to_string();
        let why_unconfined = match &reason {
            EscalationReason::Requested { justification } => {
                format!("the model asked to run it outside the sandbox ({justification})")
            }
            EscalationReason::SandboxUnavailable { why } => {
                format!("the sandbox is unavailable ({why})")
            }
        };
        let record = |decision: Permit, why: Option<String>, decider: Decider| {
            AuditRecord::new(&tool.name, input, decision, why, decider)
        };
        if self.headless {
            let why = format!(
                "{why_unconfined}; running a command outside the sandbox needs a person's approval, which non-interactive mode cannot give"
            );
            return (
                Gated::Refused(format!("Permission denied: {why}")),
                Some(record(
                    Permit::Deny,
                    Some(why),
                    Decider::Headless { asked_by },
                )),
                Vec::new(),
            );
        }
        if self.unsandboxed_granted {
            // The grant covers leaving the sandbox, not what the policy asks about besides
            // (a destructive command): that question is still asked, as a tool call.
            if let Decision::Ask { why } = &verdict.decision {
                let (gated, record, notices) = self
                    .ask_person(
                        tool,
                        input,
                        call_id,
                        why.clone(),
                        verdict.clone(),
                        events,
                        cancel,
                    )
                    .await;
                let gated = match gated {
                    Gated::Run => Gated::RunUnconfined,
                    other => other,
                };
                return (gated, record, notices);
            }
            return (
                Gated::RunUnconfined,
                Some(record(
                    Permit::Allow,
                    None,
                    Decider::SessionGrant {
                        tool: UNSANDBOXED_GRANT.into(),
                    },
                )),
                Vec::new(),
            );
        }
        let command = input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let policy_note = match &verdict.decision {
            Decision::Ask { why } => Some(why.clone()),
            _ => None,
        };
        let now = Instant::now();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: None,
            },
            Escalation {
                call_id: call_id.to_string(),
                command,
                workspace: self.workspace.clone(),
                reason,
                policy_note,
            },
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let Some(reply) = ask(events, request, answer, Some(cancel)).await else {
            return (Gated::Cancelled, None, Vec::new());
        };
        let answer = match reply {
            Reply::Person(answer) => answer,
            unanswered => {
                let why = format!("{why_unconfined}; nobody approved running it unsandboxed");
                return refused_unanswered(tool, input, &unanswered, why, asked_by);
            }
        };
        let mut notices = Vec::new();
        let gated = match &answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowAlways => Gated::RunUnconfined,
            PersonAnswer::AllowSession => {
                self.unsandboxed_granted = true;
                notices.push(
                    "bash may run outside the sandbox for the rest of this session.".into(),
                );
                Gated::RunUnconfined
            }
            PersonAnswer::Deny => Gated::Refused(
                "Permission denied: the user did not allow running this command outside the sandbox"
                    .into(),
            ),
            PersonAnswer::DenyWithNote(note) => {
                Gated::Refused(format!("Permission denied by the user: {note}"))
            }
        };
        (
            gated,
            Some(person_record(tool, input, answer, asked_by)),
            notices,
        )
    }

    #[allow(clippy::too_many_arguments)]
    async fn ask_person(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        why: String,
        verdict: Verdict,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Gated, Option<AuditRecord>, Vec<String>) {
        let now = Instant::now();
        let asked_by = verdict.rule.clone();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: tool.server().map(str::to_string),
            },
            ToolCall {
                call_id: call_id.to_string(),
                tool: tool.clone(),
                input: input.clone(),
                why,
                verdict,
            },
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let answer =
            match person_answer(tool, input, request, answer, &asked_by, events, cancel).await {
                Ok(answer) => answer,
                Err(gated) => return gated,
            };
        let mut notices = Vec::new();
        if answer.permit() == Permit::Allow {
            self.pinning.acknowledge(tool);
        }
        let gated = match &answer {
            PersonAnswer::AllowOnce => Gated::Run,
            PersonAnswer::AllowSession => {
                let key = crate::policy::grant_key(tool, input);
                self.policy.grant(&key);
                self.pinning.pin_session(tool);
                notices.push(format!("{key} is allowed for the rest of this session."));
                Gated::Run
            }
            PersonAnswer::AllowAlways => {
                match self.save_always(tool, input).await {
                    Ok(always) => {
                        notices.push(format!(
                            "Always allowed: wrote the allow rule {} to {}.",
                            always.text,
                            always.file.display()
                        ));
                        notices.extend(self.save_project_pin(tool, "always grant").await);
                    }
                    Err(e) => {
                        let key = crate::policy::grant_key(tool, input);
                        self.policy.grant(&key);
                        self.pinning.pin_session(tool);
                        notices.push(format!("{e}; {key} is allowed for this session only."));
                    }
                }
                Gated::Run
            }
            PersonAnswer::Deny => {
                Gated::Refused("Permission denied: the user denied this call".into())
            }
            PersonAnswer::DenyWithNote(note) => {
                Gated::Refused(format!("Permission denied by the user: {note}"))
            }
        };
        (
            gated,
            Some(person_record(tool, input, answer, asked_by)),
            notices,
        )
    }
}

/// The record of the person's answer to a question about `tool`.
fn person_record(
    tool: &PoolTool,
    input: &Value,
    answer: PersonAnswer,
    asked_by: String,
) -> AuditRecord {
    let why = match &answer {
        PersonAnswer::Deny => Some("denied by the user".to_string()),
        PersonAnswer::DenyWithNote(note) => Some(format!("denied by the user: {note}")),
        _ => None,
    };
    AuditRecord::new(
        &tool.name,
        input,
        answer.permit(),
        why,
        Decider::Person { answer, asked_by },
    )
}

/// A question nobody answered (its deadline passed, or the front end could not show it):
/// refused, and recorded as such.
/// Waits for the person's answer to a question about a call of `tool`. Err: what the
/// gate returns when there is none (the turn was cancelled, the request expired or was
/// dismissed), with its audit record.
async fn person_answer<K>(
    tool: &PoolTool,
    input: &Value,
    request: Request<K>,
    answer: tokio::sync::oneshot::Receiver<Reply<K::Answer>>,
    asked_by: &str,
    events: &mpsc::Sender<AgentEvent>,
    cancel: &CancellationToken,
) -> Result<K::Answer, (Gated, Option<AuditRecord>, Vec<String>)>
where
    K: crate::inbox::Kind,
    Request<K>: Into<crate::inbox::HostRequest>,
{
    let Some(reply) = ask(events, request, answer, Some(cancel)).await else {
        return Err((Gated::Cancelled, None, Vec::new()));
    };
    match reply {
        Reply::Person(answer) => Ok(answer),
        unanswered => {
            let why = match unanswered {
                Reply::Expired(_) => "nobody answered before the request's deadline",
                _ => "the permission request was dismissed",
            };
            Err(refused_unanswered(
                tool,
                input,
                &unanswered,
                why.into(),
                asked_by.to_string(),
            ))
        }
    }
}

fn refused_unanswered<A>(
    tool: &PoolTool,
    input: &Value,
    reply: &Reply<A>,
    why: String,
    asked_by: String,
) -> (Gated, Option<AuditRecord>, Vec<String>) {
    let decider = match reply {
        Reply::Expired(_) => Decider::Expired { asked_by },
        _ => Decider::Dismissed { asked_by },
    };
    (
        Gated::Refused(format!("Permission denied: {why}")),
        Some(AuditRecord::new(
            &tool.name,
            input,
            Permit::Deny,
            Some(why),
            decider,
        )),
        Vec::new(),
    )
}

/// The `--allow` rule that would let this call through without asking.
pub fn suggested_rule(tool: &PoolTool, input: &Value) -> String {
    match tool.origin {
        ToolOrigin::Builtin(BuiltinTool::Bash) => {
            let first_word = input
                .get("command")
                .and_then(Value::as_str)
                .and_then(|c| c.split_whitespace().next())
                .unwrap_or("");
            if first_word.is_empty() {
                "Bash".to_string()
            } else {
                format!("Bash({first_word}:*)")
            }
        }
        ToolOrigin::Builtin(_) | ToolOrigin::Mcp { .. } => tool.name.clone(),
    }
}
