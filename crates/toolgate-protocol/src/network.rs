//! The network gate's facts: a connection a sandboxed process asked toolgate's proxy for,
//! who decided it, and how much went each way when it ended. The same line is the JSONL
//! `network_decided` / `network_closed` event, the session log's record (so it is in the
//! hash chain) and what the transcript shows.

use serde::{Deserialize, Serialize};

use crate::audit::{AuditRecord, Decider, Permit, PersonAnswer};
use crate::ids::{CallId, ServerName};

/// Who opened a connection: the process the proxy listener belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NetworkClient {
    /// A bash tool call: its id and command line.
    Bash { call_id: CallId, command: String },
    /// A stdio MCP server (toolgate's own or a third party's).
    Server { server: ServerName },
    /// A hook command of the person's.
    Hook { command: String },
}

impl NetworkClient {
    /// `bash call_1 (npm install)`, `server 'deploy'`, `hook (./notify.sh)`.
    pub fn describe(&self) -> String {
        match self {
            NetworkClient::Bash { call_id, command } => {
                format!("bash {call_id} ({})", one_line(command, 80))
            }
            NetworkClient::Server { server } => format!("server '{server}'"),
            NetworkClient::Hook { command } => format!("hook ({})", one_line(command, 80)),
        }
    }

    /// The tool call the connection belongs to, if a call opened it.
    pub fn call_id(&self) -> Option<&CallId> {
        match self {
            NetworkClient::Bash { call_id, .. } => Some(call_id),
            _ => None,
        }
    }
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// One connection through the proxy. `network_decided` carries no traffic; `network_closed`
/// (an admitted connection that ended) carries the bytes each way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkLine {
    pub host: String,
    pub port: u16,
    /// How the client asked: `http` (absolute form), `connect` or `socks5`.
    pub via: String,
    pub client: NetworkClient,
    /// The decision, as a tool call's is recorded: `tool` is `Network(HOST:PORT)`.
    #[serde(flatten)]
    pub record: AuditRecord,
    /// Whether the connection out was made (closed lines only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<bool>,
    /// Bytes from the process to the host (closed lines only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    /// Bytes from the host back to the process (closed lines only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_received: Option<u64>,
}

impl NetworkLine {
    /// `host:port` (IPv6 in brackets).
    pub fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    pub fn allowed(&self) -> bool {
        self.record.decision == Permit::Allow
    }

    /// One line for the transcript and headless text mode.
    pub fn summary(&self) -> String {
        let target = self.target();
        let client = self.client.describe();
        match (self.bytes_sent, self.bytes_received) {
            (Some(sent), Some(received)) if self.connected == Some(true) => format!(
                "network: {client} closed {target} ({} sent, {} received)",
                bytes(sent),
                bytes(received)
            ),
            (Some(_), _) => format!("network: {client} could not reach {target}"),
            _ if self.allowed() => format!(
                "network: {client} → {target} allowed ({})",
                decided_by(&self.record.decider)
            ),
            _ => format!(
                "network: {client} → {target} denied ({}){}",
                decided_by(&self.record.decider),
                self.record
                    .why
                    .as_ref()
                    .map(|why| format!(": {why}"))
                    .unwrap_or_default()
            ),
        }
    }
}

/// `512 B`, `3.4 KB`, `12.0 MB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn decided_by(decider: &Decider) -> String {
    match decider {
        Decider::Rule { rule, .. } | Decider::Default { rule } => format!("rule {rule}"),
        Decider::SessionGrant { .. } => "allowed for this session".into(),
        Decider::Person { answer, .. } => match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => "you allowed it once".into(),
            PersonAnswer::AllowSession => "you allowed it for this session".into(),
            PersonAnswer::AllowAlways => "you allowed it always".into(),
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => "you denied it".into(),
        },
        Decider::Expired { .. } => "nobody answered in time".into(),
        Decider::Dismissed { .. } => "the question could not be shown".into(),
        Decider::Headless { .. } => "non-interactive mode".into(),
        Decider::Mode { mode } => format!("{mode} mode"),
        Decider::LimitedGrant { .. } => "a limited grant".into(),
        Decider::Hook { hook, .. } => hook.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleSource;

    fn line(decision: Permit, decider: Decider) -> NetworkLine {
        NetworkLine {
            host: "registry.npmjs.org".into(),
            port: 443,
            via: "connect".into(),
            client: NetworkClient::Bash {
                call_id: "call_1".into(),
                command: "npm install".into(),
            },
            record: AuditRecord::new(
                "Network(registry.npmjs.org:443)",
                &serde_json::json!({}),
                decision,
                None,
                decider,
            ),
            connected: None,
            bytes_sent: None,
            bytes_received: None,
        }
    }

    #[test]
    fn lines_read_as_a_person_would_say_them_and_round_trip() {
        let allowed = line(
            Permit::Allow,
            Decider::Rule {
                rule: "Network(*.npmjs.org)".into(),
                source: RuleSource::Flag,
            },
        );
        assert_eq!(
            allowed.summary(),
            "network: bash call_1 (npm install) → registry.npmjs.org:443 allowed (rule Network(*.npmjs.org))"
        );
        let mut closed = allowed.clone();
        closed.connected = Some(true);
        closed.bytes_sent = Some(900);
        closed.bytes_received = Some(1_250_000);
        assert_eq!(
            closed.summary(),
            "network: bash call_1 (npm install) closed registry.npmjs.org:443 (900 B sent, 1.2 MB received)"
        );
        let json = serde_json::to_value(&closed).unwrap();
        assert_eq!(json["client"]["kind"], "bash");
        assert_eq!(json["decision"], "allow");
        assert_eq!(json["bytes_received"], 1_250_000);
        let back: NetworkLine = serde_json::from_value(json).unwrap();
        assert_eq!(back, closed);
        let denied = line(
            Permit::Deny,
            Decider::Headless {
                asked_by: "default: a new host asks".into(),
            },
        );
        assert!(
            denied.summary().ends_with("denied (non-interactive mode)"),
            "{}",
            denied.summary()
        );
    }
}
