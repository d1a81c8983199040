//! The `bash` tool: one shell per call, leading a session (so a process group) of its own so a
//! timeout, a cancel or the shell's end can stop everything it started, with stdout and
//! stderr sharing one pipe so their order is kept. When the shell exits, every process left
//! in its session is killed: a confined command cannot leave the session (the sandbox
//! refuses `setsid`), so its background processes end with the call (decision 0088). The group is listed with the reaper and the shell gets a
//! parent-death signal, so nothing it started outlives toolgate (see [`crate::children`]).
//!
//! The shell's leader process is never reaped before its session has been ended: while the
//! leader exists (even as a zombie) its pid, which is also the group and session id, cannot
//! be reused, so the kill can never hit an unrelated group or session.
//!
//! The shell runs under the session's sandbox profile (applied in the child between fork
//! and exec) with an environment without secrets; a profile the kernel cannot enforce
//! means the command is not run.

use super::BuiltinOutput;
use super::args::Args;
use super::capture::HeadTailCapture;
use crate::children::{self, DeathSignal, Registration};
use crate::egress::{ClientHosts, ProxyRun};
use crate::protocol::NetworkClient;
use crate::sandbox::{BashWrites, Confinement, Sandbox, Tracer, WriteLog};
use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Characters of output the model sees at most (half from the start, half from the end).
pub const OUTPUT_LIMIT_CHARS: usize = 50_000;

/// How long to keep reading after the shell is gone. Its session has been killed by then, so
/// only a process that left the session (`setsid` in an unconfined command) can hold the
/// pipe open this long.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Bound on waiting for a SIGKILLed leader to be reaped; it only matters for a process
/// stuck in the kernel, and then we stop waiting rather than hang the agent.
const REAP_GRACE: Duration = Duration::from_secs(5);

enum Ending {
    Finished,
    TimedOut(Duration),
    Cancelled,
}

/// `trace`: where to record the paths the command asks to change (confined commands
/// only; see [`WriteLog`]).
pub async fn run_bash(
    input: &serde_json::Value,
    workspace: &Path,
    sandbox: &Sandbox,
    cancel: CancellationToken,
    trace: Option<&WriteLog>,
) -> BuiltinOutput {
    let (command, timeout) = match parse(input) {
        Ok(parsed) => parsed,
        Err(e) => return BuiltinOutput::error(format!("Invalid input for bash: {e}")),
    };
    if !workspace.is_dir() {
        return BuiltinOutput::error(format!(
            "bash: the workspace directory {} does not exist",
            workspace.display()
        ));
    }
    let profile = sandbox.bash_profile(workspace);
    let confinement = match sandbox.confine(&profile) {
        Ok(confinement) => confinement,
        Err(e) => return BuiltinOutput::error(format!("bash: the command was not run: {e}")),
    };
    let launch = Launch {
        env: Some(sandbox.environment_for(&profile)),
        confinement,
        trace: trace.cloned(),
        network: Some(sandbox.clone()),
    };
    match execute_with(&SHELLS, command, workspace, timeout, cancel, &launch).await {
        Ok(mut output) => {
            let hint = match sandbox.bash_writes() {
                BashWrites::Nothing => profile.plan_mode_hint(&output.text, output.is_error),
                BashWrites::AsConfigured => profile.blocked_hint(&output.text, output.is_error),
            };
            if let Some(hint) = hint {
                output.text.push('\n');
                output.text.push_str(&hint);
            }
            output
        }
        Err(e) => BuiltinOutput::error(format!("bash: could not run the command: {e}")),
    }
}

/// How the shell process is set up beyond its command line.
#[derive(Default)]
pub(super) struct Launch {
    /// The whole environment of the shell; None inherits toolgate's (tests only).
    env: Option<Vec<(OsString, OsString)>>,
    confinement: Option<std::sync::Arc<Confinement>>,
    /// Records what the command asks to change; only with a confinement, whose
    /// `no_new_privs` the tracing filter needs.
    trace: Option<WriteLog>,
    /// The sandbox whose proxy host serves a proxied command's connections (as the call's
    /// own); None in tests of the process handling.
    network: Option<Sandbox>,
}

fn parse(input: &serde_json::Value) -> Result<(&str, Duration), super::args::ArgError> {
    // `unsandboxed` / `justification` are the gate's business: it asked the person, and
    // the sandbox this runs under already says what they answered.
    let args = Args::new(
        input,
        &["command", "timeout_ms", "unsandboxed", "justification"],
    )?;
    let command = args.string("command")?;
    let timeout = match args.positive_integer("timeout_ms")? {
        Some(ms) => Duration::from_millis(ms).min(MAX_TIMEOUT),
        None => DEFAULT_TIMEOUT,
    };
    Ok((command, timeout))
}

/// The shell leader and whether it has been reaped, behind one lock so that signalling the
/// group and reaping the leader never interleave.
struct Leader {
    pid: libc::pid_t,
    reaped: Mutex<bool>,
}

impl Leader {
    /// SIGKILL to the whole session, unless the leader is already reaped (then its
    /// session was ended just before and the id may belong to someone else now).
    fn kill_session(&self) {
        let reaped = self.reaped.lock().unwrap_or_else(PoisonError::into_inner);
        if !*reaped {
            children::kill_session(self.pid);
        }
    }
}

/// Runs on a blocking thread: waits for the shell to exit, stops whatever it left running
/// in its session, then reaps it (the reaper forgets the group first: its id is free after).
fn wait_and_reap(
    mut child: Child,
    leader: Arc<Leader>,
    registration: Registration,
) -> io::Result<ExitStatus> {
    let exited = children::wait_unreaped(leader.pid, true);
    let mut reaped = leader.reaped.lock().unwrap_or_else(PoisonError::into_inner);
    if exited.is_ok() {
        children::kill_session(leader.pid);
    }
    registration.release();
    let status = child.wait();
    *reaped = true;
    status
}

/// The shells tried in order; `sh` is the fallback on systems without bash.
const SHELLS: [&str; 2] = ["bash", "sh"];

/// The shell, and the proxy serving its connections when it is proxied.
fn spawn_shell(
    shells: &[&str],
    command: &str,
    workspace: &Path,
    out: &io::PipeWriter,
    launch: &Launch,
) -> io::Result<(Child, Option<ProxyRun>)> {
    let spawn = |shell: &str| -> io::Result<Child> {
        let mut cmd = Command::new(shell);
        cmd.arg("-c")
            .arg(command)
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out.try_clone()?);
        // First, so the session exists before the sandbox's own hook runs.
        children::detach(&mut cmd, DeathSignal::Kill);
        if let Some(env) = &launch.env {
            cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(confinement) = &launch.confinement {
            confinement.install(&mut cmd);
        }
        // After the confinement: the tracing filter needs its no_new_privs.
        let tracer = match (&launch.confinement, &launch.trace) {
            (Some(_), Some(_)) => Tracer::new()
                .inspect_err(|e| tracing::warn!("write trace: {e}"))
                .ok(),
            _ => None,
        };
        if let Some(tracer) = &tracer {
            tracer.install(&mut cmd);
        }
        let child = cmd.spawn();
        if let (Ok(_), Some(tracer), Some(log)) = (&child, tracer, &launch.trace) {
            tracer.start(log);
        }
        child
        // The Command (and its copies of the pipe's write end) is dropped here, so the
        // pipe reaches end-of-file once the shell's processes are gone.
    };
    for shell in shells {
        match spawn(shell) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
            Ok(child) => return Ok((child, serve_proxy(command, launch))),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no shell found on PATH (tried {})", shells.join(", ")),
    ))
}

/// [`execute_with`] unconfined and with toolgate's environment (tests of the process
/// handling itself).
#[cfg(test)]
pub(super) async fn execute(
    shells: &[&str],
    command: &str,
    workspace: &Path,
    timeout: Duration,
    cancel: CancellationToken,
) -> io::Result<BuiltinOutput> {
    execute_with(
        shells,
        command,
        workspace,
        timeout,
        cancel,
        &Launch::default(),
    )
    .await
}

pub(super) async fn execute_with(
    shells: &[&str],
    command: &str,
    workspace: &Path,
    timeout: Duration,
    cancel: CancellationToken,
    launch: &Launch,
) -> io::Result<BuiltinOutput> {
    let (reader, writer) = io::pipe()?;
    let (child, proxy) = spawn_shell(shells, command, workspace, &writer, launch)?;
    drop(writer);
    let leader = Arc::new(Leader {
        pid: child.id() as libc::pid_t,
        reaped: Mutex::new(false),
    });
    let registration = Registration::adopt(leader.pid);
    let waiter_leader = Arc::clone(&leader);
    let mut exit: JoinHandle<io::Result<ExitStatus>> =
        tokio::task::spawn_blocking(move || wait_and_reap(child, waiter_leader, registration));
    let mut pipe = match pipe::Receiver::from_owned_fd(reader.into()) {
        Ok(pipe) => Some(pipe),
        Err(e) => {
            // Without a reader the command's output is lost; stop it rather than let it
            // run unobserved.
            leader.kill_session();
            return Err(e);
        }
    };

    let mut capture = HeadTailCapture::new(OUTPUT_LIMIT_CHARS);
    let mut buf = vec![0u8; 64 * 1024];
    let deadline = Instant::now() + timeout;
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut drain_until: Option<Instant> = None;
    let mut ending = Ending::Finished;

    while pipe.is_some() || status.is_none() {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                ending = Ending::Cancelled;
                break;
            }
            _ = tokio::time::sleep_until(deadline) => {
                ending = Ending::TimedOut(timeout);
                break;
            }
            read = read_some(&mut pipe, &mut buf) => match read {
                Ok(0) => pipe = None,
                Ok(n) => capture.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::warn!("bash: reading output failed: {e}");
                    pipe = None;
                }
            },
            joined = &mut exit, if status.is_none() => {
                status = Some(flatten(joined));
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            _ = sleep_until_opt(drain_until) => {
                tracing::debug!("bash: a process that left the group still holds the output pipe");
                pipe = None;
            }
        }
    }

    if !matches!(ending, Ending::Finished) {
        leader.kill_session();
        if status.is_none() {
            status = tokio::time::timeout(REAP_GRACE, &mut exit)
                .await
                .ok()
                .map(flatten);
        }
        // Whatever the killed processes wrote before dying is still in the pipe.
        let grace = Instant::now() + DRAIN_GRACE;
        while pipe.is_some() {
            tokio::select! {
                read = read_some(&mut pipe, &mut buf) => match read {
                    Ok(n) if n > 0 => capture.push(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    _ => pipe = None,
                },
                _ = tokio::time::sleep_until(grace) => pipe = None,
            }
        }
    }

    let mut output = report(capture, ending, status);
    // The hosts it reached (or was refused), for the card and the model, once every
    // connection has been reported.
    if let Some(run) = proxy
        && let Some(line) = run.finish().await.summary()
    {
        output.text.push('\n');
        output.text.push_str(&line);
    }
    Ok(output)
}

/// Hands a proxied shell's listener to the session's proxy host, serving the call's
/// connections. A failure leaves the command without network (its listener is gone), and
/// is logged: the command's own output says what it could not reach.
fn serve_proxy(command: &str, launch: &Launch) -> Option<ProxyRun> {
    let sandbox = launch.network.as_ref()?;
    let client = || NetworkClient::Bash {
        call_id: sandbox.call().cloned().unwrap_or_else(|| "bash".into()),
        command: command.to_string(),
    };
    sandbox
        .serve_proxy(launch.confinement.as_deref(), client, ClientHosts::Rules)
        .inspect_err(|e| tracing::warn!("bash: {e}"))
        .ok()
        .flatten()
}

async fn read_some(pipe: &mut Option<pipe::Receiver>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(p) => p.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn flatten(
    joined: Result<io::Result<ExitStatus>, tokio::task::JoinError>,
) -> io::Result<ExitStatus> {
    joined.map_err(io::Error::other)?
}

fn report(
    capture: HeadTailCapture,
    ending: Ending,
    status: Option<io::Result<ExitStatus>>,
) -> BuiltinOutput {
    let mut text = if capture.is_empty() {
        "(no output)".to_string()
    } else {
        capture.finish()
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match ending {
        Ending::TimedOut(after) => {
            text.push_str(&format!(
                "[command timed out after {}; it and all its child processes were killed]",
                human_duration(after)
            ));
            BuiltinOutput::error(text)
        }
        Ending::Cancelled => {
            text.push_str(
                "[command cancelled by the user; it and all its child processes were killed]",
            );
            BuiltinOutput::error(text)
        }
        Ending::Finished => match status {
            Some(Ok(status)) => {
                let success = status.success();
                match (status.code(), status.signal()) {
                    (Some(code), _) => text.push_str(&format!("exit status: {code}")),
                    (None, Some(signal)) => {
                        text.push_str(&format!("terminated by signal {signal}"))
                    }
                    (None, None) => text.push_str("exit status: unknown"),
                }
                BuiltinOutput {
                    text,
                    is_error: !success,
                }
            }
            Some(Err(e)) => {
                text.push_str(&format!("exit status: unknown ({e})"));
                BuiltinOutput::error(text)
            }
            None => {
                text.push_str("exit status: unknown");
                BuiltinOutput::error(text)
            }
        },
    }
}

fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}
