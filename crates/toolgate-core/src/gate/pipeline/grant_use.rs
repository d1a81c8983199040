//! Stage 6, a grant the verdict reached is spent at the moment of the call: checked
//! (time) and counted (calls). A limited grant that ended since the verdict is gone, and
//! the call is decided again without it.

use super::CallContext;
use crate::gate::Gate;
use crate::gate::grants::Spent;
use crate::gate::limited::LimitedUse;
use crate::policy::{RuleSource, Verdict};

/// The verdict the call goes on with, and what it spent of a limited grant.
pub(super) fn spend(
    gate: &Gate,
    ctx: &CallContext<'_>,
    verdict: Verdict,
) -> (Verdict, Option<LimitedUse>) {
    if verdict.source != RuleSource::SessionGrant {
        return (verdict, None);
    }
    match gate.grants.spend(&verdict.rule) {
        Spent::Unlimited => (verdict, None),
        Spent::Limited { limit, left } => (verdict, Some(LimitedUse { limit, left })),
        Spent::Gone => (gate.verdict(ctx), None),
    }
}
