//! 2026-07-28 multi-round requests (SEP-2322): a `tools/call` may come back
//! `input_required` with requests for the person (elicitation) or the host (sampling,
//! roots). Each is answered through the connection's own handler — so an elicitation
//! here is asked exactly like an `elicitation/create`, with the same checks and the same
//! per-server bound — and the call is sent again with the answers and the server's
//! `requestState`, at most [`MAX_INPUT_ROUNDS`] times. The person's time to answer does
//! not count against the call's timeout.

use super::McpHub;
use super::connection::Connection;
use crate::mcp::types::McpError;
use rmcp::Service;
use rmcp::model::{
    ClientResult, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult,
    InputResponses, NumberOrString, ServerRequest,
};
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

/// Rounds of one call (rmcp's own default cap).
pub(super) const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What the next attempt of the call carries.
pub(super) struct Retry {
    pub responses: Option<InputResponses>,
    pub state: Option<String>,
    /// How many rounds came before it.
    pub round: usize,
}

impl McpHub {
    /// Answers what an `input_required` result asks for; the retry to send.
    pub(super) async fn fulfil_input(
        &self,
        connection: &Connection,
        required: InputRequiredResult,
        cancel: &CancellationToken,
        round: usize,
    ) -> Result<Retry, McpError> {
        let protocol = |message: String| McpError::Protocol {
            server: connection.name.clone().into(),
            message,
        };
        if round > MAX_INPUT_ROUNDS {
            return Err(protocol(format!(
                "the server asked for input {MAX_INPUT_ROUNDS} times without finishing the call"
            )));
        }
        let requests = required.input_requests.unwrap_or_default();
        if requests.is_empty() && required.request_state.is_none() {
            return Err(protocol(
                "the server answered input_required without asking for anything".into(),
            ));
        }
        let handler = connection
            .service
            .lock()
            .await
            .as_ref()
            .map(|service| service.service().clone())
            .ok_or_else(|| McpError::NotConnected(connection.name.clone()))?;
        let mut responses = InputResponses::new();
        // One at a time, in the server's order: the person answers them one after another.
        for (key, request) in requests {
            let (request, is_elicitation) = match request {
                InputRequest::Elicitation(r) => (ServerRequest::ElicitRequest(r), true),
                InputRequest::CreateMessage(r) => (ServerRequest::CreateMessageRequest(r), false),
                InputRequest::ListRoots(r) => (ServerRequest::ListRootsRequest(r), false),
                other => {
                    return Err(protocol(format!(
                        "input_required asks for something toolgate does not know: {other:?}"
                    )));
                }
            };
            let mut context = RequestContext::new(
                NumberOrString::String(key.as_str().into()),
                connection.peer.clone(),
            );
            context.ct = cancel.child_token();
            let answered = tokio::select! {
                answered = handler.handle_request(request, context) => answered,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            };
            let value = match answered {
                Ok(ClientResult::ElicitResult(result)) => serde_json::to_value(result),
                Ok(ClientResult::CreateMessageResult(result)) => serde_json::to_value(result),
                Ok(ClientResult::ListRootsResult(result)) => serde_json::to_value(result),
                Ok(other) => serde_json::to_value(other),
                // An elicitation toolgate refused (malformed, too many waiting) is declined:
                // the retry has room for results only.
                Err(_) if is_elicitation => {
                    serde_json::to_value(ElicitResult::new(ElicitationAction::Decline))
                }
                Err(error) => {
                    return Err(protocol(format!(
                        "input the server asked for could not be given: {}",
                        error.message
                    )));
                }
            }
            .map_err(|e| protocol(format!("cannot encode an input response: {e}")))?;
            responses.insert(key, value);
        }
        Ok(Retry {
            responses: (!responses.is_empty()).then_some(responses),
            state: required.request_state,
            round,
        })
    }
}
