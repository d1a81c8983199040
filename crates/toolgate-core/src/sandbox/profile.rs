//! Profiles: what one confined process may touch, as absolute paths and a network switch.
//! Pure data; building the kernel rules from it is `landlock.rs` and `seccomp.rs`.

use std::path::{Path, PathBuf};

use crate::settings::{NetworkAccess, SandboxMode};

/// Credential locations under the home directory that no confined process may read: the
/// issue's list plus two stores that hold nothing but tokens (git's and GitHub CLI's).
pub const CREDENTIAL_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".git-credentials",
    ".config/gh",
    ".cargo/credentials.toml",
];

/// What one confined process may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub mode: SandboxMode,
    /// How the process may use the network: not at all (AF_UNIX only), TCP to toolgate's
    /// proxy only, or freely. Ignored when `Off`.
    pub network: NetworkAccess,
    /// Where writes are allowed. Used only in `WorkspaceWrite`.
    pub writable: Vec<PathBuf>,
    /// Readable (and, when also writable, writable) even when a denied folder contains
    /// them: the workspace stays usable if someone denies its parent.
    pub readable: Vec<PathBuf>,
    /// Neither readable nor writable, wherever they are (except inside `readable` paths
    /// that a denied path contains, see above).
    pub deny: Vec<PathBuf>,
    /// Whether the process and everything it starts stay in the session the process
    /// starts in (`setsid` refused by seccomp), so that ending the session ends them all:
    /// a bash call's background processes end with the call. Ignored when `Off`.
    pub keep_in_session: bool,
}

impl Profile {
    /// No sandbox.
    pub fn unconfined() -> Profile {
        Profile {
            mode: SandboxMode::Off,
            network: NetworkAccess::Full,
            writable: Vec::new(),
            readable: Vec::new(),
            deny: Vec::new(),
            keep_in_session: false,
        }
    }

    /// The shape of the default profile (workspace-write, no network), without paths:
    /// what the kernel must offer for toolgate's defaults to work.
    pub fn default_shape() -> Profile {
        Profile {
            mode: SandboxMode::WorkspaceWrite,
            network: NetworkAccess::None,
            writable: Vec::new(),
            readable: Vec::new(),
            deny: Vec::new(),
            keep_in_session: true,
        }
    }

    pub fn is_confined(&self) -> bool {
        self.mode != SandboxMode::Off
    }

    /// A short description for the model and the person, e.g. `workspace-write (writes
    /// only under /w, /tmp), no network`.
    pub fn describe(&self) -> String {
        let network = match self.network {
            NetworkAccess::None => "no network",
            NetworkAccess::Proxy => "network only through toolgate's proxy",
            NetworkAccess::Full => "network allowed",
        };
        match self.mode {
            SandboxMode::Off => "off (not sandboxed)".to_string(),
            SandboxMode::ReadOnly => format!("read-only, {network}"),
            SandboxMode::WorkspaceWrite => {
                let places: Vec<String> = self
                    .writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                let places = if places.is_empty() {
                    "nowhere".to_string()
                } else {
                    places.join(", ")
                };
                format!("workspace-write (writes only under {places}), {network}")
            }
        }
    }

    /// [`Self::blocked_hint`] for a call whose permission mode writes nothing (plan): leaving
    /// the sandbox is no way out there, so the model is pointed at the plan instead.
    pub fn plan_mode_hint(&self, output: &str, failed: bool) -> Option<String> {
        if !failed || !self.is_confined() || !looks_blocked(output) {
            return None;
        }
        Some(format!(
            "[sandbox: toolgate is in plan mode, so this command ran in a read-only sandbox ({}; credential folders unreadable). The error above may be a write it refused: nothing can be changed in plan mode, and a command cannot leave the sandbox there. Keep to reading; present the plan with exit_plan_mode.]",
            self.describe()
        ))
    }

    /// The line added to a failed command's output when the failure looks like the
    /// sandbox refusing something, so the model knows why instead of retrying variants.
    pub fn blocked_hint(&self, output: &str, failed: bool) -> Option<String> {
        if !failed || !self.is_confined() || !looks_blocked(output) {
            return None;
        }
        Some(format!(
            "[sandbox: this command ran in toolgate's sandbox ({}; credential folders unreadable). The error above may be the sandbox refusing a write outside the allowed places, a read of a protected path, or a network connection. If the task needs it, call bash again with \"unsandboxed\": true and a one-line \"justification\": the person will be asked.]",
            self.describe()
        ))
    }
}

/// Error texts that a refused open, write or socket produces in common tools.
fn looks_blocked(output: &str) -> bool {
    const MARKERS: &[&str] = &[
        "permission denied",
        "operation not permitted",
        "network is unreachable",
        "read-only file system",
        "address family not supported",
        "errno 13",
        "errno 1]",
    ];
    let lower = output.to_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
}

/// The credential locations under `home`.
pub fn credential_paths(home: &Path) -> Vec<PathBuf> {
    CREDENTIAL_PATHS.iter().map(|p| home.join(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_their_names() {
        for mode in [
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            SandboxMode::Off,
        ] {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(SandboxMode::parse("strict"), None);
    }

    #[test]
    fn hint_only_for_failed_confined_commands_that_look_refused() {
        let mut profile = Profile::default_shape();
        profile.writable = vec!["/w".into(), "/tmp".into()];
        let refused = "bash: /etc/x: Permission denied\nexit status: 1";
        let hint = profile.blocked_hint(refused, true).unwrap_or_default();
        assert!(
            hint.contains("workspace-write (writes only under /w, /tmp), no network"),
            "{hint}"
        );
        assert_eq!(profile.blocked_hint(refused, false), None);
        assert_eq!(
            profile.blocked_hint("No such file or directory", true),
            None
        );
        assert_eq!(Profile::unconfined().blocked_hint(refused, true), None);
        profile.network = NetworkAccess::Proxy;
        assert_eq!(
            profile.describe(),
            "workspace-write (writes only under /w, /tmp), network only through toolgate's proxy"
        );
        assert!(
            profile
                .blocked_hint("curl: (7) Failed to connect: Network is unreachable", true)
                .is_some()
        );
    }
}
