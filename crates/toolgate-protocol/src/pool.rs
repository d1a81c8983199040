//! What the pool panel shows of the pool: entries with their badge, marks on changed or new
//! definitions, and the tools a server's filter keeps out.

use crate::ids::ServerName;
use serde::{Deserialize, Serialize};

use serde_json::Value;
use std::sync::Arc;

use crate::Verdict;

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

/// A tool of the pool as the front ends show it (the core's pool entry, without what only
/// the core needs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolTool {
    /// Model-facing name (`bash`, `mcp__docs__search`, …).
    pub name: String,
    pub origin: ToolOrigin,
    pub description: String,
    pub input_schema: Arc<Value>,
    pub claims: ToolClaims,
    /// True when the name was shortened to fit 64 characters (the UI marks it).
    pub shortened: bool,
}

impl PoolTool {
    /// A built-in tool's entry (not a connector): tests and previews.
    pub fn builtin(name: &str, description: &str, input_schema: Value) -> Self {
        PoolTool {
            name: name.to_string(),
            origin: ToolOrigin::Builtin { connector: false },
            description: description.to_string(),
            input_schema: Arc::new(input_schema),
            claims: ToolClaims::default(),
            shortened: false,
        }
    }

    /// The server of an MCP tool; None for a built-in.
    pub fn server(&self) -> Option<&str> {
        self.origin.server()
    }
}

/// Where a pool tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOrigin {
    /// A built-in tool; `connector`: one that changes the pool itself (connect_mcp, …).
    Builtin { connector: bool },
    Mcp {
        server: ServerName,
        /// The raw name the server lists.
        tool: String,
    },
}

impl ToolOrigin {
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolOrigin::Mcp { server, .. } => Some(server),
            ToolOrigin::Builtin { .. } => None,
        }
    }
}

/// What a server *claims* about a tool (MCP annotations). Shown to the user, never used to
/// authorize anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolClaims {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
    /// `execution.taskSupport: "required"`: the tool only runs as an MCP task (the hub
    /// calls it so; its status messages are the call's progress).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task_required: bool,
}

impl ToolClaims {
    pub fn is_empty(&self) -> bool {
        self == &ToolClaims::default()
    }

    /// Human-readable list such as `readOnlyHint=true, destructiveHint=false`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.title {
            parts.push(format!("title={t:?}"));
        }
        for (label, v) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(v) = v {
                parts.push(format!("{label}={v}"));
            }
        }
        if self.task_required {
            parts.push("taskSupport=required".to_string());
        }
        parts.join(", ")
    }
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
