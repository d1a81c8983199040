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
        lock_exclusive(&file)?;
        Ok(DirLock { _file: file })
    }
}

#[cfg(unix)]
fn lock_exclusive(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor this function's caller owns for the call's length.
        let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(not(unix))]
fn lock_exclusive(_file: &File) -> std::io::Result<()> {
    Ok(())
}
