//! What the gate returns for every decision: what may happen, the decision record for the
//! session log and the front end, and notices for the person.

use serde_json::Value;

use crate::beneath::FileTarget;
use crate::policy::{AuditRecord, Decider, Permit, PersonAnswer};
use crate::pool::{PoolTool, ToolOrigin};
use crate::protocol::PermissionMode;
use crate::protocol::questions::Reply;

/// What the gate lets happen to one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Gated {
    Run,
    /// bash, outside the OS sandbox: the person approved it (the environment is still
    /// scrubbed of secrets).
    RunUnconfined,
    /// Refused; the text is the tool_result the model gets (for sampling: the reason).
    Refused(String),
    /// The turn was cancelled (or the server withdrew its request) while the question was
    /// open.
    Cancelled,
}

/// One decision of the gate.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    pub decision: Gated,
    /// The decision record; None when cancelled before anyone decided (and for a call
    /// refused before the policy, such as invalid escalation arguments).
    pub audit: Option<AuditRecord>,
    /// Notices for the person (a grant given, a rule written, a pin that was not saved).
    pub notices: Vec<String>,
    /// The permission mode the call was decided in: it runs in that mode's sandbox (plan:
    /// read-only), whatever the mode is by the time it runs. Stamped by the gate's entry
    /// points; until then the strictest mode, so a path that missed the stamp fails closed.
    pub decided_in: PermissionMode,
    /// For a file tool's call that may run: the location the decision was made on, which
    /// is what the tool opens (never the input's path resolved again).
    pub target: Option<FileTarget>,
}

impl GateOutcome {
    pub fn new(decision: Gated, audit: Option<AuditRecord>) -> GateOutcome {
        GateOutcome {
            decision,
            audit,
            notices: Vec::new(),
            decided_in: PermissionMode::Plan,
            target: None,
        }
    }

    pub fn cancelled() -> GateOutcome {
        GateOutcome::new(Gated::Cancelled, None)
    }

    pub fn with_notices(self, notices: Vec<String>) -> GateOutcome {
        GateOutcome { notices, ..self }
    }

    /// The decided location goes with a call that may run, and only with one.
    pub(super) fn with_target(self, target: Option<FileTarget>) -> GateOutcome {
        let target = match self.decision {
            Gated::Run | Gated::RunUnconfined => target,
            Gated::Refused(_) | Gated::Cancelled => None,
        };
        GateOutcome { target, ..self }
    }
}

/// A person's deny answer as a refusal (`plain`: the tool_result of a plain deny).
pub(super) fn person_refusal(answer: &PersonAnswer, plain: &str) -> Gated {
    match answer {
        PersonAnswer::DenyWithNote(note) => {
            Gated::Refused(format!("Permission denied by the user: {note}"))
        }
        _ => Gated::Refused(plain.to_string()),
    }
}

/// The outcome of the person's answer to a question about `tool`.
pub(super) fn answered(
    tool: &PoolTool,
    input: &Value,
    answer: PersonAnswer,
    asked_by: String,
    decision: Gated,
    notices: Vec<String>,
) -> GateOutcome {
    GateOutcome::new(decision, Some(person_record(tool, input, answer, asked_by)))
        .with_notices(notices)
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
pub(super) fn refused_unanswered<A>(
    tool: &PoolTool,
    input: &Value,
    reply: &Reply<A>,
    why: String,
    asked_by: String,
) -> GateOutcome {
    let decider = match reply {
        Reply::Expired(_) => Decider::Expired { asked_by },
        _ => Decider::Dismissed { asked_by },
    };
    refused(tool, input, why, decider)
}

/// Refused without a person's answer (`why` also goes to the model, after "Permission
/// denied: ").
pub(super) fn refused(
    tool: &PoolTool,
    input: &Value,
    why: String,
    decider: Decider,
) -> GateOutcome {
    GateOutcome::new(
        Gated::Refused(format!("Permission denied: {why}")),
        Some(AuditRecord::new(
            &tool.name,
            input,
            Permit::Deny,
            Some(why),
            decider,
        )),
    )
}

/// The `--allow` rule that would let this call through without asking.
pub fn suggested_rule(tool: &PoolTool, input: &Value) -> String {
    match tool.origin {
        ToolOrigin::Builtin(kind) if kind.is_shell() => {
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

/// What the model reads when headless mode denies an Ask: how to allow it, unless only
/// the administrator can (a managed ask rule, or `managed_rules_only`).
pub(super) fn headless_refusal(
    policy: &crate::policy::Policy,
    verdict: &crate::policy::Verdict,
    why: &str,
    rule: &str,
) -> String {
    if verdict.source.is_managed() {
        format!(
            "Permission denied: {why}; approval is unavailable in non-interactive mode, and no --allow can override the managed policy"
        )
    } else if verdict.rule == crate::policy::BASH_UNRESOLVED {
        // No allow rule lets such a command run (decision 0087): say so, not "--allow".
        format!(
            "Permission denied: {why}; approval is unavailable in non-interactive mode, and no --allow rule lets a command that cannot be checked run"
        )
    } else if policy.managed_rules_only() {
        format!(
            "Permission denied: approval is unavailable in non-interactive mode; the managed policy sets managed_rules_only, so only its own allow rules apply ({rule} would need to be allowed there)"
        )
    } else {
        format!(
            "Permission denied: approval is unavailable in non-interactive mode; allow it with --allow {rule}"
        )
    }
}
