//! A change of the permission mode, as the front ends, the session log and the JSONL
//! output see it.

use serde::{Deserialize, Serialize};

use crate::PermissionMode;

/// Why the mode changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeCause {
    /// The session started in it (`--permission-mode`, `[permissions] default_mode`, or the
    /// default).
    Start,
    /// A resumed session went back to the mode it was in.
    Resume,
    /// The person chose it (Shift+Tab in the console).
    Person,
    /// The person approved the plan the model presented with `exit_plan_mode`.
    PlanApproved,
}

/// The mode in force from now on, the one before it, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeChange {
    pub mode: PermissionMode,
    pub from: PermissionMode,
    pub cause: ModeCause,
}
