//! Scaffolding shared by unit tests: fresh temporary folders.

use std::path::PathBuf;

use tempfile::TempDir;

/// A fresh temporary folder and the path `relative` inside it; nothing is created at that path.
/// Keep the `TempDir` alive for as long as the path is used.
pub(crate) fn temp_path(relative: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(relative);
    (dir, path)
}

/// A fresh temporary folder holding a workspace folder `ws` with the folders `subdirs` inside it.
/// Paths outside the workspace can be made under `dir.path()`.
pub(crate) fn temp_workspace(subdirs: &[&str]) -> (TempDir, PathBuf) {
    let (dir, ws) = temp_path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for sub in subdirs {
        std::fs::create_dir_all(ws.join(sub)).unwrap();
    }
    (dir, ws)
}

/// A fresh temporary folder holding the file `relative` with `contents`.
pub(crate) fn temp_file(relative: &str, contents: &str) -> (TempDir, PathBuf) {
    let (dir, path) = temp_path(relative);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}
