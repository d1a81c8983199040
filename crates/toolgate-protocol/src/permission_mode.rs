//! The permission mode: how the gate treats calls that no rule decides. It is chosen with
//! `--permission-mode`, `[permissions] default_mode` or Shift+Tab in the console; what each
//! mode means is the policy's business (`crate::policy`, `mode.rs` there), this module only
//! names them, so that settings, the command line and the session file agree on spelling.

use serde::{Deserialize, Serialize};

/// One of the five modes, spelled as on the command line and in config.toml.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// What toolgate did before modes existed.
    #[default]
    Default,
    /// Edits inside the workspace, and shell commands that only edit files there, run.
    AcceptEdits,
    /// Read-only: writes, edits, changing shell commands and unlisted MCP tools are refused.
    Plan,
    /// Every write, edit and shell command asks unless an allow rule covers it.
    Ask,
    /// Every call that no rule denies or asks about runs (the sandbox still applies).
    Auto,
}

impl PermissionMode {
    /// In the order Shift+Tab cycles through them.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Ask,
        PermissionMode::Auto,
    ];

    pub const NAMES: &'static str = "\"default\", \"accept-edits\", \"plan\", \"ask\" or \"auto\"";

    pub fn parse(text: &str) -> Option<PermissionMode> {
        PermissionMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Ask => "ask",
            PermissionMode::Auto => "auto",
        }
    }

    /// The mode after this one in the Shift+Tab cycle.
    pub fn next(self) -> PermissionMode {
        let at = PermissionMode::ALL
            .iter()
            .position(|m| *m == self)
            .unwrap_or(0);
        PermissionMode::ALL[(at + 1) % PermissionMode::ALL.len()]
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        PermissionMode::parse(text).ok_or_else(|| {
            format!(
                "unknown permission mode '{text}' (expected {})",
                PermissionMode::NAMES
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_cycle_visits_every_mode() {
        let mut mode = PermissionMode::Default;
        for _ in 0..PermissionMode::ALL.len() {
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
            assert_eq!(
                serde_json::to_value(mode).unwrap(),
                serde_json::json!(mode.as_str())
            );
            mode = mode.next();
        }
        assert_eq!(mode, PermissionMode::Default);
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
