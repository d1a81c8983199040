//! A sandboxed process wants to reach a host no rule covers: the card names the host and
//! port, the command line or server that opened the connection and the tool call it
//! belongs to. The connection waits for the answer.

use super::tool_call::run_choices;
use super::{Card, Choice, Fact, Kind, Tone};
use crate::network::NetworkClient;
use crate::{PersonAnswer, Verdict};

#[derive(Debug, Clone)]
pub struct Network {
    /// The host as the process named it (a name or an IP literal).
    pub host: String,
    pub port: u16,
    /// How it asked: `http`, `connect` or `socks5`.
    pub via: String,
    pub client: NetworkClient,
    /// The verdict that asked (its rule and where the rule came from).
    pub verdict: Verdict,
    /// What "always" would write, e.g. `Network(registry.npmjs.org)`.
    pub always_rule: Option<String>,
    /// Set when the host first appeared in an untrusted tool result: where it came from.
    pub flow: Option<String>,
}

impl Network {
    fn target(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn who(&self) -> String {
        match &self.client {
            NetworkClient::Bash { call_id, .. } => format!("The bash command of call {call_id}"),
            NetworkClient::Server { server } => format!("MCP server '{server}'"),
            NetworkClient::Hook { .. } => "A hook".into(),
        }
    }
}

impl Kind for Network {
    type Answer = PersonAnswer;
    const NAME: &'static str = "network";

    fn card(&self) -> Card {
        let target = self.target();
        let mut facts = vec![
            Fact::new("host", target.clone(), Tone::Plain),
            Fact::new("opened by", self.client.describe(), Tone::Plain),
        ];
        if let Some(call) = self.client.call_id() {
            facts.push(Fact::new("tool call", call.to_string(), Tone::Dim));
        }
        if let Some(flow) = &self.flow {
            facts.push(Fact::new("came from", flow.clone(), Tone::Warn));
        }
        facts.push(Fact::new(
            "rule",
            format!("{} ({})", self.verdict.rule, self.verdict.source),
            Tone::Dim,
        ));
        let details = match &self.client {
            NetworkClient::Bash { command, .. } | NetworkClient::Hook { command } => {
                command.clone()
            }
            NetworkClient::Server { server } => format!("server '{server}'"),
        };
        Card {
            title: "Network access".into(),
            asker: format!("{} wants to connect to {target}", self.who()),
            effect: format!(
                "toolgate's proxy opens a {} connection to {target}; the process can send it \
                 whatever it can read. Nothing else leaves the sandbox.",
                match self.via.as_str() {
                    "http" => "plain HTTP",
                    "socks5" => "SOCKS5",
                    _ => "tunnelled (usually TLS)",
                }
            ),
            facts,
            details_title: "command".into(),
            details,
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        run_choices(
            "Allow once",
            "Allow this host for the session",
            self.always_rule
                .as_ref()
                .map(|rule| format!("Always allow ({rule})"))
                .as_deref(),
            true,
        )
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        let target = self.target();
        match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => {
                format!("network: {target} allowed once")
            }
            PersonAnswer::AllowSession => {
                format!("network: {} allowed for this session", self.host)
            }
            PersonAnswer::AllowAlways => format!("network: {} always allowed", self.host),
            PersonAnswer::Deny => format!("network: {target} denied"),
            PersonAnswer::DenyWithNote(note) => format!("network: {target} denied: {note}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RESERVED_KEYS;
    use super::*;
    use crate::{Decision, RuleSource};

    fn question() -> Network {
        Network {
            host: "registry.npmjs.org".into(),
            port: 443,
            via: "connect".into(),
            client: NetworkClient::Bash {
                call_id: "call_7".into(),
                command: "npm install left-pad".into(),
            },
            verdict: Verdict {
                decision: Decision::Ask {
                    why: "no rule".into(),
                },
                rule: "default: a new host asks".into(),
                source: RuleSource::Default,
            },
            always_rule: Some("Network(registry.npmjs.org)".into()),
            flow: None,
        }
    }

    #[test]
    fn the_card_names_host_command_and_call_and_deny_is_safe() {
        let q = question();
        let card = q.card();
        assert_eq!(
            card.asker,
            "The bash command of call call_7 wants to connect to registry.npmjs.org:443"
        );
        assert_eq!(
            card.fact("opened by").as_deref(),
            Some("bash call_7 (npm install left-pad)")
        );
        assert_eq!(card.fact("tool call").as_deref(), Some("call_7"));
        assert_eq!(card.details, "npm install left-pad");
        let choices = q.choices();
        let labels: Vec<&str> = choices.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Allow once",
                "Allow this host for the session",
                "Always allow (Network(registry.npmjs.org))",
                "Deny",
                "Deny with note"
            ]
        );
        assert!(choices.iter().all(|c| !RESERVED_KEYS.contains(&c.key)));
        assert_eq!(q.safe_default(), PersonAnswer::Deny);
    }
}
