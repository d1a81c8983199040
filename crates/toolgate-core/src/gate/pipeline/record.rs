//! Stage 10, the decision recorded on its outcome: the mode it was decided in (the call
//! runs in that mode's sandbox), the location a call that may run was decided on (what
//! the tool opens), and the hook stages' notices before the outcome's own.

use super::{AfterRun, CallContext, Decided, Judged};
use crate::gate::GateOutcome;

pub(super) fn finish(ctx: CallContext<'_>, outcome: GateOutcome) -> Judged {
    let target = ctx.target.map(|t| t.resolved.file_target());
    let mut notices = ctx.notices;
    notices.extend(outcome.notices.iter().cloned());
    let outcome = GateOutcome {
        decided_in: ctx.mode,
        notices,
        ..outcome.with_target(target)
    };
    let after_run = AfterRun {
        tool_name: ctx.call.tool.name.clone(),
        input: ctx.call.input.clone(),
    };
    Judged::Decided(Box::new(Decided {
        outcome,
        input: ctx.call.input,
        after_run,
    }))
}
