//! A PreToolUse hook's say weighed against the rules (decision 0086). Deny rules, the bash
//! deny list and the managed policy beat any hook; a hook's deny beats allow rules; a
//! hook's allow answers an ask (never a deny, never a step out of the sandbox, never a
//! changed definition); a hook that asks, fails or times out makes the call ask (so
//! headless denies it), saying why.

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Gate, GateOutcome, Gated};
use crate::builtin::BuiltinId;
use crate::hooks::{Hooks, PreToolDecision, PreToolSay};
use crate::policy::{AuditRecord, Decider, Decision, Permit, Verdict};
use crate::pool::PoolTool;
use crate::protocol::AgentEvent;
use crate::settings::HookEvent;

impl Gate {
    /// Non-interactive: nobody can be asked (the agent's hooks need to know too).
    pub fn is_headless(&self) -> bool {
        self.headless
    }

    /// Decides one call with a PreToolUse hook's say (None: no hook had one), in the mode in
    /// force as the decision starts (the outcome says which).
    #[allow(clippy::too_many_arguments)]
    pub async fn check_hooked(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        hook: Option<&PreToolDecision>,
        hooks: &mut Hooks,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let mode = self.start_decision();
        self.begin_call(tool, input);
        let outcome = self
            .decide_hooked(tool, input, call_id, hook, hooks, events, cancel)
            .await;
        let outcome = self.end_call(outcome);
        self.decided(mode, outcome)
    }

    #[allow(clippy::too_many_arguments)]
    async fn decide_hooked(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        hook: Option<&PreToolDecision>,
        hooks: &mut Hooks,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let verdict = self.verdict(tool, input);
        let Some(hook) = hook else {
            return self
                .before_asking(tool, input, call_id, verdict, hooks, events, cancel)
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
                let failed = matches!(hook.say, PreToolSay::Failed(_));
                let said = if failed { "failed" } else { "asks" };
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
                // A failed guard is never answered by another hook: the person decides.
                if failed {
                    return self
                        .check_verdict(tool, input, call_id, asked, events, cancel)
                        .await;
                }
                self.before_asking(tool, input, call_id, asked, hooks, events, cancel)
                    .await
            }
            PreToolSay::Allow(_) | PreToolSay::Nothing => {
                self.before_asking(tool, input, call_id, verdict, hooks, events, cancel)
                    .await
            }
        }
    }

    /// A question is about to be asked: PermissionRequest hooks may answer it (allow or
    /// deny); otherwise Notification hooks hear that a question waits (console only).
    #[allow(clippy::too_many_arguments)]
    async fn before_asking(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        verdict: Verdict,
        hooks: &mut Hooks,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let asks = matches!(verdict.decision, Decision::Ask { .. })
            && !verdict.source.is_managed()
            && self.hook_may_answer(tool, input, &verdict);
        if !asks {
            return self
                .check_verdict(tool, input, call_id, verdict, events, cancel)
                .await;
        }
        let mut notices = Vec::new();
        if hooks.has(HookEvent::PermissionRequest) {
            let fields = json!({ "tool_name": tool.name, "tool_input": input });
            let result = hooks
                .event(HookEvent::PermissionRequest, Some(&tool.name), fields)
                .await;
            notices.extend(result.notices.iter().map(|n| format!("hooks: {n}")));
            if let Some((allow, reason, hook)) = result.answer {
                let why = (!allow).then(|| format!("denied by the {hook}: {reason}"));
                let (permit, gated) = match &why {
                    None => (Permit::Allow, Gated::Run),
                    Some(why) => (
                        Permit::Deny,
                        Gated::Refused(format!("Permission denied: {why}")),
                    ),
                };
                let decider = Decider::Hook { hook, reason };
                let record = AuditRecord::new(&tool.name, input, permit, why, decider);
                return GateOutcome::new(gated, Some(record)).with_notices(notices);
            }
        }
        if !self.headless && hooks.has(HookEvent::Notification) {
            let message = format!("toolgate needs your permission to use {}", tool.name);
            let fields = json!({ "message": message, "notification_type": "permission_prompt" });
            let result = hooks.event(HookEvent::Notification, None, fields).await;
            notices.extend(result.notices.iter().map(|n| format!("hooks: {n}")));
        }
        let outcome = self
            .check_verdict(tool, input, call_id, verdict, events, cancel)
            .await;
        if notices.is_empty() {
            return outcome;
        }
        let mut all = notices;
        all.extend(outcome.notices.clone());
        outcome.with_notices(all)
    }

    /// Whether a hook's allow may answer this ask: not a step out of the sandbox (only the
    /// person decides that) and not a changed or new definition (the person sees it).
    fn hook_may_answer(&self, tool: &PoolTool, input: &Value, verdict: &Verdict) -> bool {
        let escalates = tool.builtin_kind().is_some_and(BuiltinId::is_shell)
            && !matches!(self.escalation_reason(input), Ok(None));
        !escalates && self.definition_news(tool, verdict).is_none()
    }
}
