//! [`McpHub`]: every configured server and the live connections to them.
//!
//! The hub is split by job: [`registry`] knows the servers (configuration, status, live
//! connections), [`launch`] starts one (spawn or URL, handshake, timeouts), [`connect`]
//! registers it, [`relist`] follows `list_changed`, [`call`] runs tool calls,
//! [`disconnect`] ends connections and watches for crashes, [`session`] holds roots and
//! log level, [`sign_in`] OAuth; resources, tasks and the rounds of input a call may
//! need have their own files.

mod call;
mod coalesce;
mod connect;
mod connection;
mod disconnect;
mod input_required;
mod launch;
mod locks;
mod login;
mod managed;
mod registry;
mod relist;
mod resources;
mod session;
mod sign_in;
mod task_tools;
mod tasks;
mod url_required;

use crate::mcp::auth::{self, SignInMode};
use crate::mcp::roots::Roots;
use crate::mcp::types::{HubEvent, ServerStatus};
use crate::oauth::{Opener, TokenFile};
use crate::pool::ServerTools;
use crate::sandbox::{Profile, Sandbox};
use crate::settings::{DEFAULT_LOG_LEVEL, LogLevel};
use crate::settings::{ServerConfig, ServerPolicy};
use launch::{DEFAULT_PROBE_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, Launcher};
use locks::lock;
use registry::Registry;
use sign_in::SignIns;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

struct Inner {
    servers: Registry,
    events: mpsc::UnboundedSender<HubEvent>,
    launcher: Launcher,
    sign_ins: SignIns,
    roots: Roots,
    /// `[mcp] log_level`; a reload of `config.toml` may change it.
    log_level: Mutex<Option<LogLevel>>,
    /// The managed policy's server lists, read at start (decision 0082).
    managed_servers: ServerPolicy,
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
    /// The largest message a stdio server may send (`[mcp] max_message_bytes`); a bigger
    /// answer fails its call at once.
    pub max_message_bytes: usize,
    /// The managed policy's `allowed_servers` / `denied_servers`: a server they do not
    /// admit is never started or contacted.
    pub managed_servers: ServerPolicy,
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
            max_message_bytes: crate::settings::DEFAULT_MAX_MESSAGE_BYTES,
            managed_servers: ServerPolicy::default(),
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
        McpHub {
            inner: Arc::new(Inner {
                servers: Registry::new(configs, events.clone()),
                roots: Roots::new(&options.workspace),
                launcher: Launcher {
                    workspace: options.workspace,
                    builtin_exe: options.builtin_exe,
                    probe_timeout: options.probe_timeout,
                    startup_timeout: options.startup_timeout,
                    sandbox: options.sandbox,
                    max_message_bytes: options.max_message_bytes,
                },
                sign_ins: SignIns::new(
                    options.sign_in,
                    options.opener,
                    options.sign_in_timeout,
                    options.token_file,
                    events.clone(),
                ),
                log_level: Mutex::new(options.log_level),
                managed_servers: options.managed_servers,
                events,
            }),
        }
    }

    /// Names of all configured servers, in configuration order.
    pub fn configured(&self) -> Vec<String> {
        self.inner.servers.configured()
    }

    pub fn config(&self, name: &str) -> Option<ServerConfig> {
        self.inner.servers.config(name)
    }

    /// The configured servers, in configuration order.
    pub fn configs(&self) -> Vec<ServerConfig> {
        self.inner.servers.configs()
    }

    /// Replaces the configured servers with `configs` (a reloaded configuration). Live
    /// connections are not touched: the caller disconnects removed and changed servers
    /// first. New names start as not connected; removed names lose their status.
    pub fn replace_configs(&self, configs: Vec<ServerConfig>) {
        self.inner.servers.replace_configs(configs);
    }

    pub fn workspace(&self) -> &Path {
        self.inner.launcher.workspace()
    }

    /// The sandbox profile a configured server runs under (for the pool panel and `/mcp`).
    pub fn sandbox_profile(&self, name: &str) -> Option<Profile> {
        Some(self.inner.launcher.profile(&self.config(name)?))
    }

    pub fn is_connected(&self, name: &str) -> bool {
        self.inner.servers.connection(name).is_some()
    }

    pub fn status(&self, name: &str) -> ServerStatus {
        self.inner.servers.status(name)
    }

    /// Servers whose connection ended this session without toolgate closing it: they
    /// crashed or exited on their own while connected. A server that never connected is
    /// not among them.
    pub fn lost_servers(&self) -> Vec<String> {
        self.inner.servers.lost()
    }

    /// The last lines of a server's stderr (empty for HTTP servers or never started).
    pub fn stderr_tail(&self, name: &str) -> Vec<String> {
        self.inner.servers.stderr_tail(name)
    }

    /// Tool lists of connected servers, in connection order. Shared, not copied: the
    /// agent asks for them before every model call.
    pub fn server_tools(&self) -> Vec<Arc<ServerTools>> {
        self.inner.servers.each(|c| Some(lock(&c.tools).clone()))
    }

    /// Instructions of the connected servers that gave some, in connection order.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.inner
            .servers
            .each(|c| Some((c.name.clone(), c.instructions.clone()?)))
    }
}
