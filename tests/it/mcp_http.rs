//! The hub's Streamable HTTP transport against real HTTP MCP servers on 127.0.0.1:
//! `toolgate serve docs --listen` as a child process, and the same server in-process
//! behind a header check (to see configured headers arrive).

use crate::support::fixture_server::hub_with;

use axum::http::{HeaderMap, StatusCode};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolgate::config::{ConfigSource, ServerConfig, ServerTransport};
use toolgate::mcp::{McpHub, ServerStatus};

const LIMIT: Duration = Duration::from_secs(30);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in bounded time"))
}

fn http_entry(name: &str, url: &str, headers: &[(&str, &str)]) -> ServerConfig {
    ServerConfig {
        name: name.to_string(),
        transport: ServerTransport::Http {
            url: url.to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            oauth: Default::default(),
        },
        source: ConfigSource::Embedded,
        call_timeout_ms: 20_000,
        sandbox: Default::default(),
        pool: Default::default(),
        always_load: false,
    }
}

/// `toolgate serve docs --listen ADDR` as a child process; killed (by its PID) on drop so
/// a failing test leaves no server behind.
struct ServedDocs {
    child: Child,
    url: String,
}

impl ServedDocs {
    fn start(addr: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["serve", "docs", "--listen", addr])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn toolgate serve docs --listen");
        // The first stdout line is the endpoint; the listener is bound before it is printed.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("read the endpoint line");
        let url = line.trim().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "endpoint line: {url:?}"
        );
        ServedDocs { child, url }
    }

    fn port(&self) -> u16 {
        let authority = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        authority.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// SIGTERM, then the exit status (a clean stop is success).
    fn terminate(mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on the PID of a child we spawned and have not yet reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "serve --listen did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServedDocs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn search(hub: &McpHub, server: &str, query: &str) -> Result<String, String> {
    match bounded(
        "search",
        hub.call(
            server,
            "search",
            json!({"query": query, "limit": 3}),
            None,
            CancellationToken::new(),
        ),
    )
    .await
    {
        Ok(out) if !out.is_error => Ok(out.text),
        Ok(out) => Err(out.text),
        Err(e) => Err(e.to_string()),
    }
}

#[tokio::test]
async fn docs_over_streamable_http_searches_survives_a_restart_and_stops_on_sigterm() {
    let served = ServedDocs::start("127.0.0.1:0");
    let (hub, _events) = hub_with(vec![http_entry("remote-docs", &served.url, &[])]);

    let tools = bounded("connect", hub.connect("remote-docs"))
        .await
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search", "get_version"]);
    match hub.status("remote-docs") {
        ServerStatus::Ready { tools, protocol } => {
            assert_eq!(tools, 2);
            assert_eq!(protocol, "2026-07-28", "both sides speak the newest era");
        }
        other => panic!("{other:?}"),
    }
    let pool = toolgate::commands::pool_of(&hub).unwrap();
    assert!(
        pool.get("mcp__remote-docs__search").is_some(),
        "{:?}",
        pool.names()
    );
    let hits = search(&hub, "remote-docs", "permission rules")
        .await
        .unwrap();
    assert!(hits.contains("permissions"), "{hits}");

    // The server goes away: the next call is a clear error, not a hang.
    let port = served.port();
    drop(served);
    let err = search(&hub, "remote-docs", "keys").await.unwrap_err();
    assert!(
        err.starts_with("MCP server 'remote-docs': the request failed: error sending request"),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "{err}");
    assert!(
        !err.contains("GuardedTransport"),
        "no Rust type names for users: {err}"
    );

    // Back on the same address.
    let served = ServedDocs::start(&format!("127.0.0.1:{port}"));
    // 2026-07-28 over HTTP is stateless: the restarted server answers the same connection.
    let hits = search(&hub, "remote-docs", "api key").await.unwrap();
    assert!(hits.to_lowercase().contains("key"), "{hits}");
    bounded("disconnect", hub.disconnect("remote-docs"))
        .await
        .unwrap();
    bounded("reconnect", hub.connect("remote-docs"))
        .await
        .unwrap();
    // And a fresh connection after disconnecting works too.
    let hits = search(&hub, "remote-docs", "configuration").await.unwrap();
    assert!(hits.contains("configuration"), "{hits}");
    bounded("shutdown", hub.shutdown()).await;

    let status = served.terminate();
    assert!(status.success(), "serve --listen exited with {status}");
}

#[tokio::test]
async fn configured_headers_reach_the_server_and_a_refusal_is_a_clear_failure() {
    let server = toolgate::servers::HttpServer::bind("docs", &[], "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = server.url().to_string();
    let (listener, router, sessions) = server.into_parts();
    // Counts requests that carried both configured headers; the rest get 401.
    let authorized = Arc::new(AtomicUsize::new(0));
    let counter = authorized.clone();
    let router = router.layer(axum::middleware::from_fn(
        move |headers: HeaderMap, request: axum::extract::Request, next: axum::middleware::Next| {
            let counter = counter.clone();
            async move {
                let has = |name: &str, value: &str| {
                    headers.get(name).and_then(|v| v.to_str().ok()) == Some(value)
                };
                if has("authorization", "Bearer s3cret") && has("x-team", "blue") {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(next.run(request).await)
                } else {
                    Err(StatusCode::UNAUTHORIZED)
                }
            }
        },
    ));
    let stop = CancellationToken::new();
    let serving = tokio::spawn({
        let stop = stop.clone();
        async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    stop.cancelled().await;
                    sessions.cancel();
                })
                .await
        }
    });

    let (hub, _events) = hub_with(vec![
        http_entry("nokey", &url, &[]),
        http_entry(
            "withkey",
            &url,
            &[("Authorization", "Bearer s3cret"), ("X-Team", "blue")],
        ),
    ]);
    let refused = bounded("connect without headers", hub.connect("nokey"))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("nokey"), "{refused}");
    assert!(!refused.contains("GuardedTransport"), "{refused}");
    assert!(
        refused.contains("HTTP 401 Unauthorized (while sending the discover request)"),
        "the refusal should say why: {refused}"
    );
    assert!(
        matches!(hub.status("nokey"), ServerStatus::Failed { .. }),
        "{:?}",
        hub.status("nokey")
    );
    assert_eq!(authorized.load(Ordering::SeqCst), 0);

    bounded("connect with headers", hub.connect("withkey"))
        .await
        .unwrap();
    let out = bounded(
        "get_version",
        hub.call(
            "withkey",
            "get_version",
            json!({}),
            None,
            CancellationToken::new(),
        ),
    )
    .await
    .unwrap();
    assert!(!out.is_error, "{out:?}");
    assert!(
        out.text
            .contains(&toolgate::servers::docs::corpus_version()),
        "{}",
        out.text
    );
    assert!(
        authorized.load(Ordering::SeqCst) >= 2,
        "handshake and call both carry the headers"
    );
    bounded("shutdown", hub.shutdown()).await;
    stop.cancel();
    bounded("server stop", serving).await.unwrap().unwrap();
}

#[tokio::test]
async fn nothing_listening_is_a_clear_failure_in_bounded_time() {
    // A port that was free a moment ago: connection refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (hub, _events) = hub_with(vec![http_entry("gone", &url, &[])]);
    let err = bounded("connect", hub.connect("gone"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("gone"), "{err}");
    assert!(
        err.contains("Connection refused"),
        "the cause, not a type name: {err}"
    );
    match hub.status("gone") {
        ServerStatus::Failed { reason, .. } => assert!(!reason.is_empty()),
        other => panic!("{other:?}"),
    }
}
