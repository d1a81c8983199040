//! Ending a whole session: every process whose session id is the leader's, whatever process
//! group it moved to.
//!
//! A confined bash command cannot leave its session (seccomp refuses `setsid`, see
//! `sandbox/seccomp.rs`) but may change its process group inside it (`timeout` does, as
//! does a shell with job control), which a signal to the leader's group would miss. The
//! session id is the leader's pid, and it cannot be reused while the leader is unreaped, so
//! "every process of session `sid`" names exactly what the command started.

/// SIGKILLs every process of session `sid` (the group first, then the stragglers found in
/// /proc) until a look finds none left that was not already killed. Call it before the
/// session leader is reaped.
pub fn kill_session(sid: libc::pid_t) {
    if sid <= 1 {
        // Session 0 or 1 would be the kernel's or init's: never meant.
        return;
    }
    super::signal_group(sid, libc::SIGKILL);
    #[cfg(target_os = "linux")]
    linux::sweep(sid);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeSet;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A process, told apart from a later one with the same pid by its start time.
    type Identity = (libc::pid_t, u64);

    /// Bounds the loop against a process table that never settles (a fork bomb outrunning
    /// the sweep); each round kills everything it found, so a bomb does not get far.
    const MAX_ROUNDS: usize = 1000;

    pub(super) fn sweep(sid: libc::pid_t) {
        let mut killed: BTreeSet<Identity> = BTreeSet::new();
        for _ in 0..MAX_ROUNDS {
            let fresh: Vec<Identity> = members(sid)
                .into_iter()
                .filter(|id| !killed.contains(id))
                .collect();
            if fresh.is_empty() {
                // Everything left has a SIGKILL pending: it cannot return to user space,
                // so it cannot start anything more.
                return;
            }
            for identity in fresh {
                kill(sid, identity);
                killed.insert(identity);
            }
        }
        tracing::warn!("bash: session {sid} kept starting processes while it was being ended");
    }

    /// The live processes of session `sid` (zombies are already ended).
    fn members(sid: libc::pid_t) -> Vec<Identity> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
            .filter_map(|pid| {
                let stat = Stat::read(pid)?;
                (stat.session == sid && stat.live).then_some((pid, stat.start))
            })
            .collect()
    }

    /// SIGKILL through a pidfd, after checking that the pid still names the process that
    /// was found (not a newcomer that took a freed pid).
    fn kill(sid: libc::pid_t, (pid, start): Identity) {
        // SAFETY: pidfd_open takes plain integers and returns a new descriptor or -1.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if raw < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                // Kernels before 5.3: the window between the look and the kill is all
                // there is, and a pid is not reused that fast in practice.
                // SAFETY: kill takes plain integers.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            return;
        }
        // SAFETY: the descriptor was just returned to us and is owned by nothing else.
        let pidfd = unsafe { OwnedFd::from_raw_fd(raw as libc::c_int) };
        let same = Stat::read(pid).is_some_and(|s| s.session == sid && s.start == start);
        if same {
            use std::os::fd::AsRawFd;
            // SAFETY: plain integers and a null siginfo pointer, which the call allows.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0u32,
                );
            }
        }
    }

    /// The fields of /proc/PID/stat this module needs.
    struct Stat {
        live: bool,
        session: libc::pid_t,
        start: u64,
    }

    impl Stat {
        fn read(pid: libc::pid_t) -> Option<Stat> {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Stat::parse(&text)
        }

        /// `pid (comm) state ppid pgrp session … starttime(22) …`; the command name may
        /// hold spaces and parentheses, so the fields are counted from the last `)`.
        fn parse(text: &str) -> Option<Stat> {
            let after = &text[text.rfind(')')? + 1..];
            let fields: Vec<&str> = after.split_whitespace().collect();
            // fields[0] is field 3 (state), so field N is fields[N - 3].
            let state = fields.first()?;
            Some(Stat {
                live: !matches!(*state, "Z" | "X" | "x"),
                session: fields.get(3)?.parse().ok()?,
                start: fields.get(19)?.parse().ok()?,
            })
        }
    }

    #[cfg(test)]
    mod tests {
        use super::Stat;

        #[test]
        fn stat_fields_are_counted_from_the_last_parenthesis() {
            let text =
                "4242 (a) b) (c) S 1 4240 4240 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
            let stat = Stat::parse(text).unwrap();
            assert!(stat.live);
            assert_eq!((stat.session, stat.start), (4240, 987654));
            let zombie = text.replace(" S ", " Z ");
            assert!(!Stat::parse(&zombie).unwrap().live);
        }
    }
}
