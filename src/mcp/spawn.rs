//! Starting a server process (stdio and builtin entries) and stopping it without orphans.

use crate::sandbox::Sandbox;
use crate::settings::{ServerConfig, ServerTransport};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

pub struct SpawnedServer {
    pub child: Child,
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
) -> Result<SpawnedServer, String> {
    let refused =
        |e: crate::sandbox::SandboxError| format!("cannot start '{}': {e}", config.command_line());
    let profile = sandbox.server_profile(config, workspace);
    if let ServerTransport::Builtin { server, .. } = &config.transport
        && server == "deploy"
        && let Some(state) = profile.writable.first()
    {
        // Landlock can only grant a folder that exists; deploy keeps its records there.
        let _ = std::fs::create_dir_all(state);
    }
    let confinement = sandbox.confine(&profile).map_err(refused)?;
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
                .envs(sandbox.environment())
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
                .envs(sandbox.environment());
            c.current_dir(workspace);
            c
        }
        ServerTransport::Http { .. } => return Err("not a stdio server".into()),
    };
    if let Some(confinement) = &confinement {
        confinement.install(command.as_std_mut());
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent; it makes the
    // kernel signal the server if toolgate dies without running its shutdown (SIGKILL), so
    // no server outlives us.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start '{}': {e}", config.command_line()))?;
    // All three were requested as piped just above, so they are present.
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("child process has no stdio pipes".into());
    };
    Ok(SpawnedServer {
        child,
        stdin,
        stdout,
        stderr,
    })
}

fn resolve_cwd(workspace: &Path, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => workspace.join(dir),
        None => workspace.to_path_buf(),
    }
}

/// The stdio shutdown sequence from the MCP spec: stdin is already closed by the caller;
/// wait, then SIGTERM, then kill.
pub async fn stop_child(child: &mut Child) -> Option<std::process::ExitStatus> {
    if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        return Some(status);
    }
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: plain syscall on a pid we own and have not reaped yet.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
        if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(1), child.wait()).await {
            return Some(status);
        }
    }
    let _ = child.kill().await;
    child.wait().await.ok()
}
