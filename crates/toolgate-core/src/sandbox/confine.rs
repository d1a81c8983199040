//! A prepared confinement and its application in the child between fork and exec.

use std::io;
use std::process::Command;
use std::sync::Arc;

use super::SandboxError;
use super::detect::SandboxStatus;
use super::profile::Profile;
use crate::settings::NetworkAccess;

/// Everything the child needs, built in the parent: the Landlock ruleset fd, the seccomp
/// programs (one narrowing the network, one keeping the process in its session) and, for a
/// proxied profile, the namespace setup. Dropping it (with the `Command` that holds it) closes
/// the ruleset in the parent; the child's copy is closed by exec (`O_CLOEXEC`).
pub struct Confinement {
    #[cfg(target_os = "linux")]
    ruleset: std::os::fd::OwnedFd,
    #[cfg(target_os = "linux")]
    seccomp: Vec<seccompiler::BpfProgram>,
    /// A proxied profile's namespace setup and the way its listener comes back.
    #[cfg(target_os = "linux")]
    proxy: Option<super::netns::ProxyNet>,
}

impl std::fmt::Debug for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement").finish_non_exhaustive()
    }
}

impl Confinement {
    /// Checks that the kernel can enforce `profile` and builds what the child will apply.
    /// `Ok(None)` for an unconfined profile.
    pub(super) fn prepare(
        profile: &Profile,
        status: &SandboxStatus,
    ) -> Result<Option<Confinement>, SandboxError> {
        status.check(profile)?;
        if !profile.is_confined() {
            return Ok(None);
        }
        Self::build(profile, status).map(Some)
    }

    #[cfg(target_os = "linux")]
    fn build(profile: &Profile, status: &SandboxStatus) -> Result<Confinement, SandboxError> {
        let caps = status.capabilities().ok_or_else(|| {
            SandboxError::Unavailable("the kernel's capabilities are unknown".into())
        })?;
        let ruleset = super::landlock::build_ruleset(profile, &caps)?;
        let mut seccomp = Vec::new();
        let mut proxy = None;
        match profile.network {
            NetworkAccess::None => seccomp.push(super::seccomp::no_network_filter()?),
            NetworkAccess::Proxy => {
                seccomp.push(super::seccomp::proxy_filter()?);
                proxy = Some(super::netns::ProxyNet::prepare()?);
            }
            NetworkAccess::Full => {}
        }
        if profile.keep_in_session {
            seccomp.push(super::seccomp::same_session_filter()?);
        }
        Ok(Confinement {
            ruleset,
            seccomp,
            proxy,
        })
    }

    /// Whether processes started under this confinement reach the network only through
    /// the listener of [`Self::take_proxy_listener`].
    pub fn is_proxied(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.proxy.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// After a successful spawn of a command this confinement was installed in: the TCP
    /// listener at 127.0.0.1:[`super::PROXY_PORT`] inside the process's network namespace,
    /// the only place it can connect to. toolgate serves the egress proxy on it (set it
    /// nonblocking before handing it to tokio). Takes the last listener sent (a spawn that
    /// tried several programs got one per attempt); call it once per spawn.
    pub fn take_proxy_listener(&self) -> Result<std::net::TcpListener, SandboxError> {
        #[cfg(target_os = "linux")]
        if let Some(proxy) = &self.proxy {
            return proxy.take_listener();
        }
        Err(SandboxError::Handover(
            "this confinement is not proxied (its profile's network is not \"proxy\")".into(),
        ))
    }

    #[cfg(not(target_os = "linux"))]
    fn build(_: &Profile, _: &SandboxStatus) -> Result<Confinement, SandboxError> {
        Err(SandboxError::Unavailable(
            "toolgate's OS sandbox is implemented for Linux only".into(),
        ))
    }

    /// Confines the calling process. Runs in the forked child before exec, so it only
    /// makes system calls on data prepared earlier: no allocation, no locks.
    #[cfg(target_os = "linux")]
    pub fn apply(&self) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // First the namespace and the listener: unsharing the user namespace needs no
        // privilege yet, the listener's bind would be refused by Landlock, and making it
        // needs socket calls the seccomp filter refuses.
        if let Some(proxy) = &self.proxy {
            proxy.enter()?;
        }
        // SAFETY: prctl and the two system calls take plain integers or a pointer to the
        // program that `self` keeps alive; none of them allocates or takes a lock.
        unsafe {
            // No capabilities after exec, even when toolgate runs as root: with
            // CAP_SYS_PTRACE a command could read toolgate's memory and environment, with
            // CAP_SYS_MODULE load a kernel module. Emptying the bounding set (and the
            // ambient set) means exec grants none. EINVAL marks the end of the known
            // capabilities; EPERM means we hold no CAP_SETPCAP, hence no capabilities to
            // pass on either.
            for cap in 0..64 {
                libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
            }
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            );
            // Required by both landlock_restrict_self and an unprivileged seccomp filter;
            // it also means no setuid program can regain what the sandbox took away.
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        for program in &self.seccomp {
            seccompiler::apply_filter(program).map_err(|e| match e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                // Only an empty program gets here, and ours never is.
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    pub fn apply(&self) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }

    /// Makes `command` apply this confinement in its child. A tokio command passes
    /// `command.as_std_mut()`.
    pub fn install(self: &Arc<Self>, command: &mut Command) {
        use std::os::unix::process::CommandExt;
        let confinement = Arc::clone(self);
        // SAFETY: the closure runs between fork and exec and only calls `apply`, which is
        // async-signal-safe (see there); the Arc is only read, never dropped, in the child.
        unsafe {
            command.pre_exec(move || confinement.apply());
        }
    }
}
