//! The seccomp filters of a confinement.
//!
//! - No network: `socket()` fails with EACCES for every family but AF_UNIX (local IPC keeps
//!   working), and so does `io_uring_setup`, whose socket operations would not pass through
//!   the `socket` system call at all. Landlock's TCP rules (ABI 4) refuse TCP bind/connect
//!   as well, but not UDP, raw or netlink sockets; refusing the sockets themselves covers
//!   every protocol.
//! - Proxied (decision 0099): `socket()` allowed for AF_UNIX, and for AF_INET/AF_INET6 only
//!   as a TCP stream (type `SOCK_STREAM` whatever the NONBLOCK/CLOEXEC flags, protocol 0
//!   or IPPROTO_TCP); UDP, raw, SCTP, MPTCP, packet and netlink sockets fail with EACCES,
//!   as does `io_uring_setup`. The process's own network namespace already holds nothing
//!   but loopback; refusing datagrams means no DNS query or other packet is even tried.
//! - Kept in its session: `setsid()` fails with EPERM, so nothing the process starts can
//!   leave the session toolgate made for it (a process may still change its process group,
//!   but the kernel only lets it join a group of the same session). Ending the session's
//!   processes then ends everything the command started (decision 0088). `setpgid` stays
//!   allowed on purpose: `timeout` puts itself in a group of its own and signals that
//!   group, which would otherwise hit the shell that ran it.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SandboxError;

/// x32 system calls reach the x86-64 filter with this bit set; without a rule for them,
/// `socket` through the x32 ABI would pass a filter that only names the plain number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

fn fail(e: seccompiler::BackendError) -> SandboxError {
    SandboxError::Prepare(format!("seccomp: {e}"))
}

fn this_arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(fail)
}

pub(super) fn no_network_filter() -> Result<BpfProgram, SandboxError> {
    let arch = this_arch()?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(fail)?;
    let socket = vec![SeccompRule::new(vec![not_unix]).map_err(fail)?];
    compile(refused_sockets(socket), libc::EACCES, arch)
}

/// The socket calls a filter refuses: `socket` as `socket_rules` say, and always
/// `io_uring_setup` (its socket operations would not pass through `socket`) and `socket`
/// through the x32 ABI (a filter that names only the plain number would miss it).
fn refused_sockets(socket_rules: Vec<SeccompRule>) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, socket_rules);
    // An empty rule list matches the call whatever its arguments.
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    #[cfg(target_arch = "x86_64")]
    rules.insert(X32_SYSCALL_BIT | libc::SYS_socket, Vec::new());
    rules
}

/// A filter that lets every call through except those `rules` match, which fail with
/// `errno`.
fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, SandboxError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(fail)?;
    filter.try_into().map_err(fail)
}

/// The socket calls a proxied process may not make, refused with EACCES.
pub(super) fn proxy_filter() -> Result<BpfProgram, SandboxError> {
    let arg = |index: u8, op: SeccompCmpOp, value: i32| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value as u64).map_err(fail)
    };
    let rule = |conditions: Vec<SeccompCondition>| SeccompRule::new(conditions).map_err(fail);
    // A family other than the three is refused outright.
    let mut socket = vec![rule(vec![
        arg(0, SeccompCmpOp::Ne, libc::AF_UNIX)?,
        arg(0, SeccompCmpOp::Ne, libc::AF_INET)?,
        arg(0, SeccompCmpOp::Ne, libc::AF_INET6)?,
    ])?];
    for family in [libc::AF_INET, libc::AF_INET6] {
        // The socket type is the low four bits (the flags are above them); a filter can
        // only test a masked value for equality, so every type but a stream is named.
        for kind in (0..16).filter(|k| *k != libc::SOCK_STREAM) {
            socket.push(rule(vec![
                arg(0, SeccompCmpOp::Eq, family)?,
                arg(1, SeccompCmpOp::MaskedEq(0xf), kind)?,
            ])?);
        }
        socket.push(rule(vec![
            arg(0, SeccompCmpOp::Eq, family)?,
            arg(2, SeccompCmpOp::Ne, 0)?,
            arg(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
        ])?);
    }
    compile(refused_sockets(socket), libc::EACCES, this_arch()?)
}

/// `setsid` refused with EPERM (through the x32 ABI as well).
pub(super) fn same_session_filter() -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_setsid, Vec::new());
    #[cfg(target_arch = "x86_64")]
    rules.insert(X32_SYSCALL_BIT | libc::SYS_setsid, Vec::new());
    compile(rules, libc::EPERM, this_arch()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filters_compile_for_this_machine() {
        assert!(!super::no_network_filter().unwrap().is_empty());
        assert!(!super::proxy_filter().unwrap().is_empty());
        assert!(!super::same_session_filter().unwrap().is_empty());
    }
}
