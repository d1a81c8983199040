//! A child (tokio) that leads its own process group, stopped as a group: the stdio MCP
//! servers. The leader is never reaped before the last signal to its group, so the group
//! id cannot have been reused by then.

use super::group::{others_in_group, signal_group};
use super::reaper::Registration;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;
use tokio::process::Child;
use tokio::time::Instant;

/// How long a server gets to exit by itself once its stdin is closed (MCP's stdio
/// shutdown), then how long its group gets between SIGTERM and SIGKILL.
const EXIT_GRACE: Duration = Duration::from_secs(2);
const TERM_GRACE: Duration = Duration::from_secs(1);
/// How often the stop sequence looks at the leader and its group (only while stopping).
const POLL: Duration = Duration::from_millis(10);

pub struct GroupChild {
    /// Released before the leader is reaped (declared first: dropped before `child`).
    registration: Option<Registration>,
    child: Child,
    pgid: libc::pid_t,
    /// Set once the group has had its last signal and the leader was reaped.
    done: bool,
    /// The proxy serving the process's connections (a proxied server): it lives as long as
    /// the process is ours, and stops with it.
    proxy: Option<crate::egress::ProxyRun>,
}

impl GroupChild {
    /// Takes over `child`, spawned with [`super::detach`] (so its pid is its group's id),
    /// and lists its group with the reaper. None if it has already been reaped.
    pub fn new(child: Child) -> Option<GroupChild> {
        let pgid = libc::pid_t::try_from(child.id()?).ok()?;
        Some(GroupChild {
            registration: Some(Registration::adopt(pgid)),
            child,
            pgid,
            done: false,
            proxy: None,
        })
    }

    /// Keeps `proxy` (the network gate serving this process) for as long as this handle.
    pub fn hold_proxy(&mut self, proxy: crate::egress::ProxyRun) {
        self.proxy = Some(proxy);
    }

    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits up to `within` for the leader to exit and gives its status, leaving it
    /// unreaped (a zombie keeps the group id reserved).
    pub async fn wait_exit(&self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = exited_unreaped(self.pgid) {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The MCP stdio shutdown, for the whole group: the caller has closed stdin; wait for
    /// the leader, then SIGTERM the group, wait, SIGKILL what is left, reap the leader.
    /// The leader's status if it exited by itself.
    pub async fn stop(mut self) -> Option<ExitStatus> {
        let exited = self.wait_exit(EXIT_GRACE).await;
        self.terminate().await;
        exited
    }

    /// SIGTERM to the group, a grace while anything in it lives, SIGKILL, reap.
    pub async fn terminate(&mut self) {
        if self.done {
            return;
        }
        signal_group(self.pgid, libc::SIGTERM);
        let deadline = Instant::now() + TERM_GRACE;
        while Instant::now() < deadline
            && (exited_unreaped(self.pgid).is_none() || others_in_group(self.pgid, self.pgid))
        {
            tokio::time::sleep(POLL).await;
        }
        signal_group(self.pgid, libc::SIGKILL);
        if let Some(registration) = self.registration.take() {
            registration.release();
        }
        let _ = self.child.wait().await;
        self.done = true;
    }
}

impl Drop for GroupChild {
    /// Dropped without a stop (toolgate shutting down in a hurry): the group is killed at
    /// once; the leader, still unreaped here, is reaped by tokio afterwards.
    fn drop(&mut self) {
        if !self.done {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// The exit status of `pid` if it has exited, without reaping it.
fn exited_unreaped(pid: libc::pid_t) -> Option<ExitStatus> {
    wait_unreaped(pid, false).ok().flatten()
}

/// Waits for `pid` (a child of this process) to exit and leaves it a zombie (WNOWAIT), so
/// its pid, and the id of the group it leads, stay reserved until it is reaped. `block`:
/// wait until it exits; otherwise `None` while it still runs.
pub fn wait_unreaped(pid: libc::pid_t, block: bool) -> std::io::Result<Option<ExitStatus>> {
    let flags = libc::WEXITED | libc::WNOWAIT | if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: siginfo_t is plain data for which all-zero is valid; waitid only writes
        // into the struct we pass.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        // With WNOHANG, a child still running leaves si_pid at 0.
        // SAFETY: si_pid and si_status are valid to read for a SIGCHLD siginfo (all zero
        // otherwise, from the zeroed struct).
        if unsafe { info.si_pid() } == 0 {
            return Ok(None);
        }
        let status = unsafe { info.si_status() };
        // Rebuild the wait status the way waitpid would report it.
        let raw = match info.si_code {
            libc::CLD_EXITED => (status & 0xff) << 8,
            libc::CLD_DUMPED => status | 0x80,
            _ => status,
        };
        return Ok(Some(ExitStatus::from_raw(raw)));
    }
}
