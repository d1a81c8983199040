//! toolgate's own MCP servers (docs, deploy, fs), run as `toolgate serve NAME`.
//!
//! Each is an rmcp server on stdin/stdout, or with `--listen ADDR` on Streamable HTTP at
//! `http://ADDR/mcp`. rmcp's server side answers both protocol eras: `initialize`
//! (2025-11-25 and earlier) and per-request `_meta` with `server/discover` (2026-07-28).
//! On stdio, stdout carries only protocol messages; logs go to stderr.

mod common;
pub mod deploy;
pub mod deploy_calls;
pub mod docs;
pub mod fs;
mod http;

use rmcp::ServiceExt;

pub use common::SetupError;
use common::{Backend, Server};
pub use http::{HttpServer, take_listen_flag};

/// Runs one of toolgate's servers until the client closes stdin, or, with `--listen ADDR`
/// among `args`, serves it over Streamable HTTP until SIGINT/SIGTERM.
pub async fn serve(name: &str, args: &[String]) -> anyhow::Result<()> {
    init_stderr_logging();
    let (listen, args) = take_listen_flag(args)?;
    if let Some(addr) = listen {
        let server = HttpServer::bind(name, &args, addr).await?;
        // stdout is not the protocol channel here, so it carries the one thing a script
        // needs: where to connect (useful with port 0).
        println!("{}", server.url());
        tracing::info!(server = name, url = %server.url(), "serving MCP over Streamable HTTP");
        return server.run_until_signal().await;
    }
    match name {
        "docs" => run(docs::DocsBackend::new(), name).await,
        "deploy" => run(deploy::DeployBackend::from_args(&args)?, name).await,
        "fs" => run(fs::FsBackend::from_args(&args)?, name).await,
        other => anyhow::bail!("{}", unknown_server(other)),
    }
}

fn unknown_server(name: &str) -> String {
    format!("unknown server '{name}' (expected docs, deploy or fs)")
}

async fn run<B: Backend>(backend: B, name: &str) -> anyhow::Result<()> {
    let server = Server::new(backend)?;
    tracing::info!(server = name, "serving MCP on stdio");
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP session did not start: {e}"))?;
    let reason = running.waiting().await?;
    tracing::info!(server = name, ?reason, "MCP session ended");
    Ok(())
}

/// `toolgate serve` is a child process whose stdout belongs to the protocol, so logs go to
/// stderr, where the client keeps the last lines for failure reports. The level comes from
/// `TOOLGATE_LOG` (default `info`). This only runs in the `serve` process, never under the TUI.
fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A subscriber may already be installed (tests calling `serve` in-process); keep it.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}
