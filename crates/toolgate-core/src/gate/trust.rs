//! Which workspace folders the user trusts. A workspace's `.mcp.json` and
//! `.toolgate/config.toml` are honoured only when its folder is in this store, kept as
//! canonical paths in `state_dir()/trusted.json`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::GateError;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct TrustFile {
    trusted: BTreeSet<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    trusted: BTreeSet<PathBuf>,
}

fn canonical(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf())
}

impl TrustStore {
    /// `state_dir()/trusted.json`.
    pub fn default_path() -> Option<PathBuf> {
        crate::paths::state_dir().map(|d| d.join("trusted.json"))
    }

    pub fn open_default() -> Result<TrustStore, GateError> {
        Self::open(Self::default_path().ok_or(GateError::NoStateDir)?)
    }

    /// A missing file is an empty store; a malformed one is an error (and is never
    /// overwritten by this store, since opening it failed).
    pub fn open(path: PathBuf) -> Result<TrustStore, GateError> {
        let trusted = match std::fs::read_to_string(&path) {
            Ok(text) => {
                serde_json::from_str::<TrustFile>(&text)
                    .map_err(|e| GateError::TrustStore {
                        path: path.clone(),
                        message: e.to_string(),
                    })?
                    .trusted
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(source) => return Err(GateError::Io { path, source }),
        };
        Ok(TrustStore { path, trusted })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Exactly this folder (by canonical path); trusting a parent does not trust children.
    pub fn is_trusted(&self, folder: &Path) -> bool {
        self.trusted.contains(&canonical(folder))
    }

    pub fn folders(&self) -> impl Iterator<Item = &Path> {
        self.trusted.iter().map(PathBuf::as_path)
    }

    /// Remembers `folder` and saves the store.
    pub fn trust(&mut self, folder: &Path) -> Result<(), GateError> {
        self.trusted.insert(canonical(folder));
        self.save()
    }

    /// Forgets `folder`; returns whether it was trusted.
    pub fn untrust(&mut self, folder: &Path) -> Result<bool, GateError> {
        let removed = self.trusted.remove(&canonical(folder));
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> Result<(), GateError> {
        let file = TrustFile {
            trusted: self.trusted.clone(),
        };
        // Serializing a set of paths cannot fail unless a path is not UTF-8; report that.
        let text = serde_json::to_string_pretty(&file).map_err(|e| GateError::TrustStore {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        super::store::write_atomically(&self.path, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{temp_file, temp_workspace};

    #[test]
    fn trust_is_remembered_by_canonical_path() {
        let (dir, ws) = temp_workspace(&["sub"]);
        let store_path = dir.path().join("state/trusted.json");
        let mut store = TrustStore::open(store_path.clone()).unwrap();
        assert!(!store.is_trusted(&ws));
        store.trust(&ws.join("sub/..")).unwrap();
        let reopened = TrustStore::open(store_path.clone()).unwrap();
        assert!(reopened.is_trusted(&ws));
        assert!(!reopened.is_trusted(&ws.join("sub")));
        let mut reopened = reopened;
        assert!(reopened.untrust(&ws).unwrap());
        assert!(!TrustStore::open(store_path).unwrap().is_trusted(&ws));
    }

    #[test]
    fn malformed_store_is_an_error() {
        let (_dir, path) = temp_file("trusted.json", "{not json");
        let err = TrustStore::open(path.clone()).unwrap_err();
        assert!(err.to_string().contains("trusted.json"), "{err}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), "{not json");
    }
}
