//! Starting a server process (stdio and builtin entries) and stopping it without orphans:
//! each server leads a process group of its own, stopped as a whole (see
//! [`crate::children`]), so a server behind `sh -c` or `npx` leaves nothing running.

use crate::children::{DeathSignal, GroupChild, detach};
use crate::egress::ClientHosts;
use crate::protocol::NetworkClient;
use crate::sandbox::Sandbox;
use crate::settings::{ServerConfig, ServerNetwork, ServerTransport};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};

pub struct SpawnedServer {
    pub process: GroupChild,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Starts a stdio or builtin server under its sandbox profile (see
/// [`Sandbox::server_profile`]), with an environment without secrets plus the entry's own
/// `env`. A profile the kernel cannot enforce is refused, never started unconfined.
pub fn spawn_stdio(
    config: &ServerConfig,
    workspace: &Path,
    builtin_exe: &Path,
    sandbox: &Sandbox,
) -> Result<SpawnedServer, SpawnError> {
    let refused = |source| SpawnError::Sandbox {
        command_line: config.command_line(),
        source,
    };
    let profile = sandbox.server_profile(config, workspace);
    if let ServerTransport::Builtin { server, .. } = &config.transport
        && server == "deploy"
        && let Some(state) = profile.writable.first()
    {
        // Landlock can only grant a folder that exists; deploy keeps its records there.
        let _ = std::fs::create_dir_all(state);
    }
    let confinement = sandbox.confine(&profile).map_err(refused)?;
    let environment = sandbox.environment_for(&profile);
    let mut command = match &config.transport {
        ServerTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut c = Command::new(command);
            c.args(args)
                .env_clear()
                .envs(environment.iter().map(|(k, v)| (k, v)))
                .envs(env);
            c.current_dir(resolve_cwd(workspace, cwd.as_deref()));
            c
        }
        ServerTransport::Builtin { server, args } => {
            let mut c = Command::new(builtin_exe);
            c.arg("serve")
                .arg(server)
                .args(args)
                .env_clear()
                .envs(environment.iter().map(|(k, v)| (k, v)));
            c.current_dir(workspace);
            c
        }
        ServerTransport::Http { .. } => return Err(SpawnError::NotStdio),
    };
    // First, so the session exists before the sandbox's own hook runs.
    detach(command.as_std_mut(), DeathSignal::Terminate);
    if let Some(confinement) = &confinement {
        confinement.install(command.as_std_mut());
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| SpawnError::Start {
        command_line: config.command_line(),
        source,
    })?;
    // All three were requested as piped just above, so they are present.
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(SpawnError::NoPipes);
    };
    let mut process = GroupChild::new(child).ok_or(SpawnError::ExitedAtOnce)?;
    // A proxied server's connections go through the network gate as the server's: its
    // entry's host list, or the rules and questions.
    let hosts = match config.sandbox.network.as_ref() {
        Some(ServerNetwork::Hosts(hosts)) => ClientHosts::Only(hosts.clone()),
        _ => ClientHosts::Rules,
    };
    let client = || NetworkClient::Server {
        server: config.name.as_str().into(),
    };
    let proxy = sandbox
        .serve_proxy(confinement.as_deref(), client, hosts)
        .map_err(refused)?;
    if let Some(proxy) = proxy {
        process.hold_proxy(proxy);
    }
    Ok(SpawnedServer {
        process,
        stdin,
        stdout,
        stderr,
    })
}

/// Why a stdio server did not start; the text is what its status shows.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The sandbox profile cannot be enforced here: refused, never started unconfined.
    #[error("cannot start '{command_line}': {source}")]
    Sandbox {
        command_line: String,
        #[source]
        source: crate::sandbox::SandboxError,
    },
    #[error("cannot start '{command_line}': {source}")]
    Start {
        command_line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("not a stdio server")]
    NotStdio,
    #[error("child process has no stdio pipes")]
    NoPipes,
    #[error("the server exited at once")]
    ExitedAtOnce,
}

fn resolve_cwd(workspace: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => workspace.join(dir),
        None => workspace.to_path_buf(),
    }
}

/// The stdio shutdown sequence from the MCP spec, for the server's whole group: stdin is
/// already closed by the caller; wait, then SIGTERM, then kill.
pub async fn stop_child(process: GroupChild) -> Option<std::process::ExitStatus> {
    process.stop().await
}
