//! The proxy on real sockets on 127.0.0.1: a client in front, origin servers behind that
//! log what they receive and stop by themselves, and an admission that allows or denies
//! by host and records what it was asked and told.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::*;

mod socks;

const PATIENCE: Duration = Duration::from_secs(10);
/// How long "nothing happens" is watched for.
const QUIET: Duration = Duration::from_millis(150);

type Closed = (Target, bool, Traffic);

struct TestAdmission {
    allowed: Vec<String>,
    /// When set, `admit` waits for a permit: a person who has not answered yet.
    answer: Option<Arc<Semaphore>>,
    asked: Mutex<Vec<(Target, Via)>>,
    /// Admissions dropped before they decided: questions withdrawn.
    withdrawn: Arc<AtomicUsize>,
    closed: mpsc::UnboundedSender<Closed>,
}

/// Counts an admission dropped before it decided (disarmed when it decides).
struct Withdrawal(Option<Arc<AtomicUsize>>);

impl Withdrawal {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for Withdrawal {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Admission for TestAdmission {
    fn admit(&self, target: &Target, via: Via) -> Pin<Box<dyn Future<Output = Admit> + Send + '_>> {
        self.asked.lock().unwrap().push((target.clone(), via));
        let target = target.clone();
        let mut withdrawal = Withdrawal(Some(self.withdrawn.clone()));
        Box::pin(async move {
            if let Some(answer) = &self.answer {
                answer.acquire().await.unwrap().forget();
            }
            withdrawal.disarm();
            if self.allowed.contains(&target.host.to_string()) {
                Admit::Allow
            } else {
                Admit::Deny(format!("{target} is not on the list"))
            }
        })
    }

    fn closed(&self, target: &Target, connected: bool, traffic: Traffic) {
        let _ = self.closed.send((target.clone(), connected, traffic));
    }
}

struct Proxy {
    address: SocketAddr,
    admission: Arc<TestAdmission>,
    closed: mpsc::UnboundedReceiver<Closed>,
    stop: CancellationToken,
    served: JoinHandle<()>,
}

impl Proxy {
    async fn start(allowed: &[&str]) -> Proxy {
        Proxy::start_with(allowed, None, Limits::default()).await
    }

    async fn start_with(allowed: &[&str], answer: Option<Arc<Semaphore>>, limits: Limits) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let admission = Arc::new(TestAdmission {
            allowed: allowed.iter().map(|h| h.to_string()).collect(),
            answer,
            asked: Mutex::new(Vec::new()),
            withdrawn: Arc::new(AtomicUsize::new(0)),
            closed: closed_tx,
        });
        let stop = CancellationToken::new();
        let served = tokio::spawn(serve_with(
            listener,
            admission.clone(),
            stop.clone(),
            limits,
        ));
        Proxy {
            address,
            admission,
            closed,
            stop,
            served,
        }
    }

    async fn client(&self) -> TcpStream {
        TcpStream::connect(self.address).await.unwrap()
    }

    fn asked(&self) -> Vec<(Target, Via)> {
        self.admission.asked.lock().unwrap().clone()
    }

    async fn next_closed(&mut self) -> Closed {
        timeout(PATIENCE, self.closed.recv())
            .await
            .expect("a connection is reported closed")
            .unwrap()
    }

    /// Stops the proxy and says whether anything else was reported closed.
    async fn finish(mut self) -> Vec<Closed> {
        self.stop.cancel();
        timeout(PATIENCE, self.served).await.unwrap().unwrap();
        let mut rest = Vec::new();
        while let Ok(closed) = self.closed.try_recv() {
            rest.push(closed);
        }
        rest
    }
}

fn target(host: &str, port: u16) -> Target {
    Target {
        host: Host::parse(host).unwrap(),
        port,
    }
}

async fn read_all(stream: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut bytes))
        .await
        .expect("the peer closes")
        .unwrap();
    bytes
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

/// An origin that serves one request (its body read by Content-Length or chunked
/// framing), answers [`RESPONSE`], closes, and returns what it received.
async fn http_origin() -> (u16, JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = tokio::spawn(async move {
        let (mut stream, _) = timeout(PATIENCE, listener.accept()).await.unwrap().unwrap();
        let mut received = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = find(&received, b"\r\n\r\n") {
                let head = text(&received[..end]).to_ascii_lowercase();
                let body = &received[end + 4..];
                let done = if let Some(at) = head.find("content-length: ") {
                    let length: usize = head[at + 16..].lines().next().unwrap().parse().unwrap();
                    body.len() >= length
                } else if head.contains("transfer-encoding: chunked") {
                    // The last chunk, then the trailer section's empty line.
                    find(body, b"\r\n0\r\n").is_some() && body.ends_with(b"\r\n\r\n")
                } else {
                    true
                };
                if done {
                    break;
                }
            }
            let n = timeout(PATIENCE, stream.read(&mut chunk))
                .await
                .unwrap()
                .unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&chunk[..n]);
        }
        stream.write_all(RESPONSE).await.unwrap();
        received
    });
    (port, served)
}

/// An origin that echoes one connection until the client's end, and closes.
async fn echo_origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut stream, _) = timeout(PATIENCE, listener.accept()).await.unwrap().unwrap();
        let (mut read, mut write) = stream.split();
        tokio::io::copy(&mut read, &mut write).await.unwrap();
        write.shutdown().await.unwrap();
    });
    port
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn assert_accepts_nothing(listener: &TcpListener) {
    assert!(
        timeout(QUIET, listener.accept()).await.is_err(),
        "the destination was connected to"
    );
}

/// Reads the proxy's answer to CONNECT, up to the empty line.
async fn connect_answer(client: &mut TcpStream) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let n = timeout(PATIENCE, client.read(&mut byte))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 1, "the proxy closed during its answer: {}", text(&head));
        head.push(byte[0]);
    }
    text(&head)
}

const ESTABLISHED: &str = "HTTP/1.1 200 Connection Established\r\n\r\n";

#[tokio::test]
async fn an_absolute_form_request_reaches_its_host_in_origin_form_and_alone() {
    let (port, origin) = http_origin().await;
    let mut proxy = Proxy::start(&["127.0.0.1"]).await;
    let mut client = proxy.client().await;
    // A keep-alive client pipelines a second request, to another host, on the same
    // connection: it must not reach the first host.
    let request = format!(
        "GET http://127.0.0.1:{port}/path?q=1#frag HTTP/1.1\r\nHost: somewhere.else\r\n\
         Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n\
         Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nAccept: */*\r\n\r\n\
         GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n"
    );
    client.write_all(request.as_bytes()).await.unwrap();
    let response = read_all(&mut client).await;
    assert_eq!(response, RESPONSE);

    let received = origin.await.unwrap();
    let seen = text(&received);
    assert!(seen.starts_with("GET /path?q=1 HTTP/1.1\r\n"), "{seen}");
    assert!(
        seen.contains(&format!("\r\nHost: 127.0.0.1:{port}\r\n")),
        "{seen}"
    );
    assert!(seen.contains("\r\nAccept: */*\r\n"), "{seen}");
    assert!(seen.ends_with("\r\nConnection: close\r\n\r\n"), "{seen}");
    for gone in [
        "Proxy-",
        "somewhere.else",
        "keep-alive",
        "X-Hop",
        "other.example",
        "frag",
    ] {
        assert!(!seen.contains(gone), "{gone} reached the host: {seen}");
    }

    assert_eq!(proxy.asked(), vec![(target("127.0.0.1", port), Via::Http)]);
    let (closed_target, connected, traffic) = proxy.next_closed().await;
    assert_eq!(closed_target, target("127.0.0.1", port));
    assert!(connected);
    assert_eq!(
        traffic,
        Traffic {
            sent: received.len() as u64,
            received: RESPONSE.len() as u64,
        }
    );
    assert!(proxy.finish().await.is_empty());
}

#[tokio::test]
async fn request_bodies_are_forwarded_by_their_framing() {
    let mut proxy = Proxy::start(&["localhost"]).await;

    let (port, origin) = http_origin().await;
    let mut client = proxy.client().await;
    let head =
        format!("POST http://LocalHost:{port}/upload HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
    client.write_all(head.as_bytes()).await.unwrap();
    client.write_all(b"hello world").await.unwrap();
    assert_eq!(read_all(&mut client).await, RESPONSE);
    let seen = text(&origin.await.unwrap());
    assert!(
        seen.starts_with("POST /upload HTTP/1.1\r\nHost: LocalHost:"),
        "{seen}"
    );
    assert!(seen.ends_with("\r\n\r\nhello world"), "{seen}");
    let (closed_target, _, traffic) = proxy.next_closed().await;
    assert_eq!(closed_target, target("localhost", port));
    assert_eq!(traffic.sent, seen.len() as u64);

    let (port, origin) = http_origin().await;
    let mut client = proxy.client().await;
    let request = format!(
        "POST http://localhost:{port}/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
         5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\nGET /next HTTP/1.1\r\n\r\n"
    );
    client.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_all(&mut client).await, RESPONSE);
    let seen = text(&origin.await.unwrap());
    assert!(
        seen.ends_with("\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"),
        "{seen}"
    );
    assert!(!seen.contains("/next"), "{seen}");
    assert_eq!(proxy.next_closed().await.2.sent, seen.len() as u64);
    proxy.finish().await;
}

#[tokio::test]
async fn a_connect_tunnel_carries_bytes_both_ways_and_counts_them() {
    let port = echo_origin().await;
    let mut proxy = Proxy::start(&["127.0.0.1"]).await;
    let mut client = proxy.client().await;
    // A client that sends its first bytes without waiting for the proxy's answer.
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\nearly");
    client.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(connect_answer(&mut client).await, ESTABLISHED);
    let mut echoed = [0u8; 5];
    client.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"early");

    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let (mut read, mut write) = client.split();
    let writing = async {
        write.write_all(&big).await.unwrap();
        write.shutdown().await.unwrap();
    };
    let mut back = Vec::new();
    let reading = read.read_to_end(&mut back);
    let ((), got) = timeout(PATIENCE, async { tokio::join!(writing, reading) })
        .await
        .unwrap();
    got.unwrap();
    assert!(back == big, "the tunnel changed the bytes");

    assert_eq!(
        proxy.asked(),
        vec![(target("127.0.0.1", port), Via::Connect)]
    );
    let total = (big.len() + 5) as u64;
    assert_eq!(
        proxy.next_closed().await,
        (
            target("127.0.0.1", port),
            true,
            Traffic {
                sent: total,
                received: total
            }
        )
    );
    assert!(proxy.finish().await.is_empty());
}

/// Greets without authentication and sends a request; returns the reply's code.
async fn socks_request(client: &mut TcpStream, command: u8, address: &[u8], port: u16) -> u8 {
    client.write_all(&[5, 2, 0x02, 0x00]).await.unwrap();
    let mut chosen = [0u8; 2];
    client.read_exact(&mut chosen).await.unwrap();
    assert_eq!(chosen, [5, 0]);
    let mut request = vec![5, command, 0];
    request.extend_from_slice(address);
    request.extend_from_slice(&port.to_be_bytes());
    client.write_all(&request).await.unwrap();
    let mut reply = [0u8; 4];
    timeout(PATIENCE, client.read_exact(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply[0], 5);
    let rest = match reply[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        other => panic!("bound address type {other}"),
    };
    let mut bound = vec![0u8; rest];
    client.read_exact(&mut bound).await.unwrap();
    reply[1]
}

#[tokio::test]
async fn a_denied_host_gets_a_refusal_and_receives_nothing() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let proxy = Proxy::start(&["localhost"]).await;

    let mut client = proxy.client().await;
    let request = format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    let response = text(&read_all(&mut client).await);
    assert!(
        response.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{response}"
    );
    assert!(
        response.contains("\r\nX-Toolgate: denied\r\n"),
        "{response}"
    );
    assert!(
        response.ends_with(&format!(
            "\r\n\r\ntoolgate: 127.0.0.1:{port} is not on the list\n"
        )),
        "{response}"
    );

    let mut client = proxy.client().await;
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    let response = text(&read_all(&mut client).await);
    assert!(
        response.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{response}"
    );

    let mut client = proxy.client().await;
    assert_eq!(
        socks_request(&mut client, 1, &[1, 127, 0, 0, 1], port).await,
        2
    );

    assert_accepts_nothing(&listener).await;
    assert_eq!(proxy.asked().len(), 3);
    // A refused connection is not an admitted one that closed.
    assert!(proxy.finish().await.is_empty());
}

#[tokio::test]
async fn the_client_waits_while_the_admission_waits() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(Semaphore::new(0));
    let mut proxy =
        Proxy::start_with(&["127.0.0.1"], Some(answer.clone()), Limits::default()).await;
    let mut client = proxy.client().await;
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();

    let mut byte = [0u8; 1];
    assert!(
        timeout(QUIET, client.read(&mut byte)).await.is_err(),
        "answered before the admission"
    );
    assert_accepts_nothing(&listener).await;
    assert_eq!(proxy.asked().len(), 1);

    answer.add_permits(1);
    let (mut host, _) = timeout(PATIENCE, listener.accept()).await.unwrap().unwrap();
    assert_eq!(connect_answer(&mut client).await, ESTABLISHED);
    host.write_all(b"from the host").await.unwrap();
    drop(host);
    assert_eq!(read_all(&mut client).await, b"from the host");
    drop(client);
    let closed = proxy.next_closed().await;
    assert_eq!(
        closed.2,
        Traffic {
            sent: 0,
            received: 13
        }
    );
    proxy.finish().await;
}

/// A person has not answered and the client hangs up: the question goes with it (the
/// admission is dropped undecided) and nothing connects or is reported; a client that
/// sends more while it waits (a TLS hello ahead of the answer) is still asked.
#[tokio::test]
async fn a_client_that_hangs_up_while_asked_takes_its_question_with_it() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(Semaphore::new(0));
    let mut proxy =
        Proxy::start_with(&["127.0.0.1"], Some(answer.clone()), Limits::default()).await;
    let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let forward = format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: x\r\n\r\n");
    for (n, request) in [connect.as_str(), forward.as_str()].into_iter().enumerate() {
        let mut client = proxy.client().await;
        client.write_all(request.as_bytes()).await.unwrap();
        wait_until("the question is asked", || proxy.asked().len() == n + 1).await;
        drop(client);
        let withdrawn = &proxy.admission.withdrawn;
        wait_until("the question is withdrawn", || {
            withdrawn.load(Ordering::SeqCst) == n + 1
        })
        .await;
    }
    assert_accepts_nothing(&listener).await;

    // Still there: more bytes while asked are not a hang-up.
    let mut client = proxy.client().await;
    client.write_all(connect.as_bytes()).await.unwrap();
    wait_until("the question is asked", || proxy.asked().len() == 3).await;
    client.write_all(b"hello").await.unwrap();
    tokio::time::sleep(QUIET).await;
    assert_eq!(proxy.admission.withdrawn.load(Ordering::SeqCst), 2);
    answer.add_permits(1);
    let (mut host, _) = timeout(PATIENCE, listener.accept()).await.unwrap().unwrap();
    assert_eq!(connect_answer(&mut client).await, ESTABLISHED);
    let mut early = [0u8; 5];
    host.read_exact(&mut early).await.unwrap();
    assert_eq!(&early, b"hello");
    drop((host, client));
    proxy.next_closed().await;
    assert!(proxy.finish().await.is_empty());
}

/// Waits (up to [`PATIENCE`]) until `done` holds.
async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let waited = timeout(PATIENCE, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    assert!(waited.await.is_ok(), "timed out waiting until {what}");
}

#[tokio::test]
async fn a_host_that_cannot_be_reached_is_a_502_reported_unconnected() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut proxy = Proxy::start(&["127.0.0.1"]).await;
    let mut client = proxy.client().await;
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    let response = text(&read_all(&mut client).await);
    assert!(
        response.starts_with("HTTP/1.1 502 Bad Gateway\r\n"),
        "{response}"
    );
    assert!(response.contains("refused the connection"), "{response}");
    assert_eq!(
        proxy.next_closed().await,
        (target("127.0.0.1", port), false, Traffic::default())
    );

    let mut client = proxy.client().await;
    assert_eq!(
        socks_request(&mut client, 1, &[1, 127, 0, 0, 1], port).await,
        5
    );
    assert!(!proxy.next_closed().await.1);
    assert!(proxy.finish().await.is_empty());
}

async fn refusal_to(proxy: &Proxy, bytes: &[u8], half_close: bool) -> String {
    let mut client = proxy.client().await;
    client.write_all(bytes).await.unwrap();
    if half_close {
        client.shutdown().await.unwrap();
    }
    text(&read_all(&mut client).await)
}

#[tokio::test]
async fn malformed_requests_get_their_error_and_nothing_is_asked() {
    let proxy = Proxy::start(&["127.0.0.1", "localhost"]).await;
    let cases: &[(&[u8], bool, &str, &str)] = &[
        (b"\x16\x03\x01\x02\x00garbage\r\n\r\n", false, "400", "malformed request"),
        (b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", false, "400", "not a proxy request"),
        (b"GET https://localhost/ HTTP/1.1\r\n\r\n", false, "400", "use CONNECT for https"),
        (b"GET ftp://localhost/ HTTP/1.1\r\n\r\n", false, "400", "only http://"),
        (b"GET http:///x HTTP/1.1\r\n\r\n", false, "400", "missing host"),
        (b"GET http://localhost:99999/ HTTP/1.1\r\n\r\n", false, "400", "bad port"),
        (b"CONNECT localhost:0 HTTP/1.1\r\n\r\n", false, "400", "bad port"),
        (b"CONNECT localhost HTTP/1.1\r\n\r\n", false, "400", "missing port"),
        (b"GET http://user@localhost/ HTTP/1.1\r\n\r\n", false, "400", "user information"),
        (
            b"POST http://localhost/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            false,
            "400",
            "both Content-Length and Transfer-Encoding",
        ),
        (b"GET http://localhost/ HT", true, "400", "ended before the request head"),
    ];
    for (bytes, half_close, status, reason) in cases {
        let response = refusal_to(&proxy, bytes, *half_close).await;
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status} ")) && response.contains(reason),
            "{:?} -> {response}",
            text(bytes)
        );
        assert!(response.contains("\r\nX-Toolgate: error\r\n"), "{response}");
    }

    let mut huge = b"GET http://localhost/ HTTP/1.1\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 100 * 1024));
    huge.extend_from_slice(b"\r\n\r\n");
    let response = refusal_to(&proxy, &huge, false).await;
    assert!(response.starts_with("HTTP/1.1 431 "), "{response}");

    // Nothing at all, then the end: closed without an answer.
    assert_eq!(refusal_to(&proxy, b"", true).await, "");
    assert!(proxy.asked().is_empty());
    assert!(proxy.finish().await.is_empty());
}

#[tokio::test]
async fn a_silent_client_is_dropped_after_the_head_timeout() {
    let limits = Limits {
        head_timeout: Duration::from_millis(100),
        ..Limits::default()
    };
    let proxy = Proxy::start_with(&[], None, limits).await;
    let mut silent = proxy.client().await;
    assert_eq!(read_all(&mut silent).await, b"");
    let mut slow = proxy.client().await;
    slow.write_all(b"GET http://localhost/ HTTP/1.1\r\n")
        .await
        .unwrap();
    let response = text(&read_all(&mut slow).await);
    assert!(response.starts_with("HTTP/1.1 408 "), "{response}");
    proxy.finish().await;
}

#[tokio::test]
async fn stopping_ends_live_tunnels_and_reports_them() {
    let port = echo_origin().await;
    let mut proxy = Proxy::start(&["127.0.0.1"]).await;
    let mut client = proxy.client().await;
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(connect_answer(&mut client).await, ESTABLISHED);
    client.write_all(b"abc").await.unwrap();
    let mut echoed = [0u8; 3];
    client.read_exact(&mut echoed).await.unwrap();

    proxy.stop.cancel();
    let mut rest = Vec::new();
    let ended = timeout(PATIENCE, client.read_to_end(&mut rest))
        .await
        .unwrap();
    assert!(
        ended.is_err() || rest.is_empty(),
        "the tunnel outlived the stop"
    );
    assert_eq!(
        proxy.next_closed().await,
        (
            target("127.0.0.1", port),
            true,
            Traffic {
                sent: 3,
                received: 3
            }
        )
    );
    assert!(proxy.finish().await.is_empty());
}

mod heads {
    use super::super::http_head::{Body, Refusal, Request, parse_authority, parse_request};
    use super::target;

    fn forward(head: &str) -> (super::Target, String, Body) {
        match parse_request(head.as_bytes()) {
            Ok(Request::Forward { target, head, body }) => {
                (target, String::from_utf8(head).unwrap(), body)
            }
            other => panic!("{head:?} -> {other:?}"),
        }
    }

    fn refused(head: &str) -> String {
        match parse_request(head.as_bytes()) {
            Err(Refusal::BadRequest(reason)) => reason,
            other => panic!("{head:?} -> {other:?}"),
        }
    }

    #[test]
    fn authorities_name_a_host_and_a_port() {
        assert_eq!(
            parse_authority("[::1]:8080", None).unwrap(),
            target("::1", 8080)
        );
        assert_eq!(
            parse_authority("[::1]", Some(80)).unwrap(),
            target("::1", 80)
        );
        assert_eq!(
            parse_authority("Example.COM.:443", None).unwrap(),
            target("example.com", 443)
        );
        assert!(parse_authority("[::1", Some(80)).is_err());
        assert!(parse_authority("a b:80", None).is_err());
        assert!(parse_authority("host:+80", None).is_err());
        assert_eq!(
            parse_request(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap(),
            Request::Connect(target("::1", 443))
        );
    }

    #[test]
    fn the_forwarded_head_keeps_the_framing_and_drops_the_hops() {
        let (to, head, body) = forward(
            "PUT http://h.example/a HTTP/1.0\r\nConnection: content-length, x-a\r\n\
             Content-Length: 3\r\nX-A: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\nUpgrade: h2c\r\n\r\n",
        );
        assert_eq!(to, target("h.example", 80));
        assert_eq!(body, Body::Length(3));
        assert_eq!(
            head,
            "PUT /a HTTP/1.0\r\nHost: h.example\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
        );
        let (_, head, _) = forward("GET http://h.example?q HTTP/1.1\r\n\r\n");
        assert!(head.starts_with("GET /?q HTTP/1.1\r\n"), "{head}");
        let (_, _, body) =
            forward("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
        assert_eq!(body, Body::Chunked);
    }

    #[test]
    fn ambiguous_bodies_are_refused() {
        assert!(
            refused("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n")
                .contains("does not end in chunked")
        );
        assert!(
            refused("POST http://h/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n")
                .contains("conflicting")
        );
        assert!(
            refused("POST http://h/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
                .contains("bad Content-Length")
        );
    }
}
