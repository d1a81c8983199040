//! A PreToolUse hook's say weighed against the rules (decision 0086). Deny rules, the bash
//! deny list and the managed policy beat any hook; a hook's deny beats allow rules; a
//! hook's allow answers an ask (never a deny, never a step out of the sandbox, never a
//! changed definition); a hook that asks, fails or times out makes the call ask (so
//! headless denies it), saying why.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Gate, GateOutcome, Gated};
use crate::builtin::BuiltinTool;
use crate::hooks::{PreToolDecision, PreToolSay};
use crate::policy::{AuditRecord, Decider, Decision, Permit, Verdict};
use crate::pool::PoolTool;
use crate::protocol::AgentEvent;

impl Gate {
    /// Decides one call with a PreToolUse hook's say (None: no hook had one).
    #[allow(clippy::too_many_arguments)]
    pub async fn check_hooked(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        hook: Option<&PreToolDecision>,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let verdict = self.verdict(tool, input);
        let Some(hook) = hook else {
            return self
                .check_verdict(tool, input, call_id, verdict, events, cancel)
                .await;
        };
        // A deny rule, and anything the managed policy decides, are beyond a hook's reach.
        if matches!(verdict.decision, Decision::Deny { .. }) || verdict.source.is_managed() {
            return self
                .check_verdict(tool, input, call_id, verdict, events, cancel)
                .await;
        }
        match &hook.say {
            PreToolSay::Deny(reason) => {
                let why = if reason.is_empty() {
                    format!("denied by the {}", hook.hook)
                } else {
                    format!("denied by the {}: {reason}", hook.hook)
                };
                let record = AuditRecord::new(
                    &tool.name,
                    input,
                    Permit::Deny,
                    Some(why.clone()),
                    Decider::Hook {
                        hook: hook.hook.clone(),
                        reason: reason.clone(),
                    },
                );
                GateOutcome::new(
                    Gated::Refused(format!("Permission denied: {why}")),
                    Some(record),
                )
            }
            PreToolSay::Allow(reason)
                if matches!(verdict.decision, Decision::Ask { .. })
                    && self.hook_may_answer(tool, input, &verdict) =>
            {
                let record = AuditRecord::new(
                    &tool.name,
                    input,
                    Permit::Allow,
                    None,
                    Decider::Hook {
                        hook: hook.hook.clone(),
                        reason: reason.clone(),
                    },
                );
                GateOutcome::new(Gated::Run, Some(record))
            }
            PreToolSay::Ask(reason) | PreToolSay::Failed(reason) => {
                let said = if matches!(hook.say, PreToolSay::Ask(_)) {
                    "asks"
                } else {
                    "failed"
                };
                let why = if reason.is_empty() {
                    format!("the {} {said}", hook.hook)
                } else {
                    format!("the {} {said}: {reason}", hook.hook)
                };
                let asked = Verdict {
                    decision: Decision::Ask { why },
                    rule: hook.hook.clone(),
                    source: verdict.source,
                };
                self.check_verdict(tool, input, call_id, asked, events, cancel)
                    .await
            }
            PreToolSay::Allow(_) | PreToolSay::Nothing => {
                self.check_verdict(tool, input, call_id, verdict, events, cancel)
                    .await
            }
        }
    }

    /// Whether a hook's allow may answer this ask: not a step out of the sandbox (only the
    /// person decides that) and not a changed or new definition (the person sees it).
    fn hook_may_answer(&self, tool: &PoolTool, input: &Value, verdict: &Verdict) -> bool {
        let escalates = tool.builtin_kind() == Some(BuiltinTool::Bash)
            && !matches!(self.escalation_reason(input), Ok(None));
        !escalates && self.definition_news(tool, verdict).is_none()
    }
}
