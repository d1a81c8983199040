//! A transport wrapper that makes rmcp's `Auto` lifecycle safe against real servers:
//!
//! * the `server/discover` probe gets a short deadline (rmcp waits 10 s); when it passes,
//!   a synthetic "method not found" error is delivered so rmcp falls back to `initialize`
//!   on the same connection, and the server's late answer, if any, is dropped;
//! * a non-discover answer to the probe (some legacy servers answer unknown methods with
//!   an empty success) is turned into an error for the same fallback;
//! * the end of the stream is reported once, so the hub learns of a crash without polling.

use rmcp::model::{
    ClientRequest, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, RequestId, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;

pub struct GuardedTransport<T> {
    inner: T,
    /// None: no deadline (discover-only mode, where a fallback is impossible anyway).
    probe_timeout: Option<Duration>,
    probe: Option<(RequestId, Pin<Box<tokio::time::Sleep>>)>,
    abandoned_probe: Option<RequestId>,
    on_close: Option<oneshot::Sender<()>>,
    probe_timed_out: Arc<AtomicBool>,
}

impl<T> GuardedTransport<T> {
    pub fn new(inner: T, probe_timeout: Option<Duration>, on_close: oneshot::Sender<()>) -> Self {
        GuardedTransport {
            inner,
            probe_timeout,
            probe: None,
            abandoned_probe: None,
            on_close: Some(on_close),
            probe_timed_out: Arc::default(),
        }
    }

    /// Set once the probe deadline passed: if the fallback `initialize` then fails, the
    /// server may simply have been slow, and a retry in discover mode is worth it.
    pub fn probe_timed_out(&self) -> Arc<AtomicBool> {
        self.probe_timed_out.clone()
    }
}

fn legacy_signal(id: RequestId, why: &str) -> RxJsonRpcMessage<RoleClient> {
    JsonRpcMessage::Error(JsonRpcError {
        jsonrpc: Default::default(),
        id: Some(id),
        error: ErrorData::new(ErrorCode::METHOD_NOT_FOUND, why.to_string(), None),
    })
}

fn response_id(message: &RxJsonRpcMessage<RoleClient>) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(r) => Some(&r.id),
        JsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

impl<T> Transport<RoleClient> for GuardedTransport<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
            && let Some(timeout) = self.probe_timeout
        {
            self.probe = Some((request.id.clone(), Box::pin(tokio::time::sleep(timeout))));
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        {
            loop {
                let message = match self.probe.as_mut() {
                    Some((_, deadline)) => {
                        tokio::select! {
                            message = self.inner.receive() => message,
                            _ = deadline.as_mut() => {
                                let Some((id, _)) = self.probe.take() else { continue };
                                self.abandoned_probe = Some(id.clone());
                                self.probe_timed_out.store(true, Ordering::SeqCst);
                                return Some(legacy_signal(id, "server/discover was not answered in time"));
                            }
                        }
                    }
                    None => self.inner.receive().await,
                };
                let Some(message) = message else {
                    if let Some(tx) = self.on_close.take() {
                        let _ = tx.send(());
                    }
                    return None;
                };
                let id = response_id(&message).cloned();
                if id.is_some() && id == self.abandoned_probe {
                    // The server answered the probe after we gave up on it.
                    self.abandoned_probe = None;
                    continue;
                }
                if let Some((probe_id, _)) = &self.probe
                    && id.as_ref() == Some(probe_id)
                {
                    let probe_id = probe_id.clone();
                    self.probe = None;
                    if let JsonRpcMessage::Response(response) = &message
                        && !matches!(response.result, ServerResult::DiscoverResult(_))
                    {
                        return Some(legacy_signal(
                            probe_id,
                            "server/discover answered with something other than a discover result",
                        ));
                    }
                }
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
