//! Stage 4, a PreToolUse hook's say weighed against the policy's verdict (decision 0086).
//! Deny rules, the bash deny list and the managed policy beat any hook; a hook's deny
//! beats allow rules; a hook's allow answers an ask (never a deny, never a step out of
//! the sandbox, never a changed definition); a hook that asks, fails or times out makes
//! the call ask (so headless denies it), saying why.

use std::ops::ControlFlow;

use super::{CallContext, Stage};
use crate::builtin::BuiltinId;
use crate::gate::{Gate, GateOutcome, Gated};
use crate::hooks::PreToolSay;
use crate::policy::{AuditRecord, Decider, Decision, Permit, Verdict};

/// The verdict the call goes on with, or the hook's own decision.
pub(super) fn weigh(gate: &Gate, ctx: &mut CallContext<'_>, verdict: Verdict) -> Stage<Verdict> {
    let Some(hook) = ctx.hook.take() else {
        return ControlFlow::Continue(verdict);
    };
    // A deny rule, and anything the managed policy decides, are beyond a hook's reach.
    if matches!(verdict.decision, Decision::Deny { .. }) || verdict.source.is_managed() {
        return ControlFlow::Continue(verdict);
    }
    let (tool, input) = (ctx.tool(), ctx.input());
    match &hook.say {
        PreToolSay::Deny(reason) => {
            let why = if reason.is_empty() {
                format!("denied by the {}", hook.hook)
            } else {
                format!("denied by the {}: {reason}", hook.hook)
            };
            let decider = Decider::Hook {
                hook: hook.hook.clone(),
                reason: reason.clone(),
            };
            let record =
                AuditRecord::new(&tool.name, input, Permit::Deny, Some(why.clone()), decider);
            ControlFlow::Break(GateOutcome::new(
                Gated::Refused(format!("Permission denied: {why}")),
                Some(record),
            ))
        }
        PreToolSay::Allow(reason)
            if matches!(verdict.decision, Decision::Ask { .. })
                && may_answer(gate, ctx, &verdict) =>
        {
            let decider = Decider::Hook {
                hook: hook.hook.clone(),
                reason: reason.clone(),
            };
            let record = AuditRecord::new(&tool.name, input, Permit::Allow, None, decider);
            ControlFlow::Break(GateOutcome::new(Gated::Run, Some(record)))
        }
        PreToolSay::Ask(reason) | PreToolSay::Failed(reason) => {
            let failed = matches!(hook.say, PreToolSay::Failed(_));
            let said = if failed { "failed" } else { "asks" };
            let why = if reason.is_empty() {
                format!("the {} {said}", hook.hook)
            } else {
                format!("the {} {said}: {reason}", hook.hook)
            };
            // A failed guard is never answered by another hook: the person decides.
            ctx.person_decides = failed;
            ControlFlow::Continue(Verdict {
                decision: Decision::Ask { why },
                rule: hook.hook.clone(),
                source: verdict.source,
            })
        }
        PreToolSay::Allow(_) | PreToolSay::Nothing => ControlFlow::Continue(verdict),
    }
}

/// Whether a hook's allow may answer this ask: not a step out of the sandbox (only the
/// person decides that) and not a changed or new definition (the person sees it).
pub(super) fn may_answer(gate: &Gate, ctx: &CallContext<'_>, verdict: &Verdict) -> bool {
    let escalates = ctx.tool().builtin_kind().is_some_and(BuiltinId::is_shell)
        && !matches!(gate.escalation_reason(ctx), Ok(None));
    !escalates && gate.definition_news(ctx.tool(), verdict).is_none()
}
