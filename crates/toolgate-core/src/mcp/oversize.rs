//! The size limit of one stdio message, enforced before rmcp sees the line. rmcp drops a
//! line over its limit and says nothing to the caller, so the call it answered waited for
//! its whole timeout and then reported a timeout. Here the line is cut off at the limit
//! (rmcp gets a line it cannot parse, which it ignores), the rest is read and counted, and
//! if it was an answer, an error answer with the same id takes its place: the call fails
//! at once, naming the size and the limit (decision 0069).

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Passes a server's stdout through, replacing each line over `limit` bytes by an error
/// answer to the request it answered.
pub struct OversizeGuard<R> {
    inner: R,
    limit: usize,
    server: String,
    /// Bytes of the current line so far (newline excluded).
    line_len: usize,
    /// The current line went over the limit: its remaining bytes are read and dropped.
    oversized: bool,
    scan: TopLevelScan,
    /// An error answer waiting to be read, and how much of it was read.
    pending: Vec<u8>,
    pending_at: usize,
}

impl<R> OversizeGuard<R> {
    pub fn new(inner: R, limit: usize, server: &str) -> Self {
        OversizeGuard {
            inner,
            limit,
            server: server.to_string(),
            line_len: 0,
            oversized: false,
            scan: TopLevelScan::default(),
            pending: Vec::new(),
            pending_at: 0,
        }
    }

    /// Filters `data` in place; returns how many bytes of it go on. Never more than came
    /// in: the byte where a line goes over the limit becomes the newline that ends it.
    fn filter(&mut self, data: &mut [u8]) -> usize {
        let mut kept = 0;
        for read in 0..data.len() {
            let byte = data[read];
            if byte == b'\n' {
                if self.oversized {
                    self.end_oversized();
                } else {
                    data[kept] = byte;
                    kept += 1;
                }
                self.line_len = 0;
                self.oversized = false;
                self.scan = TopLevelScan::default();
                continue;
            }
            self.scan.feed(byte);
            self.line_len += 1;
            if self.oversized {
                continue;
            }
            if self.line_len > self.limit {
                self.oversized = true;
                data[kept] = b'\n';
            } else {
                data[kept] = byte;
            }
            kept += 1;
        }
        kept
    }

    fn end_oversized(&mut self) {
        let size = self.line_len;
        let limit = self.limit;
        let id = self.scan.id.take().filter(|_| !self.scan.has_method);
        let Some(id) = id.filter(|id| serde_json::from_slice::<serde_json::Value>(id).is_ok())
        else {
            tracing::warn!(
                server = %self.server,
                size,
                limit,
                "a message over the size limit that answers no request was dropped"
            );
            return;
        };
        let message = too_big(size, limit);
        let mut line = br#"{"jsonrpc":"2.0","id":"#.to_vec();
        line.extend_from_slice(&id);
        line.extend_from_slice(br#","error":{"code":-32603,"message":"#);
        line.extend_from_slice(serde_json::Value::String(message).to_string().as_bytes());
        line.extend_from_slice(b"}}\n");
        self.pending.extend_from_slice(&line);
    }
}

/// What the failed call says.
pub fn too_big(size: usize, limit: usize) -> String {
    format!(
        "the server's answer is {size} bytes, over the limit of {limit} bytes for one message ([mcp] max_message_bytes in config.toml); it was dropped"
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for OversizeGuard<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.pending_at < this.pending.len() {
                let take = (this.pending.len() - this.pending_at).min(buf.remaining());
                buf.put_slice(&this.pending[this.pending_at..this.pending_at + take]);
                this.pending_at += take;
                if this.pending_at == this.pending.len() {
                    this.pending.clear();
                    this.pending_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, buf) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            let read = buf.filled().len() - before;
            if read == 0 {
                return Poll::Ready(Ok(())); // end of stream
            }
            let kept = {
                let filled = buf.filled_mut();
                let new = &mut filled[before..];
                this.filter(new)
            };
            buf.set_filled(before + kept);
            // Everything read was dropped: read on (an empty read would mean the end),
            // unless an error answer is due.
            if kept > 0 {
                return Poll::Ready(Ok(()));
            }
        }
    }
}

/// Follows a JSON-RPC message byte by byte, just enough to find its top-level `id` (kept
/// as raw JSON) and whether it has a top-level `method` (then it is a request or a
/// notification of the server, and no error answer stands in for it).
#[derive(Debug, Default)]
struct TopLevelScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The key being read (only short ones matter: "id", "method").
    key: Vec<u8>,
    reading: Reading,
    /// The last key read at depth 1.
    last_key: LastKey,
    /// After `"id":`, the value comes next.
    id_next: bool,
    id: Option<Vec<u8>>,
    has_method: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Reading {
    #[default]
    Nothing,
    Key,
    IdString,
    IdLiteral,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum LastKey {
    #[default]
    Other,
    Id,
}

/// Longer ids are not worth keeping (no client sends them).
const MAX_ID: usize = 256;

impl TopLevelScan {
    fn feed(&mut self, byte: u8) {
        if self.in_string {
            self.string_byte(byte);
            return;
        }
        if self.reading == Reading::IdLiteral {
            if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\r') {
                self.reading = Reading::Nothing;
            } else {
                self.push_id(byte);
                return;
            }
        }
        match byte {
            b'{' | b'[' => {
                self.depth += 1;
                self.id_next = false;
                self.expect_key = self.depth == 1 && byte == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b'"' => {
                self.in_string = true;
                self.reading = if self.depth == 1 && self.expect_key {
                    self.key.clear();
                    Reading::Key
                } else if self.depth == 1 && self.id_next {
                    self.id_next = false;
                    self.id = Some(vec![b'"']);
                    Reading::IdString
                } else {
                    Reading::Nothing
                };
            }
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 => {
                self.expect_key = false;
                self.id_next = self.last_key == LastKey::Id;
            }
            b' ' | b'\t' | b'\r' => {}
            _ if self.depth == 1 && self.id_next => {
                self.id_next = false;
                self.id = Some(vec![byte]);
                self.reading = Reading::IdLiteral;
            }
            _ => {}
        }
    }

    fn string_byte(&mut self, byte: u8) {
        let closing = !self.escaped && byte == b'"';
        self.escaped = !self.escaped && byte == b'\\';
        match self.reading {
            Reading::Key if closing => {
                self.last_key = if self.key == b"id" {
                    LastKey::Id
                } else {
                    LastKey::Other
                };
                if self.key == b"method" {
                    self.has_method = true;
                }
            }
            Reading::Key => {
                if self.key.len() <= 8 {
                    self.key.push(byte);
                }
            }
            Reading::IdString => self.push_id(byte),
            Reading::Nothing | Reading::IdLiteral => {}
        }
        if closing {
            self.in_string = false;
            self.reading = Reading::Nothing;
        }
    }

    fn push_id(&mut self, byte: u8) {
        if let Some(id) = &mut self.id {
            if id.len() < MAX_ID {
                id.push(byte);
            } else {
                self.id = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> (Option<String>, bool) {
        let mut scan = TopLevelScan::default();
        for b in text.bytes() {
            scan.feed(b);
        }
        (
            scan.id.map(|id| String::from_utf8(id).unwrap()),
            scan.has_method,
        )
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":9}}"#),
            (Some("7".into()), false)
        );
        // The TypeScript SDK puts the id last; nested ids and "id" in strings do not count.
        assert_eq!(
            scan(
                r#"{"result":{"content":[{"id":1,"text":"\"id\": 3"}]},"jsonrpc":"2.0", "id" : "a\"b"}"#
            ),
            (Some(r#""a\"b""#.into()), false)
        );
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","method":"sampling/createMessage","id":4}"#),
            (Some("4".into()), true)
        );
        assert_eq!(scan(r#"{"jsonrpc":"2.0","method":"x"}"#), (None, true));
    }

    #[test]
    fn a_line_over_the_limit_becomes_an_error_answer() {
        let mut guard = OversizeGuard::new(tokio::io::empty(), 40, "s");
        let small = br#"{"id":1,"result":{}}"#.to_vec();
        let big = format!(r#"{{"result":{{"text":"{}"}},"id":2}}"#, "x".repeat(100));
        let mut data = [
            small.clone(),
            b"\n".to_vec(),
            big.as_bytes().to_vec(),
            b"\n".to_vec(),
        ]
        .concat();
        let total = data.len();
        let kept = guard.filter(&mut data);
        let out = String::from_utf8(data[..kept].to_vec()).unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1,"result":{}}"#);
        assert_eq!(lines[1].len(), 40, "cut at the limit");
        assert!(kept < total);
        let pending = String::from_utf8(guard.pending.clone()).unwrap();
        let answer: serde_json::Value = serde_json::from_str(pending.trim()).unwrap();
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["error"]["message"], too_big(big.len(), 40).as_str());
    }
}
