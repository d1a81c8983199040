//! What a file tool opens, as the gate decided it: a [`FileTarget`] (inside the workspace,
//! or outside and approved), and the [`Place`] of a file: its folder's handle and its name.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::{Beneath, BeneathError, Result};

/// The location a file tool's call opens. The gate resolves a call's path once, decides
/// on it, and hands this on: the tool opens exactly this, never the input's text again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileTarget {
    /// Inside the workspace: a relative path opened beneath the workspace's handle, so
    /// nothing swapped in after the check can lead the open out of it.
    Workspace(PathBuf),
    /// Outside the workspace, approved by the person: the absolute path as it was resolved
    /// (every link already followed), opened with no link followed on the way.
    Approved(PathBuf),
}

impl FileTarget {
    /// The target of `path` as typed, for a caller that has no decision of the gate: a
    /// relative path (or an absolute one under `workspace`) stays beneath the workspace;
    /// any other absolute path is opened as given with no link followed.
    pub fn requested(workspace: &Path, path: &str) -> FileTarget {
        let path = Path::new(path);
        if !path.is_absolute() {
            return FileTarget::Workspace(path.to_path_buf());
        }
        let roots = [
            Some(workspace.to_path_buf()),
            std::fs::canonicalize(workspace).ok(),
        ];
        for root in roots.into_iter().flatten() {
            if let Ok(rel) = path.strip_prefix(&root) {
                return FileTarget::Workspace(rel.to_path_buf());
            }
        }
        FileTarget::Approved(path.to_path_buf())
    }

    /// Opens the file for reading: beneath the workspace (links inside it followed), or
    /// the approved path with no link followed.
    pub fn open_read(&self, workspace: &Path) -> Result<File> {
        match self {
            FileTarget::Workspace(rel) => Beneath::open_root(workspace)?.open_read(rel),
            FileTarget::Approved(_) => self.place(workspace, false)?.read(),
        }
    }

    /// The file's folder, opened as a handle, and its name in it. `create`: missing
    /// folders are made (beneath the workspace, or link-free outside it).
    pub fn place(&self, workspace: &Path, create: bool) -> Result<Place> {
        let path = match self {
            FileTarget::Workspace(rel) | FileTarget::Approved(rel) => rel,
        };
        let Some(name) = path.file_name() else {
            return Err(BeneathError::Io {
                path: path.display().to_string(),
                source: io::Error::from(io::ErrorKind::IsADirectory),
            });
        };
        let parent = path.parent().unwrap_or(Path::new(""));
        let dir = match self {
            FileTarget::Workspace(_) => Beneath::open_root(workspace)?.dir(parent, create)?,
            FileTarget::Approved(_) => Beneath::open_without_links(parent, create)?,
        };
        Ok(Place {
            dir,
            name: name.to_os_string(),
        })
    }
}

/// One file's place: the handle of the folder it is in and its name there. Everything
/// done to the file (read, replace) goes through the handle.
#[derive(Debug)]
pub struct Place {
    pub(super) dir: Beneath,
    pub(super) name: OsString,
}

impl Place {
    /// Opens the file for reading; a link at its name is refused (the checked path had
    /// none there).
    pub fn read(&self) -> Result<File> {
        self.dir.open_name_no_follow(&self.name)
    }

    /// What is at the name now (a link is not followed); None when nothing is.
    pub fn metadata(&self) -> Result<Option<cap_std::fs::Metadata>> {
        match self.dir.dir.symlink_metadata(&self.name) {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(BeneathError::Io {
                path: self.shown().display().to_string(),
                source,
            }),
        }
    }

    /// The file's path for messages (never opened by this name).
    pub fn shown(&self) -> PathBuf {
        self.dir.shown.join(&self.name)
    }
}
