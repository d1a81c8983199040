//! The network gate's proxy against a direct connection, on the loopback (issue 43): the
//! added latency of a small request/response over an established `CONNECT` tunnel and over
//! a fresh connection per request (a tunnel, and an absolute-form HTTP request), and the
//! throughput of one tunnel moving 256 MiB one way. The proxy admits everything (the
//! admission's own cost is the gate's, not the proxy's). Criterion gives means; a plain
//! timed loop afterwards prints p50/p99, throughput and the ratios the targets
//! are stated in (added latency under 1 ms, one tunnel above 1 GB/s).
//!
//! Run: `cargo bench --bench egress`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;
use toolgate::egress::{Admission, Admit, Target, Traffic, Via, serve};

const MESSAGE: usize = 64;
const BULK: u64 = 256 * 1024 * 1024;
const HTTP_RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

struct AllowAll;

impl Admission for AllowAll {
    fn admit(&self, _: &Target, _: Via) -> Pin<Box<dyn Future<Output = Admit> + Send + '_>> {
        Box::pin(async { Admit::Allow })
    }
    fn closed(&self, _: &Target, _: bool, _: Traffic) {}
}

/// The servers and the proxy, all on 127.0.0.1, for the whole run.
struct Setup {
    proxy: SocketAddr,
    ping: SocketAddr,
    http: SocketAddr,
    sink: SocketAddr,
    _stop: tokio_util::sync::DropGuard,
}

async fn server<F, Fut>(serve_one: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).unwrap();
            tokio::spawn(serve_one(stream));
        }
    });
    address
}

async fn setup() -> Setup {
    // Answers each MESSAGE-byte request with as many bytes, until the client ends.
    let ping = server(|mut stream| async move {
        let mut buffer = [0u8; MESSAGE];
        while stream.read_exact(&mut buffer).await.is_ok() {
            if stream.write_all(&buffer).await.is_err() {
                break;
            }
        }
    })
    .await;
    // One HTTP request per connection, answered and closed.
    let http = server(|mut stream| async move {
        let mut head = Vec::new();
        let mut buffer = [0u8; 4096];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        let _ = stream.write_all(HTTP_RESPONSE).await;
    })
    .await;
    // Reads to the end and answers with the number of bytes it read.
    let sink = server(|mut stream| async move {
        let mut buffer = vec![0u8; 1024 * 1024];
        let mut total = 0u64;
        while let Ok(n) = stream.read(&mut buffer).await {
            if n == 0 {
                break;
            }
            total += n as u64;
        }
        let _ = stream.write_all(&total.to_be_bytes()).await;
    })
    .await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(serve(listener, Arc::new(AllowAll), stop.clone()));
    Setup {
        proxy,
        ping,
        http,
        sink,
        _stop: stop.drop_guard(),
    }
}

async fn direct(to: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(to).await.unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

async fn tunnel(proxy: SocketAddr, to: SocketAddr) -> TcpStream {
    let mut stream = direct(proxy).await;
    let request = format!("CONNECT {to} HTTP/1.1\r\nHost: {to}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let expected = b"HTTP/1.1 200 Connection Established\r\n\r\n";
    let mut answer = [0u8; 39];
    stream.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer[..], &expected[..]);
    stream
}

async fn exchange(stream: &mut TcpStream) {
    let mut buffer = [7u8; MESSAGE];
    stream.write_all(&buffer).await.unwrap();
    stream.read_exact(&mut buffer).await.unwrap();
}

async fn http_get(mut stream: TcpStream, request: &[u8]) {
    stream.write_all(request).await.unwrap();
    let mut response = Vec::with_capacity(128);
    stream.read_to_end(&mut response).await.unwrap();
    assert_eq!(response, HTTP_RESPONSE);
}

async fn bulk(mut stream: TcpStream) {
    let chunk = vec![1u8; 1024 * 1024];
    let mut left = BULK;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        stream.write_all(&chunk[..n]).await.unwrap();
        left -= n as u64;
    }
    stream.shutdown().await.unwrap();
    let mut total = [0u8; 8];
    stream.read_exact(&mut total).await.unwrap();
    assert_eq!(u64::from_be_bytes(total), BULK);
}

/// The ways one request is made; each is run direct and through the proxy.
#[derive(Clone, Copy)]
enum Case {
    /// A request/response on a connection (or tunnel) opened once.
    Established,
    /// A fresh connection (or CONNECT tunnel) per request.
    FreshTunnel,
    /// A fresh connection per HTTP GET (origin form direct, absolute form proxied).
    FreshHttp,
}

const CASES: [(&str, Case); 3] = [
    ("established", Case::Established),
    ("fresh_tunnel", Case::FreshTunnel),
    ("fresh_http", Case::FreshHttp),
];

/// Times `iters` requests of one kind.
async fn requests(setup: &Setup, case: Case, proxied: bool, iters: u64) -> Duration {
    let absolute = format!(
        "GET http://{}/ HTTP/1.1\r\nHost: {}\r\n\r\n",
        setup.http, setup.http
    );
    let origin = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", setup.http);
    let mut open = match (case, proxied) {
        (Case::Established, false) => Some(direct(setup.ping).await),
        (Case::Established, true) => Some(tunnel(setup.proxy, setup.ping).await),
        _ => None,
    };
    let start = Instant::now();
    for _ in 0..iters {
        match (case, proxied, open.as_mut()) {
            (Case::Established, _, Some(stream)) => exchange(stream).await,
            (Case::FreshTunnel, false, _) => exchange(&mut direct(setup.ping).await).await,
            (Case::FreshTunnel, true, _) => {
                exchange(&mut tunnel(setup.proxy, setup.ping).await).await;
            }
            (Case::FreshHttp, false, _) => {
                http_get(direct(setup.http).await, origin.as_bytes()).await;
            }
            (Case::FreshHttp, true, _) => {
                http_get(direct(setup.proxy).await, absolute.as_bytes()).await;
            }
            (Case::Established, _, None) => unreachable!(),
        }
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let setup = runtime.block_on(setup());

    let mut group = c.benchmark_group("egress_request");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for (name, case) in CASES {
        for (way, proxied) in [("direct", false), ("proxied", true)] {
            group.bench_function(format!("{name}/{way}"), |b| {
                b.iter_custom(|iters| runtime.block_on(requests(&setup, case, proxied, iters)));
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("egress_throughput");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::Bytes(BULK));
    for (way, proxied) in [("direct", false), ("proxied", true)] {
        group.bench_function(way, |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        bulk(connection(&setup, setup.sink, proxied).await).await;
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();

    runtime.block_on(summary(&setup));
}

async fn connection(setup: &Setup, to: SocketAddr, proxied: bool) -> TcpStream {
    if proxied {
        tunnel(setup.proxy, to).await
    } else {
        direct(to).await
    }
}

/// Per-request times of one kind, one by one, for percentiles.
async fn latencies(setup: &Setup, case: Case, proxied: bool, count: usize) -> Vec<Duration> {
    let mut times: Vec<Duration> = Vec::with_capacity(count);
    for _ in 0..count {
        times.push(requests(setup, case, proxied, 1).await);
    }
    times.sort();
    times
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

async fn summary(setup: &Setup) {
    const COUNT: usize = 2_000;
    println!("\negress proxy vs direct on the loopback ({COUNT} requests each, µs)");
    println!(
        "{:<14} {:>10} {:>10} {:>11} {:>11} {:>12} {:>12}",
        "case", "direct p50", "proxy p50", "direct p99", "proxy p99", "added p50", "added p99"
    );
    for (name, case) in CASES {
        // The established case times the exchange only: one connection for all of them.
        let (direct_times, proxied_times) = match case {
            Case::Established => {
                let mut direct_stream = direct(setup.ping).await;
                let mut tunnelled = tunnel(setup.proxy, setup.ping).await;
                let mut a = Vec::with_capacity(COUNT);
                let mut b = Vec::with_capacity(COUNT);
                for _ in 0..COUNT {
                    let start = Instant::now();
                    exchange(&mut direct_stream).await;
                    a.push(start.elapsed());
                    let start = Instant::now();
                    exchange(&mut tunnelled).await;
                    b.push(start.elapsed());
                }
                a.sort();
                b.sort();
                (a, b)
            }
            _ => (
                latencies(setup, case, false, COUNT).await,
                latencies(setup, case, true, COUNT).await,
            ),
        };
        let at = |times: &[Duration], q: f64| times[((times.len() - 1) as f64 * q) as usize];
        let (d50, p50) = (at(&direct_times, 0.5), at(&proxied_times, 0.5));
        let (d99, p99) = (at(&direct_times, 0.99), at(&proxied_times, 0.99));
        println!(
            "{name:<14} {:>10.1} {:>10.1} {:>11.1} {:>11.1} {:>12.1} {:>12.1}",
            micros(d50),
            micros(p50),
            micros(d99),
            micros(p99),
            micros(p50) - micros(d50),
            micros(p99) - micros(d99),
        );
    }

    println!(
        "\none connection moving {} MiB one way (best of 3)",
        BULK >> 20
    );
    let mut rates = [0.0f64; 2];
    for (slot, proxied) in [false, true].into_iter().enumerate() {
        for _ in 0..3 {
            let stream = connection(setup, setup.sink, proxied).await;
            let start = Instant::now();
            bulk(stream).await;
            let rate = BULK as f64 / start.elapsed().as_secs_f64() / 1e9;
            rates[slot] = rates[slot].max(rate);
        }
    }
    println!(
        "direct {:.2} GB/s, proxied {:.2} GB/s, proxied/direct {:.2}",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
