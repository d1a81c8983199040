//! Replacing a file through its folder's handle: a temporary file made in that folder,
//! written and synced, then renamed over the name inside the same handle. A reader sees
//! the old file or the new one, and nothing between the check and the write is looked up
//! by path again.

use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt as _;

use cap_std::fs::{OpenOptions, OpenOptionsExt, PermissionsExt};

use super::target::Place;
use super::{BeneathError, Result};

/// What a replace did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// A file was at the name before (it was replaced, not created).
    pub existed: bool,
}

/// Tries for a temporary name nobody else has taken.
const TEMP_TRIES: usize = 8;

impl Place {
    /// Writes `contents` as the file at this place. An existing file keeps its permission
    /// bits; a directory at the name is an error; a link at the name is replaced by the
    /// file (not followed: its target was not what was checked).
    pub fn replace(&self, contents: &[u8]) -> Result<Replaced> {
        let io_error = |source: io::Error| BeneathError::Io {
            path: self.shown().display().to_string(),
            source,
        };
        let existing = self.metadata()?;
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(io_error(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        let mode = existing
            .as_ref()
            .filter(|m| m.is_file())
            .map(|m| m.permissions().mode() & 0o7777);
        let (temp_name, file) = self.create_temp().map_err(io_error)?;
        let written = (|| {
            let mut file = file.into_std();
            if let Some(mode) = mode {
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            file.write_all(contents)?;
            file.sync_all()?;
            self.dir.dir.rename(&temp_name, &self.dir.dir, &self.name)
        })();
        if let Err(e) = written {
            let _ = self.dir.dir.remove_file(&temp_name);
            return Err(io_error(e));
        }
        // The rename is durable once the folder is synced; a folder that cannot be synced
        // (some network file systems) still has the new file.
        if let Ok(dir) = self.dir.dir.try_clone() {
            let _ = dir.into_std_file().sync_all();
        }
        Ok(Replaced {
            existed: existing.is_some(),
        })
    }

    /// A new, empty temporary file beside the target, created in the folder's handle.
    fn create_temp(&self) -> io::Result<(std::ffi::OsString, cap_std::fs::File)> {
        let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
        for _ in 0..TEMP_TRIES {
            let mut name = std::ffi::OsString::from(".");
            name.push(&self.name);
            name.push(format!(
                ".toolgate-{}-{:08x}.tmp",
                std::process::id(),
                rand::random::<u32>()
            ));
            let mut options = OpenOptions::new();
            options
                .write(true)
                .create_new(true)
                .mode(0o666)
                .custom_flags(libc::O_NOFOLLOW);
            match self.dir.dir.open_with(&name, &options) {
                Ok(file) => return Ok((name, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }
}
