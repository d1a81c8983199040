//! The pool keeper: assembles the pool each model call carries (built-ins, the connected
//! servers' tools, deferral), remembers what the front end was last sent, and makes the
//! one [`PoolUpdate`] that tells it what changed.

use std::collections::HashSet;
use std::sync::Arc;

use super::search::ToolSearch;
use crate::gate::Gate;
use crate::mcp::McpHub;
use crate::pool::pool_builtins_with_resources;
use crate::pool::{self, Pool, PoolError, PoolTool, ServerTools};
use crate::protocol::{ExcludedTool, PoolEntry, PoolParts, PoolUpdate, ToolMark};
use crate::settings::SearchSettings;

pub(super) struct PoolKeeper {
    /// The pool last sent to the front end.
    last: Option<Pool>,
    /// The marks and excluded tools last taken from the gate (every update carries them).
    marks: (Vec<ToolMark>, Vec<ExcludedTool>),
    /// Deferred tools and `search_tools`.
    pub search: ToolSearch,
}

impl PoolKeeper {
    pub fn new(settings: SearchSettings) -> Self {
        PoolKeeper {
            last: None,
            marks: Default::default(),
            search: ToolSearch::new(settings),
        }
    }

    /// The pool last sent, if any.
    pub fn last(&self) -> Option<&Pool> {
        self.last.as_ref()
    }

    /// The pool the next model call carries: the full pool of the connected servers with
    /// the deferred tools left out (and `search_tools` in) when deferral applies.
    pub fn assemble_visible(
        &mut self,
        hub: &McpHub,
        connectable: &[String],
        plan_mode: bool,
    ) -> Result<Pool, PoolError> {
        let listings = hub.server_tools();
        let full = assemble_for(
            connectable,
            &listings,
            &super::attachments::servers_with_resources(hub),
            plan_mode,
        )?;
        let always_load: Vec<String> = listings
            .iter()
            .map(|s| s.server().to_string())
            .filter(|name| hub.config(name).is_some_and(|c| c.always_load))
            .collect();
        let always_load: HashSet<&str> = always_load.iter().map(String::as_str).collect();
        Ok(self.search.split(&full, &listings, &always_load))
    }

    /// What to send after `pool` was assembled: None when no part changed since the last
    /// update (`force`: the badges may have, e.g. after a revoked grant).
    pub fn update(
        &mut self,
        pool: &Pool,
        force: bool,
        gate: &mut Gate,
        hub: &McpHub,
    ) -> Option<PoolUpdate> {
        // Lets the gate see the listings (new tools, changed definitions).
        let listings = hub.server_tools();
        gate.observe_listings(&listings, |server| {
            hub.config(server).is_some_and(|c| c.pool.trust_new_tools)
        });
        let marks = match gate.pool_marks(pool, self.search.deferred(), &listings) {
            Some(marks) => {
                self.marks = marks;
                true
            }
            None => false,
        };
        let deferred = self.search.deferred_changed();
        // New marks change badges too (a changed definition asks), so the tools go along.
        let tools = force || marks || self.last.as_ref() != Some(pool);
        if !(tools || deferred) {
            return None;
        }
        let changed = PoolParts {
            tools,
            marks,
            deferred,
        };
        let update = self.diff(pool, changed, gate);
        self.last = Some(pool.clone());
        Some(update)
    }

    fn diff(&self, pool: &Pool, changed: PoolParts, gate: &Gate) -> PoolUpdate {
        let old: Vec<&str> = self.last.as_ref().map(|p| p.names()).unwrap_or_default();
        let new = pool.names();
        // Sets for membership: a pool can hold thousands of tools.
        let (old_set, new_set): (HashSet<&str>, HashSet<&str>) =
            (old.iter().copied().collect(), new.iter().copied().collect());
        let added = new
            .iter()
            .filter(|n| !old_set.contains(*n))
            .map(|n| n.to_string())
            .collect();
        let removed = old
            .iter()
            .filter(|n| !new_set.contains(*n))
            .map(|n| n.to_string())
            .collect();
        // The front end owns (and sanitizes) its copy; this runs only when the pool
        // changed, not before every call.
        let entry = |tool: &Arc<PoolTool>| PoolEntry {
            tool: crate::views::pool_tool(tool),
            verdict: gate.badge(tool),
        };
        PoolUpdate {
            snapshot: pool.tools.iter().map(entry).collect(),
            added,
            removed,
            marks: self.marks.0.clone(),
            excluded: self.marks.1.clone(),
            deferred: self.search.deferred().iter().map(entry).collect(),
            changed,
        }
    }
}

/// The pool for these connections: built-ins (with disconnect_mcp while something is
/// connected, the resource tools while a connected server has resources, exit_plan_mode in
/// plan mode), then every connected server's tools.
pub(super) fn assemble_for(
    configured: &[String],
    servers: &[Arc<ServerTools>],
    with_resources: &[String],
    plan_mode: bool,
) -> Result<Pool, PoolError> {
    let connected: Vec<String> = servers.iter().map(|s| s.server().to_string()).collect();
    let mut builtins = pool_builtins_with_resources(configured, &connected, with_resources);
    if plan_mode {
        builtins.extend(crate::pool::plan_mode_tools());
    }
    pool::assemble(&builtins, servers)
}
