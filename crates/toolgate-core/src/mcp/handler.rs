//! toolgate's side of an MCP connection: routes progress to the call that asked for it,
//! re-lists tools on `list_changed`, forwards server log messages, answers `roots/list`
//! and passes `sampling/createMessage` on to the agent. One per connection.

use super::elicitor::Elicitor;
use super::roots::Roots;
use super::sampling::{self, Slot};
use super::types::{HubEvent, ProgressUpdate};
use rmcp::ClientHandler;
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig as ClientInfo, CreateMessageRequestParams,
    CreateMessageResult, CustomNotification, CustomRequest, CustomResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorCode, ErrorData, FormElicitationCapability,
    Implementation, ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, RootsCapabilities, SamplingCapability,
    UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;

/// Where each running call's progress goes, with the last value passed on.
pub type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressRoute>>>;

pub struct ProgressRoute {
    pub sender: mpsc::UnboundedSender<ProgressUpdate>,
    pub last: Option<f64>,
}

/// Invoked (on a fresh task) when the server says its tool list changed.
pub type ListChangedHook = Arc<dyn Fn(rmcp::Peer<RoleClient>) + Send + Sync>;

#[derive(Clone)]
pub struct HubClient {
    pub server: String,
    pub events: mpsc::UnboundedSender<HubEvent>,
    pub progress: ProgressRoutes,
    pub on_list_changed: ListChangedHook,
    /// The session's roots (shared by every connection).
    pub roots: Roots,
    /// Sampling requests of this server now waiting (bounded).
    pub sampling_waiting: Arc<AtomicUsize>,
    /// Asks the person when the server elicits input.
    pub elicitor: Elicitor,
    /// Resources or prompts changed: the hub lists its catalog again.
    pub on_catalog_changed: ListChangedHook,
}

/// What toolgate tells servers about itself. `initialize` offers the newest version that
/// still has the handshake: strict legacy peers reject `2026-07-28` there.
pub fn client_info() -> ClientInfo {
    let mut capabilities = ClientCapabilities::default();
    // Sampling without tools (no `sampling.tools`): see `sampling::read_request`.
    capabilities.sampling = Some(SamplingCapability::default());
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(true);
    capabilities.roots = Some(roots);
    capabilities.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::default())
            .with_url(UrlElicitationCapability::new()),
    );
    let mut info = ClientInfo::new(
        capabilities,
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    );
    info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
    info
}

impl ClientHandler for HubClient {
    fn get_info(&self) -> ClientInfo {
        client_info()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicitor.ask(request, context.ct).await
    }

    /// rmcp hands over an `elicitation/create` it could not read into its own types (a
    /// schema outside what it models) as a custom request: toolgate reads it itself, so
    /// the server gets either a form or the reason it was refused — never "method not
    /// found" for a method toolgate declared.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method != "elicitation/create" {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let params = request.params.unwrap_or_default();
        let result = self.elicitor.ask_raw(&params, context.ct).await?;
        serde_json::to_value(result)
            .map(CustomResult)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// `notifications/elicitation/complete` (rmcp has no type for it): a page the person
    /// was sent to is done, and a call waiting for it may go on.
    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method != super::elicitation::url::COMPLETE_METHOD {
            tracing::debug!(server = %self.server, method = %notification.method, "unknown notification");
            return;
        }
        match super::elicitation::url::completed_id(notification.params.as_ref()) {
            Some(id) => self.elicitor.completions().complete(id),
            None => tracing::warn!(
                server = %self.server,
                "notifications/elicitation/complete without an elicitationId"
            ),
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // rmcp handles each notification on its own task, so they can arrive out of order;
        // the spec says progress only increases, so anything not above the last value
        // passed on is stale and dropped. No route: the call ended or was cancelled.
        let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(route) = routes.get_mut(&params.progress_token) else {
            return;
        };
        if route.last.is_some_and(|last| params.progress <= last) {
            return;
        }
        route.last = Some(params.progress);
        let _ = route.sender.send(ProgressUpdate {
            progress: params.progress,
            total: params.total,
            message: params.message.map(|m| crate::sanitize::for_terminal(&m)),
        });
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // Re-listing is a request; awaiting it inside the notification handler would stall
        // the connection's message loop, so the hook starts it on its own task (and only
        // when no listing is already queued: a burst costs no task per notification).
        (self.on_list_changed)(context.peer.clone());
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        let hook = self.on_catalog_changed.clone();
        let peer = context.peer.clone();
        tokio::spawn(async move { hook(peer) });
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        let hook = self.on_catalog_changed.clone();
        let peer = context.peer.clone();
        tokio::spawn(async move { hook(peer) });
    }

    // Logging is deprecated in the newest spec but still what most servers send.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = match &params.logger {
            Some(logger) => format!("{logger}: {text}"),
            None => text,
        };
        let _ = self.events.send(HubEvent::Log {
            server: self.server.clone().into(),
            level: super::logging::from_mcp(params.level),
            message: crate::sanitize::for_terminal(&text),
        });
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(self.roots.result())
    }

    /// Runs on its own task (rmcp spawns one per request), so waiting for the person here
    /// holds up nothing else on the connection.
    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let refuse = |reason: String| {
            let _ = self.events.send(HubEvent::SamplingRefused {
                server: self.server.clone().into(),
                max_tokens: params.max_tokens,
                reason: reason.clone(),
            });
            reason
        };
        let request = sampling::read_request(&params)
            .map_err(|reason| ErrorData::invalid_params(refuse(reason), None))?;
        let Some(_slot) = Slot::take(&self.sampling_waiting) else {
            let reason = format!(
                "too many sampling requests: '{}' already has {} waiting for an answer; this one is refused",
                self.server,
                sampling::MAX_WAITING_PER_SERVER
            );
            return Err(ErrorData::new(
                rmcp::model::ErrorCode(-1),
                refuse(reason),
                None,
            ));
        };
        let (question, answer, _withdraw_when_done) = sampling::ask(&self.server, request);
        if self.events.send(HubEvent::Sampling(question)).is_err() {
            return Err(ErrorData::internal_error(
                "toolgate is shutting down; sampling refused",
                None,
            ));
        }
        tokio::select! {
            answer = answer => match answer {
                Ok(answer) => sampling::result(answer),
                Err(_) => Err(ErrorData::new(
                    rmcp::model::ErrorCode(-1),
                    "sampling refused: nothing in this toolgate session can answer it",
                    None,
                )),
            },
            // The server cancelled: dropping the guard withdraws the question.
            () = context.ct.cancelled() => Err(ErrorData::internal_error("cancelled", None)),
        }
    }
}
