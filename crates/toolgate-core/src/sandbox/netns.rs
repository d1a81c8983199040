//! The network of a proxied confinement (`network = "proxy"`, decision 0099): a user and a
//! network namespace of the child's own, holding only loopback, where the one thing
//! listening is a TCP listener on 127.0.0.1:[`PROXY_PORT`] that the child makes and hands
//! to toolgate before exec. toolgate serves the egress proxy on it from outside the
//! namespace; every other address the process could name is unreachable, because the
//! namespace has no route out.
//!
//! Everything is prepared in the parent ([`ProxyNet::prepare`]): the socketpair the listener
//! travels over, the paths and contents of the id maps, the interface request. The child
//! ([`ProxyNet::enter`]) only makes system calls on them: no allocation, no locks.

use std::ffi::CStr;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::SandboxError;

/// The port the proxy listens on inside a proxied process's namespace (127.0.0.1). The
/// namespace is the process's own, so the number cannot clash with anything on the host.
pub const PROXY_PORT: u16 = 3128;

const SETGROUPS: &CStr = c"/proc/self/setgroups";
const UID_MAP: &CStr = c"/proc/self/uid_map";
const GID_MAP: &CStr = c"/proc/self/gid_map";

/// The steps of [`ProxyNet::enter`], named for the probe's report.
const STEPS: &[&str] = &[
    "",
    "creating a user and network namespace (unshare)",
    "writing /proc/self/setgroups",
    "writing /proc/self/uid_map",
    "writing /proc/self/gid_map",
    "bringing up the loopback interface",
    "making the proxy listener",
    "handing the listener to toolgate",
];

/// What a step's failure reports: its number in [`STEPS`] and errno.
type StepError = (u32, i32);

/// The prepared namespace setup of one confinement.
pub(super) struct ProxyNet {
    /// toolgate's end of the socketpair: the listeners arrive here.
    parent_end: OwnedFd,
    /// The child's end (each forked child has its copy; exec closes it).
    child_end: OwnedFd,
    uid_map: [u8; 32],
    uid_map_len: usize,
    gid_map: [u8; 32],
    gid_map_len: usize,
    address: libc::sockaddr_in,
}

impl ProxyNet {
    pub(super) fn prepare() -> Result<ProxyNet, SandboxError> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: socketpair writes two fds into the array it is given.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(SandboxError::Prepare(format!(
                "the socketpair for the proxy listener: {}",
                io::Error::last_os_error()
            )));
        }
        // SAFETY: both fds were just created and are owned by nobody else.
        let (parent_end, child_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // The process keeps its own ids inside: files stay its own, nothing gains rights.
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let (uid_map, uid_map_len) = id_map(uid);
        let (gid_map, gid_map_len) = id_map(gid);
        // SAFETY: sockaddr_in is a plain C struct for which zero is valid.
        let mut address: libc::sockaddr_in = unsafe { zeroed() };
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = PROXY_PORT.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        Ok(ProxyNet {
            parent_end,
            child_end,
            uid_map,
            uid_map_len,
            gid_map,
            gid_map_len,
            address,
        })
    }

    /// Runs in the forked child before Landlock and seccomp: enters a namespace of its own,
    /// makes the listener and sends it to the parent.
    pub(super) fn enter(&self) -> io::Result<()> {
        self.enter_steps()
            .map_err(|(_, errno)| io::Error::from_raw_os_error(errno))
    }

    fn enter_steps(&self) -> Result<(), StepError> {
        let errno = || {
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO)
        };
        // SAFETY: every call below takes integers, pointers into `self` (alive for the
        // whole function) or to locals; none allocates or takes a lock.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                return Err((1, errno()));
            }
            write_file(SETGROUPS, b"deny").map_err(|e| (2, e))?;
            write_file(UID_MAP, &self.uid_map[..self.uid_map_len]).map_err(|e| (3, e))?;
            write_file(GID_MAP, &self.gid_map[..self.gid_map_len]).map_err(|e| (4, e))?;
            let datagram = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
            if datagram < 0 {
                return Err((5, errno()));
            }
            // Built here, on the stack: it holds a pointer-sized union, which would make the
            // prepared state neither Send nor Sync; filling it allocates nothing.
            let mut request: libc::ifreq = zeroed();
            request.ifr_name[0] = b'l' as libc::c_char;
            request.ifr_name[1] = b'o' as libc::c_char;
            request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            let up = libc::ioctl(datagram, libc::SIOCSIFFLAGS, &mut request);
            let up_errno = errno();
            libc::close(datagram);
            if up != 0 {
                return Err((5, up_errno));
            }
            let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if listener < 0 {
                return Err((6, errno()));
            }
            let bound = libc::bind(
                listener,
                (&self.address as *const libc::sockaddr_in).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            if bound != 0 || libc::listen(listener, 128) != 0 {
                let e = errno();
                libc::close(listener);
                return Err((6, e));
            }
            let sent = send(self.child_end.as_raw_fd(), Some(listener), (0, 0));
            libc::close(listener);
            sent.map_err(|e| (7, e))
        }
    }

    /// The last listener a child sent (a spawn that tried several programs may have sent
    /// one per attempt; only the last one's child ran). Earlier ones are closed.
    pub(super) fn take_listener(&self) -> Result<TcpListener, SandboxError> {
        let mut last = None;
        let mut failure = None;
        loop {
            match receive(self.parent_end.as_raw_fd()) {
                Ok(Some((fd, report))) => {
                    if fd.is_some() {
                        last = fd;
                    } else if report.0 != 0 {
                        failure = Some(report);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    return Err(SandboxError::Handover(format!(
                        "receiving the proxy listener: {e}"
                    )));
                }
            }
        }
        match (last, failure) {
            (Some(fd), _) => Ok(TcpListener::from(fd)),
            (None, Some((step, errno))) => Err(SandboxError::Handover(describe(step, errno))),
            (None, None) => Err(SandboxError::Handover(
                "no confined process has sent a proxy listener".into(),
            )),
        }
    }

    /// Probes whether the setup works here: a forked child runs it and reports.
    pub(super) fn probe() -> Result<(), String> {
        let net = ProxyNet::prepare().map_err(|e| e.reason().to_string())?;
        // SAFETY: the child only runs `enter_steps` and `send` (system calls on prepared
        // data) and then `_exit`; it never returns into Rust code that could allocate.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", io::Error::last_os_error()));
        }
        if pid == 0 {
            let code = match net.enter_steps() {
                Ok(()) => 0,
                Err(report) => {
                    let _ = send(net.child_end.as_raw_fd(), None, report);
                    1
                }
            };
            // SAFETY: _exit ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) }
        }
        let mut status = 0;
        // SAFETY: waits for the child we just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let listener = net.take_listener().map_err(|e| e.reason().to_string())?;
        match listener.local_addr() {
            Ok(addr) if addr.port() == PROXY_PORT => Ok(()),
            Ok(addr) => Err(format!("the listener came back bound to {addr}")),
            Err(e) => Err(format!("the listener came back unusable: {e}")),
        }
    }
}

/// "UID UID 1\n" for an id, in a fixed buffer.
fn id_map(id: u32) -> ([u8; 32], usize) {
    let text = format!("{id} {id} 1\n");
    let mut buf = [0u8; 32];
    buf[..text.len()].copy_from_slice(text.as_bytes());
    (buf, text.len())
}

/// Opens, writes and closes `path`; errno on failure. Async-signal-safe.
unsafe fn write_file(path: &CStr, data: &[u8]) -> Result<(), i32> {
    // SAFETY: a NUL-terminated path; the buffer outlives the call.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        libc::close(fd);
        if written != data.len() as isize {
            return Err(if written < 0 { e } else { libc::EIO });
        }
    }
    Ok(())
}

/// Room for one fd's control message, aligned as `cmsghdr` needs.
#[repr(C, align(8))]
struct ControlBuffer([u8; 64]);

/// Sends the report (step, errno) and, if given, `fd` over `socket`. No allocation.
fn send(socket: RawFd, fd: Option<RawFd>, report: StepError) -> Result<(), i32> {
    let mut data = [0u8; 8];
    data[..4].copy_from_slice(&report.0.to_ne_bytes());
    data[4..].copy_from_slice(&report.1.to_ne_bytes());
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let mut control = ControlBuffer([0; 64]);
    // SAFETY: msghdr is a plain C struct; the pointers set below stay valid for the call,
    // and the CMSG macros only compute addresses inside `control`.
    unsafe {
        let mut message: libc::msghdr = zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        if let Some(fd) = fd {
            message.msg_control = control.0.as_mut_ptr().cast();
            message.msg_controllen = libc::CMSG_SPACE(size_of::<RawFd>() as u32) as _;
            let header = libc::CMSG_FIRSTHDR(&message);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        }
        if libc::sendmsg(socket, &message, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
    }
    Ok(())
}

/// One message from `socket` without waiting: the fd it carried (if any) and the report.
/// `Ok(None)` when nothing is queued.
fn receive(socket: RawFd) -> io::Result<Option<(Option<OwnedFd>, StepError)>> {
    let mut data = [0u8; 8];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let mut control = ControlBuffer([0; 64]);
    // SAFETY: as in `send`; received fds are taken into ownership right away.
    unsafe {
        let mut message: libc::msghdr = zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = control.0.len() as _;
        let n = libc::recvmsg(
            socket,
            &mut message,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        );
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock => Ok(None),
                _ => Err(e),
            };
        }
        let mut fd = None;
        let mut header = libc::CMSG_FIRSTHDR(&message);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let raw = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
                fd = Some(OwnedFd::from_raw_fd(raw));
            }
            header = libc::CMSG_NXTHDR(&message, header);
        }
        let step = u32::from_ne_bytes([data[0], data[1], data[2], data[3]]);
        let errno = i32::from_ne_bytes([data[4], data[5], data[6], data[7]]);
        Ok(Some((fd, (step, errno))))
    }
}

/// "writing /proc/self/uid_map failed: Operation not permitted (os error 1)".
fn describe(step: u32, errno: i32) -> String {
    let what = STEPS
        .get(step as usize)
        .copied()
        .unwrap_or("an unknown step");
    let mut reason = format!("{what} failed: {}", io::Error::from_raw_os_error(errno));
    let refused = errno == libc::EPERM || errno == libc::EACCES;
    if refused && (2..=5).contains(&step) {
        reason.push_str(
            " (unprivileged user namespaces are restricted here, e.g. by AppArmor's restrict_unprivileged_userns)",
        );
    } else if step == 1 && (refused || errno == libc::ENOSPC) {
        reason.push_str(
            " (unprivileged user namespaces are turned off here: see the sysctls user.max_user_namespaces and kernel.unprivileged_userns_clone)",
        );
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_maps_name_the_same_id_inside_and_out() {
        let (buf, len) = id_map(1000);
        assert_eq!(&buf[..len], b"1000 1000 1\n");
    }

    #[test]
    fn a_failed_step_is_described_with_its_cause() {
        let text = describe(3, libc::EPERM);
        assert!(
            text.starts_with("writing /proc/self/uid_map failed"),
            "{text}"
        );
        assert!(text.contains("restrict_unprivileged_userns"), "{text}");
        assert!(describe(1, libc::ENOSPC).starts_with("creating a user and network namespace"));
    }

    #[test]
    fn the_last_listener_sent_is_the_one_taken_and_a_report_alone_is_the_reason() {
        let net = ProxyNet::prepare().unwrap();
        let first = TcpListener::bind("127.0.0.1:0").unwrap();
        let second = TcpListener::bind("127.0.0.1:0").unwrap();
        let child = net.child_end.as_raw_fd();
        send(child, Some(first.as_raw_fd()), (0, 0)).unwrap();
        send(child, Some(second.as_raw_fd()), (0, 0)).unwrap();
        let taken = net.take_listener().unwrap();
        assert_eq!(taken.local_addr().unwrap(), second.local_addr().unwrap());
        // Nothing left: a second take says so.
        let err = net.take_listener().unwrap_err();
        assert!(err.reason().contains("no confined process"), "{err}");
        send(child, None, (3, libc::EPERM)).unwrap();
        let err = net.take_listener().unwrap_err();
        assert!(
            err.reason()
                .starts_with("writing /proc/self/uid_map failed"),
            "{err}"
        );
    }

    #[test]
    fn the_setup_works_on_this_machine() {
        // The development and CI machines allow unprivileged user namespaces.
        ProxyNet::probe().unwrap();
    }
}
