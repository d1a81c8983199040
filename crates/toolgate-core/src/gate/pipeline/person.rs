//! The person asked about a call the policy asks about (stage 9, and an escalation a
//! session grant covers): their answer runs the call once, grants it for the session or
//! for a while, or writes an allow rule; or refuses it.

use std::time::Instant;

use tokio::sync::oneshot;

use super::CallContext;
use crate::gate::ask::ask;
use crate::gate::outcome::{answered, person_refusal, refused_unanswered};
use crate::gate::{Gate, GateOutcome, Gated, preview};
use crate::policy::{Permit, PersonAnswer, Verdict, grant_key};
use crate::protocol::questions::{HostRequest, Kind, Origin, Reply, Request, ToolCall};

impl Gate {
    /// Asks the person about the call; `why` is what the question says.
    pub(in crate::gate) async fn ask_person(
        &mut self,
        ctx: &CallContext<'_>,
        why: String,
        verdict: Verdict,
    ) -> GateOutcome {
        let (tool, input) = (ctx.tool(), ctx.input());
        let preview = preview::for_call(tool, input, &self.workspace).await;
        let now = Instant::now();
        let asked_by = verdict.rule.clone();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: tool.server().map(str::to_string),
            },
            ToolCall {
                call_id: ctx.call_id().to_string(),
                tool: crate::views::pool_tool(tool),
                input: input.clone(),
                why,
                verdict,
                preview,
            },
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let answer = match person_answer(ctx, request, answer, &asked_by).await {
            Ok(answer) => answer,
            Err(outcome) => return outcome,
        };
        let mut notices = Vec::new();
        if answer.permit() == Permit::Allow {
            self.pinning.acknowledge(tool);
        }
        let gated = match &answer {
            PersonAnswer::AllowOnce => Gated::Run,
            PersonAnswer::AllowSession => {
                let key = grant_key(tool, input);
                self.grant_session(&key, tool);
                notices.push(format!("{key} is allowed for the rest of this session."));
                Gated::Run
            }
            PersonAnswer::AllowLimited(limit) => {
                notices.push(self.grant_limited(tool, input, *limit));
                Gated::Run
            }
            PersonAnswer::AllowAlways => {
                match self.save_always(ctx).await {
                    Ok(always) => {
                        notices.push(format!(
                            "Always allowed: wrote the allow rule {} to {}.",
                            always.text,
                            always.file.display()
                        ));
                        notices.extend(self.save_project_pin(tool, "always grant").await);
                    }
                    Err(e) => {
                        let key = grant_key(tool, input);
                        self.grant_session(&key, tool);
                        notices.push(format!("{e}; {key} is allowed for this session only."));
                    }
                }
                Gated::Run
            }
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => {
                person_refusal(&answer, "Permission denied: the user denied this call")
            }
        };
        answered(tool, input, answer, asked_by, gated, notices)
    }
}

/// Waits for the person's answer to a question about the call of `ctx`. Err: what the
/// gate returns when there is none (the turn was cancelled, the request expired or was
/// dismissed), with its audit record.
pub(in crate::gate) async fn person_answer<K>(
    ctx: &CallContext<'_>,
    request: Request<K>,
    answer: oneshot::Receiver<Reply<K::Answer>>,
    asked_by: &str,
) -> Result<K::Answer, GateOutcome>
where
    K: Kind,
    Request<K>: Into<HostRequest>,
{
    let Some(reply) = ask(ctx.events(), request, answer, Some(ctx.cancel())).await else {
        return Err(GateOutcome::cancelled());
    };
    match reply {
        Reply::Person(answer) => Ok(answer),
        unanswered => {
            let why = match unanswered {
                Reply::Expired(_) => "nobody answered before the request's deadline",
                _ => "the permission request was dismissed",
            };
            Err(refused_unanswered(
                ctx.tool(),
                ctx.input(),
                &unanswered,
                why.into(),
                asked_by.to_string(),
            ))
        }
    }
}
