//! Running bash outside the OS sandbox: because the model asked (with a justification) or
//! because the sandbox cannot confine bash here. Never by a rule: only the person, or
//! their grant for this session ([`UNSANDBOXED_GRANT`]), lets it run; headless refuses.

use std::time::Instant;

use std::ops::ControlFlow;

use serde_json::Value;

use super::Gate;
use super::ask::ask;
use super::grants::UNSANDBOXED_GRANT;
use super::outcome::{GateOutcome, Gated, answered, person_refusal, refused, refused_unanswered};
use super::pipeline::{CallContext, Stage};
use crate::builtin::BuiltinId;
use crate::policy::{AuditRecord, Decider, Decision, Permit, PersonAnswer, RuleSource, Verdict};
use crate::protocol::questions::{Escalation, EscalationReason, Origin, Reply, Request};
use crate::sandbox::BashWrites;
use crate::settings::SandboxMode;

/// Why a bash call that would leave the sandbox does not even get that question.
pub(super) enum NoEscalation {
    /// Its arguments are wrong (`unsandboxed` without a justification).
    Invalid(String),
    /// Its mode writes nothing (plan), which only the kernel's read-only sandbox
    /// guarantees: it cannot leave the sandbox, and without one it cannot run.
    ReadOnly { why: String, verdict: Verdict },
}

impl Gate {
    /// Stage 7 of the pipeline: a bash call the policy does not deny, that would leave the
    /// sandbox (or cannot run in it), ends the pipeline here.
    pub(super) async fn escalation_stage(
        &mut self,
        ctx: &CallContext<'_>,
        verdict: &Verdict,
    ) -> Stage {
        if matches!(verdict.decision, Decision::Deny { .. })
            || !ctx.tool().builtin_kind().is_some_and(BuiltinId::is_shell)
        {
            return ControlFlow::Continue(());
        }
        match self.escalation_reason(ctx) {
            Ok(None) => ControlFlow::Continue(()),
            Ok(Some(reason)) => ControlFlow::Break(self.escalate(ctx, reason, verdict).await),
            Err(NoEscalation::Invalid(problem)) => {
                ControlFlow::Break(GateOutcome::new(Gated::Refused(problem), None))
            }
            Err(NoEscalation::ReadOnly { why, verdict }) => ControlFlow::Break(GateOutcome::new(
                Gated::Refused(format!("Permission denied: {why}")),
                AuditRecord::from_verdict(&ctx.tool().name, ctx.input(), &verdict),
            )),
        }
    }

    /// Why this bash call would run outside the sandbox, if it would: the model asked for
    /// it, or the sandbox cannot confine bash on this machine. A sandbox the person turned
    /// off in their configuration is their decision, not a question. In a mode that writes
    /// nothing neither is possible: the call is refused (fail closed).
    pub(super) fn escalation_reason(
        &self,
        ctx: &CallContext<'_>,
    ) -> Result<Option<EscalationReason>, NoEscalation> {
        let input = ctx.input();
        let requested = input.get("unsandboxed").and_then(Value::as_bool) == Some(true);
        let writes = super::mode::bash_writes(ctx.mode);
        if writes == BashWrites::Nothing {
            let sandbox = self.sandbox.with_bash_writes(writes);
            let what = match (requested, sandbox.check_bash(&self.workspace)) {
                (true, _) => {
                    "a command cannot leave the sandbox in plan mode (it runs read-only there)"
                        .to_string()
                }
                (false, Err(e)) => format!(
                    "bash runs read-only in the OS sandbox in plan mode, and the sandbox is unavailable here ({})",
                    e.reason()
                ),
                (false, Ok(())) => return Ok(None),
            };
            let verdict = crate::policy::plan_refusal(&what);
            let why = match &verdict.decision {
                Decision::Deny { why } | Decision::Ask { why } => why.clone(),
                Decision::Allow => what,
            };
            return Err(NoEscalation::ReadOnly { why, verdict });
        }
        if requested {
            let justification = input
                .get("justification")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|j| !j.is_empty());
            return match justification {
                Some(j) => Ok(Some(EscalationReason::Requested {
                    justification: j.to_string(),
                })),
                None => Err(NoEscalation::Invalid("Invalid arguments for bash: `unsandboxed: true` needs a one-line `justification` saying why the command cannot run in the sandbox"
                    .into())),
            };
        }
        if self.sandbox.settings().mode == SandboxMode::Off {
            return Ok(None);
        }
        Ok(self.sandbox.check_bash(&self.workspace).err().map(|e| {
            EscalationReason::SandboxUnavailable {
                why: e.reason().to_string(),
            }
        }))
    }

    /// Running bash outside the sandbox: never by a rule, only by the person (or their
    /// grant for this session); headless mode cannot ask, so it refuses, saying why.
    async fn escalate(
        &mut self,
        ctx: &CallContext<'_>,
        reason: EscalationReason,
        verdict: &Verdict,
    ) -> GateOutcome {
        let (tool, input) = (ctx.tool(), ctx.input());
        let asked_by = match &reason {
            EscalationReason::Requested { .. } => "sandbox: the model asked to leave it",
            EscalationReason::SandboxUnavailable { .. } => "sandbox: unavailable",
        }
        .to_string();
        let why_unconfined = match &reason {
            EscalationReason::Requested { justification } => {
                format!("the model asked to run it outside the sandbox ({justification})")
            }
            EscalationReason::SandboxUnavailable { why } => {
                format!("the sandbox is unavailable ({why})")
            }
        };
        // A managed sandbox floor is the administrator's: no answer takes a command out.
        if let Some(file) = &self.sandbox.settings().managed_floor {
            let why = format!(
                "{why_unconfined}; the managed policy ({}) keeps commands in the sandbox, and no answer can take one out of it",
                file.display()
            );
            let decider = Decider::Rule {
                rule: "[sandbox] floor".into(),
                source: RuleSource::Managed(file.clone()),
            };
            return refused(tool, input, why, decider);
        }
        if self.headless {
            let why = format!(
                "{why_unconfined}; running a command outside the sandbox needs a person's approval, which non-interactive mode cannot give"
            );
            return refused(tool, input, why, Decider::Headless { asked_by });
        }
        if self.grants.contains(UNSANDBOXED_GRANT) {
            // The grant covers leaving the sandbox, not what the policy asks about besides
            // (a destructive command): that question is still asked, as a tool call.
            if let Decision::Ask { why } = &verdict.decision {
                let mut outcome = self.ask_person(ctx, why.clone(), verdict.clone()).await;
                if outcome.decision == Gated::Run {
                    outcome.decision = Gated::RunUnconfined;
                }
                return outcome;
            }
            return GateOutcome::new(
                Gated::RunUnconfined,
                Some(AuditRecord::new(
                    &tool.name,
                    input,
                    Permit::Allow,
                    None,
                    Decider::SessionGrant {
                        tool: UNSANDBOXED_GRANT.into(),
                    },
                )),
            );
        }
        let command = input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let policy_note = match &verdict.decision {
            Decision::Ask { why } => Some(why.clone()),
            _ => None,
        };
        let now = Instant::now();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: None,
            },
            Escalation {
                call_id: ctx.call_id().to_string(),
                command,
                workspace: self.workspace.clone(),
                reason,
                policy_note,
            },
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let Some(reply) = ask(ctx.events(), request, answer, Some(ctx.cancel())).await else {
            return GateOutcome::cancelled();
        };
        let answer = match reply {
            Reply::Person(answer) => answer,
            unanswered => {
                let why = format!("{why_unconfined}; nobody approved running it unsandboxed");
                return refused_unanswered(tool, input, &unanswered, why, asked_by);
            }
        };
        let mut notices = Vec::new();
        let gated = match &answer {
            // The question offers no limited grant; one would allow this command only.
            PersonAnswer::AllowOnce | PersonAnswer::AllowAlways | PersonAnswer::AllowLimited(_) => {
                Gated::RunUnconfined
            }
            PersonAnswer::AllowSession => {
                self.grants.grant(UNSANDBOXED_GRANT);
                notices
                    .push("bash may run outside the sandbox for the rest of this session.".into());
                Gated::RunUnconfined
            }
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => person_refusal(
                &answer,
                "Permission denied: the user did not allow running this command outside the sandbox",
            ),
        };
        answered(tool, input, answer, asked_by, gated, notices)
    }
}
