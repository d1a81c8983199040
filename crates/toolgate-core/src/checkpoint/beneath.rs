//! Writing beneath the workspace without following a symbolic link (decision 0090).
//!
//! Undo puts files back by their recorded paths, but what is on disk now may differ: a
//! folder of the path may have been swapped for a symbolic link to somewhere outside.
//! Resolving the path as a string and writing to it would follow that link. Here each
//! folder of the path is opened from the one above it with `O_NOFOLLOW`, starting at the
//! workspace's own handle, and the file is written, linked or removed through the handle
//! of the folder that holds it: nothing is resolved again by name after the check, and a
//! link anywhere on the path refuses the path instead of being followed. Kept small and
//! local to checkpoints; a general "open beneath" for the file tools can take its place.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Why a path cannot be written safely, in words for the person.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("{0} is now a symbolic link; restoring through it could write outside the workspace")]
    Link(PathBuf),
    #[error("{0} is now a file, not a folder")]
    NotAFolder(PathBuf),
    #[error("{0} is not a plain path inside the workspace")]
    NotPlain(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The workspace, held open: every path below is reached from this handle.
pub(super) struct Beneath {
    root: OwnedFd,
}

/// A folder beneath the workspace, held open, and the name of an entry in it.
pub(super) struct Entry {
    dir: OwnedFd,
    name: CString,
    /// The path inside the workspace (for messages).
    path: PathBuf,
}

/// What is at an entry now (not following a link there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Missing,
    Folder,
    Link,
    /// A file, with its permission bits.
    File(u32),
}

impl Beneath {
    pub fn open(workspace: &Path) -> std::io::Result<Beneath> {
        let dir = File::options()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(workspace)?;
        Ok(Beneath {
            root: OwnedFd::from(dir),
        })
    }

    /// The folder holding `path` (relative to the workspace) and the entry's name. Each
    /// folder on the way is opened without following a link; a missing one is created
    /// when `create`, else `Ok(None)`.
    pub fn entry(&self, path: &Path, create: bool) -> Result<Option<Entry>, Refusal> {
        let mut names = Vec::new();
        for component in path.components() {
            match component {
                Component::Normal(name) => names.push(name.to_os_string()),
                _ => return Err(Refusal::NotPlain(path.to_path_buf())),
            }
        }
        let Some(last) = names.pop() else {
            return Err(Refusal::NotPlain(path.to_path_buf()));
        };
        let mut dir = self.root.try_clone().map_err(|source| io(path, source))?;
        let mut walked = PathBuf::new();
        for name in names {
            walked.push(&name);
            let c_name = c_string(&name, path)?;
            dir = match open_folder(&dir, &c_name) {
                Ok(next) => next,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                    // SAFETY: a valid folder descriptor and NUL-terminated name.
                    let made = unsafe { libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o777) };
                    if made != 0 {
                        return Err(io(&walked, std::io::Error::last_os_error()));
                    }
                    open_folder(&dir, &c_name).map_err(|e| refusal(&dir, &c_name, &walked, e))?
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
                Err(e) => return Err(refusal(&dir, &c_name, &walked, e)),
            };
        }
        Ok(Some(Entry {
            dir,
            name: c_string(&last, path)?,
            path: path.to_path_buf(),
        }))
    }
}

impl Entry {
    pub fn kind(&self) -> Result<Kind, Refusal> {
        // SAFETY: stat is plain data that fstatat fills in.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid folder descriptor, a NUL-terminated name, our own struct.
        let rc = unsafe {
            libc::fstatat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                &mut stat,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOENT) => Ok(Kind::Missing),
                _ => Err(io(&self.path, e)),
            };
        }
        Ok(match stat.st_mode & libc::S_IFMT {
            libc::S_IFDIR => Kind::Folder,
            libc::S_IFLNK => Kind::Link,
            _ => Kind::File(stat.st_mode & 0o7777),
        })
    }

    /// Removes the entry (a file or a link; a folder only when empty).
    pub fn remove(&self, folder: bool) -> Result<(), Refusal> {
        let flags = if folder { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: a valid folder descriptor and NUL-terminated name.
        let rc = unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), flags) };
        if rc != 0 {
            return Err(io(&self.path, std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Replaces the entry with a file holding `bytes` with permissions `mode`: written to
    /// a new name in the same folder, then renamed over it (a link there is replaced,
    /// never followed).
    pub fn write_file(&self, bytes: &[u8], mode: u32) -> Result<(), Refusal> {
        let temp = self.temp_name()?;
        // SAFETY: a valid folder descriptor, a NUL-terminated name; the result is checked.
        let raw = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                temp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            )
        };
        if raw < 0 {
            return Err(io(&self.path, std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor, owned here.
        let mut file = unsafe { File::from_raw_fd(raw) };
        let written = file.write_all(bytes).and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode))
        });
        drop(file);
        if let Err(e) = written {
            self.discard(&temp);
            return Err(io(&self.path, e));
        }
        self.rename_over(&temp)
    }

    /// Replaces the entry with a symbolic link to `target` (its bytes as recorded).
    pub fn write_link(&self, target: &[u8]) -> Result<(), Refusal> {
        let target = CString::new(target).map_err(|_| Refusal::NotPlain(self.path.clone()))?;
        let temp = self.temp_name()?;
        // SAFETY: valid NUL-terminated strings and a valid folder descriptor.
        let rc = unsafe { libc::symlinkat(target.as_ptr(), self.dir.as_raw_fd(), temp.as_ptr()) };
        if rc != 0 {
            return Err(io(&self.path, std::io::Error::last_os_error()));
        }
        self.rename_over(&temp)
    }

    fn temp_name(&self) -> Result<CString, Refusal> {
        let mut name = OsString::from(".toolgate-undo-");
        name.push(std::process::id().to_string());
        name.push("-");
        name.push(OsStr::from_bytes(self.name.as_bytes()));
        c_string(&name, &self.path)
    }

    fn rename_over(&self, temp: &CString) -> Result<(), Refusal> {
        let dir = self.dir.as_raw_fd();
        // SAFETY: both names are NUL-terminated, both relative to the same folder handle.
        let rc = unsafe { libc::renameat(dir, temp.as_ptr(), dir, self.name.as_ptr()) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            self.discard(temp);
            return Err(io(&self.path, e));
        }
        Ok(())
    }

    fn discard(&self, temp: &CString) {
        // SAFETY: a valid folder descriptor and NUL-terminated name.
        unsafe { libc::unlinkat(self.dir.as_raw_fd(), temp.as_ptr(), 0) };
    }
}

/// Opens folder `name` inside `dir`, refusing a link (`O_NOFOLLOW`) and a non-folder.
fn open_folder(dir: &OwnedFd, name: &CString) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid folder descriptor and NUL-terminated name; the result is checked.
    let raw = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Why folder `name` in `dir` could not be opened: a link or a file where a folder
/// belongs (`O_DIRECTORY | O_NOFOLLOW` fails with ENOTDIR or ELOOP on either), else the
/// error as it is.
fn refusal(dir: &OwnedFd, name: &CString, path: &Path, e: std::io::Error) -> Refusal {
    if !matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) {
        return io(path, e);
    }
    // SAFETY: stat is plain data that fstatat fills in.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid folder descriptor, a NUL-terminated name, our own struct.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        Refusal::Link(path.to_path_buf())
    } else {
        Refusal::NotAFolder(path.to_path_buf())
    }
}

fn io(path: &Path, source: std::io::Error) -> Refusal {
    Refusal::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn c_string(name: &OsStr, path: &Path) -> Result<CString, Refusal> {
    CString::new(name.as_bytes()).map_err(|_| Refusal::NotPlain(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder swapped for a link to an outside folder refuses the path, and nothing is
    /// created outside; a missing folder is created and the file written inside.
    #[test]
    fn a_link_on_the_path_is_refused_and_a_plain_path_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("d")).unwrap();
        let beneath = Beneath::open(&ws).unwrap();

        let refused = beneath.entry(Path::new("d/secret.txt"), true);
        assert!(
            matches!(&refused, Err(Refusal::Link(p)) if p == Path::new("d")),
            "{:?}",
            refused.err()
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        let entry = beneath
            .entry(Path::new("new/deep/file.txt"), true)
            .unwrap()
            .unwrap();
        assert_eq!(entry.kind().unwrap(), Kind::Missing);
        entry.write_file(b"back\n", 0o640).unwrap();
        let written = ws.join("new/deep/file.txt");
        assert_eq!(std::fs::read(&written).unwrap(), b"back\n");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&written).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        assert!(matches!(
            beneath.entry(Path::new("../escape"), true),
            Err(Refusal::NotPlain(_))
        ));
    }
}
