//! The session's network gate, beside the agent loop: serves each sandboxed process's proxy
//! listener (`crate::egress`), decides each connection through the gate
//! (`crate::gate::NetworkGate`), and tells everyone: a `network_decided` fact when a
//! connection is decided, a `network_closed` fact with the bytes each way when an admitted
//! one ends, both in the session log (so in its hash chain) and on the front end.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::egress::{
    Admission, Admit, ClientHosts, ProxyHost, ProxyRun, ReachedHosts, Target, Traffic, Via,
};
use crate::gate::{Connection, HostList, NetworkGate};
use crate::journal::SharedLog;
use crate::policy::{AuditRecord, HostPattern, Permit};
use crate::protocol::{AgentEvent, Event, NetworkClient, NetworkLine};

/// Everything a connection's decision needs from the session.
#[derive(Clone)]
pub(crate) struct NetworkHost {
    pub gate: NetworkGate,
    pub log: SharedLog,
    /// Weak: the sandbox that holds this host lives as long as the hub does, and the
    /// front end waits for the events channel to close before it exits.
    pub events: mpsc::WeakSender<AgentEvent>,
}

impl std::fmt::Debug for NetworkHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkHost").finish_non_exhaustive()
    }
}

impl ProxyHost for NetworkHost {
    fn serve(
        &self,
        listener: std::net::TcpListener,
        client: NetworkClient,
        hosts: ClientHosts,
    ) -> std::io::Result<ProxyRun> {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let hosts = match (hosts, &client) {
            (ClientHosts::Rules, _) => HostList::Rules,
            (ClientHosts::Only(list), client) => HostList::Only {
                server: match client {
                    NetworkClient::Server { server } => server.to_string(),
                    other => other.describe(),
                },
                // Validated when the settings were read; an entry that no longer parses
                // covers nothing (fail closed).
                hosts: list
                    .iter()
                    .filter_map(|h| HostPattern::parse(h).ok())
                    .collect(),
            },
        };
        let reached = ReachedHosts::default();
        let admission = Arc::new(ClientAdmission {
            host: self.clone(),
            client,
            hosts,
            reached: reached.clone(),
            admitted: Mutex::default(),
        });
        let stop = CancellationToken::new();
        let task = tokio::spawn(crate::egress::serve(listener, admission, stop.clone()));
        Ok(ProxyRun::new(stop, reached, task))
    }
}

/// The admission of one process's connections.
struct ClientAdmission {
    host: NetworkHost,
    client: NetworkClient,
    hosts: HostList,
    reached: ReachedHosts,
    /// The decision of each admitted connection still open, by target (a count of them),
    /// for the record when it closes.
    admitted: Mutex<HashMap<Target, (AuditRecord, Via, u32)>>,
}

impl ClientAdmission {
    fn line(&self, target: &Target, via: Via, record: AuditRecord) -> NetworkLine {
        NetworkLine {
            host: target.host.to_string(),
            port: target.port,
            via: via.as_str().into(),
            client: self.client.clone(),
            record,
            connected: None,
            bytes_sent: None,
            bytes_received: None,
        }
    }

    fn tell(&self, event: Event) {
        crate::journal::append_shared(&self.host.log, event.clone());
        let Some(events) = self.host.events.upgrade() else {
            return;
        };
        // `closed` is not async; the send is queued behind the decision's.
        tokio::spawn(async move {
            let _ = events.send(AgentEvent::Fact(event)).await;
        });
    }

    async fn decide(&self, target: &Target, via: Via) -> Admit {
        // The session is over: nobody can be asked or told.
        let Some(events) = self.host.events.upgrade() else {
            return Admit::Deny("the session has ended".into());
        };
        let decision = self
            .host
            .gate
            .check(
                Connection::new(target, via, &self.client, &self.hosts),
                &events,
            )
            .await;
        let allowed = decision.permit == Permit::Allow;
        self.reached.decided(target, allowed);
        let why = decision.record.why.clone();
        if allowed {
            let mut admitted = self.admitted.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = admitted
                .entry(target.clone())
                .or_insert_with(|| (decision.record.clone(), via, 0));
            entry.2 += 1;
        }
        self.tell(Event::NetworkDecided(self.line(
            target,
            via,
            decision.record,
        )));
        if let Some(message) = decision.notice {
            self.tell(Event::Notice { message });
        }
        if let Some(event) = self.host.gate.grants().change_event() {
            let _ = events.send(event).await;
        }
        if allowed {
            Admit::Allow
        } else {
            Admit::Deny(why.unwrap_or_else(|| format!("{target} is not allowed")))
        }
    }
}

impl Admission for ClientAdmission {
    fn admit(&self, target: &Target, via: Via) -> Pin<Box<dyn Future<Output = Admit> + Send + '_>> {
        let target = target.clone();
        Box::pin(async move { self.decide(&target, via).await })
    }

    fn closed(&self, target: &Target, connected: bool, traffic: Traffic) {
        self.reached.closed(target, traffic);
        let decided = {
            let mut admitted = self.admitted.lock().unwrap_or_else(PoisonError::into_inner);
            let found = admitted.get_mut(target).map(|entry| {
                entry.2 = entry.2.saturating_sub(1);
                (entry.0.clone(), entry.1, entry.2)
            });
            if found.as_ref().is_some_and(|(_, _, open)| *open == 0) {
                admitted.remove(target);
            }
            found
        };
        let Some((record, via, _)) = decided else {
            return;
        };
        let mut line = self.line(target, via, record);
        line.connected = Some(connected);
        line.bytes_sent = Some(traffic.sent);
        line.bytes_received = Some(traffic.received);
        self.tell(Event::NetworkClosed(line));
    }
}
