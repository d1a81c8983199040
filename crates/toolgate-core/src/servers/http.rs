//! `toolgate serve NAME --listen ADDR`: the same servers over Streamable HTTP, through
//! rmcp's `StreamableHttpService` (both eras: sessions for `initialize` clients, stateless
//! for 2026-07-28 ones). Every HTTP session gets its own handler over one shared backend,
//! so deploy history and the fs root are the same for all clients.

use super::common::{Backend, Server};
use super::{deploy, docs, fs, unknown_server};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The path the MCP endpoint is served under, as in most Streamable HTTP servers.
pub const MCP_PATH: &str = "/mcp";

/// Removes `--listen ADDR` (or `--listen=ADDR`) from a server's arguments, wherever it is,
/// and returns the address and the remaining arguments.
pub fn take_listen_flag(args: &[String]) -> anyhow::Result<(Option<SocketAddr>, Vec<String>)> {
    let mut listen = None;
    let mut rest = Vec::with_capacity(args.len());
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let value = if arg == "--listen" {
            iter.next()
                .ok_or_else(|| anyhow::anyhow!("--listen needs an address such as 127.0.0.1:8808"))?
                .clone()
        } else if let Some(value) = arg.strip_prefix("--listen=") {
            value.to_string()
        } else {
            rest.push(arg.clone());
            continue;
        };
        let addr: SocketAddr = value.parse().map_err(|e| {
            anyhow::anyhow!("--listen {value:?}: expected IP:PORT such as 127.0.0.1:8808 ({e})")
        })?;
        // The servers have no authentication, and fs can write files: never expose them
        // beyond this machine.
        if !addr.ip().is_loopback() {
            anyhow::bail!(
                "--listen {addr}: toolgate's servers have no authentication, so they listen on loopback addresses only (127.0.0.1 or [::1])"
            );
        }
        listen = Some(addr);
    }
    Ok((listen, rest))
}

/// A bound Streamable HTTP endpoint for one of toolgate's servers.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    url: String,
    stop: CancellationToken,
}

impl HttpServer {
    /// Builds the named server from its arguments and binds `addr` (port 0 picks a free one).
    pub async fn bind(name: &str, args: &[String], addr: SocketAddr) -> anyhow::Result<Self> {
        let stop = CancellationToken::new();
        let router = match name {
            "docs" => router(docs::DocsBackend::new(), &stop)?,
            "deploy" => router(deploy::DeployBackend::from_args(args)?, &stop)?,
            "fs" => router(fs::FsBackend::from_args(args)?, &stop)?,
            other => anyhow::bail!("{}", unknown_server(other)),
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr()?;
        Ok(HttpServer {
            listener,
            router,
            url: format!("http://{local}{MCP_PATH}"),
            stop,
        })
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The axum router, for callers that add their own layers (tests put a header check
    /// in front of it) and serve it themselves.
    pub fn into_parts(self) -> (tokio::net::TcpListener, axum::Router, CancellationToken) {
        (self.listener, self.router, self.stop)
    }

    /// Serves until `stop` is cancelled.
    pub async fn run(self, stop: CancellationToken) -> anyhow::Result<()> {
        let sessions = self.stop.clone();
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move {
                stop.cancelled().await;
                // Open SSE streams would keep the graceful shutdown waiting forever.
                sessions.cancel();
            })
            .await?;
        Ok(())
    }

    /// Serves until SIGINT or SIGTERM.
    pub async fn run_until_signal(self) -> anyhow::Result<()> {
        let stop = CancellationToken::new();
        let on_signal = stop.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            on_signal.cancel();
        });
        self.run(stop).await
    }
}

fn router<B: Backend>(backend: B, stop: &CancellationToken) -> anyhow::Result<axum::Router> {
    let server = Server::new(backend)?;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        // Defaults keep rmcp's Host check (loopback names only) against DNS rebinding.
        StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
    );
    Ok(axum::Router::new().nest_service(MCP_PATH, service))
}

async fn wait_for_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            tracing::warn!("cannot watch SIGTERM: {e}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn listen_flag_is_taken_out_wherever_it_is() {
        let (addr, rest) = take_listen_flag(&args(&["/root", "--listen", "127.0.0.1:0"])).unwrap();
        assert_eq!(addr, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(rest, ["/root"]);
        let (addr, rest) = take_listen_flag(&args(&["--listen=[::1]:9000", "x"])).unwrap();
        assert_eq!(addr, Some("[::1]:9000".parse().unwrap()));
        assert_eq!(rest, ["x"]);
        let (addr, rest) = take_listen_flag(&args(&["/root"])).unwrap();
        assert_eq!((addr, rest), (None, args(&["/root"])));
    }

    #[test]
    fn listen_flag_refuses_non_loopback_and_garbage() {
        let err = take_listen_flag(&args(&["--listen", "0.0.0.0:8808"])).unwrap_err();
        assert!(err.to_string().contains("loopback addresses only"), "{err}");
        let err = take_listen_flag(&args(&["--listen", "localhost"])).unwrap_err();
        assert!(err.to_string().contains("expected IP:PORT"), "{err}");
        let err = take_listen_flag(&args(&["--listen"])).unwrap_err();
        assert!(err.to_string().contains("needs an address"), "{err}");
    }
}
