//! What the pool panel shows of the pool: entries with their badge, marks on changed or new
//! definitions, and the tools a server's filter keeps out.

use serde::{Deserialize, Serialize};

use crate::policy::Verdict;
use crate::pool::PoolTool;

/// How the pool panel marks a tool besides its badge (pinned definitions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum DefinitionMark {
    /// Its definition is not the one pinned; grants and rules stop covering it.
    Changed { pinned_by: String },
    /// It appeared mid-session; its first call asks.
    New,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMark {
    /// Model-facing name.
    pub tool: String,
    pub mark: DefinitionMark,
}

/// A tool a server listed that its `includeTools` / `excludeTools` keep out of the pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExcludedTool {
    pub server: String,
    /// Raw name.
    pub tool: String,
    /// e.g. `excludeTools "delete_*"`.
    pub why: String,
}

/// One entry of a pool snapshot: the tool plus how the host policy treats it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolEntry {
    pub tool: PoolTool,
    pub verdict: Verdict,
}
