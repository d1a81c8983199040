//! Stage 5, a question about to be asked: PermissionRequest hooks may answer it (allow or
//! deny); otherwise Notification hooks hear that a question waits (console only). Only a
//! question a hook may answer at all gets here (see `hook_say::may_answer`).

use std::ops::ControlFlow;

use super::hook_say::may_answer;
use super::{CallContext, Stage};
use crate::gate::{Gate, GateOutcome, Gated};
use crate::hooks::{HookEvent, PermissionAnswer};
use crate::policy::{AuditRecord, Decider, Decision, Permit, Verdict};

/// The verdict the call goes on with, or a PermissionRequest hook's answer.
pub(super) async fn run(
    gate: &Gate,
    ctx: &mut CallContext<'_>,
    verdict: Verdict,
) -> Stage<Verdict> {
    let asks = !ctx.person_decides
        && matches!(verdict.decision, Decision::Ask { .. })
        && !verdict.source.is_managed()
        && may_answer(gate, ctx, &verdict);
    if !asks {
        return ControlFlow::Continue(verdict);
    }
    let tool = ctx.tool();
    if ctx.hooks().has(HookEvent::PermissionRequest) {
        let input = ctx.input().clone();
        let result = ctx.hooks().permission_request(&tool.name, &input).await;
        ctx.notices
            .extend(result.notices.iter().map(|n| format!("hooks: {n}")));
        if let Some(PermissionAnswer {
            allow,
            reason,
            hook,
        }) = result.answer
        {
            let why = (!allow).then(|| format!("denied by the {hook}: {reason}"));
            let (permit, gated) = match &why {
                None => (Permit::Allow, Gated::Run),
                Some(why) => (
                    Permit::Deny,
                    Gated::Refused(format!("Permission denied: {why}")),
                ),
            };
            let decider = Decider::Hook { hook, reason };
            let record = AuditRecord::new(&tool.name, &input, permit, why, decider);
            return ControlFlow::Break(GateOutcome::new(gated, Some(record)));
        }
    }
    if !gate.headless && ctx.hooks().has(HookEvent::Notification) {
        let result = ctx.hooks().permission_prompt(&tool.name).await;
        ctx.notices
            .extend(result.notices.iter().map(|n| format!("hooks: {n}")));
    }
    ControlFlow::Continue(verdict)
}
