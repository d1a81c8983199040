//! What the running kernel offers for confinement, probed once per process.
//!
//! The answer is shown to the person (`toolgate status`, the startup notice) and checked
//! before every confined spawn: a profile that needs something the kernel lacks is refused,
//! never run with less confinement than it asked for.

use std::sync::OnceLock;

use super::SandboxError;
use super::profile::Profile;
use crate::settings::{NetworkAccess, SandboxMode};

/// Set to `1` to make toolgate behave as on a kernel without the sandbox (tests, and people
/// who want to see the fail-closed path).
pub const FORCE_UNAVAILABLE_ENV: &str = "TOOLGATE_SANDBOX_FORCE_UNAVAILABLE";

/// Set to `1` to make toolgate behave as on a kernel that cannot confine a process to the
/// network proxy (bash then runs offline): the degraded path, for tests and people.
pub const NETWORK_PROXY_FORCE_UNAVAILABLE_ENV: &str = "TOOLGATE_NETWORK_PROXY_FORCE_UNAVAILABLE";

/// The oldest Landlock ABI that can confine writes: ABI 3 (Linux 6.2) is the first that
/// controls `truncate(2)`; before it, a sandboxed process could empty any file it can see.
pub const MIN_LANDLOCK_ABI: u32 = 3;
/// Landlock ABI that restricts TCP bind/connect (Linux 6.7).
pub const LANDLOCK_NET_ABI: u32 = 4;
/// Landlock ABI with scopes: signals and abstract UNIX sockets (Linux 6.12).
pub const LANDLOCK_SCOPE_ABI: u32 = 6;

/// The kernel features a confined spawn can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// The Landlock ABI version the kernel reports.
    pub landlock_abi: u32,
    /// Whether seccomp filters can be installed (needed to turn the network off).
    pub seccomp: bool,
    /// Whether a process can be confined to the network proxy (`network = "proxy"`).
    pub network_proxy: ProxySupport,
}

/// Whether the proxied network confinement works here (decision 0099), and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxySupport {
    Available,
    Unavailable(String),
}

/// Whether processes can be confined on this machine, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    Available(Capabilities),
    Unavailable { reason: String },
}

impl SandboxStatus {
    /// The status of this machine, probed on first use and then shared.
    pub fn current() -> &'static SandboxStatus {
        static STATUS: OnceLock<SandboxStatus> = OnceLock::new();
        STATUS.get_or_init(SandboxStatus::probe)
    }

    /// Probes the kernel now (honouring [`FORCE_UNAVAILABLE_ENV`]).
    pub fn probe() -> SandboxStatus {
        if std::env::var_os(FORCE_UNAVAILABLE_ENV).is_some_and(|v| v == "1") {
            return SandboxStatus::unavailable(format!("forced by {FORCE_UNAVAILABLE_ENV}=1"));
        }
        probe_kernel()
    }

    pub fn unavailable(reason: impl Into<String>) -> SandboxStatus {
        SandboxStatus::Unavailable {
            reason: reason.into(),
        }
    }

    /// True when the default profile (workspace-write, no network) can be enforced.
    pub fn is_available(&self) -> bool {
        self.check(&Profile::default_shape()).is_ok()
    }

    /// Why the default profile cannot be enforced, if it cannot.
    pub fn reason(&self) -> Option<String> {
        self.check(&Profile::default_shape())
            .err()
            .map(|e| e.reason().to_string())
    }

    pub fn capabilities(&self) -> Option<Capabilities> {
        match self {
            SandboxStatus::Available(caps) => Some(caps.clone()),
            SandboxStatus::Unavailable { .. } => None,
        }
    }

    /// Whether `profile` can be enforced as asked. `Off` always can (nothing to enforce).
    pub fn check(&self, profile: &Profile) -> Result<(), SandboxError> {
        if profile.mode == SandboxMode::Off {
            return Ok(());
        }
        let caps = match self {
            SandboxStatus::Unavailable { reason } => {
                return Err(SandboxError::Unavailable(reason.clone()));
            }
            SandboxStatus::Available(caps) => caps,
        };
        if caps.landlock_abi < MIN_LANDLOCK_ABI {
            return Err(SandboxError::Unavailable(format!(
                "the kernel offers Landlock ABI {}, and toolgate needs ABI {MIN_LANDLOCK_ABI} (Linux 6.2) or later",
                caps.landlock_abi
            )));
        }
        if profile.network == NetworkAccess::Proxy
            && let Some(reason) = self.proxy_unavailable()
        {
            return Err(SandboxError::Unavailable(format!(
                "the network proxy is unavailable: {reason}"
            )));
        }
        if profile.network < NetworkAccess::Full && !caps.seccomp {
            return Err(SandboxError::Unavailable(
                "seccomp filters are not available, so network access cannot be turned off".into(),
            ));
        }
        if profile.keep_in_session && !caps.seccomp {
            return Err(SandboxError::Unavailable(
                "seccomp filters are not available, so a command's background processes could outlive it".into(),
            ));
        }
        Ok(())
    }

    /// Why a process cannot be confined to the network proxy here; None when it can.
    pub fn proxy_unavailable(&self) -> Option<String> {
        let caps = match self {
            SandboxStatus::Unavailable { reason } => return Some(reason.clone()),
            SandboxStatus::Available(caps) => caps,
        };
        if caps.landlock_abi < LANDLOCK_NET_ABI {
            return Some(format!(
                "the kernel offers Landlock ABI {}, and confining TCP to the proxy's port needs ABI {LANDLOCK_NET_ABI} (Linux 6.7) or later",
                caps.landlock_abi
            ));
        }
        if !caps.seccomp {
            return Some(
                "seccomp filters are not available, so UDP and raw sockets cannot be refused"
                    .into(),
            );
        }
        match &caps.network_proxy {
            ProxySupport::Available => None,
            ProxySupport::Unavailable(reason) => Some(reason.clone()),
        }
    }

    /// One line for `toolgate status`: whether bash's network can go through the proxy.
    pub fn describe_proxy(&self) -> String {
        if let SandboxStatus::Unavailable { reason } = self {
            // Nothing runs sandboxed at all then; "offline" would promise too much.
            return format!("unavailable: {reason}");
        }
        match self.proxy_unavailable() {
            None => format!(
                "available (own network namespace, TCP only to 127.0.0.1:{})",
                super::PROXY_PORT
            ),
            Some(reason) => format!("unavailable: {reason} (proxied commands run offline)"),
        }
    }

    /// One line for `toolgate status` and logs.
    pub fn describe(&self) -> String {
        match self {
            SandboxStatus::Unavailable { reason } => format!("unavailable: {reason}"),
            SandboxStatus::Available(caps) => {
                let mut landlock = vec!["files"];
                if caps.landlock_abi >= LANDLOCK_NET_ABI {
                    landlock.push("TCP");
                }
                if caps.landlock_abi >= LANDLOCK_SCOPE_ABI {
                    landlock.push("signals");
                }
                let seccomp = if caps.seccomp {
                    "seccomp (socket families)"
                } else {
                    "no seccomp (network cannot be turned off)"
                };
                let verdict = match self.reason() {
                    None => "available".to_string(),
                    Some(reason) => format!("unavailable: {reason}"),
                };
                format!(
                    "{verdict} (Landlock ABI {}: {}; {seccomp})",
                    caps.landlock_abi,
                    landlock.join(", ")
                )
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn probe_kernel() -> SandboxStatus {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, the call only
    // returns the ABI number (or an error); it reads and writes no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi < 0 {
        let err = std::io::Error::last_os_error();
        let reason = match err.raw_os_error() {
            Some(libc::ENOSYS) => {
                "the kernel has no Landlock (it needs Linux 6.2 or later built with CONFIG_SECURITY_LANDLOCK)".to_string()
            }
            Some(libc::EOPNOTSUPP) => {
                "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot parameter)".to_string()
            }
            _ => format!("probing Landlock failed: {err}"),
        };
        return SandboxStatus::unavailable(reason);
    }
    SandboxStatus::Available(Capabilities {
        landlock_abi: u32::try_from(abi).unwrap_or(0),
        seccomp: seccomp_filters_available(),
        network_proxy: probe_proxy(),
    })
}

#[cfg(target_os = "linux")]
fn probe_proxy() -> ProxySupport {
    if std::env::var_os(NETWORK_PROXY_FORCE_UNAVAILABLE_ENV).is_some_and(|v| v == "1") {
        return ProxySupport::Unavailable(format!(
            "forced by {NETWORK_PROXY_FORCE_UNAVAILABLE_ENV}=1"
        ));
    }
    match super::netns::ProxyNet::probe() {
        Ok(()) => ProxySupport::Available,
        Err(reason) => ProxySupport::Unavailable(reason),
    }
}

#[cfg(target_os = "linux")]
fn seccomp_filters_available() -> bool {
    const SECCOMP_GET_ACTION_AVAIL: libc::c_uint = 2;
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL only reads the u32 we point to; it changes nothing.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &action as *const u32,
        )
    };
    rc == 0
}

#[cfg(not(target_os = "linux"))]
fn probe_kernel() -> SandboxStatus {
    SandboxStatus::unavailable("toolgate's OS sandbox is implemented for Linux only")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(landlock_abi: u32, seccomp: bool) -> SandboxStatus {
        SandboxStatus::Available(Capabilities {
            landlock_abi,
            seccomp,
            network_proxy: ProxySupport::Available,
        })
    }

    fn proxied() -> Profile {
        let mut profile = Profile::default_shape();
        profile.network = NetworkAccess::Proxy;
        profile
    }

    #[test]
    fn a_proxied_profile_is_refused_where_the_kernel_cannot_enforce_it() {
        assert!(caps(7, true).check(&proxied()).is_ok());
        let old = caps(3, true).check(&proxied()).unwrap_err();
        assert!(old.reason().contains("needs ABI 4"), "{old}");
        assert!(caps(3, true).is_available());
        let no_seccomp = caps(7, false).check(&proxied()).unwrap_err();
        assert!(no_seccomp.reason().contains("UDP"), "{no_seccomp}");
        let restricted = SandboxStatus::Available(Capabilities {
            landlock_abi: 7,
            seccomp: true,
            network_proxy: ProxySupport::Unavailable("writing /proc/self/uid_map failed".into()),
        });
        let err = restricted.check(&proxied()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the sandbox is unavailable: the network proxy is unavailable: writing /proc/self/uid_map failed"
        );
        assert!(restricted.is_available());
        assert!(restricted.describe_proxy().contains("run offline"));
        let none = SandboxStatus::unavailable("forced by a test");
        assert_eq!(none.describe_proxy(), "unavailable: forced by a test");
        assert!(caps(7, true).describe_proxy().starts_with("available"));
    }

    #[test]
    fn old_landlock_or_missing_seccomp_is_unavailable_for_the_default_profile() {
        assert!(caps(7, true).is_available());
        assert!(caps(3, true).is_available());
        let old = caps(2, true);
        assert!(!old.is_available());
        assert!(old.reason().unwrap_or_default().contains("ABI 2"));
        let no_seccomp = caps(7, false);
        assert!(!no_seccomp.is_available());
        assert!(
            no_seccomp
                .describe()
                .contains("network cannot be turned off")
        );
        // With the network allowed, seccomp is still needed to keep background processes
        // in the call's session; without that rule it is not.
        let mut online = Profile::default_shape();
        online.network = NetworkAccess::Full;
        let err = no_seccomp.check(&online).unwrap_err();
        assert!(err.reason().contains("background processes"), "{err}");
        online.keep_in_session = false;
        assert!(no_seccomp.check(&online).is_ok());
    }

    #[test]
    fn off_needs_nothing_and_unavailable_says_why() {
        let status = SandboxStatus::unavailable("forced by a test");
        assert!(status.check(&Profile::unconfined()).is_ok());
        let err = status.check(&Profile::default_shape()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the sandbox is unavailable: forced by a test"
        );
        assert_eq!(status.describe(), "unavailable: forced by a test");
    }

    #[test]
    fn this_machine_offers_the_sandbox() {
        // The development and CI machines run Linux with Landlock ABI 7; if this fails the
        // rest of the sandbox tests would be meaningless, so say it plainly.
        // Skipped only where `probe` really forces the sandbox off: the variable set to "1"
        // (any other value leaves the probe to the kernel, so the check still applies).
        if std::env::var_os(FORCE_UNAVAILABLE_ENV).is_none_or(|v| v != "1") {
            let status = SandboxStatus::probe();
            assert!(status.is_available(), "{}", status.describe());
        }
    }
}
