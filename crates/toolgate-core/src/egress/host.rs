//! Who serves a sandboxed process's proxy listener: the session's [`ProxyHost`] (the agent
//! implements it with the gate, the session log and the front end's events). The sandbox
//! only holds one and hands it the listener after a spawn; the [`ProxyRun`] it gets back
//! stops the proxy for that process when dropped, and says which hosts were reached.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::{Target, Traffic};
use crate::protocol::NetworkClient;

/// What a client may reach besides the rules: a server entry's `"network": [hosts]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ClientHosts {
    /// The `Network(…)` rules decide, and an unlisted host asks.
    #[default]
    Rules,
    /// Exactly these hosts (patterns as the settings validated them), without asking.
    Only(Vec<String>),
}

/// Serves proxy listeners for one session.
pub trait ProxyHost: Send + Sync + std::fmt::Debug + 'static {
    /// Starts serving `listener` (it lives in the client's network namespace) for
    /// `client`; stops when the returned run is dropped.
    fn serve(
        &self,
        listener: std::net::TcpListener,
        client: NetworkClient,
        hosts: ClientHosts,
    ) -> std::io::Result<ProxyRun>;
}

/// One host a process tried to reach, for the tool card.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reached {
    pub allowed: u32,
    pub denied: u32,
    pub traffic: Traffic,
}

/// The hosts one process tried to reach, filled in by its admission as connections are
/// decided and closed.
#[derive(Debug, Clone, Default)]
pub struct ReachedHosts(Arc<Mutex<BTreeMap<Target, Reached>>>);

impl ReachedHosts {
    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<Target, Reached>) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn decided(&self, target: &Target, allowed: bool) {
        self.with(|hosts| {
            let entry = hosts.entry(target.clone()).or_default();
            if allowed {
                entry.allowed += 1;
            } else {
                entry.denied += 1;
            }
        });
    }

    pub fn closed(&self, target: &Target, traffic: Traffic) {
        self.with(|hosts| {
            let entry = hosts.entry(target.clone()).or_default();
            entry.traffic.sent += traffic.sent;
            entry.traffic.received += traffic.received;
        });
    }

    pub fn snapshot(&self) -> BTreeMap<Target, Reached> {
        self.with(|hosts| hosts.clone())
    }

    /// The line a bash call's result ends with, e.g. `[network: registry.npmjs.org:443
    /// allowed (2 connections, 1.2 KB sent, 3.4 MB received); evil.test:443 denied]`;
    /// None when the process opened no connection.
    pub fn summary(&self) -> Option<String> {
        let hosts = self.snapshot();
        if hosts.is_empty() {
            return None;
        }
        let parts: Vec<String> = hosts
            .iter()
            .map(|(target, r)| {
                let bytes = crate::protocol::network::bytes;
                match (r.allowed, r.denied) {
                    (0, _) => format!("{target} denied"),
                    (n, d) => {
                        let connections = if n == 1 {
                            "1 connection".to_string()
                        } else {
                            format!("{n} connections")
                        };
                        let refused = if d > 0 {
                            format!(", {d} denied")
                        } else {
                            String::new()
                        };
                        format!(
                            "{target} allowed ({connections}, {} sent, {} received{refused})",
                            bytes(r.traffic.sent),
                            bytes(r.traffic.received)
                        )
                    }
                }
            })
            .collect();
        Some(format!("[network: {}]", parts.join("; ")))
    }
}

/// A proxy serving one process. Dropping it stops the proxy and every connection it holds.
#[derive(Debug)]
pub struct ProxyRun {
    stop: CancellationToken,
    reached: ReachedHosts,
    /// The task serving the listener; it ends once every connection has been reported.
    task: Option<tokio::task::JoinHandle<()>>,
}

/// How long [`ProxyRun::finish`] waits for the last connections to be reported.
const FINISH_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl ProxyRun {
    pub fn new(
        stop: CancellationToken,
        reached: ReachedHosts,
        task: tokio::task::JoinHandle<()>,
    ) -> ProxyRun {
        ProxyRun {
            stop,
            reached,
            task: Some(task),
        }
    }

    pub fn reached(&self) -> &ReachedHosts {
        &self.reached
    }

    /// Stops the proxy once its process is gone, and waits (briefly) until every
    /// connection has been reported, so that the hosts' traffic is complete.
    pub async fn finish(mut self) -> ReachedHosts {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(FINISH_GRACE, task).await;
        }
        self.reached.clone()
    }
}

impl Drop for ProxyRun {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::Host;

    #[test]
    fn the_card_line_lists_each_host_once_with_its_traffic() {
        let reached = ReachedHosts::default();
        assert_eq!(reached.summary(), None);
        let registry = Target {
            host: Host::parse("registry.npmjs.org").unwrap(),
            port: 443,
        };
        let evil = Target {
            host: Host::parse("evil.test").unwrap(),
            port: 443,
        };
        reached.decided(&registry, true);
        reached.decided(&registry, true);
        reached.closed(
            &registry,
            Traffic {
                sent: 1200,
                received: 3_400_000,
            },
        );
        reached.decided(&evil, false);
        assert_eq!(
            reached.summary().as_deref(),
            Some(
                "[network: evil.test:443 denied; registry.npmjs.org:443 allowed (2 connections, 1.2 KB sent, 3.4 MB received)]"
            )
        );
    }
}
