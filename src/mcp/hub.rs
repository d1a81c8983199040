//! [`McpHub`]: every configured server and the live connections to them.

mod input_required;
mod reload;
mod resources;
mod sign_in;
mod tasks;
mod url_required;

pub use resources::CompletionTarget;

use super::auth::{self, Challenge, MAX_SIGN_INS, ServerAuth, SignInMode};
use super::convert::{call_output, tool_info, unlistable_tools};
use super::errors;
use super::handler::{HubClient, ListChangedHook, ProgressRoutes};
use super::roots::Roots;
use super::spawn::{MAX_STDIO_LINE, spawn_stdio, stop_child};
use super::stderr::StderrTail;
use super::transport::GuardedTransport;
use super::{CallOutput, HubEvent, McpError, ProgressUpdate, ServerStatus};
use crate::oauth::{Opener, TokenFile};
use crate::pool::{McpToolInfo, ServerTools};
use crate::sandbox::{Profile, Sandbox};
use crate::settings::{DEFAULT_LOG_LEVEL, LogLevel};
use crate::settings::{ServerConfig, ServerTransport};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, CustomRequest, CustomResult, ProtocolVersion, ServerResult,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// How long a server may take from spawn to a listed tool set.
const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// The `server/discover` probe: long enough for a busy machine, short enough that a
/// legacy server that ignores unknown methods does not stall every connect.
const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Connection {
    name: String,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, HubClient>>>,
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
    /// The current listing, prepared for the pool once per tools/list and shared from then on.
    tools: Mutex<Arc<ServerTools>>,
    /// Resources, templates and prompts as last listed (`resources.rs`).
    catalog: Mutex<Arc<super::catalog::Catalog>>,
    protocol: String,
    stderr: StderrTail,
    progress: ProgressRoutes,
    call_timeout: Duration,
    /// An HTTP server can fail one request and answer the next (a restart, a proxy blip);
    /// a failed request there is not the end of the connection as a closed pipe is.
    over_http: bool,
    /// Set when we close it on purpose, so the watcher does not report a failure.
    closing: AtomicBool,
    /// Becomes true when the transport ends (server exited, crashed, closed stdout).
    closed: watch::Receiver<bool>,
    /// The `instructions` of its initialize result (the server's own words).
    instructions: Option<String>,
    /// It declared the `logging` capability.
    logging: bool,
    /// Tools this server wants called as tasks (`execution.taskSupport: "required"`).
    task_tools: tasks::TaskTools,
}

struct Inner {
    /// Replaced whole when the configuration is reloaded (`replace_configs`).
    configs: Mutex<Vec<ServerConfig>>,
    events: mpsc::UnboundedSender<HubEvent>,
    /// Connected servers in connection order (the pool keeps that order).
    connections: Mutex<Vec<Arc<Connection>>>,
    statuses: Mutex<HashMap<String, ServerStatus>>,
    /// One connect or disconnect at a time *per server*: a double connect must not start
    /// two processes, while different servers start in parallel.
    lifecycle: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Servers whose `list_changed` arrived while they were still connecting.
    relist_pending: Mutex<std::collections::HashSet<String>>,
    workspace: PathBuf,
    builtin_exe: PathBuf,
    probe_timeout: Duration,
    startup_timeout: Duration,
    sandbox: Sandbox,
    /// OAuth state of HTTP servers, made on their first connect and kept across reconnects.
    auth: tokio::sync::Mutex<HashMap<String, Arc<ServerAuth>>>,
    sign_in: SignInMode,
    opener: Opener,
    sign_in_timeout: Duration,
    token_file: Option<TokenFile>,
    roots: Roots,
    /// `[mcp] log_level`; a reload of `config.toml` may change it.
    log_level: Mutex<Option<LogLevel>>,
    /// Per server, so its handler and its calls' `input_required` rounds share one bound.
    elicitors: Mutex<HashMap<String, super::elicitation::Elicitor>>,
}

/// Why starting a server failed, and whether a sign-in could change that.
struct StartFailure {
    reason: String,
    challenge: Option<Challenge>,
    /// The discover probe timed out and the fallback failed: worth one discover-only try.
    retry_discover: bool,
}

impl StartFailure {
    fn plain(reason: impl Into<String>) -> StartFailure {
        StartFailure {
            reason: reason.into(),
            challenge: None,
            retry_discover: false,
        }
    }
}

/// All configured servers and the live connections. Cheap to clone (shared inside).
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

/// Options beyond the server list; defaults suit the console.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// Working directory of stdio servers (relative `cwd` entries resolve against it).
    pub workspace: PathBuf,
    /// The executable that runs `serve docs|deploy|fs`; normally this very binary.
    pub builtin_exe: PathBuf,
    pub probe_timeout: Duration,
    pub startup_timeout: Duration,
    /// Profiles and environment of stdio servers (`[sandbox]` settings, kernel status).
    pub sandbox: Sandbox,
    /// Whom to ask before signing in to a server that wants OAuth.
    pub sign_in: SignInMode,
    /// How the sign-in page is opened (default: `$BROWSER`, else xdg-open).
    pub opener: Opener,
    /// How long a sign-in may wait for the person (their answer, then the browser).
    pub sign_in_timeout: Duration,
    /// Where tokens are kept; None: `state_dir/oauth/tokens.json`.
    pub token_file: Option<TokenFile>,
    /// The level asked of servers that declare `logging` (`logging/setLevel`); None
    /// leaves them at their own default.
    pub log_level: Option<LogLevel>,
}

impl Default for HubOptions {
    fn default() -> Self {
        HubOptions {
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            builtin_exe: default_builtin_exe(),
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            sandbox: Sandbox::default(),
            sign_in: SignInMode::default(),
            opener: Opener::System,
            sign_in_timeout: auth::sign_in_timeout_from_env(),
            token_file: None,
            log_level: Some(DEFAULT_LOG_LEVEL),
        }
    }
}

/// `$TOOLGATE_EXE` (tests and benches, whose own executable is not toolgate), else us.
fn default_builtin_exe() -> PathBuf {
    std::env::var_os("TOOLGATE_EXE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("toolgate"))
}

impl McpHub {
    pub fn new(configs: Vec<ServerConfig>, events: mpsc::UnboundedSender<HubEvent>) -> Self {
        Self::with_options(configs, events, HubOptions::default())
    }

    pub fn with_options(
        configs: Vec<ServerConfig>,
        events: mpsc::UnboundedSender<HubEvent>,
        options: HubOptions,
    ) -> Self {
        let statuses = configs
            .iter()
            .map(|c| (c.name.clone(), ServerStatus::Idle))
            .collect();
        McpHub {
            inner: Arc::new(Inner {
                configs: Mutex::new(configs),
                events,
                connections: Mutex::new(Vec::new()),
                statuses: Mutex::new(statuses),
                lifecycle: Mutex::new(HashMap::new()),
                relist_pending: Mutex::new(Default::default()),
                workspace: options.workspace.clone(),
                builtin_exe: options.builtin_exe,
                probe_timeout: options.probe_timeout,
                startup_timeout: options.startup_timeout,
                sandbox: options.sandbox,
                auth: tokio::sync::Mutex::new(HashMap::new()),
                sign_in: options.sign_in,
                opener: options.opener,
                sign_in_timeout: options.sign_in_timeout,
                roots: Roots::new(&options.workspace),
                token_file: options.token_file,
                log_level: Mutex::new(options.log_level),
                elicitors: Mutex::default(),
            }),
        }
    }

    /// Names of all configured servers, in configuration order.
    pub fn configured(&self) -> Vec<String> {
        lock(&self.inner.configs)
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    pub fn config(&self, name: &str) -> Option<ServerConfig> {
        lock(&self.inner.configs)
            .iter()
            .find(|c| c.name == name)
            .cloned()
    }

    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// The session's roots: the workspace first, then the folders added since.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.inner.roots.list()
    }

    /// Adds a root and, when it is new, sends `notifications/roots/list_changed` to every
    /// connected server. Returns the canonical folder and how many servers were told
    /// (None when it was a root already).
    pub async fn add_root(&self, dir: &Path) -> Result<(PathBuf, Option<usize>), String> {
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.inner.workspace.join(dir)
        };
        let (added, canonical) = self.inner.roots.add(&dir)?;
        if !added {
            return Ok((canonical, None));
        }
        let peers: Vec<Peer<RoleClient>> = lock(&self.inner.connections)
            .iter()
            .map(|c| c.peer.clone())
            .collect();
        let told = futures::future::join_all(peers.iter().map(|peer| async move {
            tokio::time::timeout(Duration::from_secs(2), peer.notify_roots_list_changed())
                .await
                .is_ok_and(|sent| sent.is_ok())
        }))
        .await;
        Ok((canonical, Some(told.into_iter().filter(|ok| *ok).count())))
    }

    /// Sets `[mcp] log_level` for this session: servers that connect later get it, and the
    /// connected ones that log are sent `logging/setLevel` now. `None` (`off`) sends
    /// nothing (the protocol has no "stop logging"; their messages are then not shown).
    /// Returns how many servers were told.
    pub fn set_log_level(&self, level: Option<LogLevel>) -> usize {
        *lock(&self.inner.log_level) = level;
        let Some(level) = level else {
            return 0;
        };
        let logging: Vec<(Peer<RoleClient>, String)> = lock(&self.inner.connections)
            .iter()
            .filter(|c| c.logging)
            .map(|c| (c.peer.clone(), c.name.clone()))
            .collect();
        for (peer, server) in &logging {
            tokio::spawn(set_log_level(peer.clone(), server.clone(), level));
        }
        logging.len()
    }

    /// Instructions of the connected servers that gave some, in connection order.
    pub fn instructions(&self) -> Vec<(String, String)> {
        lock(&self.inner.connections)
            .iter()
            .filter_map(|c| Some((c.name.clone(), c.instructions.clone()?)))
            .collect()
    }

    /// The sandbox profile a configured server runs under (for the pool panel and `/mcp`).
    pub fn sandbox_profile(&self, name: &str) -> Option<Profile> {
        let config = self.config(name)?;
        Some(
            self.inner
                .sandbox
                .server_profile(&config, &self.inner.workspace),
        )
    }

    fn connection(&self, name: &str) -> Option<Arc<Connection>> {
        lock(&self.inner.connections)
            .iter()
            .find(|c| c.name == name)
            .cloned()
    }

    pub fn is_connected(&self, name: &str) -> bool {
        self.connection(name).is_some()
    }

    /// Tool lists of connected servers, in connection order. Shared, not copied: the
    /// agent asks for them before every model call.
    pub fn server_tools(&self) -> Vec<Arc<ServerTools>> {
        lock(&self.inner.connections)
            .iter()
            .map(|c| lock(&c.tools).clone())
            .collect()
    }

    pub fn status(&self, name: &str) -> ServerStatus {
        lock(&self.inner.statuses)
            .get(name)
            .cloned()
            .unwrap_or(ServerStatus::Idle)
    }

    /// The last lines of a server's stderr (empty for HTTP servers or never started).
    pub fn stderr_tail(&self, name: &str) -> Vec<String> {
        self.connection(name)
            .map(|c| c.stderr.lines())
            .unwrap_or_else(|| match self.status(name) {
                ServerStatus::Failed { stderr_tail, .. } => stderr_tail,
                _ => Vec::new(),
            })
    }

    async fn lifecycle_lock(&self, name: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock_for_name = lock(&self.inner.lifecycle)
            .entry(name.to_string())
            .or_default()
            .clone();
        lock_for_name.lock_owned().await
    }

    fn set_status(&self, name: &str, status: ServerStatus) {
        lock(&self.inner.statuses).insert(name.to_string(), status.clone());
        let _ = self.inner.events.send(HubEvent::Status {
            server: name.to_string(),
            status,
        });
    }

    fn unknown(&self, name: &str) -> McpError {
        McpError::UnknownServer {
            name: name.to_string(),
            available: self.configured().join(", "),
        }
    }

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
        let config = self.config(name).ok_or_else(|| self.unknown(name))?;
        let _one_at_a_time = self.lifecycle_lock(name).await;
        if let Some(existing) = self.connection(name) {
            return Ok(lock(&existing.tools).tools().to_vec());
        }
        self.set_status(name, ServerStatus::Connecting);
        let stderr = StderrTail::default();
        let auth = self.server_auth(&config).await;
        let mut sign_ins = 0;
        let connection = loop {
            let seen = auth.as_ref().map(|a| a.credentials.generation());
            let started = tokio::time::timeout(
                self.inner.startup_timeout,
                self.start(&config, &stderr, auth.as_deref()),
            )
            .await;
            let failure = match started {
                Ok(Ok(connection)) => break connection,
                Ok(Err(failure)) => failure,
                Err(_) => StartFailure::plain(format!(
                    "no answer to the handshake within {} s",
                    self.inner.startup_timeout.as_secs()
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
            if self.inner.sign_in == SignInMode::Ask && !refresh_failed {
                // The person answers in their own time; the server connects afterwards and
                // nothing else waits for it.
                self.sign_in_in_background(&config, auth, challenge);
                let reason = "sign in needed: answer the sign-in request; the server connects once you have signed in";
                return Err(self.fail_start(name, reason.into(), &stderr).await);
            }
            if let Err(reason) = self.sign_in(&config, auth, challenge, seen).await {
                return Err(self.fail_start(name, reason, &stderr).await);
            }
            self.set_status(name, ServerStatus::Connecting);
        };
        let listing = lock(&connection.tools).clone();
        let tools = listing.tools().to_vec();
        let mut would_be = self.server_tools();
        would_be.push(listing);
        if let Err(reason) = accept(&would_be) {
            close_connection(&connection).await;
            self.set_status(
                name,
                ServerStatus::Failed {
                    reason: reason.clone(),
                    stderr_tail: Vec::new(),
                },
            );
            return Err(McpError::Refused {
                server: name.to_string(),
                reason,
            });
        }
        let protocol = connection.protocol.clone();
        lock(&self.inner.connections).push(connection.clone());
        if lock(&connection.catalog).has_resources || lock(&connection.catalog).has_prompts {
            // Listed in the background: a slow or broken resources/list must not hold up
            // the tools, which the connect is for.
            let hub = self.clone();
            let server = name.to_string();
            tokio::spawn(async move { hub.refresh_catalog(&server).await });
        }
        if lock(&self.inner.relist_pending).remove(name) {
            let peer = connection.peer.clone();
            let hub = self.clone();
            let server = name.to_string();
            tokio::spawn(async move { hub.relist(&server, peer).await });
        }
        self.watch_for_exit(connection.clone());
        if let Some(text) = &connection.instructions {
            let _ = self.inner.events.send(HubEvent::Instructions {
                server: name.to_string(),
                text: text.clone(),
            });
        }
        if let (true, Some(level)) = (connection.logging, *lock(&self.inner.log_level)) {
            // A request; on its own task so a slow answer does not hold up the connect.
            let peer = connection.peer.clone();
            let server = name.to_string();
            tokio::spawn(set_log_level(peer, server, level));
        }
        self.set_status(
            name,
            ServerStatus::Ready {
                tools: tools.len(),
                protocol,
            },
        );
        if let Some(status) = auth.as_ref().and_then(|a| a.status()) {
            self.emit_auth(name, status);
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
        self.set_status(
            name,
            ServerStatus::Failed {
                reason: full.clone(),
                stderr_tail,
            },
        );
        McpError::Start {
            server: name.to_string(),
            reason: full,
        }
    }

    async fn start(
        &self,
        config: &ServerConfig,
        stderr: &StderrTail,
        auth: Option<&ServerAuth>,
    ) -> Result<Arc<Connection>, StartFailure> {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let mut stderr = stderr.clone();
        let (service, child, closed_rx, progress, task_tools) =
            match self.handshake(config, &stderr, auto, auth).await {
                Ok(parts) => parts,
                // The probe gave up and the fallback `initialize` failed too: the server may
                // speak only the new era and have been slow to answer. Start it again without
                // the probe; if that fails as well, the first failure is the one to report.
                Err(first) if first.retry_discover && first.challenge.is_none() => {
                    let discover = ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::LATEST],
                    };
                    let retry_stderr = StderrTail::default();
                    let parts = self
                        .handshake(config, &retry_stderr, discover, auth)
                        .await
                        .map_err(|_| first)?;
                    stderr = retry_stderr;
                    parts
                }
                Err(failure) => return Err(failure),
            };
        let peer = service.peer().clone();
        let info = peer.peer_info();
        let protocol = info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default();
        let instructions = info
            .as_ref()
            .and_then(|i| i.instructions.clone())
            .filter(|text| !text.trim().is_empty());
        let logging = info
            .as_ref()
            .is_some_and(|i| i.capabilities.logging.is_some());
        let listed = tokio::time::timeout(
            Duration::from_millis(config.call_timeout_ms),
            peer.list_all_tools(),
        )
        .await;
        let tools = match listed {
            Ok(Ok(tools)) => ServerTools::filtered(
                &config.name,
                with_tasks(&tools, &task_tools),
                &crate::pool::ToolFilter::of(&config.pool),
            ),
            Ok(Err(e)) => {
                // A server may let anyone initialize and ask for a token only from here on.
                let challenge = auth.and_then(|_| auth::in_service_error(&e));
                let reason = match e {
                    ServiceError::UnexpectedResponse => explain_unreadable_listing(&peer, config)
                        .await
                        .unwrap_or_else(|| errors::service_error(&e)),
                    _ => errors::service_error(&e),
                };
                shut(service, child).await;
                return Err(StartFailure {
                    reason: format!("tools/list failed: {reason}"),
                    challenge,
                    retry_discover: false,
                });
            }
            Err(_) => {
                shut(service, child).await;
                return Err(StartFailure::plain("tools/list timed out"));
            }
        };
        let catalog = resources::declared(&config.name, &peer);
        Ok(Arc::new(Connection {
            name: config.name.clone(),
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            child: tokio::sync::Mutex::new(child),
            tools: Mutex::new(Arc::new(tools)),
            catalog: Mutex::new(Arc::new(catalog)),
            protocol,
            stderr: stderr.clone(),
            progress,
            call_timeout: Duration::from_millis(config.call_timeout_ms),
            over_http: matches!(config.transport, ServerTransport::Http { .. }),
            closing: AtomicBool::new(false),
            closed: closed_rx,
            instructions,
            logging,
            task_tools,
        }))
    }

    #[allow(clippy::type_complexity)]
    async fn handshake(
        &self,
        config: &ServerConfig,
        stderr: &StderrTail,
        lifecycle: ClientLifecycleMode,
        auth: Option<&ServerAuth>,
    ) -> Result<
        (
            RunningService<RoleClient, HubClient>,
            Option<tokio::process::Child>,
            watch::Receiver<bool>,
            ProgressRoutes,
            tasks::TaskTools,
        ),
        StartFailure,
    > {
        let task_tools = tasks::TaskTools::default();
        let (closed_tx, closed_rx) = watch::channel(false);
        let (close_tx, close_rx) = oneshot::channel();
        tokio::spawn(async move {
            let _ = close_rx.await;
            let _ = closed_tx.send(true);
        });
        let progress: ProgressRoutes = Arc::default();
        let handler = HubClient {
            server: config.name.clone(),
            events: self.inner.events.clone(),
            progress: progress.clone(),
            on_list_changed: self.list_changed_hook(&config.name),
            roots: self.inner.roots.clone(),
            sampling_waiting: Arc::default(),
            elicitor: self.elicitor(&config.name),
            on_catalog_changed: self.catalog_changed_hook(&config.name),
        };
        let probe_timeout = matches!(lifecycle, ClientLifecycleMode::Auto { .. })
            .then_some(self.inner.probe_timeout);
        let handshake_failed =
            |e: &rmcp::service::ClientInitializeError, timed_out: bool| StartFailure {
                reason: format!("handshake failed: {}", errors::init_error(e)),
                challenge: auth.and_then(|_| auth::in_init_error(e)),
                retry_discover: timed_out,
            };
        match (&config.transport, auth) {
            (ServerTransport::Http { headers, .. }, Some(auth)) => {
                let transport = auth.transport(headers).map_err(StartFailure::plain)?;
                let transport = GuardedTransport::new(transport, probe_timeout, close_tx);
                let timed_out = transport.probe_timed_out();
                let service = handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| handshake_failed(&e, timed_out.load(Ordering::SeqCst)))?;
                Ok((service, None, closed_rx, progress, task_tools))
            }
            (ServerTransport::Http { url, headers, .. }, None) => {
                let transport = http_transport(url, headers).map_err(StartFailure::plain)?;
                let transport = GuardedTransport::new(transport, probe_timeout, close_tx);
                let timed_out = transport.probe_timed_out();
                let service = handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| handshake_failed(&e, timed_out.load(Ordering::SeqCst)))?;
                Ok((service, None, closed_rx, progress, task_tools))
            }
            _ => {
                let spawned = spawn_stdio(
                    config,
                    &self.inner.workspace,
                    &self.inner.builtin_exe,
                    &self.inner.sandbox,
                )
                .map_err(StartFailure::plain)?;
                stderr.spawn_reader(config.name.clone(), spawned.stderr);
                let mut child = spawned.child;
                let stdout = tasks::ListingSniffer::new(spawned.stdout, task_tools.clone());
                let transport = AsyncRwTransport::new_client(stdout, spawned.stdin)
                    .with_max_line_length(MAX_STDIO_LINE);
                let transport = GuardedTransport::new(transport, probe_timeout, close_tx);
                let timed_out = transport.probe_timed_out();
                match handler.serve_with_lifecycle(transport, lifecycle).await {
                    Ok(service) => Ok((service, Some(child), closed_rx, progress, task_tools)),
                    Err(e) => {
                        // Did it die on its own, or are we the ones stopping it?
                        let exited =
                            match tokio::time::timeout(Duration::from_millis(100), child.wait())
                                .await
                            {
                                Ok(Ok(status)) if !status.success() => Some(status),
                                _ => None,
                            };
                        stop_child(&mut child).await;
                        let retry = timed_out.load(Ordering::SeqCst);
                        Err(match exited {
                            Some(s) => StartFailure {
                                reason: format!("server exited during the handshake ({s})"),
                                challenge: None,
                                retry_discover: retry,
                            },
                            None => handshake_failed(&e, retry),
                        })
                    }
                }
            }
        }
    }

    /// A weak hook, so a connection's handler does not keep the hub alive.
    /// The server's elicitor, the same one across reconnects.
    fn elicitor(&self, server: &str) -> super::elicitation::Elicitor {
        lock(&self.inner.elicitors)
            .entry(server.to_string())
            .or_insert_with(|| super::elicitation::Elicitor::new(server, self.inner.events.clone()))
            .clone()
    }

    fn list_changed_hook(&self, server: &str) -> ListChangedHook {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let server = server.to_string();
        Arc::new(move |peer: Peer<RoleClient>| {
            let weak = weak.clone();
            let server = server.clone();
            tokio::spawn(async move {
                let Some(inner) = weak.upgrade() else { return };
                McpHub { inner }.relist(&server, peer).await;
            });
        })
    }

    async fn relist(&self, server: &str, peer: Peer<RoleClient>) {
        let Some(connection) = self.connection(server) else {
            // Still connecting: re-list once the connection is registered.
            if self.status(server) == ServerStatus::Connecting {
                lock(&self.inner.relist_pending).insert(server.to_string());
            }
            return;
        };
        let listed =
            match tokio::time::timeout(connection.call_timeout, peer.list_all_tools()).await {
                Ok(Ok(tools)) => with_tasks(&tools, &connection.task_tools),
                Ok(Err(e)) => {
                    tracing::warn!(server, "re-listing tools after list_changed failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::warn!(server, "re-listing tools after list_changed timed out");
                    return;
                }
            };
        let filter = self
            .config(server)
            .map_or_else(crate::pool::ToolFilter::all, |c| {
                crate::pool::ToolFilter::of(&c.pool)
            });
        let (added, removed, count) = {
            let mut current = lock(&connection.tools);
            let (added, removed) = name_changes(current.listed(), &listed);
            let changed = !added.is_empty() || !removed.is_empty() || current.listed() != listed;
            if !changed {
                return;
            }
            *current = Arc::new(ServerTools::filtered(server, listed, &filter));
            (added, removed, current.tools().len())
        };
        self.set_status(
            server,
            ServerStatus::Ready {
                tools: count,
                protocol: connection.protocol.clone(),
            },
        );
        let _ = self.inner.events.send(HubEvent::ToolsChanged {
            server: server.to_string(),
            added,
            removed,
        });
    }

    /// When a server's stream ends without us closing it, it crashed or exited: report it
    /// with its exit status and stderr, and drop it from the pool.
    fn watch_for_exit(&self, connection: Arc<Connection>) {
        let hub = self.clone();
        let mut closed = connection.closed.clone();
        tokio::spawn(async move {
            while !*closed.borrow() {
                if closed.changed().await.is_err() {
                    break;
                }
            }
            if connection.closing.load(Ordering::SeqCst) {
                return;
            }
            lock(&hub.inner.connections).retain(|c| !Arc::ptr_eq(c, &connection));
            let exit = {
                let mut child = connection.child.lock().await;
                match child.as_mut() {
                    Some(child) => {
                        match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
                            Ok(Ok(status)) => Some(status.to_string()),
                            _ => {
                                let _ = child.kill().await;
                                None
                            }
                        }
                    }
                    None => None,
                }
            };
            // Let the stderr reader drain what the process wrote before dying.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let reason = match exit {
                Some(status) => format!("server exited ({status})"),
                None => "connection closed by the server".to_string(),
            };
            hub.set_status(
                &connection.name,
                ServerStatus::Failed {
                    reason,
                    stderr_tail: connection.stderr.lines(),
                },
            );
        });
    }

    pub async fn disconnect(&self, name: &str) -> Result<(), McpError> {
        if self.config(name).is_none() {
            return Err(self.unknown(name));
        }
        let _one_at_a_time = self.lifecycle_lock(name).await;
        let connection = {
            let mut connections = lock(&self.inner.connections);
            let found = connections.iter().position(|c| c.name == name);
            found.map(|i| connections.remove(i))
        };
        let Some(connection) = connection else {
            return Err(McpError::NotConnected(name.to_string()));
        };
        close_connection(&connection).await;
        self.set_status(name, ServerStatus::Disconnected { reason: None });
        Ok(())
    }

    /// Calls `tool` (raw name) on `server`. Honors the per-server timeout; on `cancel` (or
    /// timeout) sends `notifications/cancelled`, and late progress or results for the call
    /// are dropped. JSON-RPC errors come back as `is_error` outputs, like `isError` results.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
        progress: Option<mpsc::UnboundedSender<ProgressUpdate>>,
        cancel: CancellationToken,
    ) -> Result<CallOutput, McpError> {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Ok(CallOutput {
                    text: format!("tool arguments must be a JSON object, got {other}"),
                    is_error: true,
                    images: Vec::new(),
                });
            }
        };
        let mut sign_ins = 0;
        loop {
            let connection = match self.connection(server) {
                Some(c) => c,
                None if self.config(server).is_none() => return Err(self.unknown(server)),
                None => return Err(McpError::NotConnected(server.to_string())),
            };
            let auth = match connection.over_http {
                true => self.inner.auth.lock().await.get(server).cloned(),
                false => None,
            };
            let seen = auth.as_ref().map(|a| a.credentials.generation());
            if lock(&connection.task_tools).contains(tool) {
                return self
                    .call_as_task(&connection, tool, arguments, progress, &cancel)
                    .await;
            }
            let attempt = self
                .call_once(
                    &connection,
                    tool,
                    arguments.clone(),
                    progress.clone(),
                    &cancel,
                    None,
                )
                .await;
            let (error, challenge) = match attempt {
                // A tool whose listing toolgate could not read raw (HTTP) and that must
                // run as a task: from now on it does.
                Ok(output) if output.is_error && tasks::refuses_plain_call(&output.text) => {
                    lock(&connection.task_tools).insert(tool.to_string());
                    return self
                        .call_as_task(&connection, tool, arguments, progress, &cancel)
                        .await;
                }
                Ok(output) => return Ok(output),
                Err(failed) => failed,
            };
            // The server refused the token (401) or wants more scopes (403): sign in and
            // send the call again. It was refused before it ran, so a retry is safe.
            let (Some(challenge), Some(auth)) = (challenge, auth) else {
                return Err(error);
            };
            if sign_ins == MAX_SIGN_INS {
                return Err(error);
            }
            sign_ins += 1;
            let config = self.config(server).ok_or_else(|| self.unknown(server))?;
            let signed_in = tokio::select! {
                result = self.sign_in(&config, &auth, &challenge, seen) => result,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            };
            if let Err(message) = signed_in {
                return Err(McpError::Protocol {
                    server: server.to_string(),
                    message,
                });
            }
        }
    }

    /// One `tools/call`. A failure comes with the authorization challenge behind it, if any.
    async fn call_once(
        &self,
        connection: &Arc<Connection>,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::UnboundedSender<ProgressUpdate>>,
        cancel: &CancellationToken,
        retry: Option<input_required::Retry>,
    ) -> Result<CallOutput, (McpError, Option<Challenge>)> {
        let server = connection.name.as_str();
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments.clone();
        let round = retry.as_ref().map_or(0, |r| r.round);
        if let Some(retry) = retry {
            params.input_responses = retry.responses;
            params.request_state = retry.state;
        }
        let progress_again = progress.clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = connection
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.transport_failure(connection, e))?;
        let token = handle.progress_token.clone();
        if let Some(progress) = progress {
            lock(&connection.progress).insert(
                token.clone(),
                super::handler::ProgressRoute {
                    sender: progress,
                    last: None,
                },
            );
        }
        let _route = RouteGuard {
            routes: connection.progress.clone(),
            token,
        };
        let mut closed = connection.closed.clone();
        let elicitor = self.elicitor(server);
        let outcome = tokio::select! {
            response = &mut handle.rx => match response {
                Ok(Ok(ServerResult::CallToolResult(result))) => Ok(call_output(&result)),
                Ok(Ok(ServerResult::InputRequiredResult(required))) => {
                    match self.fulfil_input(connection, required, cancel, round + 1).await {
                        Ok(next) => Box::pin(self.call_once(
                            connection, tool, arguments, progress_again, cancel, Some(next),
                        ))
                        .await,
                        Err(e) => Err((e, None)),
                    }
                }
                Ok(Ok(other)) => Err((McpError::Protocol {
                    server: server.to_string(),
                    message: format!("unexpected answer to tools/call: {}", short_debug(&other)),
                }, None)),
                Ok(Err(ServiceError::McpError(error)))
                    if error.code.0 == crate::mcp::url_elicitation::URL_ELICITATION_REQUIRED
                        && round < input_required::MAX_INPUT_ROUNDS =>
                {
                    match self
                        .visit_required_pages(server, &error, progress_again.as_ref(), cancel)
                        .await
                    {
                        Ok(url_required::PagesVisited::Done) => {
                            let again = input_required::Retry {
                                responses: None,
                                state: None,
                                round: round + 1,
                            };
                            Box::pin(self.call_once(
                                connection, tool, arguments, progress_again, cancel, Some(again),
                            ))
                            .await
                        }
                        Ok(url_required::PagesVisited::Refused(text)) => Ok(CallOutput {
                            text,
                            is_error: true,
                            images: Vec::new(),
                        }),
                        Err(e) => Err((e, None)),
                    }
                }
                Ok(Err(ServiceError::McpError(error))) => Ok(CallOutput {
                    text: format!("MCP error {}: {}", error.code.0, error.message),
                    is_error: true,
                    images: Vec::new(),
                }),
                Ok(Err(e)) => Err(self.transport_failure(connection, e)),
                Err(_) => Err((self.disconnected(connection).await, None)),
            },
            _ = wait_closed(&mut closed) => Err((self.disconnected(connection).await, None)),
            // A server waiting for the person's answer is not a server that hangs.
            () = elicitor.timeout_unless_asking(connection.call_timeout) => {
                send_cancel(&connection.peer, handle.id.clone(), "timeout").await;
                Err((McpError::Timeout {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    seconds: connection.call_timeout.as_secs().max(1),
                }, None))
            }
            _ = cancel.cancelled() => {
                send_cancel(&connection.peer, handle.id.clone(), "cancelled by the user").await;
                Err((McpError::Cancelled, None))
            }
        };
        outcome
    }

    fn transport_failure(
        &self,
        connection: &Connection,
        e: ServiceError,
    ) -> (McpError, Option<Challenge>) {
        let challenge = connection
            .over_http
            .then(|| auth::in_service_error(&e))
            .flatten();
        (self.transport_error(connection, e), challenge)
    }

    fn transport_error(&self, connection: &Connection, e: ServiceError) -> McpError {
        let reason = errors::service_error(&e);
        if connection.over_http {
            McpError::Protocol {
                server: connection.name.clone(),
                message: format!("the request failed: {reason}"),
            }
        } else {
            McpError::Disconnected {
                server: connection.name.clone(),
                reason,
            }
        }
    }

    async fn disconnected(&self, connection: &Connection) -> McpError {
        // The watcher reports the exit status; give it a moment so the reason is complete.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let reason = match self.status(&connection.name) {
            ServerStatus::Failed { reason, .. } => reason,
            _ => "the connection closed during the call".to_string(),
        };
        let tail = connection.stderr.lines();
        McpError::Disconnected {
            server: connection.name.clone(),
            reason: match tail.last() {
                Some(last) => format!("{reason}; last stderr line: {last}"),
                None => reason,
            },
        }
    }

    /// Closes every connection (stdin closed, wait, then terminate): no orphans.
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> = std::mem::take(&mut *lock(&self.inner.connections));
        let closing = connections.iter().map(|c| close_connection(c));
        futures::future::join_all(closing).await;
        for c in &connections {
            self.set_status(&c.name, ServerStatus::Disconnected { reason: None });
        }
    }
}

/// `logging/setLevel` (deprecated by the newest spec, still what 2025-11-25 servers take).
#[allow(deprecated)]
async fn set_log_level(peer: Peer<RoleClient>, server: String, level: LogLevel) {
    let params = rmcp::model::SetLevelRequestParams::new(level.to_mcp());
    match tokio::time::timeout(Duration::from_secs(10), peer.set_level(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(server, "logging/setLevel failed: {e}"),
        Err(_) => tracing::warn!(server, "logging/setLevel timed out"),
    }
}

/// The listing for the pool, task-required tools marked (the raw listing passed the
/// sniffer before rmcp decoded it, so the set is up to date).
fn with_tasks(tools: &[rmcp::model::Tool], task_tools: &tasks::TaskTools) -> Vec<McpToolInfo> {
    let required = lock(task_tools);
    tools
        .iter()
        .map(|tool| {
            let mut info = tool_info(tool);
            info.claims.task_required = required.contains(&info.name);
            info
        })
        .collect()
}

struct RouteGuard {
    routes: ProgressRoutes,
    token: rmcp::model::ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        lock(&self.routes).remove(&self.token);
    }
}

async fn wait_closed(closed: &mut watch::Receiver<bool>) {
    while !*closed.borrow() {
        if closed.changed().await.is_err() {
            // The sender lives as long as the transport; gone means closed.
            return;
        }
    }
}

async fn send_cancel(peer: &Peer<RoleClient>, id: rmcp::model::RequestId, reason: &str) {
    let notification = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.to_string()),
    ));
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        peer.send_notification(notification.into()),
    )
    .await;
}

async fn close_connection(connection: &Connection) {
    connection.closing.store(true, Ordering::SeqCst);
    let service = connection.service.lock().await.take();
    let child = connection.child.lock().await.take();
    shut_parts(service, child).await;
}

async fn shut(
    service: RunningService<RoleClient, HubClient>,
    child: Option<tokio::process::Child>,
) {
    shut_parts(Some(service), child).await;
}

async fn shut_parts(
    service: Option<RunningService<RoleClient, HubClient>>,
    child: Option<tokio::process::Child>,
) {
    if let Some(mut service) = service {
        // Cancelling the service closes the transport, which closes the server's stdin.
        let _ = service.close_with_timeout(Duration::from_secs(2)).await;
    }
    if let Some(mut child) = child {
        stop_child(&mut child).await;
    }
}

fn http_transport(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            let token = value.strip_prefix("Bearer ").unwrap_or(value);
            config = config.auth_header(token.to_string());
        }
    }
    Ok(StreamableHttpClientTransport::from_config(
        config.custom_headers(auth::custom_headers(headers)?),
    ))
}

fn short_debug(value: &impl std::fmt::Debug) -> String {
    let text = format!("{value:?}");
    text.chars().take(200).collect()
}

/// Asks for the first page of tools/list again, untyped, to say which tool made the typed
/// listing unreadable.
async fn explain_unreadable_listing(
    peer: &Peer<RoleClient>,
    config: &ServerConfig,
) -> Option<String> {
    let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", None));
    let answer = tokio::time::timeout(
        Duration::from_millis(config.call_timeout_ms),
        peer.send_request(request),
    )
    .await;
    match answer {
        Ok(Ok(ServerResult::CustomResult(CustomResult(raw)))) => unlistable_tools(&raw),
        _ => None,
    }
}

/// Raw names in `new` but not in `old` (added) and in `old` but not in `new` (removed), each
/// in listing order. Sets, not nested scans: a server may list thousands of tools.
fn name_changes(old: &[McpToolInfo], new: &[McpToolInfo]) -> (Vec<String>, Vec<String>) {
    let old_names: HashSet<&str> = old.iter().map(|t| t.name.as_str()).collect();
    let new_names: HashSet<&str> = new.iter().map(|t| t.name.as_str()).collect();
    let added = new
        .iter()
        .filter(|t| !old_names.contains(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    let removed = old
        .iter()
        .filter(|t| !new_names.contains(t.name.as_str()))
        .map(|t| t.name.clone())
        .collect();
    (added, removed)
}
