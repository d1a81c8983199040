//! Which paths a confined command (and every process it starts) asked to change, so that
//! undo can tell its changes from the person's edits made while it ran.
//!
//! A seccomp filter in user-notification mode reports each system call that may change a
//! file (an open for writing, create, unlink, rename, mkdir, link, truncate …) to a
//! supervisor thread in toolgate, which reads the path from the process, records it and
//! lets the call continue unchanged (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): nothing is
//! refused here, the sandbox's own rules still apply. The filter is installed last in the
//! child (after the confinement set `no_new_privs`) and its listener descriptor sent to
//! toolgate over a socket pair before exec.
//!
//! A path recorded is only a claim: the checkpoint keeps a file as the call's change when
//! it also changed between the call's start and end. Anything that fails (an old kernel,
//! an unconfined command) leaves the log untraced, and then the whole window counts.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The paths one call asked to change, filled by the supervisor while the call runs.
#[derive(Debug, Clone, Default)]
pub struct WriteLog {
    inner: Arc<Mutex<TraceState>>,
}

#[derive(Debug, Default)]
struct TraceState {
    /// A supervisor was attached: every write-intent call of the command is in `paths`.
    traced: bool,
    paths: BTreeSet<PathBuf>,
}

impl WriteLog {
    pub fn new() -> WriteLog {
        WriteLog::default()
    }

    /// The absolute paths the command asked to change so far; None when it was not traced
    /// (then nothing is known about which changes are its own).
    pub fn written(&self) -> Option<Vec<PathBuf>> {
        let state = self.inner.lock().ok()?;
        state.traced.then(|| state.paths.iter().cloned().collect())
    }

    #[cfg_attr(
        not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )),
        allow(dead_code)
    )]
    fn attached(&self) {
        if let Ok(mut state) = self.inner.lock() {
            state.traced = true;
        }
    }

    #[cfg_attr(
        not(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )),
        allow(dead_code)
    )]
    fn record(&self, path: PathBuf) {
        if let Ok(mut state) = self.inner.lock() {
            state.paths.insert(crate::paths::lexically_normal(&path));
        }
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) use linux::Tracer;

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) use other::Tracer;

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod other {
    use super::WriteLog;
    use std::process::Command;

    /// No tracing on this platform: the log stays untraced.
    pub(crate) struct Tracer;

    impl Tracer {
        pub(crate) fn new() -> std::io::Result<Tracer> {
            Ok(Tracer)
        }
        pub(crate) fn install(&self, _command: &mut Command) {}
        pub(crate) fn start(self, _log: &WriteLog) {}
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod linux {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;
    use std::process::Command;
    use std::sync::Arc;

    use super::WriteLog;

    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;

    // Classic BPF opcodes (linux/filter.h).
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    /// Offsets in `struct seccomp_data`.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    const fn arg(i: u32) -> u32 {
        16 + 8 * i
    }
    /// O_WRONLY | O_RDWR | O_CREAT | O_TRUNC: an open that may change the file.
    const WRITE_FLAGS: u32 = (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;
    const AT_FDCWD: i32 = libc::AT_FDCWD;

    /// Where a system call's path is: relative to a directory descriptor argument, to the
    /// working directory, or an open descriptor itself.
    #[derive(Clone, Copy)]
    enum PathArg {
        At { dirfd: u32, path: u32 },
        Cwd { path: u32 },
        Fd { fd: u32 },
    }

    /// Calls reported only when their flags argument asks for writing.
    fn opens() -> Vec<(i64, u32)> {
        let mut opens = vec![(libc::SYS_openat, 2)];
        #[cfg(target_arch = "x86_64")]
        opens.push((libc::SYS_open, 1));
        opens
    }

    /// Calls always reported, with where their paths are.
    fn changing_calls() -> Vec<(i64, Vec<PathArg>)> {
        use PathArg::{At, Cwd, Fd};
        let mut calls = vec![
            (libc::SYS_openat, vec![At { dirfd: 0, path: 1 }]),
            (libc::SYS_openat2, vec![At { dirfd: 0, path: 1 }]),
            (libc::SYS_unlinkat, vec![At { dirfd: 0, path: 1 }]),
            (
                libc::SYS_renameat2,
                vec![At { dirfd: 0, path: 1 }, At { dirfd: 2, path: 3 }],
            ),
            (libc::SYS_mkdirat, vec![At { dirfd: 0, path: 1 }]),
            (libc::SYS_linkat, vec![At { dirfd: 2, path: 3 }]),
            (libc::SYS_symlinkat, vec![At { dirfd: 1, path: 2 }]),
            (libc::SYS_fchmodat, vec![At { dirfd: 0, path: 1 }]),
            (libc::SYS_truncate, vec![Cwd { path: 0 }]),
            (libc::SYS_ftruncate, vec![Fd { fd: 0 }]),
        ];
        #[cfg(target_arch = "x86_64")]
        calls.extend([
            (libc::SYS_open, vec![Cwd { path: 0 }]),
            (libc::SYS_creat, vec![Cwd { path: 0 }]),
            (libc::SYS_unlink, vec![Cwd { path: 0 }]),
            (libc::SYS_rmdir, vec![Cwd { path: 0 }]),
            (libc::SYS_mkdir, vec![Cwd { path: 0 }]),
            (libc::SYS_chmod, vec![Cwd { path: 0 }]),
            (libc::SYS_rename, vec![Cwd { path: 0 }, Cwd { path: 1 }]),
            (
                libc::SYS_renameat,
                vec![At { dirfd: 0, path: 1 }, At { dirfd: 2, path: 3 }],
            ),
            (libc::SYS_link, vec![Cwd { path: 1 }]),
            (libc::SYS_symlink, vec![Cwd { path: 1 }]),
        ]);
        calls
    }

    fn program() -> Vec<libc::sock_filter> {
        let stmt = |code, k| libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |code, k, jt, jf| libc::sock_filter { code, jt, jf, k };
        let allow = stmt(RET_K, libc::SECCOMP_RET_ALLOW);
        let notify = stmt(RET_K, libc::SECCOMP_RET_USER_NOTIF);
        let mut prog = vec![
            stmt(LD_W_ABS, ARCH),
            jump(JEQ_K, AUDIT_ARCH, 1, 0),
            allow,
            stmt(LD_W_ABS, NR),
        ];
        for (nr, flags) in opens() {
            // Not this call: skip the four instructions of its block.
            prog.push(jump(JEQ_K, nr as u32, 0, 4));
            prog.push(stmt(LD_W_ABS, arg(flags)));
            prog.push(jump(JSET_K, WRITE_FLAGS, 0, 1));
            prog.push(notify);
            prog.push(allow);
        }
        let opens: Vec<i64> = opens().into_iter().map(|(nr, _)| nr).collect();
        for (nr, _) in changing_calls() {
            if opens.contains(&nr) {
                continue;
            }
            prog.push(jump(JEQ_K, nr as u32, 0, 1));
            prog.push(notify);
        }
        prog.push(allow);
        prog
    }

    /// Set up before the spawn; `install` adds the child's side, `start` the supervisor.
    pub(crate) struct Tracer {
        parent: OwnedFd,
        child: OwnedFd,
        program: Arc<Vec<libc::sock_filter>>,
    }

    impl Tracer {
        pub(crate) fn new() -> io::Result<Tracer> {
            let mut fds = [0 as RawFd; 2];
            // SAFETY: socketpair writes two descriptors into the array we own.
            let result = unsafe {
                libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                    0,
                    fds.as_mut_ptr(),
                )
            };
            if result != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both descriptors were just created and are owned by nobody else.
            let (parent, child) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            Ok(Tracer {
                parent,
                child,
                program: Arc::new(program()),
            })
        }

        /// Makes `command`'s child install the filter and send its listener; must come
        /// after the confinement (which sets `no_new_privs`, without which an unprivileged
        /// process cannot install a filter). A child that cannot do it runs untraced.
        pub(crate) fn install(&self, command: &mut Command) {
            let socket = self.child.as_raw_fd();
            let program = Arc::clone(&self.program);
            // SAFETY: the closure runs between fork and exec and makes only system calls
            // on memory prepared before the fork (the program, stack buffers): no
            // allocation, no locks.
            unsafe {
                command.pre_exec(move || {
                    send_listener(socket, &program);
                    Ok(())
                });
            }
        }

        /// After the spawn: receives the listener and starts the supervisor; the log
        /// stays untraced when no listener came.
        pub(crate) fn start(self, log: &WriteLog) {
            let Tracer { parent, child, .. } = self;
            // Our copy of the child's end must go, or the receive below would wait for
            // ever when the child sent nothing.
            drop(child);
            let Some(listener) = receive_listener(&parent) else {
                return;
            };
            log.attached();
            let log = log.clone();
            let spawned = std::thread::Builder::new()
                .name("write-trace".into())
                .spawn(move || supervise(listener, &log));
            if let Err(e) = spawned {
                // The listener was moved into the closure and is closed with it: the
                // command's reported calls fail with ENOSYS rather than hang.
                tracing::warn!("write trace: {e}");
            }
        }
    }

    /// The buffers of the one message that hands the listener over: a byte of data (a
    /// stream message needs one) and room for one descriptor (SCM_RIGHTS). Both ends use
    /// it, so what is sent is what the receiver has room for. No allocation: the sender
    /// runs between fork and exec.
    struct FdMessage {
        byte: [u8; 1],
        iov: libc::iovec,
        control: [u64; 4],
    }

    impl FdMessage {
        const CONTROL_BYTES: usize = size_of::<[u64; 4]>();

        fn new() -> FdMessage {
            FdMessage {
                byte: [0],
                iov: libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                },
                control: [0; 4],
            }
        }

        /// A header over these buffers with `control_len` bytes of control data. It
        /// points into `self`: use it before `self` moves or is dropped.
        fn header(&mut self, control_len: usize) -> libc::msghdr {
            self.iov = libc::iovec {
                iov_base: self.byte.as_mut_ptr().cast(),
                iov_len: 1,
            };
            // SAFETY: msghdr is plain data, and all zeroes is its empty value.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = &mut self.iov;
            msg.msg_iovlen = 1;
            msg.msg_control = self.control.as_mut_ptr().cast();
            msg.msg_controllen = control_len.min(Self::CONTROL_BYTES) as _;
            msg
        }
    }

    /// In the child: installs the filter and sends its listener descriptor.
    fn send_listener(socket: RawFd, program: &[libc::sock_filter]) {
        let prog = libc::sock_fprog {
            len: program.len() as u16,
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: seccomp reads the program we keep alive; sendmsg reads the stack
        // buffers below; close takes a descriptor we own.
        unsafe {
            let listener = libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            );
            if listener < 0 {
                return;
            }
            let listener = listener as RawFd;
            let mut buffers = FdMessage::new();
            let msg = buffers.header(libc::CMSG_SPACE(size_of::<RawFd>() as u32) as usize);
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if !cmsg.is_null() {
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
                libc::sendmsg(socket, &msg, 0);
            }
            libc::close(listener);
        }
    }

    fn receive_listener(socket: &OwnedFd) -> Option<OwnedFd> {
        // SAFETY: recvmsg writes into the stack buffers it is given; the descriptor it
        // passes is new and owned by us from here on.
        unsafe {
            let mut buffers = FdMessage::new();
            let mut msg = buffers.header(FdMessage::CONTROL_BYTES);
            let received = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if received <= 0 {
                return None;
            }
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            Some(OwnedFd::from_raw_fd(fd))
        }
    }

    /// Answers every reported call with "continue", recording its paths first (the
    /// process waits meanwhile, so its memory holds the path we read). Ends when the last
    /// process using the filter is gone.
    fn supervise(listener: OwnedFd, log: &WriteLog) {
        let calls = changing_calls();
        let fd = listener.as_raw_fd();
        loop {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one descriptor we own, into a struct on our stack.
            let ready = unsafe { libc::poll(&mut poll, 1, -1) };
            if ready < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            if poll.revents & libc::POLLIN == 0 {
                // POLLHUP: no process uses the filter any more.
                return;
            }
            // SAFETY: the kernel fills the zeroed struct; then answers it by id.
            let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            let got = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) };
            if got != 0 {
                // ENOENT: the process died before we read its call.
                continue;
            }
            let pid = notif.pid as libc::pid_t;
            let nr = i64::from(notif.data.nr);
            if let Some((_, args)) = calls.iter().find(|(n, _)| *n == nr) {
                for place in args {
                    if let Some(path) = path_of(pid, &notif.data.args, *place) {
                        log.record(path);
                    }
                }
            }
            let mut resp = libc::seccomp_notif_resp {
                id: notif.id,
                val: 0,
                error: 0,
                flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            };
            // SAFETY: answers the call we received, from a struct on our stack.
            unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
        }
    }

    fn path_of(pid: libc::pid_t, args: &[u64; 6], place: PathArg) -> Option<PathBuf> {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let (base, raw) = match place {
            PathArg::Fd { fd } => {
                return std::fs::read_link(
                    proc.join("fd").join((args[fd as usize] as i32).to_string()),
                )
                .ok();
            }
            PathArg::Cwd { path } => (None, read_string(pid, args[path as usize])?),
            PathArg::At { dirfd, path } => {
                let dirfd = args[dirfd as usize] as i32;
                let base = (dirfd != AT_FDCWD).then_some(dirfd);
                (base, read_string(pid, args[path as usize])?)
            }
        };
        let raw =
            PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(raw));
        if raw.is_absolute() {
            return Some(raw);
        }
        let dir = match base {
            None => std::fs::read_link(proc.join("cwd")).ok()?,
            Some(fd) => std::fs::read_link(proc.join("fd").join(fd.to_string())).ok()?,
        };
        Some(dir.join(raw))
    }

    /// A NUL-terminated string of process `pid` at `address`, read page by page (the
    /// string may end just before an unmapped page).
    fn read_string(pid: libc::pid_t, address: u64) -> Option<Vec<u8>> {
        const PAGE: u64 = 4096;
        let mut out = Vec::new();
        let mut at = address;
        while out.len() < libc::PATH_MAX as usize {
            let len = (PAGE - at % PAGE) as usize;
            let mut buf = vec![0u8; len];
            let local = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: len,
            };
            let remote = libc::iovec {
                iov_base: at as *mut libc::c_void,
                iov_len: len,
            };
            // SAFETY: reads another process's memory into our buffer of `len` bytes.
            let read = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
            if read <= 0 {
                return None;
            }
            let read = &buf[..read as usize];
            match read.iter().position(|b| *b == 0) {
                Some(end) => {
                    out.extend_from_slice(&read[..end]);
                    return Some(out);
                }
                None => out.extend_from_slice(read),
            }
            at += read.len() as u64;
        }
        None
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_traced_command_reports_the_files_it_changes_and_not_those_it_reads() {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("read.txt"), "r").unwrap();
            std::fs::write(dir.path().join("gone.txt"), "g").unwrap();
            let tracer = Tracer::new().unwrap();
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg("cat read.txt > /dev/null; echo x > made.txt; rm gone.txt; mkdir d; mv made.txt d/moved.txt")
                .current_dir(dir.path());
            // SAFETY: prctl with integers only, between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                    Ok(())
                });
            }
            tracer.install(&mut command);
            let mut child = command.spawn().unwrap();
            let log = WriteLog::new();
            tracer.start(&log);
            assert!(child.wait().unwrap().success());
            let ws = std::fs::canonicalize(dir.path()).unwrap();
            let written: Vec<PathBuf> = log
                .written()
                .expect("traced")
                .into_iter()
                .filter_map(|p| p.strip_prefix(&ws).ok().map(PathBuf::from))
                .collect();
            for expected in ["made.txt", "gone.txt", "d", "d/moved.txt"] {
                assert!(
                    written.contains(&PathBuf::from(expected)),
                    "{expected} in {written:?}"
                );
            }
            assert!(!written.contains(&PathBuf::from("read.txt")), "{written:?}");
        }
    }
}
