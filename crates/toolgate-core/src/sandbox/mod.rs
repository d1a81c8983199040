//! Containment for the processes toolgate starts: bash commands and stdio MCP servers.
//!
//! - An OS sandbox applied in the child between fork and exec (toolgate itself is never
//!   confined): Landlock for the file system, TCP and signals, seccomp for socket families.
//!   Everything that allocates or touches the file system (opening the allowed paths,
//!   building the ruleset and the BPF program) happens in the parent; the child only makes
//!   system calls on that data ([`Confinement::apply`]).
//! - Three levels of network ([`NetworkAccess`]): none (AF_UNIX only), the proxy (a user
//!   and network namespace of its own holding only loopback, TCP only to the listener at
//!   127.0.0.1:[`PROXY_PORT`] that toolgate takes back with
//!   [`Confinement::take_proxy_listener`]; decision 0099), or the whole network.
//! - An environment without secrets ([`env`]).
//! - Fail closed: a profile the kernel cannot enforce is refused with the reason
//!   ([`SandboxStatus::check`]), never run with less confinement than it asked for.
//!
//! [`Sandbox`] is what a session holds: its settings (from `[sandbox]` in config.toml) and
//! what the kernel offers. It turns a workspace and a server entry into [`Profile`]s.

mod confine;
mod detect;
pub mod env;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod netns;
mod profile;
#[cfg(target_os = "linux")]
mod seccomp;
mod write_trace;

pub use confine::Confinement;
pub use detect::{
    Capabilities, FORCE_UNAVAILABLE_ENV, MIN_LANDLOCK_ABI, NETWORK_PROXY_FORCE_UNAVAILABLE_ENV,
    ProxySupport, SandboxStatus,
};
#[cfg(target_os = "linux")]
pub use netns::PROXY_PORT;
/// The port the proxy listens on inside a proxied process's namespace.
#[cfg(not(target_os = "linux"))]
pub const PROXY_PORT: u16 = 3128;
pub use profile::{CREDENTIAL_PATHS, Profile, credential_paths};
pub(crate) use write_trace::Tracer;
pub use write_trace::WriteLog;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::egress::{ClientHosts, ProxyHost, ProxyRun};
use crate::protocol::{CallId, NetworkClient};

use crate::settings::{
    NetworkAccess, SandboxMode, SandboxSettings, ServerConfig, ServerNetwork, ServerTransport,
};

/// Why a process was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce the profile (or the switch forces that answer).
    #[error("the sandbox is unavailable: {0}")]
    Unavailable(String),
    /// Building the rules failed.
    #[error("the sandbox could not be prepared: {0}")]
    Prepare(String),
    /// The proxy listener of a proxied process did not come back.
    #[error("the proxied process's listener was not handed over: {0}")]
    Handover(String),
}

impl SandboxError {
    pub fn reason(&self) -> &str {
        match self {
            SandboxError::Unavailable(reason)
            | SandboxError::Prepare(reason)
            | SandboxError::Handover(reason) => reason,
        }
    }
}

/// What a bash call may write, from the permission mode the gate decided it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BashWrites {
    /// What `[sandbox] mode` allows (the workspace, temp dirs and `writable` by default).
    #[default]
    AsConfigured,
    /// Nothing but devices such as /dev/null, enforced by the kernel whatever the settings
    /// say (`mode = "off"` included) and whatever the call asks: plan mode.
    Nothing,
}

/// A session's sandbox: settings and the machine's status. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    settings: Arc<SandboxSettings>,
    status: Arc<SandboxStatus>,
    bash_writes: BashWrites,
    /// Who serves a proxied process's listener: the session's network gate, installed
    /// once the agent starts and shared by every clone (the hub's among them).
    proxy_host: Arc<OnceLock<Arc<dyn ProxyHost>>>,
    /// The bash call this sandbox runs (its connections are that call's).
    call: Option<CallId>,
}

impl Default for Sandbox {
    /// Default settings on this machine.
    fn default() -> Self {
        Sandbox::new(SandboxSettings::default())
    }
}

impl Sandbox {
    /// `settings` on this machine (the status is probed once per process).
    pub fn new(settings: SandboxSettings) -> Sandbox {
        Sandbox::with_status(settings, SandboxStatus::current().clone())
    }

    /// `settings` with a given status (tests; a front end that probed already).
    pub fn with_status(settings: SandboxSettings, status: SandboxStatus) -> Sandbox {
        Sandbox {
            settings: Arc::new(settings),
            status: Arc::new(status),
            bash_writes: BashWrites::AsConfigured,
            proxy_host: Arc::default(),
            call: None,
        }
    }

    /// Installs the session's proxy host (once; a second call is ignored). Until then a
    /// proxied process's listener is closed, so its connections are refused.
    pub fn set_proxy_host(&self, host: Arc<dyn ProxyHost>) {
        let _ = self.proxy_host.set(host);
    }

    /// The same sandbox for the bash call `call_id`.
    pub fn for_call(&self, call_id: &str) -> Sandbox {
        Sandbox {
            call: Some(call_id.into()),
            ..self.clone()
        }
    }

    /// The bash call this sandbox runs, if it was made for one.
    pub fn call(&self) -> Option<&CallId> {
        self.call.as_ref()
    }

    /// After a successful spawn under `confinement`: a proxied process's listener goes to
    /// the session's proxy host, which serves it for `client` until the returned run is
    /// dropped. None for a process that is not proxied, and when no proxy host is
    /// installed (the listener is closed then: every connection is refused).
    pub fn serve_proxy(
        &self,
        confinement: Option<&Confinement>,
        client: impl FnOnce() -> NetworkClient,
        hosts: ClientHosts,
    ) -> Result<Option<ProxyRun>, SandboxError> {
        let Some(confinement) = confinement.filter(|c| c.is_proxied()) else {
            return Ok(None);
        };
        let listener = confinement.take_proxy_listener()?;
        let Some(host) = self.proxy_host.get() else {
            tracing::debug!("no proxy host: a proxied process's connections are refused");
            return Ok(None);
        };
        host.serve(listener, client(), hosts)
            .map(Some)
            .map_err(|e| SandboxError::Handover(format!("serving the proxy listener: {e}")))
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    pub fn status(&self) -> &SandboxStatus {
        &self.status
    }

    /// The same sandbox with bash unconfined (the environment is still scrubbed): for a
    /// command the person allowed to run outside the sandbox. A sandbox whose bash writes
    /// [`BashWrites::Nothing`] stays read-only: leaving it is not a way out of plan mode.
    pub fn without_confinement(&self) -> Sandbox {
        let mut settings = (*self.settings).clone();
        settings.mode = SandboxMode::Off;
        Sandbox {
            settings: Arc::new(settings),
            ..self.clone()
        }
    }

    /// The same sandbox with bash writing `writes` (the gate's mode decides).
    pub fn with_bash_writes(&self, writes: BashWrites) -> Sandbox {
        Sandbox {
            bash_writes: writes,
            ..self.clone()
        }
    }

    pub fn bash_writes(&self) -> BashWrites {
        self.bash_writes
    }

    /// The profile of a bash call in `workspace`: the configured one, or read-only when
    /// the call may write nothing. A confined call's processes stay in its session, so
    /// they end with it.
    pub fn bash_profile(&self, workspace: &Path) -> Profile {
        let s = &self.settings;
        let mut profile = match self.bash_writes {
            BashWrites::AsConfigured => self.configured_bash_profile(workspace),
            // With the sandbox turned off, the network setting was never in force: plan
            // mode takes away writes, not what the person allowed besides.
            BashWrites::Nothing => {
                let network = match s.mode {
                    SandboxMode::Off => NetworkAccess::Full,
                    _ => s.network,
                };
                self.profile(SandboxMode::ReadOnly, network, Vec::new(), workspace)
            }
        };
        profile.keep_in_session = profile.is_confined();
        profile
    }

    /// The profile of a sandboxed hook: `[sandbox]` as configured, in every mode. Hooks
    /// are the person's own commands, not the model's: plan mode does not narrow them, and
    /// a hook may start a process meant to outlive it (its group is still stopped when it
    /// ends, as before).
    pub fn hook_profile(&self, workspace: &Path) -> Profile {
        self.configured_bash_profile(workspace)
    }

    fn configured_bash_profile(&self, workspace: &Path) -> Profile {
        let s = &self.settings;
        let writable = match s.mode {
            SandboxMode::WorkspaceWrite => {
                let mut places = vec![workspace.to_path_buf()];
                places.extend(temp_dirs());
                places.extend(s.writable.iter().cloned());
                places
            }
            SandboxMode::ReadOnly | SandboxMode::Off => Vec::new(),
        };
        self.profile(s.mode, s.network, writable, workspace)
    }

    /// Whether a bash call can run sandboxed as its profile asks; an error says why not
    /// (the gate asks the person instead of running the command, or refuses in plan mode).
    pub fn check_bash(&self, workspace: &Path) -> Result<(), SandboxError> {
        self.status.check(&self.bash_profile(workspace))
    }

    /// The profile of a server: toolgate's own servers always run confined (docs
    /// read-only and offline, deploy writing only `.toolgate/`, fs writing only its root);
    /// a stdio server has its entry's `"sandbox"`/`"network"` or the `[sandbox.servers]`
    /// default; HTTP servers are not processes of ours.
    pub fn server_profile(&self, config: &ServerConfig, workspace: &Path) -> Profile {
        match &config.transport {
            ServerTransport::Builtin { server, args } => {
                self.builtin_profile(server, args, workspace)
            }
            ServerTransport::Stdio { .. } => {
                let defaults = self.settings.servers;
                let network = config
                    .sandbox
                    .network
                    .as_ref()
                    .map_or(defaults.network, ServerNetwork::access);
                let mode = config.sandbox.mode.unwrap_or(defaults.mode);
                // The proxy is a confinement: a server held to it (an entry's host list or
                // "proxy", or the servers' default) is never left unconfined, where its
                // list would mean nothing (decision 0101). It gets workspace-write.
                let mode = match (mode, network) {
                    (SandboxMode::Off, NetworkAccess::Proxy) => SandboxMode::WorkspaceWrite,
                    (mode, _) => mode,
                };
                let writable = match mode {
                    SandboxMode::WorkspaceWrite => {
                        let mut places = vec![workspace.to_path_buf()];
                        places.extend(temp_dirs());
                        places.extend(self.settings.writable.iter().cloned());
                        places
                    }
                    _ => Vec::new(),
                };
                self.profile(mode, network, writable, workspace)
            }
            ServerTransport::Http { .. } => Profile::unconfined(),
        }
    }

    fn builtin_profile(&self, server: &str, args: &[String], workspace: &Path) -> Profile {
        match server {
            "deploy" => {
                // Deploy steps are real deployments; they may need the network, through the
                // proxy (each host asked for).
                let root = option_value(args, "--workspace")
                    .map(|dir| join_clean(workspace, dir))
                    .unwrap_or_else(|| workspace.to_path_buf());
                let state = crate::paths::workspace_dir(&root);
                let network = NetworkAccess::Proxy;
                self.profile(SandboxMode::WorkspaceWrite, network, vec![state], workspace)
            }
            "fs" => {
                let root = args
                    .iter()
                    .find(|a| !a.starts_with("--"))
                    .map(|dir| join_clean(workspace, dir))
                    .unwrap_or_else(|| workspace.to_path_buf());
                let network = NetworkAccess::None;
                self.profile(SandboxMode::WorkspaceWrite, network, vec![root], workspace)
            }
            // docs, and anything unknown: read-only and offline.
            _ => self.profile(
                SandboxMode::ReadOnly,
                NetworkAccess::None,
                Vec::new(),
                workspace,
            ),
        }
    }

    fn profile(
        &self,
        mode: SandboxMode,
        network: NetworkAccess,
        writable: Vec<PathBuf>,
        workspace: &Path,
    ) -> Profile {
        if mode == SandboxMode::Off {
            return Profile::unconfined();
        }
        // Fail closed: where the kernel cannot hold a process to the proxy, it gets no
        // network rather than more (the startup notice says so).
        let network = match network {
            NetworkAccess::Proxy if self.status.proxy_unavailable().is_some() => {
                NetworkAccess::None
            }
            other => other,
        };
        let mut readable = vec![workspace.to_path_buf()];
        readable.extend(writable.iter().cloned());
        Profile {
            mode,
            network,
            writable,
            readable,
            deny: self.denied(),
            keep_in_session: false,
        }
    }

    /// Credential locations, toolgate's own state (sessions, trust, tokens) and the
    /// configured `deny_read`.
    fn denied(&self) -> Vec<PathBuf> {
        let home = self.settings.home.clone().or_else(dirs::home_dir);
        let mut deny = home.map(|h| credential_paths(&h)).unwrap_or_default();
        deny.extend(crate::paths::state_dir());
        deny.extend(self.settings.deny_read.iter().cloned());
        deny
    }

    /// The confinement for `profile`, prepared in this (parent) process; `None` for an
    /// unconfined profile. Refuses what the kernel cannot enforce.
    pub fn confine(&self, profile: &Profile) -> Result<Option<Arc<Confinement>>, SandboxError> {
        Confinement::prepare(profile, &self.status).map(|c| c.map(Arc::new))
    }

    /// The environment tools start with: toolgate's, without secrets.
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        env::tool_environment(&self.settings.env_passthrough)
    }

    /// The environment of a process confined by `profile`: [`Self::environment`], and for a
    /// proxied profile the proxy variables pointing at 127.0.0.1:[`PROXY_PORT`] (in place of
    /// any toolgate itself was started with).
    pub fn environment_for(&self, profile: &Profile) -> Vec<(OsString, OsString)> {
        let mut vars = self.environment();
        if profile.is_confined() && profile.network == NetworkAccess::Proxy {
            let proxy = env::proxy_variables(PROXY_PORT);
            vars.retain(|(name, _)| !proxy.iter().any(|(n, _)| n == name));
            vars.extend(proxy);
        }
        vars
    }

    /// A notice for the start of a session when the sandbox is not what a person would
    /// assume: unavailable (with the reason), or turned off for bash.
    pub fn startup_notice(&self, workspace: &Path) -> Option<String> {
        if self.settings.mode == SandboxMode::Off {
            return Some(
                "sandbox: off for bash ([sandbox] mode = \"off\"): commands run with your full rights, except in plan mode (read-only)"
                    .into(),
            );
        }
        if let Err(e) = self.check_bash(workspace) {
            return Some(format!(
                "sandbox: unavailable ({}): bash commands cannot run sandboxed, and toolgate's own servers cannot start",
                e.reason()
            ));
        }
        if self.settings.network == NetworkAccess::Proxy
            && let Some(reason) = self.status.proxy_unavailable()
        {
            return Some(format!(
                "sandbox: the network proxy is unavailable ({reason}): bash commands and servers set to \"proxy\" run without network"
            ));
        }
        None
    }
}

/// Where temporary files go: `$TMPDIR` (or /tmp) and /dev/shm (POSIX shared memory).
fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![std::env::temp_dir()];
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        dirs.push(shm);
    }
    dirs
}

/// `base` joined with `rel` (absolute `rel` replaces it), without `.` components.
fn join_clean(base: &Path, rel: &str) -> PathBuf {
    base.join(rel)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

fn option_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let at = args.iter().position(|a| a == flag)?;
    args.get(at + 1).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{ConfigSource, ServerSandbox};

    fn builtin(server: &str, args: &[&str]) -> ServerConfig {
        ServerConfig {
            name: server.into(),
            transport: ServerTransport::Builtin {
                server: server.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
            },
            source: ConfigSource::Embedded,
            call_timeout_ms: 1000,
            sandbox: ServerSandbox::default(),
            pool: Default::default(),
            always_load: false,
        }
    }

    #[test]
    fn toolgate_servers_are_always_confined_to_their_own_places() {
        let sandbox = Sandbox::default();
        let ws = Path::new("/w");
        let docs = sandbox.server_profile(&builtin("docs", &[]), ws);
        assert_eq!(
            (docs.mode, docs.network),
            (SandboxMode::ReadOnly, NetworkAccess::None)
        );
        let deploy = sandbox.server_profile(&builtin("deploy", &[]), ws);
        assert_eq!(deploy.writable, [PathBuf::from("/w/.toolgate")]);
        let fs = sandbox.server_profile(&builtin("fs", &["sub"]), ws);
        assert_eq!(fs.writable, [PathBuf::from("/w/sub")]);
        assert_eq!(fs.network, NetworkAccess::None);
        // Settings cannot loosen them.
        let off = Sandbox::new(SandboxSettings {
            mode: SandboxMode::Off,
            servers: crate::settings::ServerDefaults {
                mode: SandboxMode::Off,
                network: NetworkAccess::Full,
            },
            ..SandboxSettings::default()
        });
        assert_eq!(off.server_profile(&builtin("docs", &[]), ws), docs);
    }

    /// A stdio server entry running `command`, with no sandbox settings of its own.
    fn stdio(command: &str) -> ServerConfig {
        let mut config = builtin("x", &[]);
        config.transport = ServerTransport::Stdio {
            command: command.into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        };
        config
    }

    #[test]
    fn stdio_servers_take_their_entry_then_the_default() {
        let mut config = stdio("srv");
        let ws = Path::new("/w");
        let default = Sandbox::default();
        assert_eq!(default.server_profile(&config, ws), Profile::unconfined());
        config.sandbox = ServerSandbox {
            mode: Some(SandboxMode::WorkspaceWrite),
            network: None,
        };
        let profile = default.server_profile(&config, ws);
        assert_eq!(profile.writable[0], PathBuf::from("/w"));
        assert_eq!(profile.network, NetworkAccess::None);
        let online = Sandbox::new(SandboxSettings {
            servers: crate::settings::ServerDefaults {
                mode: SandboxMode::ReadOnly,
                network: NetworkAccess::Full,
            },
            ..SandboxSettings::default()
        });
        assert_eq!(
            online.server_profile(&config, ws).network,
            NetworkAccess::Full
        );
        config.sandbox.mode = None;
        assert_eq!(
            online.server_profile(&config, ws).mode,
            SandboxMode::ReadOnly
        );
    }

    #[test]
    fn a_server_held_to_the_proxy_is_never_left_unconfined() {
        let mut config = stdio("srv");
        let ws = Path::new("/w");
        let sandbox = Sandbox::default();
        for mode in [None, Some(SandboxMode::Off)] {
            config.sandbox = ServerSandbox {
                mode,
                network: Some(crate::settings::ServerNetwork::Hosts(vec![
                    "api.test".into(),
                ])),
            };
            let profile = sandbox.server_profile(&config, ws);
            assert_eq!(profile.mode, SandboxMode::WorkspaceWrite, "{mode:?}");
            if sandbox.status().proxy_unavailable().is_none() {
                assert_eq!(profile.network, NetworkAccess::Proxy);
            }
        }
        // Without a network setting the servers' default (off) stands.
        config.sandbox = ServerSandbox::default();
        assert_eq!(sandbox.server_profile(&config, ws), Profile::unconfined());
    }

    #[test]
    fn bash_profile_denies_credentials_of_the_configured_home_and_the_state_dir() {
        let sandbox = Sandbox::new(SandboxSettings {
            home: Some("/fake/home".into()),
            deny_read: vec!["/srv/secrets".into()],
            writable: vec!["/opt/cache".into()],
            ..SandboxSettings::default()
        });
        let profile = sandbox.bash_profile(Path::new("/w"));
        assert!(profile.deny.contains(&PathBuf::from("/fake/home/.ssh")));
        assert!(profile.deny.contains(&PathBuf::from("/fake/home/.aws")));
        assert!(profile.deny.contains(&PathBuf::from("/srv/secrets")));
        let state = crate::paths::state_dir().expect("a state dir (HOME is set in tests)");
        assert!(profile.deny.contains(&state), "{state:?}");
        assert_eq!(profile.writable[0], PathBuf::from("/w"));
        assert!(profile.writable.contains(&std::env::temp_dir()));
        assert!(profile.writable.contains(&PathBuf::from("/opt/cache")));
    }

    #[test]
    fn an_unavailable_sandbox_refuses_and_says_so_at_startup() {
        let sandbox = Sandbox::with_status(
            SandboxSettings::default(),
            SandboxStatus::unavailable("forced by a test"),
        );
        let ws = Path::new("/w");
        let err = sandbox.confine(&sandbox.bash_profile(ws)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the sandbox is unavailable: forced by a test"
        );
        assert!(sandbox.check_bash(ws).is_err());
        let notice = sandbox.startup_notice(ws).unwrap_or_default();
        assert!(
            notice.contains("unavailable (forced by a test)"),
            "{notice}"
        );
        // Running a command the person allowed outside the sandbox needs nothing.
        let outside = sandbox.without_confinement();
        assert!(matches!(
            outside.confine(&outside.bash_profile(ws)),
            Ok(None)
        ));
    }
}
