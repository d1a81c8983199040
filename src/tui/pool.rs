//! What the tool-pool panel knows: the latest pool snapshot, server states, and which tools
//! just arrived or left (highlighted / struck through for a few seconds).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::agent::events::PoolEntry;
use crate::mcp::ServerStatus;
use crate::pool::ToolOrigin;
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
    pub auth: Option<crate::oauth::AuthStatus>,
}

/// A group in the panel: built-ins or one server.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    pub server: Option<&'a ServerRow>,
    pub tools: Vec<&'a PoolEntry>,
    pub removed: Vec<&'a PoolEntry>,
}

#[derive(Debug, Default)]
pub struct PoolView {
    entries: Vec<PoolEntry>,
    servers: Vec<ServerRow>,
    added: HashMap<String, Instant>,
    removed: Vec<(PoolEntry, Instant)>,
    /// False until the first snapshot arrived. That one is the starting pool, not a change:
    /// marking its tools "new" would highlight every built-in on the start screen.
    seen_first_snapshot: bool,
    /// Index into [`PoolView::entries`] of the selected tool.
    pub selected: usize,
}

/// Every string a server or model controls gets cleaned once, when it arrives.
fn sanitized(mut entry: PoolEntry) -> PoolEntry {
    let t = &mut entry.tool;
    t.name = for_terminal(&t.name);
    t.description = for_terminal(&t.description);
    if let ToolOrigin::Mcp { server, tool } = &mut t.origin {
        *server = for_terminal(server);
        *tool = for_terminal(tool);
    }
    if let Some(title) = &mut t.claims.title {
        *title = for_terminal(title);
    }
    entry.verdict.rule = for_terminal(&entry.verdict.rule);
    if let crate::policy::Decision::Ask { why } | crate::policy::Decision::Deny { why } =
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

impl PoolView {
    pub fn new(configured: &[String]) -> Self {
        PoolView {
            servers: configured
                .iter()
                .map(|name| ServerRow {
                    name: for_terminal(name),
                    status: ServerStatus::Idle,
                    last_error: None,
                    stderr_tail: Vec::new(),
                    auth: None,
                })
                .collect(),
            ..PoolView::default()
        }
    }

    /// A configured server the panel does not list yet (e.g. a project server that only
    /// counts after the trust question) appears as idle; a known one keeps its status.
    pub fn add_configured(&mut self, name: &str) {
        let name = for_terminal(name);
        if self.server(&name).is_none() {
            self.servers.push(ServerRow {
                name,
                status: ServerStatus::Idle,
                last_error: None,
                stderr_tail: Vec::new(),
                auth: None,
            });
        }
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

    pub fn selected_entry(&self) -> Option<&PoolEntry> {
        self.display_order().get(self.selected).copied()
    }

    /// Tools in the order the panel lists them (grouped), which is the order arrows move in.
    pub fn display_order(&self) -> Vec<&PoolEntry> {
        self.groups().into_iter().flat_map(|g| g.tools).collect()
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.entries.len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        self.selected = (self.selected as isize + delta).clamp(0, n as isize - 1) as usize;
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
                self.servers.push(ServerRow {
                    name: server.to_string(),
                    status: ServerStatus::Ready {
                        tools: 0,
                        protocol: String::new(),
                    },
                    last_error: None,
                    stderr_tail: Vec::new(),
                    auth: None,
                });
            }
        }
        self.entries = snapshot;
        self.move_selection(0);
    }

    pub fn set_status(&mut self, server: &str, status: ServerStatus) {
        let server = for_terminal(server);
        let status = sanitized_status(status);
        let row = match self.servers.iter_mut().position(|s| s.name == server) {
            Some(i) => &mut self.servers[i],
            None => {
                self.servers.push(ServerRow {
                    name: server,
                    status: ServerStatus::Idle,
                    last_error: None,
                    stderr_tail: Vec::new(),
                    auth: None,
                });
                let last = self.servers.len() - 1;
                &mut self.servers[last]
            }
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

    pub fn set_auth(&mut self, server: &str, status: crate::oauth::AuthStatus) {
        let status = match status {
            crate::oauth::AuthStatus::RefreshFailed { reason } => {
                crate::oauth::AuthStatus::RefreshFailed {
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
        let before = self.added.len() + self.removed.len();
        self.added.retain(|_, until| *until > now);
        self.removed.retain(|(_, until)| *until > now);
        before != self.added.len() + self.removed.len()
    }

    /// When the next mark runs out (the UI wakes up then to redraw, and not before).
    pub fn next_expiry(&self) -> Option<Instant> {
        self.added
            .values()
            .chain(self.removed.iter().map(|(_, t)| t))
            .min()
            .copied()
    }

    pub fn tools_of(&self, server: &str) -> impl Iterator<Item = &PoolEntry> {
        self.entries
            .iter()
            .filter(move |e| e.tool.server() == Some(server))
    }

    pub fn groups(&self) -> Vec<Group<'_>> {
        let mut groups = vec![Group {
            server: None,
            tools: self
                .entries
                .iter()
                .filter(|e| e.tool.server().is_none())
                .collect(),
            removed: self
                .removed
                .iter()
                .map(|(e, _)| e)
                .filter(|e| e.tool.server().is_none())
                .collect(),
        }];
        for row in &self.servers {
            groups.push(Group {
                server: Some(row),
                tools: self.tools_of(&row.name).collect(),
                removed: self
                    .removed
                    .iter()
                    .map(|(e, _)| e)
                    .filter(|e| e.tool.server() == Some(row.name.as_str()))
                    .collect(),
            });
        }
        groups
    }
}
