//! Files opened *beneath* a directory handle, in one kernel step per open (decision 0089).
//!
//! A path checked by name and opened again by name later can be redirected in between (a
//! folder swapped for a symbolic link to `~/.ssh`). Here a directory is opened once, as a
//! handle, and everything below it is opened relative to that handle with the kernel
//! refusing any resolution that leaves it: `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)` on Linux, through `cap-std` (which walks component by component
//! with `O_NOFOLLOW` where the kernel has no `openat2`). A `..` that climbs out, an absolute
//! path, a symbolic link that points out, a `/proc/self/cwd`-style magic link: all refused.
//! Symbolic links that stay beneath the handle are followed.
//!
//! Writes go through the handle of the file's own folder: a temporary file created in it,
//! written and synced, then renamed over the name inside that same handle, so no path
//! string is resolved again between the check and the write.
//!
//! A file the gate found outside the workspace and the person approved is opened as the
//! gate resolved it: every component from `/` down opened with `O_NOFOLLOW`, so a link that
//! appears on the way after the check makes the open fail instead of leading elsewhere.

mod target;
mod write;

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

pub use target::{FileTarget, Place};
pub use write::Replaced;

/// Why a file could not be opened beneath its directory.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    /// The path leads out of the directory it must stay beneath (`..`, an absolute path, a
    /// symbolic link pointing out, a magic link).
    #[error("{path} leads outside {root}")]
    Escapes { path: String, root: String },
    /// A symbolic link where the checked path had none (it was put there since).
    #[error("{path} is or goes through a symbolic link that was not there when it was checked")]
    Link { path: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl BeneathError {
    /// The I/O error's kind (None when the path was refused, not failed).
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            BeneathError::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// Sorts an error from a beneath-open: cap-std reports an escape as PermissionDenied
    /// with its own message, the kernel a magic link or an `O_NOFOLLOW` link as ELOOP.
    fn classify(source: io::Error, path: &Path, root: &Path, no_links: bool) -> BeneathError {
        let path_shown = path.display().to_string();
        if source.raw_os_error() == Some(libc::ELOOP) {
            return if no_links {
                BeneathError::Link { path: path_shown }
            } else {
                // A magic link, or a loop of links: either way not beneath the handle.
                BeneathError::Escapes {
                    path: path_shown,
                    root: root.display().to_string(),
                }
            };
        }
        if source.raw_os_error() == Some(libc::EXDEV)
            || (source.kind() == io::ErrorKind::PermissionDenied
                && source.to_string() == ESCAPE_MESSAGE)
        {
            return BeneathError::Escapes {
                path: path_shown,
                root: root.display().to_string(),
            };
        }
        BeneathError::Io {
            path: path_shown,
            source,
        }
    }
}

/// cap-std's message for a path that led outside its directory (cap-primitives'
/// `escape_attempt`; pinned by a unit test below so an upgrade that changes it fails).
const ESCAPE_MESSAGE: &str = "a path led outside of the filesystem";

pub type Result<T> = std::result::Result<T, BeneathError>;

/// A directory handle: everything opened through it stays beneath it.
#[derive(Debug)]
pub struct Beneath {
    dir: Dir,
    /// Where the handle was opened, for messages only (never opened again by this name).
    shown: PathBuf,
}

impl Beneath {
    /// Opens `root` itself: the one path opened by name (the workspace the person chose,
    /// the project root, the user's config folder).
    pub fn open_root(root: &Path) -> Result<Beneath> {
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|source| {
            BeneathError::Io {
                path: root.display().to_string(),
                source,
            }
        })?;
        Ok(Beneath {
            dir,
            shown: root.to_path_buf(),
        })
    }

    /// Opens the absolute, already resolved `path` as a directory, following no symbolic
    /// link anywhere on the way (each component opened with `O_NOFOLLOW` beneath the one
    /// before). `create`: missing folders are made (as a write would).
    pub fn open_without_links(path: &Path, create: bool) -> Result<Beneath> {
        let mut current = Beneath::open_root(Path::new("/"))?;
        for component in path.components() {
            match component {
                Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
                Component::ParentDir => {
                    // A resolved path has no `..`; one here was not resolved: refuse.
                    return Err(BeneathError::Link {
                        path: path.display().to_string(),
                    });
                }
                Component::Normal(name) => {
                    current = current.child_dir(name, create)?;
                }
            }
        }
        Ok(current)
    }

    /// The directory `name` (one component) in this one, not followed if it is a link.
    pub fn child_dir(&self, name: &OsStr, create: bool) -> Result<Beneath> {
        let shown = self.shown.join(name);
        let opened = self.dir.open_with(name, &dir_no_follow());
        let file = match opened {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                match self.dir.create_dir(name) {
                    Ok(()) => {}
                    // Made by someone else meanwhile: open what is there (still no link).
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(BeneathError::classify(e, &shown, &self.shown, true)),
                }
                self.dir.open_with(name, &dir_no_follow())
            }
            other => other,
        }
        .map_err(|e| {
            // O_DIRECTORY | O_NOFOLLOW on a link says "not a directory".
            let is_link = self
                .dir
                .symlink_metadata(name)
                .is_ok_and(|m| m.file_type().is_symlink());
            if is_link {
                BeneathError::Link {
                    path: shown.display().to_string(),
                }
            } else {
                BeneathError::classify(e, &shown, &self.shown, true)
            }
        })?;
        Ok(Beneath {
            dir: Dir::from_std_file(file.into_std()),
            shown,
        })
    }

    /// The folder `rel` beneath this one (links inside followed, none out). `create`:
    /// missing folders are made, each beneath the handle too.
    pub fn dir(&self, rel: &Path, create: bool) -> Result<Beneath> {
        if is_here(rel) {
            return Ok(Beneath {
                dir: self
                    .dir
                    .try_clone()
                    .map_err(|e| BeneathError::classify(e, rel, &self.shown, false))?,
                shown: self.shown.clone(),
            });
        }
        // Opened first: a link out must be refused as one, not reported as "exists".
        let dir = match self.dir.open_dir(rel) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                self.dir
                    .create_dir_all(rel)
                    .map_err(|e| BeneathError::classify(e, rel, &self.shown, false))?;
                self.dir.open_dir(rel)
            }
            other => other,
        }
        .map_err(|e| BeneathError::classify(e, rel, &self.shown, false))?;
        Ok(Beneath {
            dir,
            shown: self.shown.join(rel),
        })
    }

    /// Opens the file `rel` beneath this folder for reading (links inside followed, none
    /// out). A directory opens too; callers check the metadata.
    pub fn open_read(&self, rel: &Path) -> Result<std::fs::File> {
        self.dir
            .open(rel)
            .map(cap_std::fs::File::into_std)
            .map_err(|e| BeneathError::classify(e, rel, &self.shown, false))
    }

    /// Opens `name` (one component of this folder) for reading, refusing a link.
    pub fn open_name_no_follow(&self, name: &OsStr) -> Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_NOFOLLOW);
        self.dir
            .open_with(name, &options)
            .map(cap_std::fs::File::into_std)
            .map_err(|e| BeneathError::classify(e, Path::new(name), &self.shown, true))
    }

    /// The entries of this folder: name and type as the folder lists them (a link is a
    /// link, never followed).
    pub fn entries(&self) -> io::Result<Vec<(OsString, cap_std::fs::FileType)>> {
        let mut out = Vec::new();
        for entry in self.dir.entries()? {
            let entry = entry?;
            out.push((entry.file_name(), entry.file_type()?));
        }
        Ok(out)
    }

    /// Whether `name` (a link in this folder) leads to a directory, wherever it points.
    /// Only for deciding whether to list the link's name: nothing behind it is opened.
    pub fn link_is_dir(&self, name: &OsStr) -> bool {
        match self.dir.metadata(name) {
            Ok(meta) => meta.is_dir(),
            // A link out of the folder: its kind by its path (a stat, never an open).
            Err(_) => std::fs::metadata(self.shown.join(name)).is_ok_and(|m| m.is_dir()),
        }
    }

    pub fn shown(&self) -> &Path {
        &self.shown
    }
}

/// `""` and `.`: the folder itself.
fn is_here(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::CurDir))
}

/// Open options for one directory component that must not be a link.
fn dir_no_follow() -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW);
    options
}

#[cfg(test)]
mod tests;
