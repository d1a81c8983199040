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
