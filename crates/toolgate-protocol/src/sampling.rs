//! A server's sampling request as the transcript, the session log and JSONL report it.

use crate::ids::ServerName;
use serde::{Deserialize, Serialize};

use crate::Role;
use crate::{AuditRecord, Decider, PersonAnswer};
use crate::{StopReason, Usage};

/// How one sampling request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SamplingOutcome {
    /// The model answered; the server got `text`.
    Answered {
        model: String,
        stop_reason: StopReason,
        usage: Usage,
        text: String,
    },
    /// Not sent to the model (denied, over the cap, unsupported, too many waiting).
    Refused { reason: String },
    /// Sent to the model, which failed.
    Failed { error: String, usage: Usage },
    /// The server stopped waiting (cancelled or disconnected) before it was answered.
    Withdrawn,
}

/// One sampling request as the transcript, the session log and JSONL record it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingReport {
    pub server: ServerName,
    /// `maxTokens` as the server asked.
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<SamplingTurn>,
    /// Who allowed or refused it; absent when it was refused before the policy (over the
    /// cap, unreadable, too many waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<AuditRecord>,
    pub outcome: SamplingOutcome,
}

impl SamplingReport {
    /// One line for the transcript and headless text mode.
    pub fn summary(&self) -> String {
        let server = &self.server;
        let by = self
            .decision
            .as_ref()
            .map(|d| format!(" ({})", decided_by(&d.decider)))
            .unwrap_or_default();
        match &self.outcome {
            SamplingOutcome::Answered {
                model,
                stop_reason,
                usage,
                ..
            } => format!(
                "sampling for '{server}' answered by {model}: {} in / {} out tokens, stop {}{by}",
                usage.input_tokens,
                usage.output_tokens,
                stop_word(*stop_reason)
            ),
            SamplingOutcome::Refused { reason } => {
                format!("sampling for '{server}' refused: {reason}{by}")
            }
            SamplingOutcome::Failed { error, .. } => {
                format!("sampling for '{server}' failed: {error}{by}")
            }
            SamplingOutcome::Withdrawn => {
                format!("sampling for '{server}' withdrawn by the server{by}")
            }
        }
    }

    /// Tokens the request used on the model (zero when it never reached it).
    pub fn usage(&self) -> Usage {
        match &self.outcome {
            SamplingOutcome::Answered { usage, .. } | SamplingOutcome::Failed { usage, .. } => {
                *usage
            }
            SamplingOutcome::Refused { .. } | SamplingOutcome::Withdrawn => Usage::default(),
        }
    }
}

fn stop_word(stop: StopReason) -> &'static str {
    match stop {
        StopReason::EndTurn => "end_turn",
        StopReason::ToolUse => "tool_use",
        StopReason::MaxTokens => "max_tokens",
        StopReason::StopSequence => "stop_sequence",
        StopReason::Refusal => "refusal",
        StopReason::Other => "other",
    }
}

fn decided_by(decider: &Decider) -> String {
    match decider {
        Decider::Rule { rule, source } => format!("rule {rule}, {source}"),
        Decider::Default { rule } => rule.clone(),
        Decider::SessionGrant { .. } => "allowed for this session".into(),
        Decider::Mode { mode } => format!("{mode} mode"),
        Decider::LimitedGrant { limit, .. } => format!("allowed {}", limit.describe()),
        Decider::Person { answer, .. } => match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => "you allowed it once".into(),
            PersonAnswer::AllowSession | PersonAnswer::AllowAlways => {
                "you allowed it for this session".into()
            }
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => "you denied it".into(),
        },
        Decider::Expired { .. } => "nobody answered in time".into(),
        Decider::Dismissed { .. } => "the question could not be shown".into(),
        Decider::Headless { .. } => "non-interactive mode".into(),
        Decider::Hook { hook, .. } => hook.clone(),
    }
}

/// One message of the server's conversation (text only: toolgate's providers take text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingTurn {
    pub role: Role,
    pub text: String,
}

/// What the server asked for, read from `CreateMessageRequestParams`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SamplingRequest {
    pub system_prompt: Option<String>,
    pub messages: Vec<SamplingTurn>,
    pub max_tokens: u32,
    /// Model names or families the server would prefer (`hints[].name`).
    pub model_hints: Vec<String>,
    pub cost_priority: Option<f32>,
    pub speed_priority: Option<f32>,
    pub intelligence_priority: Option<f32>,
    pub temperature: Option<f32>,
    pub stop_sequences: Vec<String>,
    /// `includeContext` other than `none`: toolgate never adds other context, and says so.
    pub include_context: Option<String>,
}
