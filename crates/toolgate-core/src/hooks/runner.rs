//! Runs one hook command: `sh -c COMMAND` in the workspace, leading a process group of its
//! own (stopped whole at its timeout, [`crate::children`]), confined like bash unless its
//! file said `sandbox = false`, with one JSON object on stdin. Nothing here reads what the
//! output means: that is [`super::output`].

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::children::{self, DeathSignal, GroupChild};
use crate::egress::ClientHosts;
use crate::protocol::NetworkClient;
use crate::sandbox::Sandbox;
use crate::settings::HookSpec;

/// The most of a hook's stdout or stderr kept; a hook that writes more is cut, not stalled.
const OUTPUT_LIMIT: u64 = 1 << 20;
/// After the pipes close, how long the shell gets to be seen as exited.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How one hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// It exited with `code` (0: go on; 2: block; other: a non-blocking error).
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    /// Its timeout passed: its whole group was stopped.
    TimedOut(Duration),
    /// It could not be started (the sandbox cannot confine it, no shell), or it was killed
    /// by a signal.
    Failed(String),
}

/// Runs `spec` with `input` on stdin, in `workspace`, under `sandbox` when the spec is
/// sandboxed.
pub async fn run(spec: &HookSpec, input: &[u8], workspace: &Path, sandbox: &Sandbox) -> Ran {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&spec.command)
        .current_dir(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Claude Code's variable, so that existing hook scripts find the project.
        .env("CLAUDE_PROJECT_DIR", workspace);
    // First, so the session exists before the sandbox's own hook runs.
    children::detach(cmd.as_std_mut(), DeathSignal::Kill);
    let mut confinement = None;
    if spec.sandboxed {
        let profile = sandbox.hook_profile(workspace);
        confinement = match sandbox.confine(&profile) {
            Ok(confinement) => confinement,
            Err(e) => return Ran::Failed(format!("the hook was not run: {e}")),
        };
        cmd.env_clear()
            .envs(sandbox.environment_for(&profile))
            .env("CLAUDE_PROJECT_DIR", workspace);
        if let Some(confinement) = &confinement {
            confinement.install(cmd.as_std_mut());
        }
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return Ran::Failed(format!("could not start sh: {e}")),
    };
    // A proxied hook's connections go through the network gate as the hook's, for as long
    // as the hook runs.
    let client = || NetworkClient::Hook {
        command: spec.command.clone(),
    };
    let _proxy = sandbox
        .serve_proxy(confinement.as_deref(), client, ClientHosts::Rules)
        .inspect_err(|e| tracing::warn!("hook: {e}"))
        .ok()
        .flatten();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let Some(mut group) = GroupChild::new(child) else {
        return Ran::Failed("the hook's shell ended before it could be watched".into());
    };
    let input = input.to_vec();
    // A hook that never reads its stdin must not stall the write: the write is its own task.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    });
    let pid = group.id().and_then(|id| libc::pid_t::try_from(id).ok());
    let finished = tokio::time::timeout(spec.timeout, async {
        let (out, err) = tokio::join!(read_all(stdout), read_all(stderr));
        // Its pipes are closed: it has exited or is about to. Waited for on a blocking
        // thread (no polling), left unreaped so that its group id stays reserved.
        let exited = match pid {
            Some(pid) => tokio::task::spawn_blocking(move || children::wait_unreaped(pid, true))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten(),
            None => group.wait_exit(EXIT_GRACE).await,
        };
        (out, err, exited)
    })
    .await;
    // Whatever it left running in its group goes with it (and the leader is reaped).
    group.terminate().await;
    writer.abort();
    match finished {
        Err(_) => Ran::TimedOut(spec.timeout),
        Ok((stdout, stderr, Some(status))) => match status.code() {
            Some(code) => Ran::Exited {
                code,
                stdout,
                stderr,
            },
            None => Ran::Failed(format!("the hook was stopped by a signal ({status})")),
        },
        Ok((_, _, None)) => Ran::Failed("the hook closed its output but did not exit".into()),
    }
}

async fn read_all(pipe: Option<impl AsyncRead + Unpin>) -> String {
    let mut bytes = Vec::new();
    if let Some(pipe) = pipe {
        let _ = pipe.take(OUTPUT_LIMIT).read_to_end(&mut bytes).await;
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
