//! Where a file tool's path really points: resolved against the workspace, `..` applied,
//! symlinks followed (also dangling ones and those in not-yet-existing paths' ancestors).
//! Read-only filesystem metadata is the only I/O here; nothing is created or opened. The
//! gate calls [`resolve_target`] before it asks the policy, so the decision itself does no
//! I/O.

use serde_json::Value;
use std::path::{Component, Path, PathBuf};

use crate::paths::lexically_normal;
use crate::policy::{Resolved, ResolvedTarget, path_to_resolve};
use crate::pool::PoolTool;

/// Resolves the location this call of a file tool would touch (see
/// [`path_to_resolve`]); None for other tools and for calls without the path field.
pub fn resolve_target(workspace: &Path, tool: &PoolTool, input: &Value) -> Option<ResolvedTarget> {
    let requested = path_to_resolve(tool, input)?;
    let resolved = resolve(workspace, &requested);
    Some(ResolvedTarget {
        requested,
        resolved,
    })
}

/// Symlink hops followed before we treat the path as unresolvable (like ELOOP).
const MAX_LINK_HOPS: usize = 40;

pub fn canonical_workspace(workspace: &Path) -> PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| lexically_normal(&absolutize(workspace)))
}

/// Resolves `input` (as the tool would: relative to the workspace, `~/` meaning home).
pub fn resolve(workspace: &Path, input: &str) -> Resolved {
    let root = canonical_workspace(workspace);
    let expanded = match input
        .strip_prefix("~/")
        .or(if input == "~" { Some("") } else { None })
    {
        Some(rest) => dirs::home_dir().map(|h| h.join(rest)),
        None => None,
    };
    let joined = match expanded {
        Some(p) => p,
        None => {
            let p = Path::new(input);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                workspace.join(p)
            }
        }
    };
    let absolute = resolve_path(&absolutize(&joined), 0);
    let relative = absolute.strip_prefix(&root).ok().map(|rel| {
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        }
    });
    Resolved { absolute, relative }
}

fn absolutize(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Canonicalizes the longest existing prefix, follows a dangling symlink where one is met,
/// and applies the remaining (not yet existing) components textually.
fn resolve_path(path: &Path, hops: usize) -> PathBuf {
    let components: Vec<Component> = path.components().collect();
    // Longest prefix that canonicalizes.
    let mut k = components.len();
    let mut base = None;
    while k > 0 {
        let prefix: PathBuf = components[..k].iter().collect();
        if let Ok(c) = std::fs::canonicalize(&prefix) {
            base = Some(c);
            break;
        }
        k -= 1;
    }
    let mut current = base.unwrap_or_else(|| PathBuf::from("/"));
    let mut rest = components[k..].iter();
    while let Some(c) = rest.next() {
        match c {
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                current.pop();
            }
            Component::Normal(name) => {
                let candidate = current.join(name);
                let is_link = std::fs::symlink_metadata(&candidate)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link
                    && hops < MAX_LINK_HOPS
                    && let Ok(target) = std::fs::read_link(&candidate)
                {
                    {
                        // A dangling link: writing through it creates its target.
                        let mut followed = if target.is_absolute() {
                            target
                        } else {
                            current.join(target)
                        };
                        for r in rest.by_ref() {
                            followed.push(r.as_os_str());
                        }
                        return resolve_path(&followed, hops + 1);
                    }
                }
                current = candidate;
            }
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::temp_workspace;

    #[test]
    fn inside_outside_and_dotdot() {
        let (_dir, ws) = temp_workspace(&["src"]);
        std::fs::write(ws.join("src/a.rs"), "").unwrap();
        assert_eq!(
            resolve(&ws, "src/a.rs").relative.as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(
            resolve(&ws, "new/dir/file.txt").relative.as_deref(),
            Some("new/dir/file.txt")
        );
        assert_eq!(
            resolve(&ws, "src/../src/a.rs").relative.as_deref(),
            Some("src/a.rs")
        );
        assert!(!resolve(&ws, "../outside.txt").inside());
        assert!(!resolve(&ws, "new/../../x").inside());
        assert!(!resolve(&ws, "/etc/passwd").inside());
        let abs_inside = ws.join("src/a.rs");
        assert!(resolve(&ws, abs_inside.to_str().unwrap()).inside());
        assert_eq!(resolve(&ws, ".").relative.as_deref(), Some("."));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_pointing_outside_are_outside() {
        let (dir, ws) = temp_workspace(&[]);
        let secret = dir.path().join("secret");
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("key"), "k").unwrap();
        std::os::unix::fs::symlink(&secret, ws.join("link")).unwrap();
        std::os::unix::fs::symlink(secret.join("not-yet"), ws.join("dangling")).unwrap();
        std::os::unix::fs::symlink("inner", ws.join("rel-inside")).unwrap();
        let r = resolve(&ws, "link/key");
        assert!(!r.inside());
        assert!(r.absolute.ends_with("secret/key"));
        assert!(!resolve(&ws, "link/new-file").inside());
        assert!(!resolve(&ws, "dangling").inside());
        assert!(resolve(&ws, "rel-inside").inside());
        // A link loop does not hang.
        std::os::unix::fs::symlink("loop-b", ws.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", ws.join("loop-b")).unwrap();
        let _ = resolve(&ws, "loop-a/x");
    }
}
