//! The session file's `flock`, held while one record is linked and written, so that two
//! processes appending to one session (a console and `toolgate undo`) take turns.

use std::fs::File;

/// Held while it lives.
pub struct Locked<'a> {
    file: &'a File,
}

impl<'a> Locked<'a> {
    pub fn exclusive(file: &'a File) -> std::io::Result<Locked<'a>> {
        crate::paths::lock_exclusive(file)?;
        Ok(Locked { file })
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        // The borrowed file stays open after this guard, so the lock is released by hand;
        // a failure leaves it to the close of the file, which releases it as well.
        let _ = self.file.unlock();
    }
}
