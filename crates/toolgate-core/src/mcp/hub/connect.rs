//! Connecting a configured server: one connect per server at a time, the sign-ins a
//! connect may need, the pool's say before the connection counts, and what a fresh
//! connection sets off (catalog listing, a pending re-list, the crash watch, the log level).

use super::McpHub;
use super::launch::StartFailure;
use super::locks::lock;
use super::session::set_log_level;
use crate::mcp::auth::{Challenge, MAX_SIGN_INS, SignInMode};
use crate::mcp::handler::HubClient;
use crate::mcp::stderr::StderrTail;
use crate::mcp::types::{HubEvent, McpError, ServerStatus};
use crate::pool::{McpToolInfo, ServerTools};
use std::sync::Arc;
use std::time::Duration;

impl McpHub {
    /// Starts the server, handshakes (either era) and lists its tools to the last page.
    /// Connecting an already connected server returns its current tools.
    pub async fn connect(&self, name: &str) -> Result<Vec<McpToolInfo>, McpError> {
        self.connect_checked(name, |_| Ok(())).await
    }

    /// Like [`connect`](Self::connect), but `accept` sees the connected servers' tool lists
    /// as they would be with this server added, before anyone else does. If it refuses
    /// (e.g. a name collision in the pool), the server is stopped again and the running
    /// connections stay exactly as they were.
    pub async fn connect_checked(
        &self,
        name: &str,
        accept: impl FnOnce(&[Arc<ServerTools>]) -> Result<(), String>,
    ) -> Result<Vec<McpToolInfo>, McpError> {
        let servers = &self.inner.servers;
        let config = servers.config(name).ok_or_else(|| servers.unknown(name))?;
        let _one_at_a_time = servers.lifecycle_lock(name).await;
        if let Some(existing) = servers.connection(name) {
            return Ok(lock(&existing.tools).tools().to_vec());
        }
        self.refuse_blocked(&config)?;
        servers.set_status(name, ServerStatus::Connecting);
        let stderr = StderrTail::default();
        let auth = self.inner.sign_ins.server_auth(&config).await;
        let client = || self.client(name);
        let mut sign_ins = 0;
        let connection = loop {
            let seen = auth.as_ref().map(|a| a.credentials.generation());
            let launcher = &self.inner.launcher;
            let started = tokio::time::timeout(
                launcher.startup_timeout,
                launcher.start(&config, &stderr, auth.as_deref(), &client),
            )
            .await;
            let failure = match started {
                Ok(Ok(connection)) => break connection,
                Ok(Err(failure)) => failure,
                Err(_) => StartFailure::plain(format!(
                    "no answer to the handshake within {} s",
                    launcher.startup_timeout.as_secs()
                )),
            };
            let (Some(challenge), Some(auth)) = (&failure.challenge, &auth) else {
                return Err(self.fail_start(name, failure.reason, &stderr).await);
            };
            if sign_ins == MAX_SIGN_INS {
                let reason = format!(
                    "{} (still refused after {sign_ins} sign-ins)",
                    failure.reason
                );
                return Err(self.fail_start(name, reason, &stderr).await);
            }
            sign_ins += 1;
            if seen != Some(auth.credentials.generation()) {
                // Signed in (or refreshed) meanwhile: try again with that.
                continue;
            }
            let refresh_failed = matches!(challenge, Challenge::RefreshFailed(_));
            if self.inner.sign_ins.mode == SignInMode::Ask && !refresh_failed {
                // The person answers in their own time; the server connects afterwards and
                // nothing else waits for it.
                self.sign_in_in_background(&config, auth, challenge);
                let reason = "sign in needed: answer the sign-in request; the server connects once you have signed in";
                return Err(self.fail_start(name, reason.into(), &stderr).await);
            }
            if let Err(reason) = self
                .inner
                .sign_ins
                .sign_in(&config, auth, challenge, seen)
                .await
            {
                return Err(self.fail_start(name, reason, &stderr).await);
            }
            servers.set_status(name, ServerStatus::Connecting);
        };
        let listing = lock(&connection.tools).clone();
        let tools = listing.tools().to_vec();
        let mut would_be = self.server_tools();
        would_be.push(listing.clone());
        if let Err(reason) = accept(&would_be) {
            connection.close().await;
            servers.set_status(
                name,
                ServerStatus::Failed {
                    reason: reason.clone(),
                    stderr_tail: Vec::new(),
                },
            );
            return Err(McpError::Refused {
                server: name.to_string().into(),
                reason,
            });
        }
        let protocol = connection.protocol.clone();
        servers.add(connection.clone());
        let catalog = lock(&connection.catalog).clone();
        if catalog.has_resources || catalog.has_prompts {
            // Listed in the background: a slow or broken resources/list must not hold up
            // the tools, which the connect is for.
            let hub = self.clone();
            let server = name.to_string();
            tokio::spawn(async move { hub.refresh_catalog(&server).await });
        }
        if servers.take_relist(name) {
            let peer = connection.peer.clone();
            let hub = self.clone();
            let server = name.to_string();
            tokio::spawn(async move { hub.relist(&server, peer).await });
        }
        self.watch_for_exit(connection.clone());
        if !listing.invalid().is_empty() {
            let _ = self.inner.events.send(HubEvent::ToolsLeftOut {
                server: name.to_string().into(),
                tools: listing.invalid().to_vec(),
            });
        }
        if let Some(text) = &connection.instructions {
            let _ = self.inner.events.send(HubEvent::Instructions {
                server: name.to_string().into(),
                text: text.clone(),
            });
        }
        if let (true, Some(level)) = (connection.logging, self.log_level()) {
            // A request; on its own task so a slow answer does not hold up the connect.
            let peer = connection.peer.clone();
            let server = name.to_string();
            tokio::spawn(set_log_level(peer, server, level));
        }
        servers.set_status(
            name,
            ServerStatus::Ready {
                tools: tools.len(),
                protocol,
            },
        );
        if let Some(status) = auth.as_ref().and_then(|a| a.status()) {
            self.inner.sign_ins.emit(name, status);
        }
        Ok(tools)
    }

    async fn fail_start(&self, name: &str, reason: String, stderr: &StderrTail) -> McpError {
        // Give the stderr reader a moment to collect the server's last words.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let stderr_tail = stderr.lines();
        let mut full = reason;
        if let Some(last) = stderr_tail.last() {
            full = format!("{full} (stderr: {last})");
        }
        self.inner.servers.set_status(
            name,
            ServerStatus::Failed {
                reason: full.clone(),
                stderr_tail,
            },
        );
        McpError::Start {
            server: name.to_string().into(),
            reason: full,
        }
    }

    /// What answers the server's requests and notifications on a connection. Its hooks
    /// hold the hub weakly, so a connection does not keep the hub alive.
    fn client(&self, server: &str) -> HubClient {
        HubClient {
            server: server.to_string(),
            events: self.inner.events.clone(),
            progress: Arc::default(),
            on_list_changed: self.list_changed_hook(server),
            roots: self.inner.roots.clone(),
            sampling_waiting: Arc::default(),
            elicitor: self.inner.servers.elicitor(server),
            on_catalog_changed: self.catalog_changed_hook(server),
        }
    }
}
