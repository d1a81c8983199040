//! Starting one server: spawn it (stdio) or open its URL (Streamable HTTP), handshake in
//! either protocol era within the probe and startup timeouts, and list its tools to the
//! last page. What comes out is a [`Connection`], not yet registered anywhere.

use super::connection::{Connection, Service, shut};
use super::task_tools::{self, ListingSniffer, TaskTools};
use crate::mcp::auth::{self, Challenge, ServerAuth};
use crate::mcp::catalog::declared;
use crate::mcp::errors;
use crate::mcp::handler::{HubClient, ProgressRoutes};
use crate::mcp::listing::list_all_tools;
use crate::mcp::oversize::OversizeGuard;
use crate::mcp::spawn::{spawn_stdio, stop_child};
use crate::mcp::stderr::StderrTail;
use crate::mcp::transport::GuardedTransport;
use crate::pool::ServerTools;
use crate::sandbox::{Profile, Sandbox};
use crate::settings::{ServerConfig, ServerTransport};
use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// How long a server may take from spawn to a listed tool set.
pub(super) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// The `server/discover` probe: long enough for a busy machine, short enough that a
/// legacy server that ignores unknown methods does not stall every connect.
pub(super) const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// What starting a server needs besides its configuration.
pub(super) struct Launcher {
    /// Working directory of stdio servers (relative `cwd` entries resolve against it).
    pub(super) workspace: PathBuf,
    pub(super) builtin_exe: PathBuf,
    pub(super) probe_timeout: Duration,
    pub(super) startup_timeout: Duration,
    pub(super) sandbox: Sandbox,
    /// The largest stdio message (`[mcp] max_message_bytes`).
    pub(super) max_message_bytes: usize,
}

/// Why starting a server failed, and whether a sign-in could change that.
pub(super) struct StartFailure {
    pub(super) reason: String,
    pub(super) challenge: Option<Challenge>,
    /// The discover probe timed out and the fallback failed: worth one discover-only try.
    retry_discover: bool,
}

impl StartFailure {
    pub(super) fn plain(reason: impl Into<String>) -> StartFailure {
        StartFailure {
            reason: reason.into(),
            challenge: None,
            retry_discover: false,
        }
    }
}

/// Makes the handler of one connection attempt.
pub(super) type MakeClient<'a> = dyn Fn() -> HubClient + Send + Sync + 'a;

/// A finished handshake: the service and what was made for it.
struct Handshake {
    service: Service,
    child: Option<crate::children::GroupChild>,
    closed: watch::Receiver<bool>,
    progress: ProgressRoutes,
    task_tools: TaskTools,
}

impl Launcher {
    pub(super) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The sandbox profile a configured server runs under.
    pub(super) fn profile(&self, config: &ServerConfig) -> Profile {
        self.sandbox.server_profile(config, &self.workspace)
    }

    /// Starts the server and lists its tools. `client` makes what answers the server's
    /// requests (a fresh one per attempt).
    pub(super) async fn start(
        &self,
        config: &ServerConfig,
        stderr: &StderrTail,
        auth: Option<&ServerAuth>,
        client: &MakeClient<'_>,
    ) -> Result<Arc<Connection>, StartFailure> {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::LATEST],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        };
        let mut stderr = stderr.clone();
        let handshake = match self.handshake(config, &stderr, auto, auth, client).await {
            Ok(handshake) => handshake,
            // The probe gave up and the fallback `initialize` failed too: the server may
            // speak only the new era and have been slow to answer. Start it again without
            // the probe; if that fails as well, the first failure is the one to report.
            Err(first) if first.retry_discover && first.challenge.is_none() => {
                let discover = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                };
                let retry_stderr = StderrTail::default();
                let handshake = self
                    .handshake(config, &retry_stderr, discover, auth, client)
                    .await
                    .map_err(|_| first)?;
                stderr = retry_stderr;
                handshake
            }
            Err(failure) => return Err(failure),
        };
        let Handshake {
            service,
            child,
            closed,
            progress,
            task_tools,
        } = handshake;
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
            list_all_tools(&peer),
        )
        .await;
        let tools = match listed {
            Ok(Ok(listing)) => ServerTools::filtered(
                &config.name,
                task_tools::with_tasks(&listing.tools, &task_tools),
                &crate::pool::ToolFilter::of(&config.pool),
            )
            .with_unreadable(listing.invalid),
            Ok(Err(e)) => {
                // A server may let anyone initialize and ask for a token only from here on.
                let challenge = auth.and_then(|_| auth::in_service_error(&e));
                let reason = errors::service_error(&e);
                shut(Some(service), child).await;
                return Err(StartFailure {
                    reason: format!("tools/list failed: {reason}"),
                    challenge,
                    retry_discover: false,
                });
            }
            Err(_) => {
                shut(Some(service), child).await;
                return Err(StartFailure::plain("tools/list timed out"));
            }
        };
        let catalog = declared(&config.name, &peer);
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
            closed,
            instructions,
            logging,
            task_tools,
        }))
    }

    async fn handshake(
        &self,
        config: &ServerConfig,
        stderr: &StderrTail,
        lifecycle: ClientLifecycleMode,
        auth: Option<&ServerAuth>,
        client: &MakeClient<'_>,
    ) -> Result<Handshake, StartFailure> {
        let task_tools = TaskTools::default();
        let (closed_tx, closed) = watch::channel(false);
        let (close_tx, close_rx) = oneshot::channel();
        tokio::spawn(async move {
            let _ = close_rx.await;
            let _ = closed_tx.send(true);
        });
        let handler = client();
        let progress = handler.progress.clone();
        let probe_timeout =
            matches!(lifecycle, ClientLifecycleMode::Auto { .. }).then_some(self.probe_timeout);
        let handshake_failed = |e: &ClientInitializeError, timed_out: bool| StartFailure {
            reason: format!("handshake failed: {}", errors::init_error(e)),
            challenge: auth.and_then(|_| auth::in_init_error(e)),
            retry_discover: timed_out,
        };
        if let ServerTransport::Http { url, headers, .. } = &config.transport {
            let served = match auth {
                Some(auth) => {
                    let transport = auth
                        .transport(headers)
                        .map_err(|bad| StartFailure::plain(bad.to_string()))?;
                    serve(handler, transport, probe_timeout, close_tx, lifecycle).await
                }
                None => {
                    let transport = http_transport(url, headers)
                        .map_err(|bad| StartFailure::plain(bad.to_string()))?;
                    serve(handler, transport, probe_timeout, close_tx, lifecycle).await
                }
            };
            let service = served.map_err(|(e, timed_out)| handshake_failed(&e, timed_out))?;
            return Ok(Handshake {
                service,
                child: None,
                closed,
                progress,
                task_tools,
            });
        }
        let spawned = spawn_stdio(config, &self.workspace, &self.builtin_exe, &self.sandbox)
            .map_err(|refused| StartFailure::plain(refused.to_string()))?;
        stderr.spawn_reader(config.name.clone(), spawned.stderr);
        let child = spawned.process;
        // Lines over the limit never reach rmcp (which would drop them silently): the
        // guard answers their request with an error naming the size and the limit.
        let limit = self.max_message_bytes;
        let stdout = OversizeGuard::new(spawned.stdout, limit, &config.name);
        let stdout = ListingSniffer::new(stdout, task_tools.clone());
        let transport = AsyncRwTransport::new_client(stdout, spawned.stdin)
            .with_max_line_length(limit.saturating_add(1));
        match serve(handler, transport, probe_timeout, close_tx, lifecycle).await {
            Ok(service) => Ok(Handshake {
                service,
                child: Some(child),
                closed,
                progress,
                task_tools,
            }),
            Err((e, retry)) => {
                // Did it die on its own, or are we the ones stopping it?
                let exited = child
                    .wait_exit(Duration::from_millis(100))
                    .await
                    .filter(|status| !status.success());
                stop_child(child).await;
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

/// The handshake over one transport; a failure says whether the discover probe had
/// timed out first.
async fn serve<T>(
    handler: HubClient,
    transport: T,
    probe_timeout: Option<Duration>,
    on_close: oneshot::Sender<()>,
    lifecycle: ClientLifecycleMode,
) -> Result<Service, (ClientInitializeError, bool)>
where
    T: Transport<RoleClient> + Send + 'static,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    let transport = GuardedTransport::new(transport, probe_timeout, on_close);
    let timed_out = transport.probe_timed_out();
    handler
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|e| (e, timed_out.load(Ordering::SeqCst)))
}

fn http_transport(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, auth::BadHeader> {
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
