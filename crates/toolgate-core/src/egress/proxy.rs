//! The accept loop: every client on the listener is the sandboxed process (the listener
//! lives in its private network namespace), each connection is served on its own task,
//! and stopping ends the accepting and every live connection.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{Admission, Limits, http, socks};

/// Serves the proxy on `listener` with the default [`Limits`] until `stop` is cancelled.
/// Returns once every connection has ended and been reported to `admission`.
pub async fn serve(listener: TcpListener, admission: Arc<dyn Admission>, stop: CancellationToken) {
    serve_with(listener, admission, stop, Limits::default()).await;
}

/// [`serve`] with chosen limits.
pub async fn serve_with(
    listener: TcpListener,
    admission: Arc<dyn Admission>,
    stop: CancellationToken,
    limits: Limits,
) {
    let limits = Arc::new(limits);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    let (admission, limits, stop) = (admission.clone(), limits.clone(), stop.clone());
                    connections.spawn(async move {
                        tokio::select! {
                            () = stop.cancelled() => {}
                            () = connection(client, &*admission, &limits) => {}
                        }
                    });
                }
                Err(error) => {
                    // Out of file descriptors and the like: wait a little instead of
                    // spinning on a listener that keeps failing.
                    tracing::warn!(%error, "egress proxy cannot accept a connection");
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                }
            },
            Some(ended) = connections.join_next(), if !connections.is_empty() => {
                if let Err(error) = ended {
                    tracing::error!(%error, "egress proxy connection task failed");
                }
            }
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Tells SOCKS5 (its first byte is the version, 5) from HTTP (a method's letter).
async fn connection(client: TcpStream, admission: &dyn Admission, limits: &Limits) {
    let _ = client.set_nodelay(true);
    let mut first = [0u8; 1];
    match tokio::time::timeout(limits.head_timeout, client.peek(&mut first)).await {
        Ok(Ok(1)) if first[0] == 0x05 => socks::serve(client, admission, limits).await,
        Ok(Ok(1)) => http::serve(client, admission, limits).await,
        _ => {}
    }
}
