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

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, so
/// a reader (a running console's watcher, another toolgate) sees the old or the new file,
/// never half of one. Creates the folder when needed; the temporary file does not outlive
/// a failed rename.
pub fn write_atomically(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
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
