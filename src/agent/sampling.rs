//! Sampling, gated by the host: a server's `sampling/createMessage` passes the token cap,
//! the policy (`sampling(SERVER)` rules; default ask), a session grant or the person (an
//! inbox request), and only then reaches the session's model. Every request ends in one
//! [`SamplingReport`]: on the front end, in the session log and in headless JSONL.
//!
//! Runs beside the agent loop, not in it: a server samples *during* a tool call, while the
//! loop waits for that call, so each request is handled on its own task.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::mpsc;

use super::session::{Record, SharedLog};
use crate::mcp::{Sampled, SamplingQuestion, SamplingRefusal, SamplingRequest};
use crate::model::{
    ContentBlock, Message, ModelProvider, ModelRequest, SamplingOptions, StopReason, StreamEvent,
    Usage,
};
use crate::policy::{AuditRecord, Decider, Decision, Permit, PersonAnswer, Policy};
use crate::protocol::AgentEvent;
use crate::protocol::questions::{Origin, Reply, Request, Sampling};
use crate::protocol::{SamplingOutcome, SamplingReport};

/// How long a sampling question waits for the person unless `--ask-timeout` says
/// otherwise; then it is denied (the server is waiting on the other end).
const QUESTION_LIMIT: Duration = Duration::from_secs(300);

/// What sampling reads of the configuration. Shared with the agent, so that a reload of
/// `config.toml` reaches requests that come after it.
pub(super) struct SamplingConfig {
    /// The `sampling(...)` rules decide (tool rules never do).
    policy: Mutex<Policy>,
    /// `[sampling] max_tokens`.
    cap: AtomicU32,
}

impl SamplingConfig {
    pub fn new(policy: Policy, cap: u32) -> SamplingConfig {
        SamplingConfig {
            policy: Mutex::new(policy),
            cap: AtomicU32::new(cap),
        }
    }

    pub fn set_policy(&self, policy: Policy) {
        *self.policy.lock().unwrap_or_else(PoisonError::into_inner) = policy;
    }

    pub fn cap(&self) -> u32 {
        self.cap.load(Ordering::SeqCst)
    }

    pub fn set_cap(&self, cap: u32) {
        self.cap.store(cap, Ordering::SeqCst);
    }

    fn decide(&self, server: &str) -> crate::policy::Verdict {
        self.policy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .decide_sampling(server)
    }
}

/// Everything a sampling request needs from the session.
pub(super) struct SamplingHost {
    pub model: Arc<dyn ModelProvider>,
    pub config: Arc<SamplingConfig>,
    pub headless: bool,
    pub ask_timeout: Option<Duration>,
    /// Servers the person allowed to sample for the rest of the session.
    pub granted: Mutex<BTreeSet<String>>,
    pub log: SharedLog,
    pub events: mpsc::Sender<AgentEvent>,
}

/// Who decided and what they said, before the model is called.
struct Decided {
    record: AuditRecord,
    allowed: bool,
}

impl SamplingHost {
    /// Decides, runs and reports one request, then answers the server.
    pub async fn handle(self: Arc<Self>, question: SamplingQuestion) {
        let report = self.decide_and_run(&question).await;
        // Answered inside decide_and_run; what remains is telling everyone.
        self.report(report).await;
    }

    /// Revokes "allow for this session" for a grant named `sampling(SERVER)` (as the
    /// decision record names it). None when `grant` is not a sampling grant.
    pub fn revoke(&self, grant: &str) -> Option<bool> {
        let server = grant.strip_prefix("sampling(")?.strip_suffix(')')?;
        Some(
            self.granted
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(server),
        )
    }

    /// A request the hub refused before anyone was asked.
    pub async fn refused_early(&self, server: String, max_tokens: u32, reason: String) {
        self.report(SamplingReport {
            server,
            max_tokens,
            system_prompt: None,
            messages: Vec::new(),
            decision: None,
            outcome: SamplingOutcome::Refused { reason },
        })
        .await;
    }

    async fn report(&self, report: SamplingReport) {
        super::session::append_shared(&self.log, Record::Sampling(report.clone()));
        let _ = self.events.send(AgentEvent::Sampling(report)).await;
    }

    async fn decide_and_run(&self, question: &SamplingQuestion) -> SamplingReport {
        let request = &question.request;
        let mut report = SamplingReport {
            server: question.server.clone(),
            max_tokens: request.max_tokens,
            system_prompt: request.system_prompt.clone(),
            messages: request.messages.clone(),
            decision: None,
            outcome: SamplingOutcome::Withdrawn,
        };
        let cap = self.config.cap();
        if request.max_tokens > cap {
            let reason = format!(
                "the request asks for up to {} tokens, over toolgate's sampling cap of {cap} tokens ([sampling] max_tokens in config.toml)",
                request.max_tokens
            );
            question.answer(Err(SamplingRefusal::Invalid(reason.clone())));
            report.outcome = SamplingOutcome::Refused { reason };
            return report;
        }
        let Some(decided) = self.decide(question).await else {
            return report;
        };
        report.decision = Some(decided.record.clone());
        if !decided.allowed {
            let reason = decided
                .record
                .why
                .clone()
                .unwrap_or_else(|| "denied".to_string());
            question.answer(Err(SamplingRefusal::Denied(format!(
                "sampling denied by the host: {reason}"
            ))));
            report.outcome = SamplingOutcome::Refused { reason };
            return report;
        }
        let run = self.sample(request);
        let outcome = tokio::select! {
            outcome = run => outcome,
            () = question.withdrawn() => return report,
        };
        report.outcome = match outcome {
            Ok((sampled, usage)) => {
                let outcome = SamplingOutcome::Answered {
                    model: sampled.model.clone(),
                    stop_reason: sampled.stop,
                    usage,
                    text: sampled.text.clone(),
                };
                question.answer(Ok(sampled));
                outcome
            }
            Err((error, usage)) => {
                question.answer(Err(SamplingRefusal::Failed(format!(
                    "the host's model failed: {error}"
                ))));
                SamplingOutcome::Failed { error, usage }
            }
        };
        report
    }

    /// The policy, a session grant, headless mode or the person. None: the server
    /// withdrew the request while the person was being asked.
    async fn decide(&self, question: &SamplingQuestion) -> Option<Decided> {
        let server = &question.server;
        let tool = format!("sampling({server})");
        let input = serde_json::json!({
            "system_prompt": question.request.system_prompt,
            "messages": question.request.messages,
            "max_tokens": question.request.max_tokens,
        });
        let record = |permit: Permit, why: Option<String>, decider: Decider| {
            AuditRecord::new(&tool, &input, permit, why, decider)
        };
        let verdict = self.config.decide(server);
        let why = match &verdict.decision {
            Decision::Allow => {
                return Some(Decided {
                    record: record(Permit::Allow, None, Decider::from_verdict(&verdict)),
                    allowed: true,
                });
            }
            Decision::Deny { why } => {
                return Some(Decided {
                    record: record(
                        Permit::Deny,
                        Some(why.clone()),
                        Decider::from_verdict(&verdict),
                    ),
                    allowed: false,
                });
            }
            Decision::Ask { why } => why.clone(),
        };
        let granted = self
            .granted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(server);
        if granted {
            return Some(Decided {
                record: record(
                    Permit::Allow,
                    None,
                    Decider::SessionGrant { tool: tool.clone() },
                ),
                allowed: true,
            });
        }
        let asked_by = verdict.rule.clone();
        if self.headless {
            return Some(Decided {
                record: record(
                    Permit::Deny,
                    Some(format!(
                        "{why}; approval is unavailable in non-interactive mode; allow it with --allow 'sampling({server})'"
                    )),
                    Decider::Headless { asked_by },
                ),
                allowed: false,
            });
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
                model: self.model.label(),
                cap: self.config.cap(),
                verdict: verdict.clone(),
            },
            now,
            Some(deadline),
        );
        if self
            .events
            .send(AgentEvent::Request(request.into()))
            .await
            .is_err()
        {
            return Some(Decided {
                record: record(
                    Permit::Deny,
                    Some("the question could not be shown".into()),
                    Decider::Dismissed { asked_by },
                ),
                allowed: false,
            });
        }
        let reply = tokio::select! {
            reply = answer => reply.unwrap_or(Reply::Dismissed(PersonAnswer::Deny)),
            // Dropping `answer` withdraws the request from the inbox.
            () = question.withdrawn() => return None,
            // The console expires it first and says so; this covers a front end that
            // cannot, so the server never waits past the deadline.
            () = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {
                Reply::Expired(PersonAnswer::Deny)
            }
        };
        Some(match reply {
            Reply::Person(answer) => {
                let allowed = answer.permit() == Permit::Allow;
                if matches!(
                    answer,
                    PersonAnswer::AllowSession | PersonAnswer::AllowAlways
                ) {
                    self.granted
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(server.clone());
                }
                let why = (!allowed).then(|| match &answer {
                    PersonAnswer::DenyWithNote(note) => format!("the user denied it: {note}"),
                    _ => "the user denied it".to_string(),
                });
                Decided {
                    record: record(answer.permit(), why, Decider::Person { answer, asked_by }),
                    allowed,
                }
            }
            Reply::Expired(_) => Decided {
                record: record(
                    Permit::Deny,
                    Some("nobody answered the sampling request in time".into()),
                    Decider::Expired { asked_by },
                ),
                allowed: false,
            },
            Reply::Dismissed(_) => Decided {
                record: record(
                    Permit::Deny,
                    Some("the question could not be shown".into()),
                    Decider::Dismissed { asked_by },
                ),
                allowed: false,
            },
        })
    }

    /// The session's model, on exactly the server's messages and system prompt, without
    /// tools, within the cap.
    async fn sample(&self, request: &SamplingRequest) -> Result<(Sampled, Usage), (String, Usage)> {
        let model_request = ModelRequest {
            system: request.system_prompt.clone().unwrap_or_default(),
            messages: request
                .messages
                .iter()
                .map(|turn| Message {
                    role: turn.role,
                    content: vec![ContentBlock::Text {
                        text: turn.text.clone(),
                    }],
                })
                .collect(),
            tools: Vec::new(),
            max_tokens: request.max_tokens.min(self.config.cap()),
            sampling: SamplingOptions {
                temperature: request.temperature,
                stop_sequences: request.stop_sequences.clone(),
            },
        };
        let mut stream = self.model.stream(model_request);
        let mut text = String::new();
        let mut usage = Usage::default();
        let mut stop = StopReason::EndTurn;
        while let Some(event) = stream.next().await {
            match event {
                Ok(StreamEvent::TextDelta(delta)) => text.push_str(&delta),
                Ok(StreamEvent::Usage(u)) => {
                    usage.input_tokens = usage.input_tokens.max(u.input_tokens);
                    usage.output_tokens = usage.output_tokens.max(u.output_tokens);
                }
                Ok(StreamEvent::Stop(reason)) => stop = reason,
                // No tools were offered; a tool call from the model is not passed on.
                Ok(StreamEvent::ToolUseStarted { .. } | StreamEvent::ToolUse { .. }) => {}
                Err(e) => return Err((e.to_string(), usage)),
            }
        }
        Ok((
            Sampled {
                text,
                model: self.model.label(),
                stop,
            },
            usage,
        ))
    }
}
