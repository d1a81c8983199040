//! The gate's side of grants that end: granting one from the person's answer, spending it
//! at the moment of a call, and the audit record naming it.

use std::sync::Arc;

use serde_json::Value;

use super::Gate;
use super::clock::Clock;
use super::grants::Grants;
use crate::policy::{AuditRecord, Decider, GrantLimit, Permit, Verdict, grant_key};
use crate::pool::PoolTool;

/// What a call spent of a limited grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LimitedUse {
    pub(super) limit: GrantLimit,
    pub(super) left: crate::policy::GrantLeft,
}

impl Gate {
    /// Times limited grants by `clock` (tests move their own; production uses the real
    /// one). Set before the gate is used: it starts an empty grant store.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.grants = Grants::with_clock(clock);
        self
    }

    /// The record of a call the policy allowed: a limited grant is named with what is left.
    pub(super) fn allow_record(
        tool: &PoolTool,
        input: &Value,
        verdict: &Verdict,
        limited: Option<LimitedUse>,
    ) -> Option<AuditRecord> {
        match limited {
            Some(LimitedUse { limit, left }) => Some(AuditRecord::new(
                &tool.name,
                input,
                Permit::Allow,
                None,
                Decider::LimitedGrant {
                    tool: verdict.rule.clone(),
                    limit,
                    left,
                },
            )),
            None => AuditRecord::from_verdict(&tool.name, input, verdict),
        }
    }

    /// The person allowed this call and more for a while or a number of calls; returns
    /// the notice.
    pub(super) fn grant_limited(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        limit: GrantLimit,
    ) -> String {
        let key = grant_key(tool, input);
        self.grants.grant_limited(&key, limit);
        self.pinning.pin_session(tool);
        format!(
            "{key} is allowed {} (/permissions shows what is left and revokes it).",
            limit.describe()
        )
    }
}

#[cfg(test)]
#[path = "limited_tests.rs"]
mod tests;
