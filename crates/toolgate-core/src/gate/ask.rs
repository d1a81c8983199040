//! Asking the person: sends a host request to the front end and waits for its reply, the
//! turn's cancellation (or the server's withdrawal), or the request's deadline — whichever
//! comes first. The one relay of questions: the gate's (tool calls, escalations, changed
//! definitions, project servers, sampling) and the console launcher's (workspace trust).

use std::future::Future;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::protocol::AgentEvent;
use crate::protocol::questions::{HostRequest, Kind, Reply, Request};

/// Sends `request` and waits. None when `cancel` fired first: the request is withdrawn
/// (its reply channel closes, and the front end drops it from the queue). A front end that
/// is gone, or drops the request unanswered, yields the safe default as `Dismissed`; a
/// deadline that passes without an answer yields it as `Expired`.
pub async fn ask<K>(
    events: &mpsc::Sender<AgentEvent>,
    request: Request<K>,
    answer: oneshot::Receiver<Reply<K::Answer>>,
    cancel: Option<&CancellationToken>,
) -> Option<Reply<K::Answer>>
where
    K: Kind,
    Request<K>: Into<HostRequest>,
{
    let never = CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    ask_until(events, request, answer, cancel.cancelled()).await
}

/// [`ask`] until `stop` completes (a server withdrawing its request): None then.
pub async fn ask_until<K>(
    events: &mpsc::Sender<AgentEvent>,
    request: Request<K>,
    answer: oneshot::Receiver<Reply<K::Answer>>,
    stop: impl Future<Output = ()>,
) -> Option<Reply<K::Answer>>
where
    K: Kind,
    Request<K>: Into<HostRequest>,
{
    let safe = request.payload.safe_default();
    let deadline = request.meta.deadline;
    if events
        .send(AgentEvent::Request(request.into()))
        .await
        .is_err()
    {
        return Some(Reply::Dismissed(safe));
    }
    let expiry = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            None => std::future::pending().await,
        }
    };
    // The front end expires requests itself and says so; this deadline only covers a
    // front end that cannot (it is slow, or never shows the request).
    tokio::select! {
        biased;
        reply = answer => Some(reply.unwrap_or(Reply::Dismissed(safe))),
        () = stop => None,
        () = expiry => Some(Reply::Expired(safe)),
    }
}
