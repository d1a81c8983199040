//! Stage 3, the policy's verdict on the call (session grants included), made on the
//! context's mode and resolved path; and the "always" rule the person may be offered,
//! worked out the same way.

use super::CallContext;
use crate::gate::{Gate, GateError, resolve_target};
use crate::policy::{AlwaysRule, PolicyContext, Verdict, always_rule, path_to_resolve};

/// The stage: the policy's verdict.
pub(super) fn verdict(gate: &Gate, ctx: &CallContext<'_>) -> Verdict {
    gate.verdict(ctx)
}

impl Gate {
    /// The policy's context for the call. A file tool's path was resolved as the decision
    /// started (file-system metadata: symlinks, `..`), so the decision itself does no I/O.
    fn policy_context(&self, ctx: &CallContext<'_>) -> PolicyContext<'_> {
        let (tool, input) = (ctx.tool(), ctx.input());
        let checked = ctx
            .target
            .as_ref()
            .filter(|t| path_to_resolve(tool, input).as_deref() == Some(t.requested.as_str()));
        let target = match checked {
            Some(target) => Some(target.clone()),
            None => resolve_target(&self.workspace, tool, input),
        };
        PolicyContext::new(&self.workspace)
            .with_target(target)
            .with_mode(ctx.mode)
    }

    /// The policy's verdict for the call (session grants included).
    pub(in crate::gate) fn verdict(&self, ctx: &CallContext<'_>) -> Verdict {
        let policy_ctx = self.policy_context(ctx);
        self.grants.with(|grants| {
            self.policy
                .decide(ctx.tool(), ctx.input(), &policy_ctx.with_grants(grants))
        })
    }

    /// The "always" rule for the call (session grants included, as in [`Self::verdict`]).
    pub(in crate::gate) fn always_rule(
        &self,
        ctx: &CallContext<'_>,
    ) -> Result<AlwaysRule, GateError> {
        let policy_ctx = self.policy_context(ctx);
        self.grants
            .with(|grants| {
                always_rule(
                    &self.policy,
                    ctx.tool(),
                    ctx.input(),
                    &policy_ctx.with_grants(grants),
                )
            })
            .map_err(GateError::from)
    }
}
