//! Stage 7, where the arguments came from (decision 0098): a call the verdict lets run (an
//! allow rule, a grant, accept-edits, auto mode) asks when an argument carries a value
//! that first appeared in the free text of an untrusted tool result, or is a credential
//! seen in untrusted content. The question names each such argument, the value and the
//! call and field it came from. Deny and ask verdicts pass unchanged: deny still wins.
//! It weighs the verdict before a grant is spent: a call it asks about spends no limited
//! grant, and its question goes to the PermissionRequest / Notification hooks like any.

use crate::flow::{FLOW_RULE, check, reason};
use crate::gate::Gate;
use crate::policy::{Decision, Verdict};

use super::CallContext;

pub(super) fn weigh(gate: &Gate, ctx: &CallContext<'_>, verdict: Verdict) -> Verdict {
    if !gate.flow_settings.enabled || verdict.decision != Decision::Allow {
        return verdict;
    }
    let taints = {
        let labels = gate.flow_labels();
        check(&labels, labels.person(), ctx.input())
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
