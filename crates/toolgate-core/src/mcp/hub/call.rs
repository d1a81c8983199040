//! `tools/call`: the per-server timeout (re-armed while the person answers the server's
//! questions), cancellation with `notifications/cancelled`, progress routed to the caller
//! and dropped once the call is over, sign-ins on a refused token, `input_required`
//! rounds, pages a `-32042` asks to be visited, and tools that must run as tasks.

use super::connection::{Call, wait_closed};
use super::locks::lock;
use super::{McpHub, input_required, task_tools, url_required};
use crate::mcp::auth::{Challenge, MAX_SIGN_INS};
use crate::mcp::convert::call_output;
use crate::mcp::elicitation::url::URL_ELICITATION_REQUIRED;
use crate::mcp::handler::{ProgressRoute, ProgressRoutes};
use crate::mcp::types::{CallOutput, McpError, ProgressUpdate};
use rmcp::ServiceError;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

impl McpHub {
    /// Calls `tool` (raw name) on `server`. Honors the per-server timeout; on `cancel` (or
    /// timeout) sends `notifications/cancelled`, and late progress or results for the call
    /// are dropped. JSON-RPC errors come back as `is_error` outputs, like `isError` results.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        progress: Option<mpsc::UnboundedSender<ProgressUpdate>>,
        cancel: CancellationToken,
    ) -> Result<CallOutput, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Ok(CallOutput {
                    text: format!("tool arguments must be a JSON object, got {other}"),
                    is_error: true,
                    images: Vec::new(),
                });
            }
        };
        let mut sign_ins = 0;
        loop {
            let connection = self.inner.servers.connected(server)?;
            let auth = match connection.over_http {
                true => self.inner.sign_ins.known(server).await,
                false => None,
            };
            let seen = auth.as_ref().map(|a| a.credentials.generation());
            let call = Call {
                connection: &connection,
                tool,
                arguments: arguments.clone(),
                progress: progress.clone(),
                cancel: &cancel,
            };
            if lock(&connection.task_tools).contains(tool) {
                return self.call_as_task(&call).await;
            }
            let (error, challenge) = match self.call_once(&call, None).await {
                // A tool whose listing toolgate could not read raw (HTTP) and that must
                // run as a task: from now on it does.
                Ok(output) if output.is_error && task_tools::refuses_plain_call(&output.text) => {
                    lock(&connection.task_tools).insert(tool.to_string());
                    return self.call_as_task(&call).await;
                }
                Ok(output) => return Ok(output),
                Err(failed) => failed,
            };
            // The server refused the token (401) or wants more scopes (403): sign in and
            // send the call again. It was refused before it ran, so a retry is safe.
            let (Some(challenge), Some(auth)) = (challenge, auth) else {
                return Err(error);
            };
            if sign_ins == MAX_SIGN_INS {
                return Err(error);
            }
            sign_ins += 1;
            let servers = &self.inner.servers;
            let config = servers
                .config(server)
                .ok_or_else(|| servers.unknown(server))?;
            let signed_in = tokio::select! {
                result = self.inner.sign_ins.sign_in(&config, &auth, &challenge, seen) => result,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            };
            if let Err(message) = signed_in {
                return Err(McpError::Protocol {
                    server: server.to_string().into(),
                    message,
                });
            }
        }
    }

    /// One `tools/call`. A failure comes with the authorization challenge behind it, if any.
    async fn call_once(
        &self,
        call: &Call<'_>,
        retry: Option<input_required::Retry>,
    ) -> Result<CallOutput, (McpError, Option<Challenge>)> {
        let Call {
            connection,
            tool,
            cancel,
            ..
        } = *call;
        let server = connection.name.as_str();
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = call.arguments.clone();
        let round = retry.as_ref().map_or(0, |r| r.round);
        if let Some(retry) = retry {
            params.input_responses = retry.responses;
            params.request_state = retry.state;
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = connection
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| connection.failure(e))?;
        let token = handle.progress_token.clone();
        if let Some(progress) = call.progress.clone() {
            lock(&connection.progress).insert(
                token.clone(),
                ProgressRoute {
                    sender: progress,
                    last: None,
                },
            );
        }
        let _route = RouteGuard {
            routes: connection.progress.clone(),
            token,
        };
        let mut closed = connection.closed.clone();
        let elicitor = self.inner.servers.elicitor(server);
        let servers = &self.inner.servers;
        let outcome = tokio::select! {
            response = &mut handle.rx => match response {
                Ok(Ok(ServerResult::CallToolResult(result))) => Ok(call_output(&result)),
                Ok(Ok(ServerResult::InputRequiredResult(required))) => {
                    match self.fulfil_input(connection, required, cancel, round + 1).await {
                        Ok(next) => Box::pin(self.call_once(call, Some(next))).await,
                        Err(e) => Err((e, None)),
                    }
                }
                Ok(Ok(other)) => Err((McpError::Protocol {
                    server: server.to_string().into(),
                    message: format!("unexpected answer to tools/call: {}", short_debug(&other)),
                }, None)),
                Ok(Err(ServiceError::McpError(error)))
                    if error.code.0 == URL_ELICITATION_REQUIRED
                        && round < input_required::MAX_INPUT_ROUNDS =>
                {
                    match self
                        .visit_required_pages(server, &error, call.progress.as_ref(), cancel)
                        .await
                    {
                        Ok(url_required::PagesVisited::Done) => {
                            let again = input_required::Retry {
                                responses: None,
                                state: None,
                                round: round + 1,
                            };
                            Box::pin(self.call_once(call, Some(again))).await
                        }
                        Ok(url_required::PagesVisited::Refused(text)) => Ok(CallOutput {
                            text,
                            is_error: true,
                            images: Vec::new(),
                        }),
                        Err(e) => Err((e, None)),
                    }
                }
                Ok(Err(ServiceError::McpError(error))) => Ok(CallOutput {
                    text: format!("MCP error {}: {}", error.code.0, error.message),
                    is_error: true,
                    images: Vec::new(),
                }),
                Ok(Err(e)) => Err(connection.failure(e)),
                Err(_) => Err((servers.disconnected(connection).await, None)),
            },
            _ = wait_closed(&mut closed) => Err((servers.disconnected(connection).await, None)),
            // A server waiting for the person's answer is not a server that hangs.
            () = elicitor.timeout_unless_asking(connection.call_timeout) => {
                connection.send_cancel(handle.id.clone(), "timeout").await;
                Err((connection.timeout(tool), None))
            }
            _ = cancel.cancelled() => {
                connection.send_cancel(handle.id.clone(), "cancelled by the user").await;
                Err((McpError::Cancelled, None))
            }
        };
        outcome
    }
}

/// Removes a call's progress route however the call ends.
struct RouteGuard {
    routes: ProgressRoutes,
    token: rmcp::model::ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        lock(&self.routes).remove(&self.token);
    }
}

fn short_debug(value: &impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    text.chars().take(200).collect()
}
