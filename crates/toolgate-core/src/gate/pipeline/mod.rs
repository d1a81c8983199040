//! The gate's pipeline for one tool call (decision 0092): named stages run in order over
//! one [`CallContext`]. The agent sees one entry point, [`Gate::judge`], and in the
//! judgement it returns, the stage that follows the run ([`AfterRun`]).
//!
//! The stages, in order:
//! 1. `pre_tool_use`: the PreToolUse hooks say allow, deny, ask or nothing, and may
//!    change the input (checked again like the model's own);
//! 2. `context` (start): the mode the call is decided in and its path, resolved once;
//! 3. `policy`: the policy's verdict (session grants included);
//! 4. `hook_say`: the PreToolUse say weighed against that verdict (decision 0086);
//! 5. `permission_request`: a question about to be asked may be answered by
//!    PermissionRequest hooks; else Notification hooks hear that one waits;
//! 6. `grant_use`: a grant the verdict reached is spent (a limited one may have ended);
//! 7. `flow`: a call the verdict lets run asks when an argument came from the free text
//!    of an untrusted tool result (decision 0098);
//! 8. escalation (`../escalation.rs`): bash that would leave the sandbox;
//! 9. definition (`../pins/`): a changed or new tool definition;
//! 10. `decide`: allow, deny, or ask (the person, or headless a refusal), `person.rs`;
//! 11. `record`: the outcome stamped with the mode, the decided location, the notices;
//! 12. `post_tool_use` (after the agent ran the call): PostToolUse hooks, whose block
//!     reason is added to what the model reads.

mod context;
mod decide;
mod flow;
mod grant_use;
mod hook_say;
mod permission_request;
pub(super) mod person;
mod policy;
mod post_tool_use;
mod pre_tool_use;
mod record;

use std::ops::ControlFlow;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub(super) use context::CallContext;

use super::{Gate, GateOutcome};
use crate::hooks::Hooks;
use crate::pool::PoolTool;
use crate::protocol::AgentEvent;

/// A stage either hands the call on (with what the next stage needs) or ends the
/// pipeline with the call's outcome.
pub(super) type Stage<T = ()> = ControlFlow<GateOutcome, T>;

/// One tool call as the agent hands it to the gate.
pub struct GateCall<'a> {
    pub call_id: &'a str,
    pub tool: &'a PoolTool,
    /// The model's input, already checked against the tool's schema.
    pub input: Value,
    /// Where questions and the stages' notices go.
    pub events: &'a mpsc::Sender<AgentEvent>,
    /// The turn's cancellation: an open question is withdrawn.
    pub cancel: &'a CancellationToken,
    /// The hooks in force (PreToolUse, PermissionRequest, Notification run here).
    pub hooks: &'a mut Hooks,
    /// The tool's argument check, for an input a PreToolUse hook changed.
    pub check_arguments: &'a mut (dyn FnMut(&Value) -> Result<(), String> + Send + Sync),
}

/// What the gate made of one call.
pub enum Judged {
    /// A PreToolUse hook changed the input into one the tool's argument check refuses:
    /// the call neither runs nor is decided (the model reads the problem).
    Invalid(String),
    Decided(Box<Decided>),
}

/// A decided call: the outcome, the input it was decided on (and runs with), and the
/// stage that follows its run.
pub struct Decided {
    pub outcome: GateOutcome,
    pub input: Value,
    pub after_run: AfterRun,
}

/// The pipeline's last stage, held by the agent while the call runs.
pub struct AfterRun {
    tool_name: String,
    input: Value,
}

impl Gate {
    /// Judges one call: runs the stages in order (see the module's documentation) and
    /// returns the outcome, stamped with the mode it was decided in.
    pub async fn judge(&mut self, mut call: GateCall<'_>) -> Judged {
        let hook = match pre_tool_use::run(&mut call).await {
            Ok(hook) => hook,
            Err(invalid) => return Judged::Invalid(invalid),
        };
        let mut ctx = CallContext::start(self, call, hook);
        let outcome = match self.stages(&mut ctx).await {
            ControlFlow::Break(outcome) | ControlFlow::Continue(outcome) => outcome,
        };
        // A grant given, spent or ended by this call: the front end lists what it is told.
        if let Some(event) = self.grants.change_event() {
            let _ = ctx.events().send(event).await;
        }
        record::finish(ctx, outcome)
    }

    /// Stages 3 to 10: each hands the verdict on, or ends the pipeline with the outcome.
    async fn stages(&mut self, ctx: &mut CallContext<'_>) -> ControlFlow<GateOutcome, GateOutcome> {
        let verdict = policy::verdict(self, ctx);
        let verdict = hook_say::weigh(self, ctx, verdict)?;
        let verdict = permission_request::run(self, ctx, verdict).await?;
        let weighed = flow::weigh(self, ctx, verdict.clone());
        let (verdict, limited) = if weighed.decision == verdict.decision {
            grant_use::spend(self, ctx, verdict)
        } else {
            // A flow question spends no limited grant (the call may not run), and the
            // person's PermissionRequest and Notification hooks hear it as any question.
            (permission_request::run(self, ctx, weighed).await?, None)
        };
        self.escalation_stage(ctx, &verdict).await?;
        self.definition_stage(ctx, &verdict).await?;
        ControlFlow::Continue(decide::run(self, ctx, verdict, limited).await)
    }

    /// The pipeline without hooks (the gate's own tests).
    #[cfg(test)]
    pub async fn check(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let mut hooks = Hooks::none(&self.workspace);
        let mut valid = |_: &Value| Ok(());
        let call = GateCall {
            call_id,
            tool,
            input: input.clone(),
            events,
            cancel,
            hooks: &mut hooks,
            check_arguments: &mut valid,
        };
        match self.judge(call).await {
            Judged::Decided(decided) => decided.outcome,
            Judged::Invalid(problem) => GateOutcome::new(super::Gated::Refused(problem), None),
        }
    }
}

impl AfterRun {
    /// The last stage, once the call ran (its result is `response`): PostToolUse hooks see
    /// it, and a block's reason is added to what the model reads.
    pub async fn run(
        &self,
        hooks: &mut Hooks,
        events: &mpsc::Sender<AgentEvent>,
        response: String,
    ) -> String {
        post_tool_use::run(hooks, events, &self.tool_name, &self.input, response).await
    }
}
