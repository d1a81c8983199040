//! The permission gate in front of every tool call: the host policy's verdict, session
//! grants, and — for Ask — the user's answer through the front end (or, headless, a
//! denial that says how to allow the call).

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::events::{AgentEvent, PermissionKind, PermissionRequest, UserDecision};
use crate::policy::{Decision, Policy, PolicyContext, RuleSource, Verdict};
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
}

pub struct Gate {
    policy: Policy,
    workspace: PathBuf,
    headless: bool,
    /// Tools the user allowed "for this session" (model-facing names).
    session_grants: HashSet<String>,
}

impl Gate {
    pub fn new(policy: Policy, workspace: PathBuf, headless: bool) -> Self {
        Gate {
            policy,
            workspace,
            headless,
            session_grants: HashSet::new(),
        }
    }

    /// The verdict the pool panel shows and the gate starts from. A deny rule beats a
    /// session grant: the grant only turns an Ask into an Allow.
    pub fn verdict(&self, tool: &PoolTool, input: &Value) -> Verdict {
        let ctx = PolicyContext {
            workspace: &self.workspace,
        };
        let verdict = self.policy.decide(tool, input, &ctx);
        if matches!(verdict.decision, Decision::Ask { .. })
            && self.session_grants.contains(&tool.name)
        {
            return Verdict {
                decision: Decision::Allow,
                rule: format!("session grant: {}", tool.name),
                source: RuleSource::SessionGrant,
            };
        }
        verdict
    }

    pub fn revoke(&mut self, tool: &str) -> bool {
        self.session_grants.remove(tool)
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
        let decider = decider_of(&verdict.source);
        match verdict.decision.clone() {
            Decision::Allow => (
                Gated::Run,
                Some(Decided {
                    decision: "allow",
                    decider,
                    rule: verdict.rule,
                    source: verdict.source,
                    why: None,
                }),
                Vec::new(),
            ),
            Decision::Deny { why } => (
                Gated::Refused(format!("Permission denied: {why}")),
                Some(Decided {
                    decision: "deny",
                    decider,
                    rule: verdict.rule,
                    source: verdict.source,
                    why: Some(why),
                }),
                Vec::new(),
            ),
            Decision::Ask { why } if self.headless => {
                let rule = suggested_rule(tool, input);
                (
                    Gated::Refused(format!(
                        "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow {rule}"
                    )),
                    Some(Decided {
                        decision: "deny",
                        decider: "headless",
                        rule: verdict.rule,
                        source: verdict.source,
                        why: Some(why),
                    }),
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
        let user = |decision, rule: &str, why: Option<String>| Decided {
            decision,
            decider: "user",
            rule: rule.to_string(),
            source: RuleSource::UserAnswer,
            why,
        };
        match answer {
            Ok(UserDecision::AllowOnce) => (
                Gated::Run,
                Some(user("allow", "allow once", None)),
                Vec::new(),
            ),
            Ok(UserDecision::AllowSession) => {
                self.session_grants.insert(tool.name.clone());
                (
                    Gated::Run,
                    Some(user("allow", "allow for this session", None)),
                    vec![format!(
                        "{} is allowed for the rest of this session.",
                        tool.name
                    )],
                )
            }
            Ok(UserDecision::AllowAlways) => {
                let notice = self.save_always(tool);
                (
                    Gated::Run,
                    Some(user("allow", "allow always", None)),
                    vec![notice],
                )
            }
            Ok(UserDecision::Deny) => (
                Gated::Refused("Permission denied: the user denied this call".into()),
                Some(user("deny", "deny", None)),
                Vec::new(),
            ),
            Ok(UserDecision::DenyWithNote(note)) => (
                Gated::Refused(format!("Permission denied by the user: {note}")),
                Some(user("deny", "deny with note", Some(note))),
                Vec::new(),
            ),
            // The front end dropped the question (closed dialog, front end gone): refuse.
            Err(_) => (
                Gated::Refused("Permission denied: the permission request was dismissed".into()),
                Some(user("deny", "dismissed", None)),
                Vec::new(),
            ),
        }
    }

    /// "Always": until the policy can write rules into the project config, the grant holds
    /// for this session and the notice says it was not saved.
    fn save_always(&mut self, tool: &PoolTool) -> String {
        self.session_grants.insert(tool.name.clone());
        format!(
            "{} is allowed for this session; saving an always-allow rule is not available in this build.",
            tool.name
        )
    }
}

fn decider_of(source: &RuleSource) -> &'static str {
    match source {
        RuleSource::Default => "default",
        RuleSource::UserConfig(_) | RuleSource::ProjectConfig(_) | RuleSource::Flag => "rule",
        RuleSource::SessionGrant | RuleSource::UserAnswer => "user",
    }
}

/// The `--allow` rule that would let this call through without asking.
pub fn suggested_rule(tool: &PoolTool, input: &Value) -> String {
    match (&tool.origin, tool.name.as_str()) {
        (ToolOrigin::Builtin, "bash") => {
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
        _ => tool.name.clone(),
    }
}
