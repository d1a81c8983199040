//! The permission gate in front of every tool call: the host policy's verdict, session
//! grants, and — for Ask — the user's answer through the front end (or, headless, a
//! denial that says how to allow the call).

use std::path::PathBuf;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::events::{AgentEvent, PermissionKind, PermissionRequest, UserDecision};
use crate::builtin::BuiltinTool;
use crate::policy::{
    AlwaysRule, AuditRecord, Decider, Decision, Policy, PolicyContext, PolicyError, RuleSource,
    Verdict, always_rule, resolve_target, store,
};
use crate::pool::{PoolTool, ToolOrigin};

/// What the gate lets happen to one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Gated {
    Run,
    /// Refused; the text is the tool_result the model gets.
    Refused(String),
    /// The turn was cancelled while the question was open.
    Cancelled,
}

/// One permission decision for the audit trail (session log and PermissionDecided).
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// `allow` or `deny`.
    pub decision: &'static str,
    /// `rule`, `default`, `user` or `headless`.
    pub decider: &'static str,
    /// The deciding rule, or the user's answer.
    pub rule: String,
    pub source: RuleSource,
    pub why: Option<String>,
    /// The policy's audit record of this decision (for the session log).
    pub audit: AuditRecord,
}

impl Decided {
    fn new(tool: &PoolTool, input: &Value, verdict: &Verdict, decider: Option<Decider>) -> Self {
        let mut audit = AuditRecord::from_verdict(&tool.name, input, verdict);
        if let Some(decider) = decider {
            audit = audit.decided_by(decider);
        }
        let (decision, why) = match &verdict.decision {
            Decision::Allow => ("allow", None),
            Decision::Ask { why } | Decision::Deny { why } => ("deny", Some(why.clone())),
        };
        Decided {
            decision,
            decider: match audit.decider {
                Decider::Rule => "rule",
                Decider::Default => "default",
                Decider::User => "user",
                Decider::Headless => "headless",
            },
            rule: verdict.rule.clone(),
            source: verdict.source.clone(),
            why,
            audit,
        }
    }
}

pub struct Gate {
    policy: Policy,
    workspace: PathBuf,
    headless: bool,
}

impl Gate {
    /// A server defined by the (trusted) project starts a program of the project's
    /// choosing: the first connect of it in a session asks, showing its command line.
    /// Headless runs only reach project servers with `--trust-project`, which is the
    /// user's consent given up front. Returns `Err(why)` when it was not approved.
    pub async fn approve_project_server(
        &mut self,
        config: &crate::config::ServerConfig,
        events: &mpsc::Sender<AgentEvent>,
    ) -> Result<(), String> {
        let Some(question) = self.policy.project_server_question(config) else {
            return Ok(());
        };
        if self.headless {
            self.policy.approve_project_server(config);
            return Ok(());
        }
        let (reply, answer) = oneshot::channel();
        let tool = PoolTool {
            name: BuiltinTool::ConnectMcp.name().to_string(),
            origin: ToolOrigin::Builtin(BuiltinTool::ConnectMcp),
            description: format!("Start the project's MCP server '{}'", question.server),
            input_schema: std::sync::Arc::new(serde_json::json!({"type": "object"})),
            claims: Default::default(),
            shortened: false,
        };
        let request = PermissionRequest {
            kind: PermissionKind::ProjectServer,
            call_id: format!("project-server-{}", question.server),
            tool,
            input: serde_json::json!({
                "server": question.server,
                "command": question.command_line,
            }),
            why: question.why.clone(),
            verdict: Verdict {
                decision: Decision::Ask {
                    why: question.why.clone(),
                },
                rule: "project server: asks once per session".into(),
                source: RuleSource::Default,
            },
            reply,
        };
        if events
            .send(AgentEvent::PermissionRequest(request))
            .await
            .is_err()
        {
            return Err("the front end is gone".into());
        }
        match answer.await {
            Ok(
                UserDecision::AllowOnce | UserDecision::AllowSession | UserDecision::AllowAlways,
            ) => {
                self.policy.approve_project_server(config);
                Ok(())
            }
            Ok(UserDecision::DenyWithNote(note)) => Err(format!(
                "Permission denied by the user: {note} (project server '{}' was not started)",
                question.server
            )),
            _ => Err(format!(
                "Permission denied: the user did not approve starting the project's MCP server '{}' ({})",
                question.server, question.command_line
            )),
        }
    }

    pub fn new(policy: Policy, workspace: PathBuf, headless: bool) -> Self {
        Gate {
            policy,
            workspace,
            headless,
        }
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

    /// How the pool panel shows a tool before any input is known.
    pub fn badge(&self, tool: &PoolTool) -> Verdict {
        self.policy
            .badge(tool, &PolicyContext::new(&self.workspace))
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
        self.policy.revoke(tool)
    }

    /// Decides one call, asking the user when the policy says Ask. Returns the outcome, the
    /// audit record (None when cancelled before anyone decided) and notices for the user.
    pub async fn check(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Gated, Option<Decided>, Vec<String>) {
        let verdict = self.verdict(tool, input);
        match verdict.decision.clone() {
            Decision::Allow => (
                Gated::Run,
                Some(Decided::new(tool, input, &verdict, None)),
                Vec::new(),
            ),
            Decision::Deny { why } => (
                Gated::Refused(format!("Permission denied: {why}")),
                Some(Decided::new(tool, input, &verdict, None)),
                Vec::new(),
            ),
            Decision::Ask { why } if self.headless => {
                let rule = always_rule(&self.policy, tool, input, &self.context(tool, input))
                    .map_or_else(|_| suggested_rule(tool, input), |always| always.text);
                let denied = Verdict {
                    decision: Decision::Deny {
                        why: format!("{why}; approval is unavailable in non-interactive mode"),
                    },
                    rule: verdict.rule.clone(),
                    source: verdict.source.clone(),
                };
                (
                    Gated::Refused(format!(
                        "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow {rule}"
                    )),
                    Some(Decided::new(tool, input, &denied, Some(Decider::Headless))),
                    Vec::new(),
                )
            }
            Decision::Ask { why } => {
                self.ask_user(tool, input, call_id, why, verdict, events, cancel)
                    .await
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn ask_user(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        why: String,
        verdict: Verdict,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Gated, Option<Decided>, Vec<String>) {
        let (reply, answer) = oneshot::channel();
        let request = PermissionRequest {
            kind: PermissionKind::ToolCall,
            call_id: call_id.to_string(),
            tool: tool.clone(),
            input: input.clone(),
            why: why.clone(),
            verdict,
            reply,
        };
        if events
            .send(AgentEvent::PermissionRequest(request))
            .await
            .is_err()
        {
            return (Gated::Cancelled, None, Vec::new());
        }
        let answer = tokio::select! {
            answer = answer => answer,
            () = cancel.cancelled() => return (Gated::Cancelled, None, Vec::new()),
        };
        let by_user = |allowed: bool, note: Option<&str>, rule: &str| {
            let mut verdict = Verdict::user_answer(allowed, note);
            verdict.rule = rule.to_string();
            Decided::new(tool, input, &verdict, Some(Decider::User))
        };
        match answer {
            Ok(UserDecision::AllowOnce) => (
                Gated::Run,
                Some(by_user(true, None, "user answer: allow once")),
                Vec::new(),
            ),
            Ok(UserDecision::AllowSession) => {
                self.policy.grant(&tool.name);
                (
                    Gated::Run,
                    Some(by_user(true, None, "user answer: allow for this session")),
                    vec![format!(
                        "{} is allowed for the rest of this session.",
                        tool.name
                    )],
                )
            }
            Ok(UserDecision::AllowAlways) => {
                let notice = match self.save_always(tool, input).await {
                    Ok(always) => format!(
                        "Always allowed: wrote the allow rule {} to {}.",
                        always.text,
                        always.file.display()
                    ),
                    Err(e) => {
                        self.policy.grant(&tool.name);
                        format!("{e}; {} is allowed for this session only.", tool.name)
                    }
                };
                (
                    Gated::Run,
                    Some(by_user(true, None, "user answer: always allow")),
                    vec![notice],
                )
            }
            Ok(UserDecision::Deny) => (
                Gated::Refused("Permission denied: the user denied this call".into()),
                Some(by_user(false, None, "user answer: deny")),
                Vec::new(),
            ),
            Ok(UserDecision::DenyWithNote(note)) => (
                Gated::Refused(format!("Permission denied by the user: {note}")),
                Some(by_user(false, Some(&note), "user answer: deny with a note")),
                Vec::new(),
            ),
            // The front end dropped the question (closed dialog, front end gone): refuse.
            Err(_) => (
                Gated::Refused("Permission denied: the permission request was dismissed".into()),
                Some(by_user(false, None, "permission request dismissed")),
                Vec::new(),
            ),
        }
    }
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
