//! What the tool-pool panel knows: the latest pool snapshot, server states, and which tools
//! just arrived or left (highlighted / struck through for a few seconds).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::protocol::ToolOrigin;
use crate::protocol::{DefinitionMark, ExcludedTool, PoolEntry, PoolUpdate, ToolMark};
use crate::protocol::{LogLevel, ServerStatus};
use crate::sanitize::for_terminal;

/// How long a tool added to (or removed from) the pool stays marked.
pub const CHANGE_HIGHLIGHT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq)]
pub struct ServerRow {
    pub name: String,
    pub status: ServerStatus,
    /// The reason of the last failure, kept after a later state replaced it (for /mcp).
    pub last_error: Option<String>,
    pub stderr_tail: Vec<String>,
    /// Sign-in state of an HTTP server that uses OAuth (None: it never asked).
    pub auth: Option<crate::protocol::AuthStatus>,
    /// Its latest log messages (`notifications/message`), oldest first, at most
    /// [`LOG_HISTORY`].
    pub logs: std::collections::VecDeque<(LogLevel, String)>,
    /// Error-level (or worse) messages received this session: the panel marks the server.
    pub log_errors: usize,
    /// The instructions it gave when it connected (its own words).
    pub instructions: Option<String>,
}

/// Log messages kept per server.
pub const LOG_HISTORY: usize = 50;

/// A group in the panel: built-ins or one server. Indices, computed when a snapshot or a
/// server list arrives, so a frame never regroups the pool.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Group {
    /// Index into [`PoolView::servers`]; None for the built-ins.
    pub server: Option<usize>,
    /// Indices into [`PoolView::entries`], in pool order.
    pub tools: Vec<usize>,
    /// Indices into the recently removed tools ([`PoolView::removed_entry`]).
    pub removed: Vec<usize>,
    /// Indices into the tools the server's filter keeps out ([`PoolView::excluded`]).
    pub excluded: Vec<usize>,
    /// Indices into [`PoolView::deferred`]: this server's tools that wait for `search_tools`.
    pub deferred: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct PoolView {
    entries: Vec<PoolEntry>,
    /// Each entry's input schema, pretty-printed and cleaned (same order as `entries`).
    schemas: Vec<String>,
    servers: Vec<ServerRow>,
    added: HashMap<String, Instant>,
    removed: Vec<(PoolEntry, Instant)>,
    groups: Vec<Group>,
    /// MCP tools the model's requests leave out (found and loaded with `search_tools`).
    deferred: Vec<PoolEntry>,
    /// Entry indices in the order the panel lists them, which is the order arrows move in.
    order: Vec<usize>,
    /// Changes whenever the entries do, so derived views (the tool detail) know when to
    /// recompute.
    generation: u64,
    /// False until the first snapshot arrived. That one is the starting pool, not a change:
    /// marking its tools "new" would highlight every built-in on the start screen.
    seen_first_snapshot: bool,
    /// Changed or new definitions, by model-facing name.
    marks: HashMap<String, DefinitionMark>,
    /// Tools kept out of the pool by their server's includeTools / excludeTools.
    excluded: Vec<ExcludedTool>,
    /// Position in the display order of the selected tool.
    pub selected: usize,
}

/// Every string a server or model controls gets cleaned once, when it arrives.
fn sanitized(mut entry: PoolEntry) -> PoolEntry {
    let t = &mut entry.tool;
    t.name = for_terminal(&t.name);
    t.description = for_terminal(&t.description);
    if let ToolOrigin::Mcp { server, tool } = &mut t.origin {
        *server = for_terminal(server).into();
        *tool = for_terminal(tool);
    }
    if let Some(title) = &mut t.claims.title {
        *title = for_terminal(title);
    }
    entry.verdict.rule = for_terminal(&entry.verdict.rule);
    if let crate::protocol::Decision::Ask { why } | crate::protocol::Decision::Deny { why } =
        &mut entry.verdict.decision
    {
        *why = for_terminal(why);
    }
    entry
}

fn sanitized_status(status: ServerStatus) -> ServerStatus {
    match status {
        ServerStatus::Failed {
            reason,
            stderr_tail,
        } => ServerStatus::Failed {
            reason: for_terminal(&reason),
            stderr_tail: stderr_tail.iter().map(|l| for_terminal(l)).collect(),
        },
        ServerStatus::Disconnected { reason } => ServerStatus::Disconnected {
            reason: reason.map(|r| for_terminal(&r)),
        },
        ServerStatus::Ready { tools, protocol } => ServerStatus::Ready {
            tools,
            protocol: for_terminal(&protocol),
        },
        other => other,
    }
}

/// The schema as the tool detail shows it.
fn pretty_schema(entry: &PoolEntry) -> String {
    let schema = &*entry.tool.input_schema;
    let text = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
    for_terminal(&text)
}

fn row(name: String, status: ServerStatus) -> ServerRow {
    ServerRow {
        name,
        status,
        last_error: None,
        stderr_tail: Vec::new(),
        auth: None,
        logs: Default::default(),
        log_errors: 0,
        instructions: None,
    }
}

impl PoolView {
    pub fn new(configured: &[String]) -> Self {
        let mut view = PoolView {
            servers: configured
                .iter()
                .map(|name| row(for_terminal(name), ServerStatus::Idle))
                .collect(),
            ..PoolView::default()
        };
        view.regroup();
        view
    }

    /// A configured server the panel does not list yet (e.g. a project server that only
    /// counts after the trust question) appears as idle; a known one keeps its status.
    pub fn add_configured(&mut self, name: &str) {
        let name = for_terminal(name);
        if self.server(&name).is_none() {
            self.servers.push(row(name, ServerStatus::Idle));
            self.regroup();
        }
    }

    /// The configuration was reloaded: rows of servers no longer configured go (they were
    /// disconnected first; a row whose tools are still in the pool stays until they leave),
    /// new ones appear as not connected, known ones keep their state and place.
    pub fn set_configured(&mut self, configured: &[String]) {
        let configured: Vec<String> = configured.iter().map(|n| for_terminal(n)).collect();
        let with_tools: std::collections::HashSet<String> = self
            .entries
            .iter()
            .filter_map(|e| e.tool.server().map(str::to_string))
            .collect();
        self.servers
            .retain(|row| configured.contains(&row.name) || with_tools.contains(&row.name));
        for name in configured {
            if self.server(&name).is_none() {
                self.servers.push(row(name, ServerStatus::Idle));
            }
        }
        self.regroup();
        self.move_selection(0);
    }

    pub fn entries(&self) -> &[PoolEntry] {
        &self.entries
    }

    pub fn servers(&self) -> &[ServerRow] {
        &self.servers
    }

    pub fn server(&self, name: &str) -> Option<&ServerRow> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The groups the panel shows, in order: built-ins first, then each server.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The deferred tools, in pool order.
    pub fn deferred(&self) -> &[PoolEntry] {
        &self.deferred
    }

    /// Replaces the deferred tools (the agent sends them whenever they change).
    pub fn set_deferred(&mut self, deferred: Vec<PoolEntry>) {
        self.deferred = deferred.into_iter().map(sanitized).collect();
        self.regroup();
    }

    /// A recently removed tool, by the index a [`Group`] lists it under.
    pub fn removed_entry(&self, index: usize) -> Option<&PoolEntry> {
        self.removed.get(index).map(|(e, _)| e)
    }

    /// Bumped whenever the entries change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Index into [`PoolView::entries`] of the selected tool.
    pub fn selected_index(&self) -> Option<usize> {
        self.order.get(self.selected).copied()
    }

    pub fn selected_entry(&self) -> Option<&PoolEntry> {
        self.selected_index().and_then(|i| self.entries.get(i))
    }

    /// The pretty-printed input schema of the entry at `index`.
    pub fn schema(&self, index: usize) -> &str {
        self.schemas.get(index).map_or("", String::as_str)
    }

    /// Tools in the order the panel lists them (grouped), which is the order arrows move in.
    pub fn display_order(&self) -> impl Iterator<Item = &PoolEntry> {
        self.order.iter().filter_map(|&i| self.entries.get(i))
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.order.len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        self.selected = (self.selected as isize + delta).clamp(0, n as isize - 1) as usize;
    }

    /// Takes the agent's pool update whole: the tools (highlighting what came and went),
    /// the deferred tools, and the marks.
    pub fn apply_update(&mut self, update: PoolUpdate, now: Instant) {
        self.deferred = update.deferred.into_iter().map(sanitized).collect();
        self.apply_snapshot(update.snapshot, &update.added, &update.removed, now);
        self.set_marks(update.marks, update.excluded);
    }

    pub fn apply_snapshot(
        &mut self,
        snapshot: Vec<PoolEntry>,
        added: &[String],
        removed: &[String],
        now: Instant,
    ) {
        let snapshot: Vec<PoolEntry> = snapshot.into_iter().map(sanitized).collect();
        let starting_pool = !self.seen_first_snapshot;
        self.seen_first_snapshot = true;
        let (added, removed) = if starting_pool {
            (&[][..], &[][..])
        } else {
            (added, removed)
        };
        for name in removed {
            let name = for_terminal(name);
            if let Some(old) = self.entries.iter().find(|e| e.tool.name == name) {
                self.removed.push((old.clone(), now + CHANGE_HIGHLIGHT));
            }
            self.added.remove(&name);
        }
        for name in added {
            let name = for_terminal(name);
            self.removed.retain(|(e, _)| e.tool.name != name);
            self.added.insert(name, now + CHANGE_HIGHLIGHT);
        }
        for entry in &snapshot {
            if let Some(server) = entry.tool.server()
                && self.server(server).is_none()
            {
                self.servers.push(row(
                    server.to_string(),
                    ServerStatus::Ready {
                        tools: 0,
                        protocol: String::new(),
                    },
                ));
            }
        }
        // Schemas are shared (`Arc`) between snapshots: a tool whose schema is the same
        // allocation as before keeps its printed form.
        let previous: HashMap<&str, usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.tool.name.as_str(), i))
            .collect();
        let schemas: Vec<String> = snapshot
            .iter()
            .map(|entry| {
                previous
                    .get(entry.tool.name.as_str())
                    .filter(|&&i| {
                        std::sync::Arc::ptr_eq(
                            &self.entries[i].tool.input_schema,
                            &entry.tool.input_schema,
                        )
                    })
                    .and_then(|&i| self.schemas.get(i).cloned())
                    .unwrap_or_else(|| pretty_schema(entry))
            })
            .collect();
        drop(previous);
        self.schemas = schemas;
        self.entries = snapshot;
        self.generation += 1;
        self.regroup();
        self.move_selection(0);
    }

    pub fn set_status(&mut self, server: &str, status: ServerStatus) {
        let server = for_terminal(server);
        let status = sanitized_status(status);
        let index = match self.servers.iter().position(|s| s.name == server) {
            Some(i) => i,
            None => {
                self.servers.push(row(server, ServerStatus::Idle));
                self.regroup();
                self.servers.len() - 1
            }
        };
        let Some(row) = self.servers.get_mut(index) else {
            return;
        };
        if let ServerStatus::Failed {
            reason,
            stderr_tail,
        } = &status
        {
            row.last_error = Some(reason.clone());
            row.stderr_tail = stderr_tail.clone();
        }
        row.status = status;
    }

    /// A server's log message; the history keeps the latest [`LOG_HISTORY`].
    pub fn add_log(&mut self, server: &str, level: LogLevel, message: &str) {
        if let Some(row) = self.servers.iter_mut().find(|s| s.name == server) {
            if row.logs.len() == LOG_HISTORY {
                row.logs.pop_front();
            }
            row.logs.push_back((level, for_terminal(message)));
            if level.is_error() {
                row.log_errors += 1;
            }
            // The tool detail shows the server's latest messages: let it recompute.
            self.generation += 1;
        }
    }

    pub fn set_instructions(&mut self, server: &str, text: &str) {
        if let Some(row) = self.servers.iter_mut().find(|s| s.name == server) {
            row.instructions = Some(for_terminal(text));
        }
    }

    pub fn set_auth(&mut self, server: &str, status: crate::protocol::AuthStatus) {
        let status = match status {
            crate::protocol::AuthStatus::RefreshFailed { reason } => {
                crate::protocol::AuthStatus::RefreshFailed {
                    reason: for_terminal(&reason),
                }
            }
            other => other,
        };
        if let Some(row) = self.servers.iter_mut().find(|s| s.name == server) {
            row.auth = Some(status);
        }
    }

    pub fn is_new(&self, name: &str, now: Instant) -> bool {
        self.added.get(name).is_some_and(|until| *until > now)
    }

    /// Drops marks that have run out; true when something visible changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        let added = self.added.len();
        let removed = self.removed.len();
        self.added.retain(|_, until| *until > now);
        self.removed.retain(|(_, until)| *until > now);
        if removed != self.removed.len() {
            self.regroup();
        }
        added != self.added.len() || removed != self.removed.len()
    }

    /// When the next mark runs out (the UI wakes up then to redraw, and not before).
    pub fn next_expiry(&self) -> Option<Instant> {
        self.added
            .values()
            .chain(self.removed.iter().map(|(_, t)| t))
            .min()
            .copied()
    }

    /// Marks from the agent: changed and new definitions, and the filtered-out tools.
    pub fn set_marks(&mut self, marks: Vec<ToolMark>, excluded: Vec<ExcludedTool>) {
        self.marks = marks
            .into_iter()
            .map(|m| {
                let mark = match m.mark {
                    DefinitionMark::Changed { pinned_by } => DefinitionMark::Changed {
                        pinned_by: for_terminal(&pinned_by),
                    },
                    DefinitionMark::New => DefinitionMark::New,
                };
                (for_terminal(&m.tool), mark)
            })
            .collect();
        self.excluded = excluded
            .into_iter()
            .map(|e| ExcludedTool {
                server: for_terminal(&e.server).into(),
                tool: for_terminal(&e.tool),
                why: for_terminal(&e.why),
            })
            .collect();
        self.regroup();
    }

    /// How the panel marks a tool's definition (changed, new), if at all.
    pub fn mark(&self, name: &str) -> Option<&DefinitionMark> {
        self.marks.get(name)
    }

    /// A filtered-out tool, by the index a [`Group`] lists it under.
    pub fn excluded(&self, index: usize) -> Option<&ExcludedTool> {
        self.excluded.get(index)
    }

    pub fn tools_of(&self, server: &str) -> impl Iterator<Item = &PoolEntry> {
        self.entries
            .iter()
            .filter(move |e| e.tool.server() == Some(server))
    }

    /// Sorts entries and recently removed tools into the panel's groups. Runs when the
    /// entries, the server list or the removed tools change; never per frame.
    fn regroup(&mut self) {
        let mut groups: Vec<Group> = Vec::with_capacity(self.servers.len() + 1);
        groups.push(Group::default());
        let mut by_server: HashMap<&str, usize> = HashMap::new();
        for (i, row) in self.servers.iter().enumerate() {
            by_server.entry(row.name.as_str()).or_insert(groups.len());
            groups.push(Group {
                server: Some(i),
                ..Group::default()
            });
        }
        // A tool of a server without a row has no group; `apply_snapshot` adds rows first.
        let group_of = |entry: &PoolEntry| match entry.tool.server() {
            None => Some(0),
            Some(name) => by_server.get(name).copied(),
        };
        for (i, entry) in self.entries.iter().enumerate() {
            if let Some(g) = group_of(entry) {
                groups[g].tools.push(i);
            }
        }
        for (i, (entry, _)) in self.removed.iter().enumerate() {
            if let Some(g) = group_of(entry) {
                groups[g].removed.push(i);
            }
        }
        for (i, excluded) in self.excluded.iter().enumerate() {
            if let Some(&g) = by_server.get(excluded.server.as_str()) {
                groups[g].excluded.push(i);
            }
        }
        for (i, entry) in self.deferred.iter().enumerate() {
            if let Some(g) = group_of(entry) {
                groups[g].deferred.push(i);
            }
        }
        self.order = groups
            .iter()
            .flat_map(|g| g.tools.iter().copied())
            .collect();
        self.groups = groups;
    }
}

/// Pool entries for tests.
#[cfg(test)]
pub mod fixtures {
    use serde_json::json;

    use crate::protocol::PoolEntry;
    use crate::protocol::{Decision, RuleSource, Verdict};
    use crate::protocol::{PoolTool, ToolOrigin};

    /// A tool named `name` (a built-in's kind when it is one's name), from `mcp` (server,
    /// tool) if given, with `decision` by rule "r".
    pub fn entry(name: &str, mcp: Option<(&str, &str)>, decision: Decision) -> PoolEntry {
        let mut tool = PoolTool {
            name: name.into(),
            ..PoolTool::builtin(name, "d", json!({"type": "object"}))
        };
        if let Some((server, raw)) = mcp {
            tool.origin = ToolOrigin::Mcp {
                server: server.into(),
                tool: raw.into(),
            };
        }
        PoolEntry {
            tool,
            verdict: Verdict {
                decision,
                rule: "r".into(),
                source: RuleSource::Default,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Decision;

    fn entry(name: &str, server: Option<&str>) -> PoolEntry {
        fixtures::entry(name, server.map(|s| (s, name)), Decision::Allow)
    }

    fn names(view: &PoolView) -> Vec<&str> {
        view.display_order().map(|e| e.tool.name.as_str()).collect()
    }

    #[test]
    fn groups_and_order_follow_the_snapshot() {
        let mut view = PoolView::new(&["b".into(), "a".into()]);
        let now = Instant::now();
        view.apply_snapshot(
            vec![
                entry("a1", Some("a")),
                entry("bash", None),
                entry("b1", Some("b")),
                entry("c1", Some("c")),
            ],
            &[],
            &[],
            now,
        );
        // Built-ins, then servers in configured order, then the one first seen in the pool.
        assert_eq!(names(&view), ["bash", "b1", "a1", "c1"]);
        assert_eq!(view.groups().len(), 4);
        view.move_selection(2);
        assert_eq!(
            view.selected_entry().map(|e| e.tool.name.as_str()),
            Some("a1")
        );
        assert!(view.schema(0).contains("\"type\": \"object\""));

        let generation = view.generation();
        view.apply_snapshot(
            vec![entry("bash", None), entry("b1", Some("b"))],
            &[],
            &["a1".into(), "c1".into()],
            now,
        );
        assert!(view.generation() > generation);
        assert_eq!(names(&view), ["bash", "b1"]);
        let removed: Vec<&str> = view
            .groups()
            .iter()
            .flat_map(|g| g.removed.iter())
            .filter_map(|&i| view.removed_entry(i))
            .map(|e| e.tool.name.as_str())
            .collect();
        assert_eq!(removed, ["a1", "c1"]);
        assert!(view.expire(now + CHANGE_HIGHLIGHT));
        assert!(view.groups().iter().all(|g| g.removed.is_empty()));
    }
}
