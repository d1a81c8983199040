//! The hub's side of OAuth: which servers sign in, asking before a sign-in, running it,
//! and forgetting a server's tokens. [`SignIns`] owns that state; `login.rs` puts it to
//! use for the hub's callers.

use crate::mcp::auth::{self, Challenge, ServerAuth, SignInMode};
use crate::mcp::types::HubEvent;
use crate::oauth::{self, AuthStatus, Opener, SignInRequest, TokenFile};
use crate::settings::{ServerConfig, ServerTransport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The OAuth state of the hub's HTTP servers and how it signs in.
pub(super) struct SignIns {
    /// Per server, made on its first connect and kept across reconnects.
    auth: tokio::sync::Mutex<HashMap<String, Arc<ServerAuth>>>,
    /// Whom to ask before signing in.
    pub(super) mode: SignInMode,
    opener: Opener,
    /// How long a sign-in may wait for the person (their answer, then the browser).
    timeout: Duration,
    /// Where tokens are kept; None: `state_dir/oauth/tokens.json`.
    token_file: Option<TokenFile>,
    events: mpsc::UnboundedSender<HubEvent>,
}

impl SignIns {
    pub(super) fn new(
        mode: SignInMode,
        opener: Opener,
        timeout: Duration,
        token_file: Option<TokenFile>,
        events: mpsc::UnboundedSender<HubEvent>,
    ) -> SignIns {
        SignIns {
            auth: tokio::sync::Mutex::new(HashMap::new()),
            mode,
            opener,
            timeout,
            token_file,
            events,
        }
    }

    /// The OAuth state of `server` if it has one already (never made here).
    pub(super) async fn known(&self, server: &str) -> Option<Arc<ServerAuth>> {
        self.auth.lock().await.get(server).cloned()
    }

    fn file(&self) -> Result<TokenFile, String> {
        match &self.token_file {
            Some(file) => Ok(file.clone()),
            None => TokenFile::in_state_dir().map_err(|e| e.to_string()),
        }
    }

    /// The OAuth state of an HTTP server that has no `Authorization` header of its own
    /// (made on first use, kept across reconnects). None for every other server, and when
    /// no token file can be used (then the server is reached without OAuth, and says so in
    /// the log).
    pub(super) async fn server_auth(&self, config: &ServerConfig) -> Option<Arc<ServerAuth>> {
        let ServerTransport::Http {
            url,
            headers,
            oauth,
        } = &config.transport
        else {
            return None;
        };
        if auth::has_static_authorization(headers) {
            return None;
        }
        let mut all = self.auth.lock().await;
        if let Some(existing) = all.get(&config.name) {
            return Some(existing.clone());
        }
        let opened = match self.file() {
            Ok(file) => ServerAuth::open(&config.name, url, oauth, file).await,
            Err(e) => Err(e),
        };
        match opened {
            Ok(auth) => {
                let auth = Arc::new(auth);
                all.insert(config.name.clone(), auth.clone());
                Some(auth)
            }
            Err(e) => {
                tracing::warn!(server = %config.name, "OAuth is unavailable for this server: {e}");
                None
            }
        }
    }

    pub(super) fn emit(&self, server: &str, status: AuthStatus) {
        let _ = self.events.send(HubEvent::Auth {
            server: server.to_string().into(),
            status,
        });
    }

    /// Signs in because `challenge` said so (or, from `mcp login`, because the person
    /// asked). `seen` is the token generation the failed request used: when the tokens
    /// changed since (another call signed in, a refresh), nothing is done and the caller
    /// simply tries again. Errors are worded for the person.
    pub(super) async fn sign_in(
        &self,
        config: &ServerConfig,
        auth: &ServerAuth,
        challenge: &Challenge,
        seen: Option<u64>,
    ) -> Result<(), String> {
        let name = config.name.as_str();
        let _one_at_a_time = auth.signing_in.lock().await;
        if seen.is_some_and(|generation| generation != auth.credentials.generation()) {
            return Ok(());
        }
        let required = match challenge {
            Challenge::RefreshFailed(reason) => {
                let _ = auth.credentials.mark_refresh_failed(reason).await;
                self.emit(
                    name,
                    AuthStatus::RefreshFailed {
                        reason: reason.clone(),
                    },
                );
                return Err(format!(
                    "refresh failed: {reason} (the token is kept; the next request tries again)"
                ));
            }
            Challenge::InsufficientScope { scopes, .. } => {
                let granted = auth.credentials.granted_scopes();
                if !scopes.is_empty() && scopes.iter().all(|s| granted.contains(s)) {
                    // Signing in again would ask for what the token already has.
                    return Err(format!(
                        "the server refuses the token although it holds the scopes it asks for ({}); not signing in again",
                        scopes.join(" ")
                    ));
                }
                Some(scopes.clone())
            }
            Challenge::Unauthorized { .. } => None,
        };
        let request = SignInRequest {
            server: name,
            url: &auth.url,
            settings: &auth.settings,
            challenge: challenge.header().filter(|h| !h.is_empty()),
            required_scopes: required.as_deref(),
        };
        if self.mode == SignInMode::Never {
            return Err(self.sign_in_needed(auth, name, None).await);
        }
        let discovered = oauth::discover(&request, &auth.credentials)
            .await
            .map_err(|e| format!("sign-in failed: {e}"))?;
        match &self.mode {
            SignInMode::Never | SignInMode::Now => {}
            SignInMode::Ask => {
                let (question, answer, _withdraw_if_we_stop) = auth::ask(
                    name,
                    &auth.url,
                    discovered.authorization_server.clone(),
                    discovered.scopes.clone(),
                    required.is_some(),
                );
                let asked = self.events.send(HubEvent::SignIn(question)).is_ok();
                let approved = asked
                    && matches!(
                        tokio::time::timeout(self.timeout, answer).await,
                        Ok(Ok(true))
                    );
                if !approved {
                    return Err(self
                        .sign_in_needed(
                            auth,
                            name,
                            Some("nobody approved the sign-in; reconnect to be asked again, or"),
                        )
                        .await);
                }
            }
        }
        let events = self.events.clone();
        let server = name.to_string();
        let show_url = move |url: &str| {
            let _ = events.send(HubEvent::SignInStarted {
                server: server.clone().into(),
                url: url.to_string(),
            });
        };
        let manager = oauth::authorize(
            discovered,
            &request,
            &auth.credentials,
            &self.opener,
            &show_url,
            self.timeout,
        )
        .await;
        match manager {
            Ok(manager) => {
                auth.install(manager).await;
                if let Some(status) = auth.status() {
                    self.emit(name, status);
                }
                Ok(())
            }
            Err(e) => {
                let _ = auth.credentials.mark_sign_in_needed().await;
                if let Some(status) = auth.status() {
                    self.emit(name, status);
                }
                Err(format!("sign-in failed: {e}"))
            }
        }
    }

    /// Records and reports that `name` waits for a sign-in; `why` leads the advice.
    async fn sign_in_needed(&self, auth: &ServerAuth, name: &str, why: Option<&str>) -> String {
        let _ = auth.credentials.mark_sign_in_needed().await;
        self.emit(name, auth.status().unwrap_or(AuthStatus::SignInNeeded));
        match why {
            Some(why) => format!("sign in needed: {why} run `toolgate mcp login {name}`"),
            None => format!("sign in needed: run `toolgate mcp login {name}`"),
        }
    }

    /// Forgets the server's tokens and client registration; true if there was something
    /// to forget.
    pub(super) async fn forget(&self, server: &str) -> Result<bool, String> {
        self.auth.lock().await.remove(server);
        let file = self.file()?;
        let name = server.to_string();
        tokio::task::spawn_blocking(move || file.remove_server(&name))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
    }
}
