//! A real OAuth 2.1 authorization server and a protected MCP server (toolgate's own docs
//! server behind a bearer-token check), both on 127.0.0.1, for tests/it/oauth.rs.
//!
//! The authorization server does what the MCP authorization spec asks of one: RFC 8414
//! metadata, RFC 7591 registration, the authorization code grant with PKCE S256 (verified),
//! RFC 8707 `resource` (checked in both requests and bound into the token), refresh tokens,
//! and `none` / `client_secret_basic` / `client_secret_post` client authentication. It
//! approves every authorization request at once (the "person" always agrees), and can be
//! told to misbehave in the ways the client must survive.

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Ways the authorization server goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Misbehaviour {
    #[default]
    None,
    /// Its metadata document is not JSON.
    GarbageMetadata,
    /// Its metadata URL redirects to itself.
    MetadataRedirectLoop,
    /// Registration answers 400.
    RefuseRegistration,
    /// The token response says the token is for another resource.
    TokenForOtherResource,
    /// The redirect back carries a `state` the client never sent.
    ForgedState,
    /// The code it hands out was issued for another redirect URI.
    CodeForOtherRedirect,
    /// Refresh tokens are refused (`invalid_grant`).
    RejectRefresh,
}

#[derive(Debug, Clone)]
pub struct AsConfig {
    pub dynamic_registration: bool,
    pub metadata_documents: bool,
    pub scopes_supported: Option<Vec<String>>,
    pub auth_methods: Vec<&'static str>,
    /// `expires_in` of access tokens.
    pub token_lifetime: Duration,
    pub refresh_tokens: bool,
    /// A client registered out of band: id and secret.
    pub preregistered: Option<(String, Option<String>)>,
    pub misbehaviour: Misbehaviour,
}

impl Default for AsConfig {
    fn default() -> Self {
        AsConfig {
            dynamic_registration: true,
            metadata_documents: false,
            scopes_supported: None,
            auth_methods: vec!["none"],
            token_lifetime: Duration::from_secs(3600),
            refresh_tokens: true,
            preregistered: None,
            misbehaviour: Misbehaviour::None,
        }
    }
}

#[derive(Debug, Clone)]
struct Client {
    secret: Option<String>,
    redirect_uris: Vec<String>,
}

#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    scopes: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub resource: String,
    pub scopes: Vec<String>,
    pub expires: Instant,
}

/// What happened at the authorization server, in order, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Metadata,
    Register {
        auth_method: String,
        grant_types: Vec<String>,
    },
    Authorize {
        client_id: String,
        scope: Option<String>,
        resource: Option<String>,
        challenge_method: Option<String>,
    },
    CodeExchange {
        resource: Option<String>,
        client_auth: String,
    },
    Refresh {
        resource: Option<String>,
    },
}

#[derive(Default)]
struct Books {
    clients: HashMap<String, Client>,
    grants: HashMap<String, Grant>,
    tokens: HashMap<String, Token>,
    refresh: HashMap<String, (String, String, Vec<String>)>,
    seen: Vec<Seen>,
    /// Set by a test to change the lifetime of tokens issued from then on.
    lifetime: Option<Duration>,
}

pub struct AsState {
    pub config: AsConfig,
    base: String,
    books: Mutex<Books>,
    counter: AtomicUsize,
}

impl AsState {
    fn next(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.counter.fetch_add(1, Ordering::SeqCst))
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.books.lock().unwrap().seen.clone()
    }

    pub fn authorizations(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| matches!(s, Seen::Authorize { .. }))
            .collect()
    }

    pub fn refreshes(&self) -> usize {
        self.seen()
            .iter()
            .filter(|s| matches!(s, Seen::Refresh { .. }))
            .count()
    }

    /// Every access token issued so far (to check none leaks anywhere).
    pub fn issued_tokens(&self) -> Vec<String> {
        let books = self.books.lock().unwrap();
        books
            .tokens
            .keys()
            .chain(books.refresh.keys())
            .cloned()
            .collect()
    }

    /// Tokens issued from now on live `lifetime` (those already issued keep theirs).
    pub fn set_token_lifetime(&self, lifetime: Duration) {
        self.books.lock().unwrap().lifetime = Some(lifetime);
    }

    /// Waits until every access token issued so far has expired (by this server's clock).
    pub async fn wait_until_all_expired(&self) {
        let last = self
            .books
            .lock()
            .unwrap()
            .tokens
            .values()
            .map(|t| t.expires)
            .max();
        if let Some(last) = last {
            tokio::time::sleep_until(last.into()).await;
        }
    }

    /// Forgets every access token (the resource server then answers 401).
    pub fn revoke_access_tokens(&self) {
        self.books.lock().unwrap().tokens.clear();
    }

    pub fn token(&self, token: &str) -> Option<Token> {
        self.books.lock().unwrap().tokens.get(token).cloned()
    }

    fn log(&self, seen: Seen) {
        self.books.lock().unwrap().seen.push(seen);
    }

    fn issue(&self, client_id: &str, resource: &str, scopes: &[String]) -> Value {
        let access = self.next("at");
        let mut books = self.books.lock().unwrap();
        let lifetime = books.lifetime.unwrap_or(self.config.token_lifetime);
        books.tokens.insert(
            access.clone(),
            Token {
                resource: resource.to_string(),
                scopes: scopes.to_vec(),
                expires: Instant::now() + lifetime,
            },
        );
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime.as_secs(),
        });
        if !scopes.is_empty() {
            answer["scope"] = scopes.join(" ").into();
        }
        if self.config.refresh_tokens {
            let refresh = self.next("rt");
            books.refresh.insert(
                refresh.clone(),
                (client_id.to_string(), resource.to_string(), scopes.to_vec()),
            );
            answer["refresh_token"] = refresh.into();
        }
        if self.config.misbehaviour == Misbehaviour::TokenForOtherResource {
            answer["resource"] = "https://elsewhere.example/mcp".into();
        }
        answer
    }
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

async fn metadata(State(s): State<Arc<AsState>>) -> Response {
    s.log(Seen::Metadata);
    match s.config.misbehaviour {
        Misbehaviour::GarbageMetadata => {
            return (StatusCode::OK, "<html>this is not metadata</html>").into_response();
        }
        Misbehaviour::MetadataRedirectLoop => {
            return (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, "/.well-known/oauth-authorization-server")],
            )
                .into_response();
        }
        _ => {}
    }
    let base = &s.base;
    let mut doc = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": s.config.auth_methods,
    });
    if s.config.dynamic_registration {
        doc["registration_endpoint"] = format!("{base}/register").into();
    }
    if s.config.metadata_documents {
        doc["client_id_metadata_document_supported"] = true.into();
    }
    if let Some(scopes) = &s.config.scopes_supported {
        doc["scopes_supported"] = json!(scopes);
    }
    Json(doc).into_response()
}

async fn register(State(s): State<Arc<AsState>>, Json(body): Json<Value>) -> Response {
    let auth_method = body["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("client_secret_basic")
        .to_string();
    let grant_types = body["grant_types"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    s.log(Seen::Register {
        auth_method,
        grant_types,
    });
    if s.config.misbehaviour == Misbehaviour::RefuseRegistration {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "registration is closed",
        );
    }
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let client_id = s.next("client");
    // A server that does not accept public clients hands out a secret.
    let secret = (!s.config.auth_methods.contains(&"none")).then(|| s.next("secret"));
    s.books.lock().unwrap().clients.insert(
        client_id.clone(),
        Client {
            secret: secret.clone(),
            redirect_uris: redirect_uris.clone(),
        },
    );
    let mut answer = json!({"client_id": client_id, "redirect_uris": redirect_uris});
    if let Some(secret) = secret {
        answer["client_secret"] = secret.into();
    }
    (StatusCode::CREATED, Json(answer)).into_response()
}

fn known_client(s: &AsState, client_id: &str) -> Option<Client> {
    if let Some((id, secret)) = &s.config.preregistered
        && id == client_id
    {
        return Some(Client {
            secret: secret.clone(),
            redirect_uris: Vec::new(),
        });
    }
    if s.config.metadata_documents && client_id.starts_with("https://") {
        return Some(Client {
            secret: None,
            redirect_uris: Vec::new(),
        });
    }
    s.books.lock().unwrap().clients.get(client_id).cloned()
}

async fn authorize(
    State(s): State<Arc<AsState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let client_id = q.get("client_id").cloned().unwrap_or_default();
    s.log(Seen::Authorize {
        client_id: client_id.clone(),
        scope: q.get("scope").cloned(),
        resource: q.get("resource").cloned(),
        challenge_method: q.get("code_challenge_method").cloned(),
    });
    let Some(client) = known_client(&s, &client_id) else {
        return (StatusCode::BAD_REQUEST, "unknown client").into_response();
    };
    let redirect_uri = q.get("redirect_uri").cloned().unwrap_or_default();
    // Registered clients must come back to a registered URI (pre-registered and
    // metadata-document clients may use any loopback port, RFC 8252 §7.3).
    if !client.redirect_uris.is_empty() && !client.redirect_uris.contains(&redirect_uri) {
        return (StatusCode::BAD_REQUEST, "redirect_uri not registered").into_response();
    }
    let (Some(challenge), Some("S256"), Some(resource)) = (
        q.get("code_challenge"),
        q.get("code_challenge_method").map(String::as_str),
        q.get("resource"),
    ) else {
        return (
            StatusCode::BAD_REQUEST,
            "PKCE S256 and resource are required",
        )
            .into_response();
    };
    let code = s.next("code");
    let bound_redirect = if s.config.misbehaviour == Misbehaviour::CodeForOtherRedirect {
        "http://127.0.0.1:9/elsewhere".to_string()
    } else {
        redirect_uri.clone()
    };
    s.books.lock().unwrap().grants.insert(
        code.clone(),
        Grant {
            client_id,
            redirect_uri: bound_redirect,
            challenge: challenge.clone(),
            resource: resource.clone(),
            scopes: q
                .get("scope")
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
        },
    );
    let state = if s.config.misbehaviour == Misbehaviour::ForgedState {
        "forged-state".to_string()
    } else {
        q.get("state").cloned().unwrap_or_default()
    };
    let mut target = reqwest::Url::parse(&redirect_uri).unwrap();
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state)
        .append_pair("iss", &s.base);
    (StatusCode::FOUND, [(header::LOCATION, target.to_string())]).into_response()
}

/// The client's authentication at the token endpoint: its id and how it proved it.
// The refusal is the response itself, sent once; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn client_auth(
    s: &AsState,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(String, String), Response> {
    let refuse = |why: &str| oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", why);
    let (client_id, secret, method) = if let Some(basic) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic)
            .map_err(|_| refuse("bad basic auth"))?;
        let decoded = String::from_utf8(decoded).map_err(|_| refuse("bad basic auth"))?;
        // RFC 6749 §2.3.1 form-encodes both parts; the test's ids and secrets need none.
        let (id, secret) = decoded.split_once(':').ok_or_else(|| refuse("no colon"))?;
        (
            id.to_string(),
            Some(secret.to_string()),
            "client_secret_basic",
        )
    } else if let Some(secret) = form.get("client_secret") {
        (
            form.get("client_id").cloned().unwrap_or_default(),
            Some(secret.clone()),
            "client_secret_post",
        )
    } else {
        (
            form.get("client_id").cloned().unwrap_or_default(),
            None,
            "none",
        )
    };
    let client = known_client(s, &client_id).ok_or_else(|| refuse("unknown client"))?;
    if client.secret != secret {
        return Err(refuse("wrong client secret"));
    }
    if !s.config.auth_methods.contains(&method) {
        return Err(refuse("client authentication method not supported"));
    }
    Ok((client_id, method.to_string()))
}

fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

async fn token(
    State(s): State<Arc<AsState>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let (client_id, method) = match client_auth(&s, &headers, &form) {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let resource = form.get("resource").cloned();
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            s.log(Seen::CodeExchange {
                resource: resource.clone(),
                client_auth: method,
            });
            let code = form.get("code").cloned().unwrap_or_default();
            let Some(grant) = s.books.lock().unwrap().grants.remove(&code) else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "unknown code");
            };
            if grant.client_id != client_id {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "other client");
            }
            if form.get("redirect_uri") != Some(&grant.redirect_uri) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "the code was issued for another redirect_uri",
                );
            }
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            if s256(&verifier) != grant.challenge {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "PKCE failed");
            }
            if resource.as_deref() != Some(grant.resource.as_str()) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_target",
                    "resource differs from the authorization request",
                );
            }
            Json(s.issue(&client_id, &grant.resource, &grant.scopes)).into_response()
        }
        Some("refresh_token") => {
            s.log(Seen::Refresh {
                resource: resource.clone(),
            });
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            if s.config.misbehaviour == Misbehaviour::RejectRefresh {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "refresh refused");
            }
            // Rotation: a refresh token works once.
            let Some((owner, bound, scopes)) = s.books.lock().unwrap().refresh.remove(&presented)
            else {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "unknown token");
            };
            if owner != client_id || resource.as_deref() != Some(bound.as_str()) {
                return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "mismatch");
            }
            Json(s.issue(&client_id, &bound, &scopes)).into_response()
        }
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "unsupported",
        ),
    }
}

async fn serve(listener: tokio::net::TcpListener, router: Router, stop: CancellationToken) {
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
}

pub struct AuthServer {
    pub url: String,
    pub state: Arc<AsState>,
    stop: CancellationToken,
}

impl AuthServer {
    pub async fn start(config: AsConfig) -> AuthServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(AsState {
            config,
            base: url.clone(),
            books: Mutex::default(),
            counter: AtomicUsize::new(1),
        });
        let router = Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(state.clone());
        let stop = CancellationToken::new();
        serve(listener, router, stop.clone()).await;
        AuthServer { url, state, stop }
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What the protected MCP server demands.
#[derive(Debug, Clone, Default)]
pub struct RsConfig {
    /// `scopes_supported` in its protected resource metadata.
    pub scopes_supported: Option<Vec<String>>,
    /// `scope` in its 401 challenge.
    pub challenge_scope: Option<String>,
    /// Scopes `tools/call` needs beyond a valid token (403 `insufficient_scope` otherwise).
    pub call_scopes: Vec<String>,
    /// Answer every `tools/call` with 403 `insufficient_scope` for `call_scopes`, whatever
    /// the token holds (a server no sign-in can satisfy).
    pub always_forbid_calls: bool,
}

pub struct ResourceServer {
    /// `http://127.0.0.1:P/mcp`.
    pub url: String,
    /// Requests that arrived with a token the server refused (unknown or expired).
    pub refused_tokens: Arc<AtomicUsize>,
    /// Bearer tokens that arrived, in order.
    pub presented: Arc<Mutex<Vec<String>>>,
    stop: CancellationToken,
    sessions: CancellationToken,
}

struct RsState {
    config: RsConfig,
    auth: Arc<AsState>,
    auth_url: String,
    resource: String,
    metadata_url: String,
    refused: Arc<AtomicUsize>,
    presented: Arc<Mutex<Vec<String>>>,
}

fn challenge(status: StatusCode, value: String) -> Response {
    let mut response = (status, "").into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_str(&value).unwrap(),
    );
    response
}

async fn guard(State(s): State<Arc<RsState>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let method = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_string));
    let scope_part = s
        .config
        .challenge_scope
        .as_ref()
        .map(|scope| format!(", scope=\"{scope}\""))
        .unwrap_or_default();
    let unauthorized = || {
        challenge(
            StatusCode::UNAUTHORIZED,
            format!(
                "Bearer resource_metadata=\"{}\"{scope_part}",
                s.metadata_url
            ),
        )
    };
    let token = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let Some(token) = token else {
        return unauthorized();
    };
    s.presented.lock().unwrap().push(token.clone());
    let valid = s
        .auth
        .token(&token)
        .filter(|t| t.expires > Instant::now() && t.resource == s.resource);
    let Some(valid) = valid else {
        s.refused.fetch_add(1, Ordering::SeqCst);
        return unauthorized();
    };
    if method.as_deref() == Some("tools/call")
        && (s.config.always_forbid_calls
            || !s
                .config
                .call_scopes
                .iter()
                .all(|c| valid.scopes.contains(c)))
    {
        return challenge(
            StatusCode::FORBIDDEN,
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\"",
                s.config.call_scopes.join(" "),
                s.metadata_url
            ),
        );
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

impl ResourceServer {
    /// toolgate's docs server at `/mcp`, accepting only tokens `auth` issued for it.
    pub async fn start(config: RsConfig, auth: &AuthServer) -> ResourceServer {
        let server =
            toolgate::servers::HttpServer::bind("docs", &[], "127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
        let url = server.url().to_string();
        let origin = url.trim_end_matches("/mcp").to_string();
        let (listener, docs, sessions) = server.into_parts();
        let refused = Arc::new(AtomicUsize::new(0));
        let presented = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(RsState {
            config: config.clone(),
            auth: auth.state.clone(),
            auth_url: auth.url.clone(),
            resource: url.clone(),
            metadata_url: format!("{origin}/.well-known/oauth-protected-resource/mcp"),
            refused: refused.clone(),
            presented: presented.clone(),
        });
        let guarded = docs.layer(axum::middleware::from_fn_with_state(state.clone(), guard));
        let prm_state = state.clone();
        let router = Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(move || {
                    let s = prm_state.clone();
                    async move {
                        let mut doc = json!({
                            "resource": s.resource,
                            "authorization_servers": [s.auth_url],
                        });
                        if let Some(scopes) = &s.config.scopes_supported {
                            doc["scopes_supported"] = json!(scopes);
                        }
                        Json(doc)
                    }
                }),
            )
            .merge(guarded);
        let stop = CancellationToken::new();
        let shutdown = stop.clone();
        let close_sessions = sessions.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    shutdown.cancelled().await;
                    close_sessions.cancel();
                })
                .await;
        });
        ResourceServer {
            url,
            refused_tokens: refused,
            presented,
            stop,
            sessions,
        }
    }
}

impl Drop for ResourceServer {
    fn drop(&mut self) {
        self.stop.cancel();
        self.sessions.cancel();
    }
}
