//! OAuth inside the hub: which HTTP servers get a token, what a failed request says about
//! authorization, and how many sign-ins one operation may cost.
//!
//! Every HTTP server without a configured `Authorization` header talks through rmcp's
//! `AuthClient`, which sends the stored token (refreshing it shortly before it runs out)
//! and, on a 401, refreshes once and retries once. What still fails reaches the hub as a
//! [`Challenge`]; the hub then signs in (asking the person first, see [`SignInMode`]) and
//! repeats the operation — at most [`MAX_SIGN_INS`] times per operation, and never for a
//! step-up the token already satisfies, so no server can make toolgate loop.

use super::pending::Pending;
use crate::ids::ServerName;
use crate::oauth::{AuthStatus, ServerCredentials, TokenFile};
use crate::settings::OAuthSettings;
use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::DropGuard;

/// Sign-ins one connect or one call may go through: the first for a 401, a second for a
/// step-up the first token turns out to need.
pub const MAX_SIGN_INS: usize = 2;
/// How long the person has to complete a sign-in in the browser, unless
/// `$TOOLGATE_SIGN_IN_TIMEOUT_SECS` says otherwise.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// Whom the hub asks before it signs in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SignInMode {
    /// Ask through [`HubEvent::SignIn`](super::HubEvent::SignIn); the agent turns it into
    /// an inbox request (headless: dismissed, so nothing signs in unattended).
    #[default]
    Ask,
    /// Sign in at once: the person typed a command that needs it (`toolgate mcp call`,
    /// `mcp login`).
    Now,
    /// Never sign in; report that a sign-in is needed (`toolgate mcp list`).
    Never,
}

/// The sign-in wait, from the environment when set (tests shorten it).
pub fn sign_in_timeout_from_env() -> Duration {
    std::env::var("TOOLGATE_SIGN_IN_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_SIGN_IN_TIMEOUT)
}

/// The hub's question to whoever speaks for the person: may toolgate sign in to this
/// server, at this authorization server, for these scopes?
#[derive(Debug, Clone)]
pub struct SignInQuestion {
    pub server: ServerName,
    /// The server's URL.
    pub url: String,
    /// Origin of the authorization server the browser will be sent to.
    pub authorization_server: String,
    pub scopes: Vec<String>,
    /// True when the server wants more scopes than the current token has.
    pub step_up: bool,
    /// The answer (yes: sign in); withdrawn when the hub stops waiting (the operation
    /// was cancelled or timed out).
    pending: Pending<bool>,
}

impl SignInQuestion {
    /// Resolves when the hub no longer waits for the answer.
    pub async fn withdrawn(&self) {
        self.pending.withdrawn().await;
    }

    /// The answer (only the first counts). Dropping every copy unanswered means no.
    pub fn answer(&self, sign_in: bool) {
        self.pending.answer(sign_in);
    }
}

impl PartialEq for SignInQuestion {
    fn eq(&self, other: &Self) -> bool {
        self.server == other.server
            && self.authorization_server == other.authorization_server
            && self.scopes == other.scopes
            && self.step_up == other.step_up
            && self.pending.same(&other.pending)
    }
}

/// A question, the receiver of its answer, and the guard that withdraws it.
pub(super) fn ask(
    server: &str,
    url: &str,
    authorization_server: String,
    scopes: Vec<String>,
    step_up: bool,
) -> (SignInQuestion, oneshot::Receiver<bool>, DropGuard) {
    Pending::open(|pending| SignInQuestion {
        server: server.to_string().into(),
        url: url.to_string(),
        authorization_server,
        scopes,
        step_up,
        pending,
    })
}

/// What a failed request says about authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Challenge {
    /// 401: no token, or one the server refused even after rmcp refreshed it.
    Unauthorized { header: String },
    /// 403 `insufficient_scope`: the token lacks these scopes.
    InsufficientScope { header: String, scopes: Vec<String> },
    /// Renewing the token failed for another reason than its rejection (network, the
    /// authorization server down): worth trying later, not a reason to sign in again.
    RefreshFailed(String),
}

impl Challenge {
    pub fn header(&self) -> Option<&str> {
        match self {
            Challenge::Unauthorized { header } | Challenge::InsufficientScope { header, .. } => {
                Some(header)
            }
            Challenge::RefreshFailed(_) => None,
        }
    }
}

fn from_http_error(error: &StreamableHttpError<reqwest::Error>) -> Option<Challenge> {
    match error {
        StreamableHttpError::AuthRequired(e) => Some(Challenge::Unauthorized {
            header: e.www_authenticate_header.clone(),
        }),
        StreamableHttpError::InsufficientScope(e) => {
            let scope = e.required_scope.clone().or_else(|| {
                // The header names the scope even where rmcp did not pick it out.
                let base = reqwest::Url::parse("http://localhost/").ok()?;
                WWWAuthenticateParams::parse(&e.www_authenticate_header, &base).scope
            });
            Some(Challenge::InsufficientScope {
                header: e.www_authenticate_header.clone(),
                scopes: scope
                    .map(|s| s.split_whitespace().map(str::to_string).collect())
                    .unwrap_or_default(),
            })
        }
        StreamableHttpError::Auth(AuthError::AuthorizationRequired) => {
            Some(Challenge::Unauthorized {
                header: String::new(),
            })
        }
        StreamableHttpError::Auth(
            e @ (AuthError::TokenRefreshFailed(_) | AuthError::CredentialStoreError(_)),
        ) => Some(Challenge::RefreshFailed(crate::oauth::describe(e))),
        _ => None,
    }
}

/// The challenge in a transport error (and its causes), if it is one.
fn in_chain(error: &(dyn Error + Send + Sync + 'static)) -> Option<Challenge> {
    let mut current: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
            && let Some(challenge) = from_http_error(http)
        {
            return Some(challenge);
        }
        current = e.source();
    }
    None
}

pub(super) fn in_init_error(e: &ClientInitializeError) -> Option<Challenge> {
    match e {
        ClientInitializeError::TransportError { error, .. } => in_chain(error.error.as_ref()),
        _ => None,
    }
}

pub(super) fn in_service_error(e: &ServiceError) -> Option<Challenge> {
    match e {
        ServiceError::TransportSend(error) => in_chain(error.error.as_ref()),
        _ => None,
    }
}

/// One server's sign-in state in the hub, kept across reconnects.
pub(super) struct ServerAuth {
    pub credentials: ServerCredentials,
    /// Shared by every transport to this server; a sign-in swaps the manager inside.
    client: AuthClient<reqwest::Client>,
    pub settings: OAuthSettings,
    pub url: String,
    /// One sign-in at a time per server (a connect and a call may both hit a 401).
    pub signing_in: tokio::sync::Mutex<()>,
    /// A sign-in for a connect is running in the background (asked, not answered yet).
    pub pending: std::sync::atomic::AtomicBool,
}

impl ServerAuth {
    /// For an HTTP server that has no `Authorization` header of its own.
    pub async fn open(
        server: &str,
        url: &str,
        settings: &OAuthSettings,
        file: TokenFile,
    ) -> Result<ServerAuth, String> {
        let (name, address) = (server.to_string(), url.to_string());
        let credentials =
            tokio::task::spawn_blocking(move || ServerCredentials::open(file, &name, &address))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
        let manager = crate::oauth::restored_manager(url, &credentials)
            .await
            .map_err(|e| e.to_string())?;
        // Like rmcp's own client: no idle pool (delayed-ACK stalls), and no redirects —
        // a request carrying a token is never replayed elsewhere.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(ServerAuth {
            credentials,
            client: AuthClient::new(http, manager),
            settings: settings.clone(),
            url: url.to_string(),
            signing_in: tokio::sync::Mutex::new(()),
            pending: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn transport(
        &self,
        headers: &BTreeMap<String, String>,
    ) -> Result<StreamableHttpClientTransport<AuthClient<reqwest::Client>>, BadHeader> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.clone())
            .custom_headers(custom_headers(headers)?);
        Ok(StreamableHttpClientTransport::with_client(
            self.client.clone(),
            config,
        ))
    }

    /// Every transport of this server uses the new tokens and refreshes with the new client.
    pub async fn install(&self, manager: AuthorizationManager) {
        *self.client.auth_manager.lock().await = manager;
    }

    pub fn status(&self) -> Option<AuthStatus> {
        self.credentials.status()
    }
}

/// A configured header rmcp cannot send.
#[derive(Debug, thiserror::Error)]
pub enum BadHeader {
    #[error("invalid header name {name:?}: {source}")]
    Name {
        name: String,
        #[source]
        source: http::header::InvalidHeaderName,
    },
    #[error("invalid value for header {name}: {source}")]
    Value {
        name: http::HeaderName,
        #[source]
        source: http::header::InvalidHeaderValue,
    },
}

/// The configured headers other than `Authorization`, for rmcp.
pub(super) fn custom_headers(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, BadHeader> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            continue;
        }
        let name =
            http::HeaderName::from_bytes(name.as_bytes()).map_err(|source| BadHeader::Name {
                name: name.clone(),
                source,
            })?;
        let value = http::HeaderValue::from_str(value).map_err(|source| BadHeader::Value {
            name: name.clone(),
            source,
        })?;
        custom.insert(name, value);
    }
    Ok(custom)
}

/// True when the server manages its own authorization through a configured header.
pub(super) fn has_static_authorization(headers: &BTreeMap<String, String>) -> bool {
    headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_answered_once_and_compares_by_identity() {
        let (q, mut rx, guard) = ask(
            "s",
            "http://s/mcp",
            "https://as".into(),
            vec!["a".into()],
            false,
        );
        let copy = q.clone();
        assert_eq!(q, copy);
        copy.answer(true);
        q.answer(false);
        assert_eq!(rx.try_recv(), Ok(true));
        let (other, _, _other_guard) = ask(
            "s",
            "http://s/mcp",
            "https://as".into(),
            vec!["a".into()],
            false,
        );
        assert_ne!(q, other);
        drop(guard);
        assert!(q.pending.is_withdrawn(), "the hub stopped waiting");
    }

    #[test]
    fn challenges_are_read_from_rmcp_errors() {
        let e = StreamableHttpError::<reqwest::Error>::InsufficientScope(
            rmcp::transport::streamable_http_client::InsufficientScopeError::new(
                r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write""#.into(),
                None,
            ),
        );
        assert_eq!(
            from_http_error(&e),
            Some(Challenge::InsufficientScope {
                header: r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write""#.into(),
                scopes: vec!["mcp:basic".into(), "mcp:write".into()],
            })
        );
        let e = StreamableHttpError::<reqwest::Error>::AuthRequired(
            rmcp::transport::streamable_http_client::AuthRequiredError::new("Bearer".into()),
        );
        let boxed: Box<dyn Error + Send + Sync> = Box::new(e);
        assert_eq!(
            in_chain(boxed.as_ref()),
            Some(Challenge::Unauthorized {
                header: "Bearer".into()
            })
        );
    }
}
