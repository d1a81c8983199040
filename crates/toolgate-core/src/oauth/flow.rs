//! One sign-in, in two steps so a person can be asked in between:
//!
//! 1. [`discover`]: protected resource metadata and authorization server metadata (rmcp:
//!    RFC 9728 from the challenge's `resource_metadata`, else path-based then root
//!    well-known; RFC 8414 / OpenID discovery; the 2025-03-26 default endpoints), and the
//!    scopes to ask for — read-only, nothing is registered yet;
//! 2. [`authorize`]: a client ID (pre-registered, a client ID metadata document, or RFC
//!    7591 registration), the authorization code flow with PKCE S256 and `resource`
//!    through the browser and the loopback listener, and the token exchange.
//!
//! Every network step is bounded; the wait for the person's browser is bounded by the
//! caller's limit.

use super::browser::Opener;
use super::credentials::{ServerCredentials, Staged};
use super::loopback::{CallbackError, Loopback};
use super::store::{ClientRecord, Registration, StoreError};
use crate::settings::OAuthSettings;
use oauth2::TokenResponse;
use reqwest::Url;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, OAuthClientConfig, OAuthTokenResponse,
};
use std::error::Error as _;
use std::time::Duration;

/// Metadata discovery: several documents, each bounded by rmcp's own 30 s.
const DISCOVERY_LIMIT: Duration = Duration::from_secs(60);
/// Registration and the token exchange, each.
const REQUEST_LIMIT: Duration = Duration::from_secs(30);
/// The name toolgate registers under.
pub const CLIENT_NAME: &str = "toolgate";

#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("cannot find out how to sign in to {url}: {reason}")]
    Discovery { url: String, reason: String },
    #[error(
        "the authorization server {server} offers no way for toolgate to get a client ID (no dynamic registration, no client ID metadata documents); register a client there and set \"oauth\": {{\"clientId\": …}} in the server's entry"
    )]
    NoRegistration { server: String },
    #[error("the authorization server refused to register toolgate: {0}")]
    Registration(String),
    #[error(transparent)]
    Callback(#[from] CallbackError),
    #[error("nobody completed the sign-in in the browser within {0} s (the URL was shown above)")]
    CallbackTimeout(u64),
    #[error("the authorization server did not issue a token: {0}")]
    Token(String),
    #[error(
        "the authorization server issued a token for another resource ({issued_for}, expected {expected}); it was discarded"
    )]
    WrongResource {
        issued_for: String,
        expected: String,
    },
    #[error("{what} took longer than {seconds} s")]
    Timeout { what: &'static str, seconds: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Other(String),
}

/// rmcp's error and its causes, in one line.
pub fn describe(e: &AuthError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}

/// What the person is asked to approve, and what the sign-in will do.
pub struct SignInRequest<'a> {
    pub server: &'a str,
    pub url: &'a str,
    pub settings: &'a OAuthSettings,
    /// The `WWW-Authenticate` header of the 401 or 403 that asked for it, if any.
    pub challenge: Option<&'a str>,
    /// Step-up: the scopes a 403 `insufficient_scope` demanded.
    pub required_scopes: Option<&'a [String]>,
}

/// After discovery: where the person will sign in and what will be asked for.
pub struct Discovered {
    manager: AuthorizationManager,
    metadata: AuthorizationMetadata,
    /// Origin of the authorization server (scheme, host, port), as the person sees it.
    pub authorization_server: String,
    pub scopes: Vec<String>,
}

fn origin_of(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.to_string(),
    }
}

/// `a` then the items of `b` not in `a`, in order.
fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut all = a.to_vec();
    for scope in b {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

/// SEP-2207: `offline_access` (a refresh token) is asked for only when the authorization
/// server lists it, and only beside other scopes.
fn with_offline_access(mut scopes: Vec<String>, metadata: &AuthorizationMetadata) -> Vec<String> {
    let offered = metadata
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
    if offered && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".to_string());
    }
    scopes
}

/// Step 1: find the authorization server and the scopes. Registers nothing.
pub async fn discover(
    request: &SignInRequest<'_>,
    credentials: &ServerCredentials,
) -> Result<Discovered, OAuthError> {
    let failed = |reason: String| OAuthError::Discovery {
        url: request.url.to_string(),
        reason,
    };
    let mut manager = AuthorizationManager::new(request.url)
        .await
        .map_err(|e| failed(describe(&e)))?;
    manager.set_credential_store(credentials.clone());
    let resolution = tokio::time::timeout(
        DISCOVERY_LIMIT,
        manager.resolve_metadata_from_challenge(request.challenge),
    )
    .await
    .map_err(|_| OAuthError::Timeout {
        what: "discovering the authorization server",
        seconds: DISCOVERY_LIMIT.as_secs(),
    })?;
    let metadata = match resolution {
        Ok(resolution) => resolution.metadata,
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => march_2025_metadata(request.url, &received_issuer)
            .await
            .ok_or_else(|| {
                failed(format!(
                    "the authorization server's metadata names the issuer {received_issuer}, expected {expected_issuer}"
                ))
            })?,
        Err(e) => return Err(failed(describe(&e))),
    };
    manager.set_metadata(metadata.clone());
    // The spec's order: the challenge's scope, else the resource's scopes_supported, else
    // none. A step-up asks for what the token has plus what the server now demands.
    let base = match (&request.settings.scopes, request.required_scopes) {
        (Some(pinned), Some(required)) => union(pinned, required),
        (Some(pinned), None) => pinned.clone(),
        (None, Some(required)) => union(&credentials.granted_scopes(), required),
        (None, None) => manager.select_initial_scopes(&[]).await,
    };
    let scopes = with_offline_access(base, &metadata);
    let authorization_server = origin_of(
        metadata
            .issuer
            .as_deref()
            .unwrap_or(&metadata.authorization_endpoint),
    );
    Ok(Discovered {
        manager,
        metadata,
        authorization_server,
        scopes,
    })
}

/// The 2025-03-26 spec had no protected resource metadata: the MCP server's own origin
/// served `/.well-known/oauth-authorization-server`, and servers of that era name an
/// issuer with a path there (`https://mcp.example/oauth`), which RFC 8414's strict issuer
/// check (rmcp's) refuses. Accepted only when the issuer is on the MCP server's own origin,
/// so a document can still never send the person to another party.
async fn march_2025_metadata(server_url: &str, issuer: &str) -> Option<AuthorizationMetadata> {
    let server = Url::parse(server_url).ok()?;
    if Url::parse(issuer).ok()?.origin() != server.origin() {
        return None;
    }
    let mut location = server.clone();
    location.set_path("/.well-known/oauth-authorization-server");
    location.set_query(None);
    let client = reqwest::Client::builder()
        .timeout(REQUEST_LIMIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let response = client.get(location).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: AuthorizationMetadata = response.json().await.ok()?;
    let same_origin = |url: &str| Url::parse(url).is_ok_and(|u| u.origin() == server.origin());
    (metadata.issuer.as_deref() == Some(issuer)
        && same_origin(&metadata.authorization_endpoint)
        && same_origin(&metadata.token_endpoint)
        && metadata
            .registration_endpoint
            .as_deref()
            .is_none_or(same_origin))
    .then_some(metadata)
}

/// How toolgate identifies itself to this authorization server, registering if needed.
async fn client_for(
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    settings: &OAuthSettings,
    redirect_uri: &str,
    scopes: &[String],
    authorization_server: &str,
) -> Result<ClientRecord, OAuthError> {
    if let Some(client_id) = &settings.client_id {
        return Ok(ClientRecord {
            client_id: client_id.clone(),
            client_secret: settings.client_secret.clone(),
            redirect_uri: redirect_uri.to_string(),
            registration: Registration::Preregistered,
        });
    }
    let documents_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if let Some(document) = &settings.client_metadata_url
        && documents_supported
    {
        return Ok(ClientRecord {
            client_id: document.clone(),
            client_secret: None,
            redirect_uri: redirect_uri.to_string(),
            registration: Registration::MetadataDocument,
        });
    }
    if metadata.registration_endpoint.is_none() {
        return Err(OAuthError::NoRegistration {
            server: authorization_server.to_string(),
        });
    }
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = tokio::time::timeout(
        REQUEST_LIMIT,
        manager.register_client(CLIENT_NAME, redirect_uri, &scope_refs),
    )
    .await
    .map_err(|_| OAuthError::Timeout {
        what: "registering with the authorization server",
        seconds: REQUEST_LIMIT.as_secs(),
    })?
    .map_err(|e| OAuthError::Registration(describe(&e)))?;
    Ok(ClientRecord {
        client_id: config.client_id,
        client_secret: config.client_secret,
        redirect_uri: redirect_uri.to_string(),
        registration: Registration::Dynamic,
    })
}

/// A query parameter of a URL rmcp built.
fn query_param(url: &str, name: &str) -> Option<String> {
    Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The resources a token response says the token is for (`resource` or `aud`), if any.
fn issued_for(token: &OAuthTokenResponse) -> Vec<String> {
    let extra = &token.extra_fields().0;
    let mut named = Vec::new();
    for key in ["resource", "aud"] {
        match extra.get(key) {
            Some(serde_json::Value::String(s)) => named.push(s.clone()),
            Some(serde_json::Value::Array(items)) => {
                named.extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)))
            }
            _ => {}
        }
    }
    named
}

fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Step 2: register if needed, send the person to the authorization server, take the
/// code on the loopback listener and exchange it. On success the tokens are in the token
/// file and the returned manager refreshes them.
pub async fn authorize(
    discovered: Discovered,
    request: &SignInRequest<'_>,
    credentials: &ServerCredentials,
    opener: &Opener,
    show_url: &(dyn Fn(&str) + Send + Sync),
    wait_limit: Duration,
) -> Result<AuthorizationManager, OAuthError> {
    let Discovered {
        mut manager,
        metadata,
        authorization_server,
        scopes,
    } = discovered;
    let loopback = Loopback::bind(request.settings.callback_port).await?;
    let redirect_uri = loopback.redirect_uri().to_string();
    let client = client_for(
        &mut manager,
        &metadata,
        request.settings,
        &redirect_uri,
        &scopes,
        &authorization_server,
    )
    .await?;
    let mut auth_request = AuthorizationRequest::new(redirect_uri.clone())
        .with_scopes(scopes.iter().cloned())
        .with_initial_scope_selection()
        .with_preregistered_client(client.client_id.clone());
    if let Some(secret) = &client.client_secret {
        auth_request = auth_request.with_client_secret(secret.clone());
    }
    let session = AuthorizationSession::new(manager, auth_request)
        .await
        .map_err(|(_, e)| match e {
            AuthError::RegistrationFailed(reason) => OAuthError::Registration(reason),
            other => OAuthError::Other(describe(&other)),
        })?;
    let auth_url = session.get_authorization_url().to_string();
    let (Some(state), Some(resource)) = (
        query_param(&auth_url, "state"),
        query_param(&auth_url, "resource"),
    ) else {
        return Err(OAuthError::Other(
            "the authorization URL lacks its state or resource".into(),
        ));
    };
    show_url(&auth_url);
    if let Err(why) = opener.open(&auth_url) {
        tracing::warn!("could not open a browser for the sign-in: {why}");
    }
    let callback = tokio::time::timeout(wait_limit, loopback.wait(&state))
        .await
        .map_err(|_| OAuthError::CallbackTimeout(wait_limit.as_secs()))??;
    credentials.stage(Some(Staged {
        client,
        metadata,
        resource: resource.clone(),
    }));
    let exchanged = tokio::time::timeout(
        REQUEST_LIMIT,
        session.handle_callback_with_issuer(
            &callback.code,
            &callback.state,
            callback.issuer.as_deref(),
        ),
    )
    .await;
    credentials.stage(None);
    let token = exchanged
        .map_err(|_| OAuthError::Timeout {
            what: "exchanging the authorization code",
            seconds: REQUEST_LIMIT.as_secs(),
        })?
        .map_err(|e| OAuthError::Token(describe(&e)))?;
    let named = issued_for(&token);
    if !named.is_empty() && !named.iter().any(|n| same_resource(n, &resource)) {
        use rmcp::transport::auth::CredentialStore as _;
        let _ = credentials.clear().await;
        return Err(OAuthError::WrongResource {
            issued_for: named.join(", "),
            expected: resource,
        });
    }
    tracing::info!(
        server = request.server,
        expires_in = ?token.expires_in(),
        refreshable = token.refresh_token().is_some(),
        "signed in"
    );
    Ok(session.auth_manager)
}

/// A manager for a connection that uses stored tokens: it refreshes them with the stored
/// client and sends the stored `resource`, without discovering anything first.
pub async fn restored_manager(
    url: &str,
    credentials: &ServerCredentials,
) -> Result<AuthorizationManager, OAuthError> {
    let entry = credentials.entry();
    // rmcp sends its base URL as the refresh's `resource` unless discovery found one; the
    // stored resource is what discovery found when the tokens were issued.
    let base = entry
        .as_ref()
        .and_then(|e| e.resource.clone())
        .unwrap_or_else(|| url.to_string());
    let mut manager = AuthorizationManager::new(base.as_str())
        .await
        .map_err(|e| OAuthError::Other(describe(&e)))?;
    manager.set_credential_store(credentials.clone());
    if let Some(entry) = entry
        && let (Some(metadata), Some(client)) = (entry.metadata, entry.client)
    {
        manager.set_metadata(metadata);
        let mut config = OAuthClientConfig::new(client.client_id, client.redirect_uri);
        if let Some(secret) = client.client_secret {
            config = config.with_client_secret(secret);
        }
        manager
            .configure_client(config)
            .map_err(|e| OAuthError::Other(describe(&e)))?;
    }
    Ok(manager)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(scopes: Option<&[&str]>) -> AuthorizationMetadata {
        let mut json = serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
        });
        if let Some(scopes) = scopes {
            json["scopes_supported"] = serde_json::json!(scopes);
        }
        serde_json::from_value(json).unwrap()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn offline_access_only_when_offered_and_not_alone() {
        let offered = metadata(Some(&["mcp:basic", "offline_access"]));
        assert_eq!(
            with_offline_access(strings(&["mcp:basic"]), &offered),
            strings(&["mcp:basic", "offline_access"])
        );
        assert!(with_offline_access(vec![], &offered).is_empty());
        assert_eq!(
            with_offline_access(strings(&["mcp:basic"]), &metadata(Some(&["mcp:basic"]))),
            strings(&["mcp:basic"])
        );
        assert_eq!(
            with_offline_access(strings(&["a"]), &metadata(None)),
            strings(&["a"])
        );
    }

    #[test]
    fn step_up_asks_for_the_union() {
        assert_eq!(
            union(
                &strings(&["mcp:basic"]),
                &strings(&["mcp:basic", "mcp:write"])
            ),
            strings(&["mcp:basic", "mcp:write"])
        );
    }

    #[test]
    fn token_resource_is_read_from_resource_or_aud() {
        let token: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": "x", "token_type": "Bearer", "aud": ["https://a/mcp", "https://b"]
        }))
        .unwrap();
        assert_eq!(issued_for(&token), strings(&["https://a/mcp", "https://b"]));
        assert!(same_resource("https://a/mcp/", "https://a/mcp"));
        assert!(!same_resource("https://evil/mcp", "https://a/mcp"));
    }

    #[test]
    fn authorization_server_is_named_by_its_origin() {
        assert_eq!(
            origin_of("https://login.example.com:8443/tenant/authorize"),
            "https://login.example.com:8443"
        );
    }
}
