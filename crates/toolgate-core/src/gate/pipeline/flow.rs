//! Stage 7, where the arguments came from (decisions 0098, 0103): a call the verdict lets
//! run (an allow rule, a grant, accept-edits, auto mode) asks when an argument carries a
//! token that first appeared in the free text of an untrusted tool result, or is a
//! credential seen in untrusted content, or, for a call that changes something, is a whole
//! value (a name, an id, an amount) only untrusted free text carried. The question names
//! each such argument, the value, the call, field and record it came from, and quotes the
//! words around it. Deny and ask verdicts pass unchanged: deny still wins.
//! It weighs the verdict before a grant is spent: a call it asks about spends no limited
//! grant, and its question goes to the PermissionRequest / Notification hooks like any.

use crate::builtin::Judgement;
use crate::flow::{FLOW_RULE, Tiers, check, reason};
use crate::gate::Gate;
use crate::policy::{Decision, Verdict};
use crate::pool::{PoolTool, ToolOrigin};

use super::CallContext;

pub(super) fn weigh(gate: &Gate, ctx: &CallContext<'_>, verdict: Verdict) -> Verdict {
    if !gate.flow_settings.enabled || verdict.decision != Decision::Allow {
        return verdict;
    }
    let taints = {
        let labels = gate.flow_labels();
        check(&labels, ctx.input(), tiers(ctx.tool()))
    };
    if taints.is_empty() {
        return verdict;
    }
    let why = reason(&taints);
    // The managed policy's `on_untrusted = "deny"`: refused, not asked.
    let decision = if gate.flow_settings.deny {
        Decision::Deny {
            why: format!(
                "{why}; the managed policy refuses such calls (flow.on_untrusted = \"deny\")"
            ),
        }
    } else {
        Decision::Ask { why }
    };
    Verdict {
        decision,
        rule: FLOW_RULE.to_string(),
        source: verdict.source,
    }
}

/// Which tiers judge a call. A server's `readOnlyHint` on its own tool spares that tool the
/// values tier only, never the tokens: the hint speaks for what that server itself does,
/// and a server that lies about its own tool needs no injected value to do harm. Built-in
/// tools that only look (file reads, resources, listings) are reads too. A changing tool is
/// judged as one that may destroy (MCP's default for `destructiveHint`) unless its server
/// marks it `destructiveHint: false` (decision 0104); `bash`, `connect_mcp` and the file
/// writes may always destroy.
fn tiers(tool: &PoolTool) -> Tiers {
    let (reads, only_adds) = match &tool.origin {
        ToolOrigin::Mcp { .. } => (
            tool.claims.read_only == Some(true),
            tool.claims.destructive == Some(false),
        ),
        ToolOrigin::Builtin(kind) => match kind.judgement() {
            Judgement::Shell | Judgement::Connector => (false, false),
            Judgement::File(access) => (!access.writes(), false),
            Judgement::Resource { .. } | Judgement::Harmless { .. } => (true, false),
        },
    };
    match (reads, only_adds) {
        (true, _) => Tiers::Tokens,
        (false, true) => Tiers::TokensAndValues,
        (false, false) => Tiers::TokensAndNamedValues,
    }
}
