//! An incremental Server-Sent Events parser (the WHATWG event-stream format), fed with the
//! body's byte chunks as they arrive. Chunks may split lines, CRLF pairs and UTF-8 characters
//! anywhere; the parser keeps the partial line until its end arrives.

/// One dispatched event: the `event:` name (`message` when none was given) and its data
/// lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line not yet terminated.
    partial: Vec<u8>,
    /// The previous chunk ended in `\r`; a `\n` starting the next one belongs to it.
    skip_leading_lf: bool,
    event_name: Option<String>,
    data_lines: Vec<String>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk of the body; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.skip_leading_lf {
            self.skip_leading_lf = false;
            if let Some(stripped) = rest.strip_prefix(b"\n") {
                rest = stripped;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.partial.extend_from_slice(&rest[..pos]);
            let line_end = rest[pos];
            rest = &rest[pos + 1..];
            if line_end == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_leading_lf = true,
                }
            }
            // A line boundary is never inside a multi-byte UTF-8 character, so each
            // complete line decodes on its own.
            let line = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            if let Some(event) = self.process_line(&line) {
                events.push(event);
            }
        }
        self.partial.extend_from_slice(rest);
        events
    }

    /// Called when the body ends. An event whose lines all arrived but whose blank
    /// terminator did not is still dispatched (some servers omit the final blank line);
    /// a half-received line is dropped, because it is truncated data.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.partial.is_empty() {
            self.partial.clear();
            self.event_name = None;
            self.data_lines.clear();
            return None;
        }
        self.dispatch()
    }

    fn process_line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None; // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event_name = Some(value.to_string()),
            "data" => self.data_lines.push(value.to_string()),
            // `id` and `retry` only matter for EventSource reconnection, which model APIs
            // do not use.
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = self.event_name.take();
        if self.data_lines.is_empty() {
            return None;
        }
        let data = self.data_lines.join("\n");
        self.data_lines.clear();
        Some(SseEvent {
            event: name.unwrap_or_else(|| "message".to_string()),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(body: &[u8], chunk_len: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        for chunk in body.chunks(chunk_len) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.finish());
        events
    }

    /// Whatever the chunk sizes the body arrives in, it parses to `expected`.
    fn parses_alike_in_any_chunks(body: &[u8], expected: &[SseEvent]) {
        for chunk_len in 1..body.len() {
            assert_eq!(
                parse_in_chunks(body, chunk_len),
                expected,
                "chunk {chunk_len}"
            );
        }
    }

    #[test]
    fn named_events_multi_line_data_and_comments() {
        let body = b": keep-alive\nevent: ping\ndata: {}\n\nevent: msg\ndata: line one\ndata: line two\nid: 7\n\n";
        let expected = vec![
            SseEvent {
                event: "ping".into(),
                data: "{}".into(),
            },
            SseEvent {
                event: "msg".into(),
                data: "line one\nline two".into(),
            },
        ];
        parses_alike_in_any_chunks(body, &expected);
    }

    #[test]
    fn crlf_and_bare_cr_line_endings_split_anywhere() {
        let body = "event: a\r\ndata: é😀\r\n\r\ndata:no-space\r\rdata: x\n\n".as_bytes();
        let expected = vec![
            SseEvent {
                event: "a".into(),
                data: "é😀".into(),
            },
            SseEvent {
                event: "message".into(),
                data: "no-space".into(),
            },
            SseEvent {
                event: "message".into(),
                data: "x".into(),
            },
        ];
        parses_alike_in_any_chunks(body, &expected);
    }

    #[test]
    fn end_of_body_keeps_complete_lines_and_drops_a_truncated_one() {
        let mut parser = SseParser::new();
        assert!(parser.feed(b"data: [DONE]\n").is_empty());
        assert_eq!(parser.finish().map(|e| e.data), Some("[DONE]".to_string()));

        let mut parser = SseParser::new();
        assert!(parser.feed(b"data: {\"type\":\"content_blo").is_empty());
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        assert!(parse_in_chunks(b"event: lonely\n\n", 4).is_empty());
    }
}
