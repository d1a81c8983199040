//! `sampling/createMessage`: a server asks the host's model for a completion. The hub only
//! reads the request into plain types, bounds how many may wait per server, and hands a
//! [`SamplingQuestion`] to the agent (policy, the person, the model); the answer goes back
//! to the server as the JSON-RPC result or error.

#![allow(deprecated)] // sampling is deprecated by the newest spec but still in 2025-11-25

use crate::ids::ServerName;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    ContextInclusion, CreateMessageRequestParams, CreateMessageResult, ErrorCode, ErrorData,
    Role as McpRole, SamplingMessage, SamplingMessageContentBlock,
};
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;

use super::pending::Pending;
use crate::model::{Role, StopReason};

/// Sampling requests of one server that may wait at the same time (asked, or running on
/// the model); the next one is refused at once rather than queued without end.
pub const MAX_WAITING_PER_SERVER: usize = 4;

pub use crate::protocol::{SamplingRequest, SamplingTurn};

/// The model's answer, as the server receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub text: String,
    /// The model that answered (the provider's label).
    pub model: String,
    pub stop: StopReason,
}

/// Why a sampling request got no completion; each becomes a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamplingRefusal {
    /// The person or a rule said no (code -1, as the spec suggests for a user rejection).
    Denied(String),
    /// The request cannot be served as asked (over the token cap, unsupported content).
    Invalid(String),
    /// The model call failed.
    Failed(String),
}

impl SamplingRefusal {
    pub fn message(&self) -> &str {
        match self {
            SamplingRefusal::Denied(m)
            | SamplingRefusal::Invalid(m)
            | SamplingRefusal::Failed(m) => m,
        }
    }

    fn into_error(self) -> ErrorData {
        match self {
            SamplingRefusal::Denied(m) => ErrorData::new(ErrorCode(-1), m, None),
            SamplingRefusal::Invalid(m) => ErrorData::invalid_params(m, None),
            SamplingRefusal::Failed(m) => ErrorData::internal_error(m, None),
        }
    }
}

type Answer = Result<Sampled, SamplingRefusal>;

/// A server's sampling request on its way to the agent. Answer it once with
/// [`SamplingQuestion::answer`]; dropping every copy unanswered refuses it.
#[derive(Debug, Clone)]
pub struct SamplingQuestion {
    pub server: ServerName,
    pub request: SamplingRequest,
    /// The answer; withdrawn when the server no longer waits (it cancelled, or
    /// disconnected).
    pending: Pending<Answer>,
}

impl PartialEq for SamplingQuestion {
    fn eq(&self, other: &Self) -> bool {
        self.server == other.server
            && self.request == other.request
            && self.pending.same(&other.pending)
    }
}

impl SamplingQuestion {
    /// The answer (only the first counts).
    pub fn answer(&self, answer: Answer) {
        self.pending.answer(answer);
    }

    /// Resolves when the server stopped waiting.
    pub async fn withdrawn(&self) {
        self.pending.withdrawn().await;
    }
}

/// A question, its answer's receiver and the guard that withdraws it when the hub stops
/// waiting.
pub(super) fn ask(
    server: &str,
    request: SamplingRequest,
) -> (SamplingQuestion, oneshot::Receiver<Answer>, DropGuard) {
    Pending::open(|pending| SamplingQuestion {
        server: server.to_string().into(),
        request,
        pending,
    })
}

/// A place among the requests one server has waiting; freed when dropped.
pub(super) struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// None when the server already has [`MAX_WAITING_PER_SERVER`] waiting.
    pub(super) fn take(waiting: &Arc<AtomicUsize>) -> Option<Slot> {
        waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_WAITING_PER_SERVER).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(waiting.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads the request into plain types. Sampling with tools (2025-11-25) and non-text
/// content are refused with a message saying so: the providers here take text only, and
/// toolgate does not declare `sampling.tools`.
pub fn read_request(params: &CreateMessageRequestParams) -> Result<SamplingRequest, String> {
    if params.tools.as_ref().is_some_and(|t| !t.is_empty()) || params.tool_choice.is_some() {
        return Err(
            "toolgate does not support sampling with tools (`tools`/`toolChoice`); \
                    it did not declare the sampling.tools capability — ask without tools"
                .into(),
        );
    }
    let mut messages = Vec::with_capacity(params.messages.len());
    for (i, message) in params.messages.iter().enumerate() {
        messages.push(read_message(i, message)?);
    }
    if messages.is_empty() {
        return Err("a sampling request needs at least one message".into());
    }
    let preferences = params.model_preferences.as_ref();
    Ok(SamplingRequest {
        system_prompt: params.system_prompt.clone().filter(|s| !s.is_empty()),
        messages,
        max_tokens: params.max_tokens,
        model_hints: preferences
            .and_then(|p| p.hints.as_ref())
            .map(|hints| hints.iter().filter_map(|h| h.name.clone()).collect())
            .unwrap_or_default(),
        cost_priority: preferences.and_then(|p| p.cost_priority),
        speed_priority: preferences.and_then(|p| p.speed_priority),
        intelligence_priority: preferences.and_then(|p| p.intelligence_priority),
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.clone().unwrap_or_default(),
        include_context: match &params.include_context {
            None | Some(ContextInclusion::None) => None,
            Some(ContextInclusion::ThisServer) => Some("thisServer".into()),
            Some(ContextInclusion::AllServers) => Some("allServers".into()),
            Some(other) => Some(format!("{other:?}")),
        },
    })
}

fn read_message(index: usize, message: &SamplingMessage) -> Result<SamplingTurn, String> {
    let role = match message.role {
        McpRole::User => Role::User,
        McpRole::Assistant => Role::Assistant,
    };
    let mut text = String::new();
    for block in message.content.iter() {
        match block {
            SamplingMessageContentBlock::Text(t) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t.text);
            }
            SamplingMessageContentBlock::Image(_) | SamplingMessageContentBlock::Audio(_) => {
                return Err(format!(
                    "message {index}: toolgate's sampling takes text only (images and audio are not supported)"
                ));
            }
            _ => {
                return Err(format!(
                    "message {index}: toolgate does not support sampling with tools (tool_use/tool_result content)"
                ));
            }
        }
    }
    Ok(SamplingTurn { role, text })
}

/// The JSON-RPC result for an answer.
pub(super) fn result(answer: Answer) -> Result<CreateMessageResult, ErrorData> {
    let sampled = answer.map_err(SamplingRefusal::into_error)?;
    let stop = match sampled.stop {
        StopReason::MaxTokens => CreateMessageResult::STOP_REASON_END_MAX_TOKEN,
        StopReason::StopSequence => CreateMessageResult::STOP_REASON_END_SEQUENCE,
        StopReason::ToolUse => CreateMessageResult::STOP_REASON_TOOL_USE,
        StopReason::EndTurn | StopReason::Refusal | StopReason::Other => {
            CreateMessageResult::STOP_REASON_END_TURN
        }
    };
    Ok(
        CreateMessageResult::new(SamplingMessage::assistant_text(sampled.text), sampled.model)
            .with_stop_reason(stop),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_bounded_and_freed() {
        let waiting = Arc::new(AtomicUsize::new(0));
        let slots: Vec<Slot> = (0..MAX_WAITING_PER_SERVER)
            .map(|_| Slot::take(&waiting).unwrap())
            .collect();
        assert!(Slot::take(&waiting).is_none());
        drop(slots);
        assert!(Slot::take(&waiting).is_some());
    }

    #[test]
    fn tools_and_images_are_refused_by_name() {
        let mut params =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
        assert_eq!(read_request(&params).unwrap().messages[0].text, "hi");
        params.tool_choice = Some(Default::default());
        assert!(
            read_request(&params)
                .unwrap_err()
                .contains("does not support sampling with tools")
        );
        let empty = CreateMessageRequestParams::new(vec![], 10);
        assert!(read_request(&empty).is_err());
    }
}
