//! A Messages API on 127.0.0.1 that answers each request (one connection each) with the
//! next answer of a script, written byte by byte on a raw socket, so that a test can
//! overload it (529 + `retry-after`), cut a stream mid-body, answer whole, or hold a
//! stream open until the test lets it end (a turn that runs as long as the test needs). It
//! records every request body, and how many held streams the client gave up on, and stops
//! by itself once the script is played (or after a minute without a connection).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One response.
#[derive(Debug, Clone)]
pub enum Answer {
    /// `529 Overloaded` with an Anthropic error body and these extra headers.
    Overloaded { headers: Vec<(String, String)> },
    /// `200` and the start of an SSE stream, then the connection closes mid-body
    /// (a chunked body without its last chunk).
    Cut(String),
    /// `200` and a whole SSE stream.
    Stream(String),
    /// `200` and `head` of an SSE stream at once; `tail` (and the body's end) only once
    /// `release` is set. A client that closes the connection before is counted in
    /// [`ModelApi::closed_early`].
    Held {
        head: String,
        tail: String,
        release: Arc<AtomicBool>,
    },
}

impl Answer {
    pub fn overloaded_retry_after(value: &str) -> Answer {
        Answer::Overloaded {
            headers: vec![("retry-after".into(), value.into())],
        }
    }
}

pub struct ModelApi {
    pub url: String,
    /// Each request's JSON body, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Held streams the client closed before they were released.
    pub closed_early: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl ModelApi {
    pub fn start(script: Vec<Answer>) -> ModelApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let closed_early = Arc::new(AtomicUsize::new(0));
        let (seen, closed) = (requests.clone(), closed_early.clone());
        let thread = thread::spawn(move || {
            for answer in script {
                // A model listing (`/model` completion) is answered beside the script.
                let (socket, body) = loop {
                    let Some(mut socket) = accept(&listener) else {
                        return;
                    };
                    let Some((path, body)) = read_http_request(&mut socket) else {
                        return;
                    };
                    if path.contains("/models") {
                        list_models(socket);
                        continue;
                    }
                    break (socket, body);
                };
                let Ok(body) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                serve(socket, body, &answer, &seen, &closed);
            }
        });
        ModelApi {
            url,
            requests,
            closed_early,
            thread: Some(thread),
        }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// Waits for the script to be played out (or the server to give up waiting).
    pub fn finish(mut self) -> Vec<Value> {
        if let Some(thread) = self.thread.take() {
            thread.join().expect("model api thread");
        }
        self.requests()
    }
}

fn accept(listener: &TcpListener) -> Option<TcpStream> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((socket, _)) => {
                socket.set_nonblocking(false).ok()?;
                return Some(socket);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
    None
}

/// The models `GET /v1/models` (and `/models`) lists, as both APIs shape the answer.
pub const OFFERED_MODELS: &[&str] = &["claude-offered-by-the-api", "claude-sonnet-4-5"];

fn list_models(mut socket: TcpStream) {
    let data: Vec<Value> = OFFERED_MODELS
        .iter()
        .map(|id| json!({"id": id, "type": "model"}))
        .collect();
    let body = json!({"data": data, "has_more": false}).to_string();
    let _ = socket.write_all(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

/// Reads one HTTP request: its path and its body (`content-length` bytes). Shared with
/// the other raw-socket model APIs of the tests.
pub fn read_http_request(socket: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    socket
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    let head_end = loop {
        let n = socket.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buf[..n]);
        if let Some(pos) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&seen[..head_end]).to_ascii_lowercase();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() < head_end + length {
        let n = socket.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
    }
    Some((path, seen[head_end..].to_vec()))
}

fn serve(
    mut socket: TcpStream,
    body: Value,
    answer: &Answer,
    seen: &Mutex<Vec<Value>>,
    closed_early: &AtomicUsize,
) {
    seen.lock().expect("requests lock").push(body);
    let bytes = match answer {
        Answer::Held {
            head,
            tail,
            release,
        } => return hold(socket, head, tail, release, closed_early),
        Answer::Overloaded { headers } => {
            let body =
                json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})
                    .to_string();
            let extra: String = headers
                .iter()
                .map(|(k, v)| format!("{k}: {v}\r\n"))
                .collect();
            format!(
                "HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Answer::Cut(partial) => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n{partial}\r\n",
            partial.len()
        ),
        Answer::Stream(body) => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
    };
    let _ = socket.write_all(bytes.as_bytes());
    let _ = socket.flush();
    // Dropping the socket closes it: for `Cut`, before the body's last chunk.
}

/// Sends `head` as the first chunk of a chunked body, then waits for `release` (and sends
/// `tail` and the end) or for the client to close the connection (counted).
fn hold(
    mut socket: TcpStream,
    head: &str,
    tail: &str,
    release: &AtomicBool,
    closed_early: &AtomicUsize,
) {
    let chunk = |text: &str| format!("{:x}\r\n{text}\r\n", text.len());
    let start = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{}",
        chunk(head)
    );
    if socket.write_all(start.as_bytes()).is_err() || socket.flush().is_err() {
        closed_early.fetch_add(1, Ordering::SeqCst);
        return;
    }
    let _ = socket.set_read_timeout(Some(Duration::from_millis(20)));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut buf = [0u8; 256];
    while Instant::now() < deadline {
        if release.load(Ordering::SeqCst) {
            let end = format!("{}0\r\n\r\n", chunk(tail));
            let _ = socket.write_all(end.as_bytes());
            let _ = socket.flush();
            return;
        }
        // The client sends nothing more on this connection: a read that ends is its close.
        match socket.read(&mut buf) {
            Ok(0) => {
                closed_early.fetch_add(1, Ordering::SeqCst);
                return;
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                closed_early.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }
}

/// The events that end the text reply [`anthropic_text_stream`] began without them.
pub fn anthropic_stream_end() -> String {
    anthropic_sse(&[
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}),
        json!({"type":"message_stop"}),
    ])
}

/// Messages API events as an SSE body (`event:` named after each event's type).
pub fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}

/// An Anthropic SSE stream of one text reply, split into these deltas; `whole`: with its
/// `message_delta` and `message_stop` (else it stops after the deltas, as a cut one does).
pub fn anthropic_text_stream(deltas: &[&str], whole: bool) -> String {
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ];
    for delta in deltas {
        events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":delta}}));
    }
    if whole {
        events.push(json!({"type":"content_block_stop","index":0}));
        events.push(json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}));
        events.push(json!({"type":"message_stop"}));
    }
    anthropic_sse(&events)
}
