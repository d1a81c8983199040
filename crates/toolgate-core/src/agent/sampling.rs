//! Sampling, gated by the host: a server's `sampling/createMessage` passes the token cap,
//! then the gate (`crate::gate::SamplingGate`: `sampling(SERVER)` rules, default ask, a
//! session grant or the person), and only then reaches the session's model. Every request
//! ends in one [`SamplingReport`]: on the front end, in the session log and in headless
//! JSONL.
//!
//! Runs beside the agent loop, not in it: a server samples *during* a tool call, while the
//! loop waits for that call, so each request is handled on its own task.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures::StreamExt;
use tokio::sync::mpsc;

use crate::gate::{Gated, SamplingGate};
use crate::journal::SharedLog;
use crate::mcp::{Sampled, SamplingQuestion, SamplingRefusal, SamplingRequest};
use crate::model::{
    ContentBlock, Message, ModelProvider, ModelRequest, SamplingOptions, StopReason, StreamEvent,
    Usage,
};
use crate::protocol::Event;
use crate::protocol::{AgentEvent, SamplingOutcome, SamplingReport};

/// `[sampling] max_tokens`. Shared with the agent, so that a reload of `config.toml`
/// reaches requests that come after it (the rules reach them through the gate).
pub(super) struct SamplingConfig {
    cap: AtomicU32,
}

impl SamplingConfig {
    pub fn new(cap: u32) -> SamplingConfig {
        SamplingConfig {
            cap: AtomicU32::new(cap),
        }
    }

    pub fn cap(&self) -> u32 {
        self.cap.load(Ordering::SeqCst)
    }

    pub fn set_cap(&self, cap: u32) {
        self.cap.store(cap, Ordering::SeqCst);
    }
}

/// Everything a sampling request needs from the session.
pub(super) struct SamplingHost {
    pub model: Arc<dyn ModelProvider>,
    pub config: Arc<SamplingConfig>,
    /// Decides each request (rules, the session's grants, the person).
    pub gate: SamplingGate,
    pub log: SharedLog,
    pub events: mpsc::Sender<AgentEvent>,
}

impl SamplingHost {
    /// Decides, runs and reports one request, then answers the server.
    pub async fn handle(self: Arc<Self>, question: SamplingQuestion) {
        let report = self.decide_and_run(&question).await;
        // Answered inside decide_and_run; what remains is telling everyone.
        self.report(report).await;
    }

    /// A request the hub refused before anyone was asked.
    pub async fn refused_early(&self, server: String, max_tokens: u32, reason: String) {
        self.report(SamplingReport {
            server: server.into(),
            max_tokens,
            system_prompt: None,
            messages: Vec::new(),
            decision: None,
            outcome: SamplingOutcome::Refused { reason },
        })
        .await;
    }

    async fn report(&self, report: SamplingReport) {
        crate::journal::append_shared(&self.log, Event::Sampling(report.clone()));
        let _ = self
            .events
            .send(AgentEvent::Fact(Event::Sampling(report)))
            .await;
        // "Allow this server for the session" was a grant.
        if let Some(event) = self.gate.grants().change_event() {
            let _ = self.events.send(event).await;
        }
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
        let decided = self
            .gate
            .check(question, self.model.label(), cap, &self.events)
            .await;
        // No record: the server withdrew the request while the person was being asked.
        if decided.audit.is_none() {
            return report;
        }
        report.decision = decided.audit;
        if let Gated::Refused(reason) = decided.decision {
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
                // The server asked for text; the model's thinking is not part of it.
                Ok(StreamEvent::ThinkingDelta(_) | StreamEvent::ThinkingBlock(_)) => {}
                // The same request is sent again: the answer starts over (the server only
                // ever sees the finished text).
                Ok(StreamEvent::Retrying(_)) => text.clear(),
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
