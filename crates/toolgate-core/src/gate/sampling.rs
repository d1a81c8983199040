//! Sampling requests through the gate: `sampling(SERVER)` rules (default ask), a session
//! grant or the person. Requests are decided on tasks of their own, beside the agent loop
//! (a server samples *during* a tool call, while the loop waits for that call), so this
//! handle shares the gate's rules and grants instead of borrowing the gate.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::ask::ask_until;
use super::grants::{Grants, sampling_grant};
use super::outcome::{GateOutcome, Gated};
use crate::mcp::SamplingQuestion;
use crate::policy::{AuditRecord, Decider, Decision, Permit, PersonAnswer, Policy};
use crate::protocol::AgentEvent;
use crate::protocol::questions::{Origin, Reply, Request, Sampling};

/// How long a sampling question waits for the person unless `--ask-timeout` says
/// otherwise; then it is denied (the server is waiting on the other end).
const QUESTION_LIMIT: Duration = Duration::from_secs(300);

/// The gate's handle for sampling requests (see [`super::Gate::sampling`]).
#[derive(Clone)]
pub struct SamplingGate {
    /// The `sampling(...)` rules decide (tool rules never do).
    rules: Arc<Mutex<Policy>>,
    grants: Grants,
    headless: bool,
    ask_timeout: Option<Duration>,
}

impl SamplingGate {
    pub(super) fn new(
        rules: Arc<Mutex<Policy>>,
        grants: Grants,
        headless: bool,
        ask_timeout: Option<Duration>,
    ) -> SamplingGate {
        SamplingGate {
            rules,
            grants,
            headless,
            ask_timeout,
        }
    }

    /// The session's grants (a sampling grant is revoked through them at once).
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// The policy, a session grant, headless mode or the person. `Run` when allowed,
    /// `Refused(reason)` when not, `Cancelled` (without a record) when the server withdrew
    /// the request while the person was being asked. `model` and `cap` are shown on the
    /// question.
    pub async fn check(
        &self,
        question: &SamplingQuestion,
        model: String,
        cap: u32,
        events: &mpsc::Sender<AgentEvent>,
    ) -> GateOutcome {
        let server = &question.server;
        let tool = sampling_grant(server);
        let input = serde_json::json!({
            "system_prompt": question.request.system_prompt,
            "messages": question.request.messages,
            "max_tokens": question.request.max_tokens,
        });
        let decided = |permit: Permit, why: Option<String>, decider: Decider| {
            let decision = match permit {
                Permit::Allow => Gated::Run,
                Permit::Deny => Gated::Refused(why.clone().unwrap_or_else(|| "denied".into())),
            };
            GateOutcome::new(
                decision,
                Some(AuditRecord::new(&tool, &input, permit, why, decider)),
            )
        };
        let verdict = self
            .rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .decide_sampling(server);
        let why = match &verdict.decision {
            Decision::Allow => {
                return decided(Permit::Allow, None, Decider::from_verdict(&verdict));
            }
            Decision::Deny { why } => {
                return decided(
                    Permit::Deny,
                    Some(why.clone()),
                    Decider::from_verdict(&verdict),
                );
            }
            Decision::Ask { why } => why.clone(),
        };
        if self.grants.contains(&tool) {
            return decided(
                Permit::Allow,
                None,
                Decider::SessionGrant { tool: tool.clone() },
            );
        }
        let asked_by = verdict.rule.clone();
        if self.headless {
            return decided(
                Permit::Deny,
                Some(format!(
                    "{why}; approval is unavailable in non-interactive mode; allow it with --allow 'sampling({server})'"
                )),
                Decider::Headless { asked_by },
            );
        }
        let now = Instant::now();
        let deadline = now + self.ask_timeout.unwrap_or(QUESTION_LIMIT);
        let (request, answer) = Request::new(
            Origin::Server {
                server: server.clone(),
            },
            Sampling {
                server: server.clone(),
                request: question.request.clone(),
                model,
                cap,
                verdict: verdict.clone(),
            },
            now,
            Some(deadline),
        );
        // Dropping `answer` (when the server withdraws) withdraws the request from the inbox.
        let Some(reply) = ask_until(events, request, answer, question.withdrawn()).await else {
            return GateOutcome::cancelled();
        };
        match reply {
            Reply::Person(answer) => {
                let allowed = answer.permit() == Permit::Allow;
                if matches!(
                    answer,
                    PersonAnswer::AllowSession | PersonAnswer::AllowAlways
                ) {
                    self.grants.grant(&tool);
                }
                let why = (!allowed).then(|| match &answer {
                    PersonAnswer::DenyWithNote(note) => format!("the user denied it: {note}"),
                    _ => "the user denied it".to_string(),
                });
                decided(answer.permit(), why, Decider::Person { answer, asked_by })
            }
            Reply::Expired(_) => decided(
                Permit::Deny,
                Some("nobody answered the sampling request in time".into()),
                Decider::Expired { asked_by },
            ),
            Reply::Dismissed(_) => decided(
                Permit::Deny,
                Some("the question could not be shown".into()),
                Decider::Dismissed { asked_by },
            ),
        }
    }
}
