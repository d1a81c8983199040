//! The session file's `flock`, held while one record is linked and written, so that two
//! processes appending to one session (a console and `toolgate undo`) take turns.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Held while it lives.
pub struct Locked<'a> {
    file: &'a File,
}

impl<'a> Locked<'a> {
    pub fn exclusive(file: &'a File) -> std::io::Result<Locked<'a>> {
        loop {
            // SAFETY: flock on a descriptor the borrowed file keeps open while this lives.
            let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if result == 0 {
                return Ok(Locked { file });
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        // SAFETY: as above; unlocking a descriptor this process locked.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}
