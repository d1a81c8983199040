//! The Landlock ruleset of a profile, built in the parent (every path opened here, before
//! the fork) so that the child only has to call `landlock_restrict_self` on one fd.
//!
//! Landlock can only allow: a rule grants rights on everything beneath a directory, and
//! the union of rules is what the process gets. "Read everywhere except ~/.ssh" is
//! therefore built by granting the parts of the tree that do not contain a denied path:
//! from each allowed root, walk down towards each denied path and grant every sibling met on
//! the way. Directories on that path (`/`, `/home`, `~`) get only the right to list their
//! entries — listing cannot be granted without the folders below, so the *names* inside a
//! denied folder stay visible; their contents do not.
//!
//! Symlinks met on the walk are never granted: access through a link is checked where its
//! target really is, and that place is covered (or not) by the walk itself. Children are
//! opened with `O_NOFOLLOW` relative to their parent so a link swapped in meanwhile cannot
//! widen a rule.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::SandboxError;
use super::detect::{Capabilities, LANDLOCK_NET_ABI, LANDLOCK_SCOPE_ABI};
use super::profile::Profile;
use crate::settings::{NetworkAccess, SandboxMode};

/// The file-system rights toolgate handles are those of ABI 3; later rights (device
/// ioctls, UNIX socket connects) stay unrestricted rather than break terminals and daemons.
const FS_ABI: ABI = ABI::V3;

/// Device files a read-only process may still write to: output sinks and terminals.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What a rule grants beneath its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grant {
    /// Read, list, execute.
    Read,
    /// Read and change.
    Write,
    /// List entries only: a folder on the way to a denied path.
    List,
    /// Open for writing (and truncate): the devices above.
    Device,
}

pub(super) struct PlannedRule {
    pub path: PathBuf,
    pub grant: Grant,
    pub is_dir: bool,
    fd: OwnedFd,
}

impl PlannedRule {
    fn access(&self) -> BitFlags<AccessFs> {
        let read = AccessFs::from_read(FS_ABI);
        let write = AccessFs::from_write(FS_ABI);
        let file_only =
            AccessFs::Execute | AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
        let rights = match self.grant {
            Grant::Read => read,
            Grant::Write => read | write,
            Grant::List => BitFlags::from(AccessFs::ReadDir),
            Grant::Device => AccessFs::WriteFile | AccessFs::Truncate,
        };
        // Landlock refuses directory rights on a rule for a non-directory.
        if self.is_dir {
            rights
        } else {
            rights & file_only
        }
    }
}

/// Builds the ruleset and returns its fd, ready for `landlock_restrict_self`.
pub(super) fn build_ruleset(
    profile: &Profile,
    caps: &Capabilities,
) -> Result<OwnedFd, SandboxError> {
    let fail = |e: landlock::RulesetError| SandboxError::Prepare(format!("Landlock: {e}"));
    // HardRequirement: anything the kernel cannot enforce is an error, never dropped.
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(FS_ABI))
        .map_err(fail)?;
    // Offline: handled with no rule, so every TCP bind and connect is refused. Proxied:
    // handled always (HardRequirement; `check` made sure of ABI 4), with one rule below.
    let proxied = profile.network == NetworkAccess::Proxy;
    if proxied || (profile.network == NetworkAccess::None && caps.landlock_abi >= LANDLOCK_NET_ABI)
    {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(fail)?;
    }
    if caps.landlock_abi >= LANDLOCK_SCOPE_ABI {
        // A confined process may not signal toolgate or anything else outside its sandbox.
        let mut scopes = BitFlags::from(Scope::Signal);
        // An abstract UNIX socket reaches any listener of the network namespace (the host's,
        // for an offline process): a way around the network setting, closed for both.
        if profile.network != NetworkAccess::Full {
            scopes |= Scope::AbstractUnixSocket;
        }
        ruleset = ruleset.scope(scopes).map_err(fail)?;
    }
    let mut created = ruleset.create().map_err(fail)?;
    if proxied {
        // Connecting to the proxy's port is all: no bind (no listener of its own), no
        // other port. The namespace makes the address loopback's only (netns.rs).
        created = created
            .add_rule(NetPort::new(super::PROXY_PORT, AccessNet::ConnectTcp))
            .map_err(fail)?;
    }
    for rule in plan(profile) {
        let access = rule.access();
        if access.is_empty() {
            continue;
        }
        tracing::trace!(path = %rule.path.display(), grant = ?rule.grant, "sandbox rule");
        created = created
            .add_rule(PathBeneath::new(rule.fd, access))
            .map_err(fail)?;
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| SandboxError::Prepare("Landlock returned no ruleset".into()))
}

/// Every rule the profile needs, with its path opened.
pub(super) fn plan(profile: &Profile) -> Vec<PlannedRule> {
    let deny: Vec<PathBuf> = profile.deny.iter().map(|p| resolve(p)).collect();
    let mut rules = Vec::new();
    if profile.mode == SandboxMode::Off {
        return rules;
    }
    grant_tree(Path::new("/"), Grant::Read, &deny, &mut rules);
    for path in &profile.readable {
        grant_tree(&resolve(path), Grant::Read, &deny, &mut rules);
    }
    if profile.mode == SandboxMode::WorkspaceWrite {
        for path in &profile.writable {
            grant_tree(&resolve(path), Grant::Write, &deny, &mut rules);
        }
    }
    for device in DEVICES {
        if let Some((fd, is_dir)) = open_path(Path::new(device)) {
            rules.push(PlannedRule {
                path: PathBuf::from(device),
                grant: Grant::Device,
                is_dir,
                fd,
            });
        }
    }
    rules
}

/// Grants `grant` on `root` except the denied paths strictly beneath it. A root that is
/// itself denied gets nothing; a root inside a denied folder is granted (it was named
/// explicitly: the workspace, a writable path).
fn grant_tree(root: &Path, grant: Grant, deny: &[PathBuf], rules: &mut Vec<PlannedRule>) {
    if deny.iter().any(|d| d == root) {
        return;
    }
    let Some((fd, is_dir)) = open_path(root) else {
        tracing::debug!(path = %root.display(), "sandbox: not granting a path that cannot be opened");
        return;
    };
    let inside: Vec<PathBuf> = deny
        .iter()
        .filter(|d| d.starts_with(root) && d.as_path() != root)
        .cloned()
        .collect();
    if inside.is_empty() || !is_dir {
        rules.push(PlannedRule {
            path: root.to_path_buf(),
            grant,
            is_dir,
            fd,
        });
        return;
    }
    walk_around(root, fd, grant, &inside, rules);
}

/// `dir` contains denied paths: grant each entry that is not one and does not hold one,
/// recurse into those that hold one.
fn walk_around(
    dir: &Path,
    dir_fd: OwnedFd,
    grant: Grant,
    deny: &[PathBuf],
    rules: &mut Vec<PlannedRule>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            // Fail closed: what cannot be listed is not granted.
            tracing::warn!(path = %dir.display(), "sandbox: cannot list a folder on the way to a denied path: {e}");
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let path = dir.join(&name);
        if deny.contains(&path) {
            continue;
        }
        let Some((fd, is_dir, is_link)) = open_child(&dir_fd, &name) else {
            continue;
        };
        if is_link {
            continue;
        }
        let below: Vec<PathBuf> = deny
            .iter()
            .filter(|d| d.starts_with(&path))
            .cloned()
            .collect();
        if below.is_empty() || !is_dir {
            rules.push(PlannedRule {
                path,
                grant,
                is_dir,
                fd,
            });
        } else {
            walk_around(&path, fd, grant, &below, rules);
        }
    }
    if grant == Grant::Read {
        rules.push(PlannedRule {
            path: dir.to_path_buf(),
            grant: Grant::List,
            is_dir: true,
            fd: dir_fd,
        });
    }
}

/// Opens `path` (following symlinks; roots are resolved already) as an `O_PATH` fd.
fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path and flags that need no mode argument.
    let raw = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if raw < 0 {
        return None;
    }
    // SAFETY: raw is a valid fd we just opened and own alone.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let (fd, is_dir, _) = classify(fd)?;
    Some((fd, is_dir))
}

/// Opens `name` inside the directory `dir` (an `O_PATH` fd, which `openat` accepts)
/// without following a final symlink.
fn open_child(dir: &OwnedFd, name: &std::ffi::OsStr) -> Option<(OwnedFd, bool, bool)> {
    let c_name = CString::new(name.as_bytes()).ok()?;
    // SAFETY: dir is an open directory fd, c_name a NUL-terminated relative name.
    let raw = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if raw < 0 {
        return None;
    }
    // SAFETY: raw is a valid fd we just opened and own alone.
    classify(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// (fd, is a directory, is a symlink), by fstat on the fd itself.
fn classify(fd: OwnedFd) -> Option<(OwnedFd, bool, bool)> {
    let file = File::from(fd);
    let meta = file.metadata().ok()?;
    let kind = meta.file_type();
    Some((OwnedFd::from(file), kind.is_dir(), kind.is_symlink()))
}

/// The real location of `path`: canonical where it exists; for a path that does not exist
/// (yet), its deepest existing ancestor made canonical with the rest appended, so a
/// credential folder created later is still on the denied side.
pub(super) fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut rest = Vec::new();
    let mut current = path;
    while let Some(parent) = current.parent() {
        if let Some(name) = current.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(real) = std::fs::canonicalize(parent) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        current = parent;
    }
    // Nothing exists (a relative path without a base): keep it, lexically cleaned.
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_under(profile: &Profile, base: &Path) -> Vec<(String, Grant)> {
        let mut out: Vec<(String, Grant)> = plan(profile)
            .into_iter()
            .filter_map(|r| {
                let rel = r.path.strip_prefix(base).ok()?.display().to_string();
                Some((if rel.is_empty() { ".".into() } else { rel }, r.grant))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0).then((a.1 as u8).cmp(&(b.1 as u8))));
        out
    }

    #[test]
    fn reads_everywhere_except_denied_paths_by_granting_their_siblings() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        for dir in [
            "home/.ssh",
            "home/.config/gcloud",
            "home/.config/other",
            "home/proj",
        ] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::fs::write(base.join("home/.netrc"), "machine x").unwrap();
        std::fs::write(base.join("home/notes.txt"), "n").unwrap();
        std::os::unix::fs::symlink(base.join("home/.ssh"), base.join("home/link-to-ssh")).unwrap();
        let profile = Profile {
            mode: SandboxMode::ReadOnly,
            network: NetworkAccess::None,
            writable: vec![],
            readable: vec![],
            deny: vec![
                base.join("home/.ssh"),
                base.join("home/.netrc"),
                base.join("home/.config/gcloud"),
                base.join("home/.aws"),
            ],
            keep_in_session: false,
        };
        assert_eq!(
            rules_under(&profile, &base),
            [
                (".".to_string(), Grant::List),
                ("home".into(), Grant::List),
                ("home/.config".into(), Grant::List),
                ("home/.config/other".into(), Grant::Read),
                ("home/notes.txt".into(), Grant::Read),
                ("home/proj".into(), Grant::Read),
            ]
        );
    }

    #[test]
    fn a_named_workspace_inside_a_denied_folder_stays_usable_but_its_own_denials_hold() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("secret/ws/.ssh")).unwrap();
        std::fs::create_dir_all(base.join("secret/ws/src")).unwrap();
        let profile = Profile {
            mode: SandboxMode::WorkspaceWrite,
            network: NetworkAccess::None,
            writable: vec![base.join("secret/ws")],
            readable: vec![base.join("secret/ws")],
            deny: vec![base.join("secret"), base.join("secret/ws/.ssh")],
            keep_in_session: false,
        };
        let rules = rules_under(&profile, &base);
        assert!(
            rules.contains(&("secret/ws/src".into(), Grant::Write)),
            "{rules:?}"
        );
        assert!(
            rules.contains(&("secret/ws/src".into(), Grant::Read)),
            "{rules:?}"
        );
        assert!(!rules.iter().any(|(p, _)| p.contains(".ssh")), "{rules:?}");
        assert!(
            !rules.contains(&("secret".into(), Grant::Read)),
            "{rules:?}"
        );
    }

    #[test]
    fn resolve_keeps_missing_tails_under_the_real_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("home")).unwrap();
        std::os::unix::fs::symlink(real.join("home"), real.join("h")).unwrap();
        assert_eq!(
            resolve(&real.join("h/.aws/credentials")),
            real.join("home/.aws/credentials")
        );
    }
}
