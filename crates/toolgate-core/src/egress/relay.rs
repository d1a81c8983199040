//! Moving bytes once a connection is admitted: large buffers, no per-byte work, and counts
//! kept in the caller's [`Traffic`] as they grow, so a relay cancelled half-way (the proxy
//! stopped) still reports what it moved.

use std::io;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt,
};
use tokio::net::TcpStream;

use super::Traffic;

/// The largest buffer of one direction. Loopback throughput keeps growing up to about
/// this size; two per busy tunnel is an acceptable cost for a sandboxed process's clients.
const BUFFER: usize = 256 * 1024;
/// Where a direction's buffer starts: a small request and answer should not pay for
/// zeroing the large one. A read that fills the buffer makes it grow.
const FIRST_BUFFER: usize = 16 * 1024;
/// The buffer for reading a forwarded request's body.
pub(super) const BODY_BUFFER: usize = 64 * 1024;

/// Copies `from` to `to` until `from` ends, then shuts `to`'s write side so the peer sees
/// the end of what was sent (a half-close, as a direct connection would give it).
/// `count` grows by every byte written.
pub(super) async fn pump<R, W>(from: &mut R, to: &mut W, count: &mut u64) -> io::Result<()>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut buffer = vec![0u8; FIRST_BUFFER];
    loop {
        let n = from.read(&mut buffer).await?;
        if n == 0 {
            break;
        }
        to.write_all(&buffer[..n]).await?;
        *count += n as u64;
        if n == buffer.len() && n < BUFFER {
            buffer.resize((n * 4).min(BUFFER), 0);
        }
    }
    to.shutdown().await
}

/// A tunnel: both directions at once until both have ended, or either fails. `early` is
/// what the client sent after its request and before the tunnel stood (a TLS hello sent
/// without waiting for the proxy's answer); it goes first.
pub(super) async fn tunnel(
    client: &mut TcpStream,
    host: &mut TcpStream,
    early: &[u8],
    traffic: &mut Traffic,
) -> io::Result<()> {
    let Traffic { sent, received } = traffic;
    if !early.is_empty() {
        host.write_all(early).await?;
        *sent += early.len() as u64;
    }
    let (mut client_read, mut client_write) = client.split();
    let (mut host_read, mut host_write) = host.split();
    tokio::try_join!(
        pump(&mut client_read, &mut host_write, sent),
        pump(&mut host_read, &mut client_write, received),
    )
    .map(|_| ())
}

/// Copies exactly `length` bytes, straight from the reader's buffer (no second copy).
pub(super) async fn copy_exact<R, W>(
    from: &mut R,
    to: &mut W,
    mut length: u64,
    count: &mut u64,
) -> io::Result<()>
where
    R: AsyncBufRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    while length > 0 {
        let available = from.fill_buf().await?;
        if available.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let n = available
            .len()
            .min(usize::try_from(length).unwrap_or(usize::MAX));
        to.write_all(&available[..n]).await?;
        from.consume(n);
        length -= n as u64;
        *count += n as u64;
    }
    Ok(())
}
