//! Noticing that the terminal is gone when no SIGHUP says so (decision 0090).
//!
//! A terminal that is not the console's controlling terminal (started under `setsid`, or
//! by a program that opens the pty without making it controlling) hangs up silently when
//! its master side closes: no signal, and every `read` returns 0 at once. crossterm 0.29's
//! event source reads until the read would block, and treats a 0-byte read (and any error
//! but `WouldBlock`) as "nothing yet": its reading thread spins on `read(0, "", 1024) = 0`
//! forever and its event stream never ends. So the console watches the same descriptor
//! itself: woken whenever it turns readable, it asks `poll(2)` whether the terminal hung up
//! or failed (`POLLHUP`, `POLLERR`, `POLLNVAL`), which plain input never reports.
//!
//! Once the terminal is gone, [`HangupWatch::detach`] puts a descriptor that always answers
//! "would block" where crossterm reads, so its thread goes back to waiting instead of
//! spinning while the console shuts down, and `/dev/null` where the output went.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// The readiness `poll(2)` reports for a terminal that is gone rather than quiet.
const GONE: libc::c_short = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;

/// Which descriptor crossterm reads the keys from, watched through a copy of our own.
enum Watched {
    /// Standard input is the terminal: crossterm reads descriptor 0.
    Stdin,
    /// Standard input is not a terminal: crossterm opens `/dev/tty`, its own copy.
    DevTty,
}

pub struct HangupWatch {
    fd: AsyncFd<OwnedFd>,
    watched: Watched,
}

impl HangupWatch {
    /// Watches the terminal crossterm reads (standard input when it is a terminal, else
    /// `/dev/tty`, as crossterm chooses).
    pub fn new() -> std::io::Result<Self> {
        let stdin = std::io::stdin();
        // SAFETY: isatty only inspects the descriptor.
        let (fd, watched) = if unsafe { libc::isatty(stdin.as_raw_fd()) } == 1 {
            (stdin.as_fd().try_clone_to_owned()?, Watched::Stdin)
        } else {
            let tty = File::options().read(true).open("/dev/tty")?;
            (OwnedFd::from(tty), Watched::DevTty)
        };
        // Readable only: a terminal is always writable, and every frame drawn would wake us.
        // SAFETY: `fd` is an open descriptor owned by the AsyncFd for its whole life
        // (an OwnedFd always returns the same descriptor and closes it only on drop).
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(std::io::Error::from)?;
        Ok(HangupWatch { fd, watched })
    }

    /// Returns once the terminal hung up or failed; waits forever while it works (keys
    /// wake it, and it goes back to waiting: crossterm reads them).
    pub async fn gone(&self) {
        loop {
            let mut guard = match self.fd.readable().await {
                Ok(guard) => guard,
                // The reactor cannot watch it: a terminal we cannot watch counts as gone
                // rather than risking a console nobody can reach (fail closed).
                Err(e) => {
                    tracing::warn!("the terminal cannot be watched for a hang-up: {e}");
                    return;
                }
            };
            if is_gone(self.fd.get_ref()) {
                return;
            }
            guard.clear_ready();
        }
    }

    /// Whether the terminal is gone right now (a SIGHUP may come with a live terminal,
    /// sent by `kill`, or with a dead one, its window closed).
    pub fn is_gone_now(&self) -> bool {
        is_gone(self.fd.get_ref())
    }

    /// Lets go of the dead terminal: standard input becomes a descriptor that always
    /// answers "would block", so crossterm's reading thread goes back to waiting instead of
    /// spinning on it; standard output and error, where they are that terminal, write to
    /// `/dev/null`, so what is written on the way out (ratatui shows the cursor when it is
    /// dropped, and `eprintln!` panics when its write fails) cannot fail. Call it after the
    /// restore was attempted. Best effort: what cannot be replaced is logged, and the
    /// process exits moments later anyway.
    pub fn detach(&self) {
        let terminal = identity(self.fd.get_ref().as_raw_fd());
        if matches!(self.watched, Watched::Stdin) {
            // An eventfd whose counter is 0 is never readable and its reads fail with
            // EAGAIN, which crossterm takes as "wait for the next event".
            // SAFETY: eventfd creates a new descriptor, checked below.
            let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            replace(libc::STDIN_FILENO, raw, "an empty event counter");
        }
        for fd in [libc::STDOUT_FILENO, libc::STDERR_FILENO] {
            if terminal.is_some() && identity(fd) == terminal {
                // SAFETY: open with a constant NUL-terminated path, checked below.
                let raw =
                    unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
                replace(fd, raw, "/dev/null");
            }
        }
    }
}

/// Puts the new descriptor `raw` (owned here, closed after) where `target` is; dup2 closes
/// the old one in the same step, so no read or write can slip between.
fn replace(target: libc::c_int, raw: libc::c_int, what: &str) {
    if raw < 0 {
        tracing::warn!(
            "could not open {what} to replace descriptor {target} of the hung-up terminal: {}",
            std::io::Error::last_os_error()
        );
        return;
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns; closed when this drops.
    let new = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: both descriptors are open; dup2 does not touch memory.
    if unsafe { libc::dup2(new.as_raw_fd(), target) } < 0 {
        tracing::warn!(
            "could not replace descriptor {target} of the hung-up terminal: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Which file `fd` is open on (device and inode; `fstat` still answers on a hung-up
/// terminal, where `isatty` no longer does).
fn identity(fd: libc::c_int) -> Option<(libc::dev_t, libc::ino_t)> {
    // SAFETY: stat is plain data that fstat fills in.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes only into `stat`.
    (unsafe { libc::fstat(fd, &mut stat) } == 0).then_some((stat.st_dev, stat.st_ino))
}

/// Whether `poll(2)` says the terminal behind `fd` hung up or failed (not merely readable).
fn is_gone(fd: &OwnedFd) -> bool {
    let mut entry = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, timeout 0: it only reports, never waits.
    let ready = unsafe { libc::poll(&mut entry, 1, 0) };
    ready > 0 && entry.revents & GONE != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pty whose master side closes reports the hang-up through poll, and a live one
    /// with input waiting does not.
    #[test]
    fn a_closed_master_reads_as_gone_and_input_does_not() {
        let mut master: libc::c_int = -1;
        let mut slave: libc::c_int = -1;
        // SAFETY: openpty writes two descriptors into our variables.
        let made = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(made, 0, "openpty");
        // SAFETY: fresh descriptors from openpty, owned here.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        assert!(!is_gone(&slave), "a quiet live terminal is not gone");
        // SAFETY: writes one byte from a valid buffer.
        let written = unsafe { libc::write(master.as_raw_fd(), b"x\n".as_ptr().cast(), 2) };
        assert_eq!(written, 2);
        assert!(!is_gone(&slave), "input waiting is not a hang-up");
        drop(master);
        assert!(is_gone(&slave), "the master closed: the terminal is gone");
    }
}
