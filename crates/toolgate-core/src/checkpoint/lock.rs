//! One writer per shadow repository at a time: two toolgate processes in the same
//! workspace (a console and `toolgate undo`, two consoles) take turns instead of failing
//! on git's `index.lock` or interleaving log lines.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// Held while it lives; the kernel releases it when the file closes, also after a crash.
#[derive(Debug)]
pub(super) struct DirLock {
    _file: File,
}

impl DirLock {
    pub(super) fn acquire(path: &Path) -> std::io::Result<DirLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        crate::paths::lock_exclusive(&file)?;
        Ok(DirLock { _file: file })
    }
}
