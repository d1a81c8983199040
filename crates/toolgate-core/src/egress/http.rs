//! One HTTP/1.x client connection: a `CONNECT` tunnel, or one absolute-form request
//! forwarded to its host. One proxy connection carries one request to one admitted host:
//! the forwarded request says `Connection: close`, its body is forwarded by its framing
//! and nothing the client sends after it is read, so a keep-alive client's next request
//! (perhaps to another host) can never reach the first one.

use std::io::Cursor;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::Limits;
use super::chunked;
use super::http_head::{Body, HeadError, Refusal, Request, parse_request, read_head};
use super::outbound::{Opened, open};
use super::relay::{self, BODY_BUFFER};
use super::{Admission, Target, Traffic, Via};

pub(super) async fn serve(mut client: TcpStream, admission: &dyn Admission, limits: &Limits) {
    let reading = read_head(&mut client, limits.max_head);
    let (buffer, length) = match tokio::time::timeout(limits.head_timeout, reading).await {
        Ok(Ok(head)) => head,
        Err(_) => return answer(client, &Refusal::Timeout).await,
        Ok(Err(HeadError::Empty)) => return,
        Ok(Err(HeadError::Io(error))) => {
            return tracing::debug!(%error, "egress client failed before its request head");
        }
        Ok(Err(HeadError::Truncated)) => {
            let reason = "the connection ended before the request head did".to_string();
            return answer(client, &Refusal::BadRequest(reason)).await;
        }
        Ok(Err(HeadError::Refused(refusal))) => return answer(client, &refusal).await,
    };
    let (head, early) = buffer.split_at(length);
    match parse_request(head) {
        Err(refusal) => answer(client, &refusal).await,
        Ok(Request::Connect(target)) => tunnel(client, admission, &target, early, limits).await,
        Ok(Request::Forward { target, head, body }) => {
            let request = Forward { head, body, early };
            forward(client, admission, &target, request, limits).await;
        }
    }
}

async fn tunnel(
    mut client: TcpStream,
    admission: &dyn Admission,
    target: &Target,
    early: &[u8],
    limits: &Limits,
) {
    match open(
        &client,
        admission,
        target,
        Via::Connect,
        limits.connect_timeout,
    )
    .await
    {
        Opened::Gone => {}
        Opened::Denied(reason) => answer(client, &Refusal::Denied(reason)).await,
        Opened::Failed(report, error) => {
            drop(report);
            answer(client, &Refusal::BadGateway(error.to_string())).await;
        }
        Opened::Connected(mut report, mut host) => {
            let established = b"HTTP/1.1 200 Connection Established\r\n\r\n";
            if client.write_all(established).await.is_ok() {
                let moved = relay::tunnel(&mut client, &mut host, early, &mut report.traffic);
                if let Err(error) = moved.await {
                    tracing::debug!(%target, %error, "egress tunnel ended with an error");
                }
            }
        }
    }
}

/// An absolute-form request as it goes to the host.
struct Forward<'a> {
    head: Vec<u8>,
    body: Body,
    /// What the client sent after the head: the start of the body.
    early: &'a [u8],
}

async fn forward(
    mut client: TcpStream,
    admission: &dyn Admission,
    target: &Target,
    request: Forward<'_>,
    limits: &Limits,
) {
    let (mut report, mut host) = match open(
        &client,
        admission,
        target,
        Via::Http,
        limits.connect_timeout,
    )
    .await
    {
        Opened::Gone => return,
        Opened::Denied(reason) => return answer(client, &Refusal::Denied(reason)).await,
        Opened::Failed(report, error) => {
            drop(report);
            return answer(client, &Refusal::BadGateway(error.to_string())).await;
        }
        Opened::Connected(report, host) => (report, host),
    };
    let Traffic { sent, received } = &mut report.traffic;
    let (client_read, mut client_write) = client.split();
    let mut from_client =
        BufReader::with_capacity(BODY_BUFFER, Cursor::new(request.early).chain(client_read));
    let (mut host_read, mut host_write) = host.split();
    let up = async {
        let sending = send(
            &request.head,
            request.body,
            &mut from_client,
            &mut host_write,
            sent,
        );
        if let Err(error) = sending.await {
            // A broken body: end the host's side so it does not wait for the rest.
            tracing::debug!(%target, %error, "egress request body not forwarded");
            let _ = host_write.shutdown().await;
        }
        // Whatever the client sends after its one request is not read.
        std::future::pending::<()>().await
    };
    // The exchange ends when the host has answered and closed (it was told to).
    let down = relay::pump(&mut host_read, &mut client_write, received);
    tokio::select! {
        ended = down => if let Err(error) = ended {
            tracing::debug!(%target, %error, "egress response relay ended with an error");
        },
        () = up => {}
    }
    drop(from_client);
    // Reported when the host's answer has been passed on, not after the linger.
    drop(report);
    linger(&mut client).await;
}

async fn send<R, W>(
    head: &[u8],
    body: Body,
    from: &mut R,
    to: &mut W,
    sent: &mut u64,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    to.write_all(head).await?;
    *sent += head.len() as u64;
    match body {
        Body::None => Ok(()),
        Body::Length(length) => relay::copy_exact(from, to, length, sent).await,
        Body::Chunked => chunked::forward(from, to, sent).await,
    }
}

/// How long a refused client may take to read the answer before the socket is closed.
const LINGER: Duration = Duration::from_secs(2);

/// Sends the proxy's own answer and closes (after a [`linger`]).
async fn answer(mut client: TcpStream, refusal: &Refusal) {
    if client.write_all(&refusal.response()).await.is_ok() && client.shutdown().await.is_ok() {
        linger(&mut client).await;
    }
}

/// Reads and drops what the client still sends (a pipelined request, the rest of a head
/// too large) until it closes or for [`LINGER`], so that closing does not reset the
/// connection before the client has read the answer it was sent.
async fn linger(client: &mut TcpStream) {
    let drain = async {
        let mut sink = vec![0u8; 16 * 1024];
        while matches!(client.read(&mut sink).await, Ok(n) if n > 0) {}
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}
