//! Sign-ins the hub's callers start or wait for: `mcp login` / `mcp logout`, a server's
//! sign-in status, and the sign-in a connect asks for in the background.

use super::McpHub;
use crate::mcp::auth::{self, Challenge, ServerAuth};
use crate::mcp::types::{HubEvent, McpError, ServerStatus};
use crate::oauth::{self, AuthStatus};
use crate::settings::{ServerConfig, ServerTransport};
use std::sync::Arc;
use std::time::Duration;

/// How long `mcp login` waits for the server's first answer when probing for its challenge.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

impl McpHub {
    /// Where a server stands with its sign-in: None when it never asked for one (or is
    /// not an HTTP server).
    pub async fn auth_status(&self, server: &str) -> Option<AuthStatus> {
        let config = self.config(server)?;
        self.inner.sign_ins.server_auth(&config).await?.status()
    }

    /// A connect's sign-in, asked and run in the background (at most one per server).
    /// Success is announced with [`HubEvent::SignedIn`]; the agent then connects.
    pub(super) fn sign_in_in_background(
        &self,
        config: &ServerConfig,
        auth: &Arc<ServerAuth>,
        challenge: &Challenge,
    ) {
        use std::sync::atomic::Ordering;
        if auth.pending.swap(true, Ordering::SeqCst) {
            return;
        }
        let (hub, config, auth, challenge) = (
            self.clone(),
            config.clone(),
            auth.clone(),
            challenge.clone(),
        );
        tokio::spawn(async move {
            let result = hub
                .inner
                .sign_ins
                .sign_in(&config, &auth, &challenge, None)
                .await;
            auth.pending.store(false, Ordering::SeqCst);
            match result {
                Ok(()) => {
                    let _ = hub.inner.events.send(HubEvent::SignedIn {
                        server: config.name.clone().into(),
                    });
                }
                Err(reason) => hub.inner.servers.set_status(
                    &config.name,
                    ServerStatus::Failed {
                        reason,
                        stderr_tail: Vec::new(),
                    },
                ),
            }
        });
    }

    /// `toolgate mcp login NAME`: signs in now, whatever the server's current tokens, and
    /// returns the new status. The server is asked first (unauthenticated) so its
    /// challenge — the metadata location and the scopes it wants — guides the sign-in.
    pub async fn sign_in_now(&self, server: &str) -> Result<AuthStatus, McpError> {
        let config = self
            .config(server)
            .ok_or_else(|| self.inner.servers.unknown(server))?;
        let not_oauth = || McpError::Protocol {
            server: server.to_string().into(),
            message: "signing in applies to HTTP servers without a configured Authorization header"
                .into(),
        };
        self.refuse_blocked(&config)?;
        let ServerTransport::Http { url, headers, .. } = &config.transport else {
            return Err(not_oauth());
        };
        let auth = self
            .inner
            .sign_ins
            .server_auth(&config)
            .await
            .ok_or_else(not_oauth)?;
        let header = probe_challenge(url, headers).await.unwrap_or_default();
        let challenge = Challenge::Unauthorized { header };
        self.inner
            .sign_ins
            .sign_in(&config, &auth, &challenge, None)
            .await
            .map_err(|message| McpError::Protocol {
                server: server.to_string().into(),
                message,
            })?;
        Ok(auth.status().unwrap_or(AuthStatus::SignInNeeded))
    }

    /// `toolgate mcp logout NAME`: forgets the server's tokens and client registration.
    /// True if there was something to forget.
    pub async fn sign_out(&self, server: &str) -> Result<bool, McpError> {
        if self.config(server).is_none() {
            return Err(self.inner.servers.unknown(server));
        }
        self.inner
            .sign_ins
            .forget(server)
            .await
            .map_err(|message| McpError::Protocol {
                server: server.to_string().into(),
                message,
            })
    }
}

/// The `WWW-Authenticate` header an unauthenticated `initialize` gets, if the server
/// answers it with a 401.
async fn probe_challenge(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_LIMIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE.to_string(),
            "capabilities": {},
            "clientInfo": {"name": oauth::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let mut request = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&body);
    for (name, value) in auth::custom_headers(headers).ok()? {
        request = request.header(name, value);
    }
    let response = request.send().await.ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_string)
}
