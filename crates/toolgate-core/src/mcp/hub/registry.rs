//! The servers the hub knows: their configuration (replaced whole on a reload), the status
//! each one shows, the live connections in connection order, and what belongs to a server
//! across reconnects (its lifecycle lock, its elicitor, a `list_changed` that arrived while
//! it was still connecting).

use super::connection::Connection;
use super::locks::lock;
use crate::mcp::elicitor::Elicitor;
use crate::mcp::types::{HubEvent, McpError, ServerStatus};
use crate::settings::ServerConfig;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

pub(super) struct Registry {
    /// Replaced whole when the configuration is reloaded (`replace_configs`).
    configs: Mutex<Vec<ServerConfig>>,
    statuses: Mutex<HashMap<String, ServerStatus>>,
    /// Connected servers in connection order (the pool keeps that order).
    connections: Mutex<Vec<Arc<Connection>>>,
    /// One connect or disconnect at a time *per server*: a double connect must not start
    /// two processes, while different servers start in parallel.
    lifecycle: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Servers whose `list_changed` arrived while they were still connecting.
    relist_pending: Mutex<HashSet<String>>,
    /// Per server, so its handler and its calls' `input_required` rounds share one bound.
    elicitors: Mutex<HashMap<String, Elicitor>>,
    /// Servers whose connection ended without toolgate closing it (a crash or an exit of
    /// their own), in the order it happened, this session.
    lost: Mutex<Vec<String>>,
    /// Status changes are reported here.
    events: mpsc::UnboundedSender<HubEvent>,
}

impl Registry {
    pub(super) fn new(
        configs: Vec<ServerConfig>,
        events: mpsc::UnboundedSender<HubEvent>,
    ) -> Registry {
        let statuses = configs
            .iter()
            .map(|c| (c.name.clone(), ServerStatus::Idle))
            .collect();
        Registry {
            configs: Mutex::new(configs),
            statuses: Mutex::new(statuses),
            connections: Mutex::new(Vec::new()),
            lifecycle: Mutex::new(HashMap::new()),
            relist_pending: Mutex::new(HashSet::new()),
            elicitors: Mutex::default(),
            lost: Mutex::default(),
            events,
        }
    }

    /// Names of all configured servers, in configuration order.
    pub(super) fn configured(&self) -> Vec<String> {
        lock(&self.configs).iter().map(|c| c.name.clone()).collect()
    }

    pub(super) fn config(&self, name: &str) -> Option<ServerConfig> {
        lock(&self.configs).iter().find(|c| c.name == name).cloned()
    }

    /// The configured servers, in configuration order.
    pub(super) fn configs(&self) -> Vec<ServerConfig> {
        lock(&self.configs).clone()
    }

    /// Replaces the configured servers with `configs`. Live connections are not touched:
    /// the caller disconnects removed and changed servers first (a connection whose name
    /// is no longer configured could not be disconnected afterwards). New names start as
    /// not connected; removed names lose their status.
    pub(super) fn replace_configs(&self, configs: Vec<ServerConfig>) {
        let mut statuses = lock(&self.statuses);
        statuses.retain(|name, _| configs.iter().any(|c| &c.name == name));
        for config in &configs {
            statuses
                .entry(config.name.clone())
                .or_insert(ServerStatus::Idle);
        }
        *lock(&self.configs) = configs;
    }

    pub(super) fn unknown(&self, name: &str) -> McpError {
        McpError::UnknownServer {
            name: name.to_string(),
            available: self.configured().join(", "),
        }
    }

    pub(super) fn status(&self, name: &str) -> ServerStatus {
        lock(&self.statuses)
            .get(name)
            .cloned()
            .unwrap_or(ServerStatus::Idle)
    }

    pub(super) fn set_status(&self, name: &str, status: ServerStatus) {
        lock(&self.statuses).insert(name.to_string(), status.clone());
        let _ = self.events.send(HubEvent::Status {
            server: name.to_string().into(),
            status,
        });
    }

    pub(super) fn connection(&self, name: &str) -> Option<Arc<Connection>> {
        lock(&self.connections)
            .iter()
            .find(|c| c.name == name)
            .cloned()
    }

    /// The live connection to `server`, or why there is none.
    pub(super) fn connected(&self, server: &str) -> Result<Arc<Connection>, McpError> {
        match self.connection(server) {
            Some(c) => Ok(c),
            None if self.config(server).is_none() => Err(self.unknown(server)),
            None => Err(McpError::NotConnected(server.to_string())),
        }
    }

    /// What `each` makes of every live connection, in connection order.
    pub(super) fn each<T>(&self, each: impl FnMut(&Arc<Connection>) -> Option<T>) -> Vec<T> {
        lock(&self.connections).iter().filter_map(each).collect()
    }

    pub(super) fn add(&self, connection: Arc<Connection>) {
        lock(&self.connections).push(connection);
    }

    /// Takes `name`'s connection out of the list.
    pub(super) fn remove(&self, name: &str) -> Option<Arc<Connection>> {
        let mut connections = lock(&self.connections);
        let found = connections.iter().position(|c| c.name == name);
        found.map(|i| connections.remove(i))
    }

    /// Takes exactly this connection out (a newer one under the same name stays).
    /// Records that `connection` ended on its own; call before [`Registry::forget`].
    pub(super) fn note_lost(&self, connection: &Connection) {
        lock(&self.lost).push(connection.name.clone());
    }

    /// Servers whose connection ended on its own this session, including one whose end
    /// the crash watch has not handled yet (its transport is closed, nobody closed it).
    /// Connections are read before the record so a server moving from one to the other
    /// meanwhile is seen in either.
    pub(super) fn lost(&self) -> Vec<String> {
        let unhandled: Vec<String> = lock(&self.connections)
            .iter()
            .filter(|c| *c.closed.borrow() && !c.closing.load(std::sync::atomic::Ordering::SeqCst))
            .map(|c| c.name.clone())
            .collect();
        let mut lost = lock(&self.lost).clone();
        for name in unhandled {
            if !lost.contains(&name) {
                lost.push(name);
            }
        }
        lost
    }

    pub(super) fn forget(&self, connection: &Arc<Connection>) {
        lock(&self.connections).retain(|c| !Arc::ptr_eq(c, connection));
    }

    /// Takes every connection out.
    pub(super) fn take_all(&self) -> Vec<Arc<Connection>> {
        std::mem::take(&mut *lock(&self.connections))
    }

    /// The last lines of a server's stderr (empty for HTTP servers or never started).
    pub(super) fn stderr_tail(&self, name: &str) -> Vec<String> {
        self.connection(name)
            .map(|c| c.stderr.lines())
            .unwrap_or_else(|| match self.status(name) {
                ServerStatus::Failed { stderr_tail, .. } => stderr_tail,
                _ => Vec::new(),
            })
    }

    pub(super) async fn lifecycle_lock(&self, name: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock_for_name = lock(&self.lifecycle)
            .entry(name.to_string())
            .or_default()
            .clone();
        lock_for_name.lock_owned().await
    }

    /// Notes a `list_changed` of a server that is still connecting.
    pub(super) fn relist_later(&self, name: &str) {
        lock(&self.relist_pending).insert(name.to_string());
    }

    /// Whether a `list_changed` arrived while `name` was connecting (and forgets it).
    pub(super) fn take_relist(&self, name: &str) -> bool {
        lock(&self.relist_pending).remove(name)
    }

    /// The server's elicitor, the same one across reconnects.
    pub(super) fn elicitor(&self, server: &str) -> Elicitor {
        lock(&self.elicitors)
            .entry(server.to_string())
            .or_insert_with(|| Elicitor::new(server, self.events.clone()))
            .clone()
    }

    /// `connection` ended during a request: why, as far as the crash watch found out.
    pub(super) async fn disconnected(&self, connection: &Connection) -> McpError {
        // The watcher reports the exit status; give it a moment so the reason is complete.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let reason = match self.status(&connection.name) {
            ServerStatus::Failed { reason, .. } => reason,
            _ => "the connection closed during the call".to_string(),
        };
        let tail = connection.stderr.lines();
        McpError::Disconnected {
            server: connection.name.clone().into(),
            reason: match tail.last() {
                Some(last) => format!("{reason}; last stderr line: {last}"),
                None => reason,
            },
        }
    }
}
