//! Where toolgate keeps its files. Every location can be redirected by an environment
//! variable so tests (and users with unusual setups) never touch the real home directory.

use std::path::PathBuf;

/// `~/.config/toolgate` (or `$TOOLGATE_CONFIG_DIR`): user-level mcp.json and config.toml.
pub fn user_config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLGATE_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    dirs::config_dir().map(|d| d.join("toolgate"))
}

/// `~/.local/state/toolgate` (or `$TOOLGATE_STATE_DIR`): sessions, trust decisions, logs.
pub fn state_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLGATE_STATE_DIR") {
        return Some(PathBuf::from(dir));
    }
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("toolgate"))
}

/// The workspace's own toolgate folder (`.toolgate/`): project config and deploy records.
pub fn workspace_dir(workspace: &std::path::Path) -> PathBuf {
    workspace.join(".toolgate")
}

/// A file that [`write_atomically`] could not write, and why.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl From<WriteError> for std::io::Error {
    /// The system's error alone, for callers that name the file themselves.
    fn from(error: WriteError) -> std::io::Error {
        error.source
    }
}

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, so
/// a reader (a running console's watcher, another toolgate) sees the old or the new file,
/// never half of one, and a crash never leaves half a file. Creates the folder when needed;
/// the temporary file does not outlive a failed rename.
pub fn write_atomically(path: &std::path::Path, contents: &[u8]) -> Result<(), WriteError> {
    let failed = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, contents).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        failed(source)
    })
}

/// Takes an exclusive advisory lock on `file` (`flock(2)` on Unix), waiting for another
/// holder; the kernel releases it when the file closes, also after a crash. A wait broken
/// by a signal is taken up again rather than reported.
pub fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    loop {
        match file.lock() {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// `a/./b/../c` as `a/c`, without touching the file system (the file may not exist, and a
/// symlink on the way is not followed).
pub fn lexically_normal(path: &std::path::Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
