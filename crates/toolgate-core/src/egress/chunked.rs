//! Forwarding a chunked request body by its framing, so the proxy knows where the one
//! request ends. Chunk sizes are rewritten in plain form (extensions dropped) so the host
//! reads exactly the framing this proxy read; the data is copied as is.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::relay::copy_exact;

/// One size or trailer line, and all the trailer lines together.
const MAX_LINE: u64 = 4096;
const MAX_TRAILERS: usize = 64 * 1024;

fn malformed(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

pub(super) async fn forward<R, W>(from: &mut R, to: &mut W, count: &mut u64) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::with_capacity(64);
    loop {
        read_line(from, &mut line).await?;
        let size = chunk_size(&line)?;
        let framed = format!("{size:x}\r\n");
        write_counted(to, framed.as_bytes(), count).await?;
        if size == 0 {
            break;
        }
        copy_exact(from, to, size, count).await?;
        read_line(from, &mut line).await?;
        if line != b"\r\n" {
            return Err(malformed("chunk data longer than its size"));
        }
        write_counted(to, b"\r\n", count).await?;
    }
    let mut trailers = 0;
    loop {
        read_line(from, &mut line).await?;
        trailers += line.len();
        if trailers > MAX_TRAILERS {
            return Err(malformed("trailer fields too large"));
        }
        if line != b"\r\n" && !line.contains(&b':') {
            return Err(malformed("a trailer line without a field name"));
        }
        write_counted(to, &line, count).await?;
        if line == b"\r\n" {
            return Ok(());
        }
    }
}

async fn write_counted<W>(to: &mut W, bytes: &[u8], count: &mut u64) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    to.write_all(bytes).await?;
    *count += bytes.len() as u64;
    Ok(())
}

/// A line ending in CRLF, at most `MAX_LINE` bytes.
async fn read_line<R>(from: &mut R, line: &mut Vec<u8>) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
{
    line.clear();
    (&mut *from).take(MAX_LINE).read_until(b'\n', line).await?;
    if !line.ends_with(b"\r\n") {
        return Err(malformed("a chunk line that does not end in CRLF"));
    }
    Ok(())
}

/// The hex size before any `;extension`.
fn chunk_size(line: &[u8]) -> io::Result<u64> {
    let text = std::str::from_utf8(&line[..line.len() - 2])
        .map_err(|_| malformed("a chunk size that is not text"))?;
    let digits = text
        .split(';')
        .next()
        .unwrap_or("")
        .trim_end_matches([' ', '\t']);
    if digits.is_empty() || digits.len() > 15 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(malformed("a bad chunk size"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| malformed("a bad chunk size"))
}
