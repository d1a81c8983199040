//! What the pool panel shows of the pool: entries with their badge, marks on changed or new
//! definitions, and the tools a server's filter keeps out.

use crate::ids::ServerName;
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
    pub server: ServerName,
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

/// Which parts of a [`PoolUpdate`] differ from the update before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolParts {
    /// The tools or their badges (a grant or a new mark changes a badge).
    pub tools: bool,
    /// The marks or the excluded tools.
    pub marks: bool,
    /// The deferred tools.
    pub deferred: bool,
}

/// The pool as a front end shows it, whole: sent whenever a part of it changed, so a front
/// end replaces what it had and never reassembles one state from several events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolUpdate {
    /// The tools the model's requests carry, in pool order, with their badges.
    pub snapshot: Vec<PoolEntry>,
    /// Model-facing names that came in or went out since the last update.
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Marks on pool and deferred tools (changed or new definitions).
    pub marks: Vec<ToolMark>,
    /// The tools kept out by a server's `includeTools` / `excludeTools`.
    pub excluded: Vec<ExcludedTool>,
    /// The MCP tools left out of the model's requests (findable with `search_tools`), in
    /// pool order; empty when nothing is deferred.
    pub deferred: Vec<PoolEntry>,
    pub changed: PoolParts,
}
