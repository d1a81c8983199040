//! Stage 9, the verdict carried out: allow (a hand-written rule's first use pins the
//! definition), deny, or ask: the person (`person.rs`), or headless a refusal that says
//! how to allow the call.

use super::CallContext;
use crate::gate::limited::LimitedUse;
use crate::gate::outcome::{headless_refusal, suggested_rule};
use crate::gate::{Gate, GateOutcome, Gated};
use crate::policy::{AuditRecord, Decider, Decision, Permit, Verdict};

pub(super) async fn run(
    gate: &mut Gate,
    ctx: &CallContext<'_>,
    verdict: Verdict,
    limited: Option<LimitedUse>,
) -> GateOutcome {
    let (tool, input) = (ctx.tool(), ctx.input());
    match verdict.decision.clone() {
        Decision::Allow => GateOutcome::new(
            Gated::Run,
            Gate::allow_record(tool, input, &verdict, limited),
        )
        .with_notices(gate.pin_on_rule_use(tool, &verdict).await),
        Decision::Deny { why } => GateOutcome::new(
            Gated::Refused(format!("Permission denied: {why}")),
            AuditRecord::from_verdict(&tool.name, input, &verdict),
        ),
        Decision::Ask { why } if gate.headless => {
            let rule = gate
                .always_rule(ctx)
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
            GateOutcome::new(
                Gated::Refused(headless_refusal(&gate.policy, &verdict, &why, &rule)),
                Some(record),
            )
        }
        Decision::Ask { why } => gate.ask_person(ctx, why, verdict).await,
    }
}
