//! Putting a child in a session of its own with a parent-death signal, and signalling the
//! group it leads.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The signal a child gets when toolgate dies without stopping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeathSignal {
    /// Servers: a chance to clean up (the reaper follows with SIGKILL after a grace).
    Terminate,
    /// `bash` commands: a timeout or cancel kills them outright too.
    Kill,
}

impl DeathSignal {
    fn number(self) -> libc::c_int {
        match self {
            DeathSignal::Terminate => libc::SIGTERM,
            DeathSignal::Kill => libc::SIGKILL,
        }
    }
}

/// Makes `command`'s child leader of a new session (and process group, same id as its
/// pid), lists that group with the reaper from inside the child, and, on Linux, arms its
/// parent-death signal. Install it before any other `pre_exec` hook (the sandbox's), so
/// it runs first in the child. The parent takes the listing over with
/// [`super::Registration::adopt`] once the spawn returns.
pub fn detach(command: &mut Command, on_parent_death: DeathSignal) {
    // SAFETY: getpid has no preconditions; it runs in the parent, before the fork.
    let parent = unsafe { libc::getpid() };
    let signal = on_parent_death.number();
    // Started (if need be) here in the parent: the child may only use what exists.
    let reaper = super::reaper::channel().filter(|fd| *fd > 2);
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // system calls on integers captured before the fork: no allocation, no locks.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = reaper {
                super::reaper::announce_from_child(fd);
            }
            arm_parent_death(signal, parent)
        });
    }
}

#[cfg(target_os = "linux")]
/// The kernel sends `signal` when the thread that forked us ends; the threads that spawn
/// children are the runtime's workers, which live as long as toolgate.
fn arm_parent_death(signal: libc::c_int, parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: prctl and getppid take and return plain integers.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) != 0 {
            return Err(io::Error::last_os_error());
        }
        // toolgate may have died between the fork and the prctl: then no signal will
        // come, so do not start at all.
        if libc::getppid() != parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn arm_parent_death(_: libc::c_int, _: libc::pid_t) -> io::Result<()> {
    // No parent-death signal here: the reaper alone stops the group.
    Ok(())
}

/// Sends `signal` to every process of group `pgid`. ESRCH (nobody left) is the expected
/// answer once the group has ended and is not an error.
pub fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid <= 1 {
        // killpg(0) or (1) would hit toolgate's own group or init's: never meant.
        return;
    }
    // SAFETY: killpg takes plain integers and touches no memory of ours.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Whether a live process other than `leader` is still in group `pgid`. Linux reads
/// /proc; elsewhere the answer is "no", so the stop goes straight to SIGKILL after the
/// leader is gone.
pub(super) fn others_in_group(pgid: libc::pid_t, leader: libc::pid_t) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return false;
        };
        dir.flatten().any(|entry| {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<libc::pid_t>().ok())
            else {
                return false;
            };
            pid != leader
                && std::fs::read_to_string(entry.path().join("stat"))
                    .ok()
                    .and_then(|stat| live_group_of(&stat))
                    == Some(pgid)
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pgid, leader);
        false
    }
}

/// The process group in a /proc/PID/stat line, unless the process is a zombie. The
/// command name may hold spaces and parentheses, so fields are read after the last ')'.
#[cfg(any(target_os = "linux", test))]
fn live_group_of(stat: &str) -> Option<libc::pid_t> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    (state != "Z").then_some(group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_the_group_of_live_processes_only() {
        assert_eq!(
            live_group_of("42 (sh -c (x)) S 1 40 40 0 -1"),
            Some(40),
            "a name with spaces and parentheses"
        );
        assert_eq!(live_group_of("42 (sh) Z 1 40 40 0 -1"), None, "a zombie");
        assert_eq!(live_group_of("garbage"), None);
    }
}
