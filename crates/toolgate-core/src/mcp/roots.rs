//! Roots: the folders toolgate tells servers they may work in (`roots/list`). The workspace
//! is always the first; the person adds more during the session (`/roots add DIR`), and
//! every connected server then gets `notifications/roots/list_changed`.

#![allow(deprecated)] // roots are deprecated by the newest spec but still in 2025-11-25

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::{ListRootsResult, Root};

/// The session's roots, shared by the hub and every connection's handler.
#[derive(Debug, Clone, Default)]
pub struct Roots(Arc<RwLock<Vec<PathBuf>>>);

impl Roots {
    pub fn new(workspace: &Path) -> Roots {
        let workspace =
            std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        Roots(Arc::new(RwLock::new(vec![workspace])))
    }

    pub fn list(&self) -> Vec<PathBuf> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds a folder (canonical form). Ok(false) when it is a root already.
    pub fn add(&self, dir: &Path) -> Result<(bool, PathBuf), RootError> {
        let canonical = std::fs::canonicalize(dir).map_err(|source| RootError::Unreachable {
            dir: dir.to_path_buf(),
            source,
        })?;
        if !canonical.is_dir() {
            return Err(RootError::NotAFolder(dir.to_path_buf()));
        }
        let mut roots = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if roots.contains(&canonical) {
            return Ok((false, canonical));
        }
        roots.push(canonical.clone());
        Ok((true, canonical))
    }

    pub(super) fn result(&self) -> ListRootsResult {
        ListRootsResult::new(
            self.list()
                .iter()
                .map(|dir| {
                    let root = Root::new(file_uri(dir));
                    match dir.file_name() {
                        Some(name) => root.with_name(name.to_string_lossy()),
                        None => root,
                    }
                })
                .collect(),
        )
    }
}

/// `file://` URI of an absolute path, percent-encoding every byte outside the unreserved
/// set and `/` (so spaces and non-ASCII names survive).
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &b in path.to_string_lossy().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Why a folder cannot be a root.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error("cannot add {} as a root: {source}", dir.display())]
    Unreachable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot add {} as a root: not a folder", .0.display())]
    NotAFolder(PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_spaces_and_roots_do_not_repeat() {
        assert_eq!(file_uri(Path::new("/a b/ü")), "file:///a%20b/%C3%BC");
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::new(dir.path());
        let extra = dir.path().join("extra");
        std::fs::create_dir(&extra).unwrap();
        assert!(roots.add(&extra).unwrap().0);
        assert!(!roots.add(&extra).unwrap().0);
        assert!(roots.add(&dir.path().join("missing")).is_err());
        let listed = roots.result();
        assert_eq!(listed.roots.len(), 2);
        assert!(listed.roots[1].uri.ends_with("/extra"));
        assert_eq!(listed.roots[1].name.as_deref(), Some("extra"));
    }
}
