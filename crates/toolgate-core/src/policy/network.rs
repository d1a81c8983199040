//! Who a sandboxed process may reach through toolgate's proxy: `Network(HOST)`,
//! `Network(HOST:PORT)`, `Network(*.DOMAIN)` and `Network(*)` rules in the same allow /
//! ask / deny lists as tool rules, with the same precedence (decision 0101): the managed
//! policy's deny, every other deny, the managed ask, a session grant, the other asks, the
//! allows (only the managed ones under `managed_rules_only`), the shipped defaults; with no
//! rule a new host asks. Tool rules, even `*`, never decide a connection.
//!
//! A rule names the host as the process asked for it: a rule on a name covers that name
//! (whatever it resolves to), not the addresses behind it, and an IP rule covers that
//! literal only.

use std::fmt;

use super::rule::{RuleError, RuleKind};
use super::{Decision, Policy, PolicyRule, RuleList, RuleSource, Verdict};
use crate::egress::{Host, Target};

/// The rule text of the fallback: nothing mentions this host.
pub const NETWORK_DEFAULT_RULE: &str = "default: a new host asks";

/// The hosts a `Network(…)` rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    /// None: every port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    /// `*`: every host.
    Any,
    Exact(Host),
    /// `*.example.com`: every name below example.com (not example.com itself).
    Below(String),
}

impl HostPattern {
    /// Parses the inside of `Network(…)` (also a server entry's host list): `example.com`,
    /// `example.com:8443`, `*.example.com`, `127.0.0.2`, `[::1]:80`, `*`.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("expected a host, host:port or *.domain".into());
        }
        if text == "*" {
            return Ok(HostPattern {
                host: HostMatch::Any,
                port: None,
            });
        }
        let (host, port) = split_port(text)?;
        let host = if let Some(domain) = host.strip_prefix("*.") {
            match Host::parse(domain) {
                Ok(Host::Name(name)) => HostMatch::Below(name),
                Ok(Host::Ip(_)) => return Err(format!("'*.' needs a domain name, not {domain}")),
                _ => return Err(format!("{domain:?} is not a domain name")),
            }
        } else if host.contains('*') {
            return Err("'*' is only allowed as '*' or a leading '*.'".into());
        } else {
            HostMatch::Exact(Host::parse(host).map_err(|e| e.to_string())?)
        };
        Ok(HostPattern { host, port })
    }

    /// The pattern that covers exactly `host` on every port (what "always" writes).
    pub fn for_host(host: &Host) -> HostPattern {
        HostPattern {
            host: HostMatch::Exact(host.clone()),
            port: None,
        }
    }

    pub fn matches(&self, target: &Target) -> bool {
        if self.port.is_some_and(|port| port != target.port) {
            return false;
        }
        match (&self.host, &target.host) {
            (HostMatch::Any, _) => true,
            (HostMatch::Exact(host), other) => host == other,
            (HostMatch::Below(domain), Host::Name(name)) => name
                .strip_suffix(domain.as_str())
                .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
            (HostMatch::Below(_), Host::Ip(_)) => false,
        }
    }
}

/// `host` and `:port`, minding IPv6 literals (`[::1]:80`; a bare `::1` has no port).
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("{p:?} is not a port (1-65535)"))
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or("expected ']' after an IPv6 address")?;
        return match after.strip_prefix(':') {
            Some(p) => Ok((host, Some(port(p)?))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected {after:?} after ']'")),
        };
    }
    match text.rsplit_once(':') {
        // More than one colon: an IPv6 literal without brackets, so no port.
        Some((host, _)) if host.contains(':') => Ok((text, None)),
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((text, None)),
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Any => f.write_str("*")?,
            HostMatch::Exact(Host::Ip(std::net::IpAddr::V6(ip))) if self.port.is_some() => {
                write!(f, "[{ip}]")?
            }
            HostMatch::Exact(host) => write!(f, "{host}")?,
            HostMatch::Below(domain) => write!(f, "*.{domain}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// `Network(…)`'s specifier as a rule kind; `at` is where it starts in the rule text.
pub(super) fn parse_rule(spec: Option<(&str, usize)>, lead: usize) -> Result<RuleKind, RuleError> {
    let Some((inner, at)) = spec else {
        return Err(RuleError {
            message: "Network needs a host: Network(HOST), Network(HOST:PORT), Network(*.DOMAIN) or Network(*)".into(),
            offset: lead,
        });
    };
    HostPattern::parse(inner)
        .map(RuleKind::Network)
        .map_err(|message| RuleError {
            message: format!("Network({inner}): {message}"),
            offset: at,
        })
}

/// The rule "always" writes for a host: every port of it.
pub fn network_always_rule(host: &Host) -> String {
    format!("Network({})", HostPattern::for_host(host))
}

/// The session grant that lets `host` be reached (any port) for the rest of the session.
pub fn network_grant(host: &Host) -> String {
    network_always_rule(host)
}

impl Policy {
    /// The verdict for a connection to `target`. Pure, like [`Policy::decide`]; `grants` are
    /// the session's grant names.
    pub fn decide_network(
        &self,
        target: &Target,
        grants: &std::collections::BTreeSet<String>,
    ) -> Verdict {
        let matches = |r: &PolicyRule, list: RuleList, managed: bool| {
            r.list == list
                && r.source.is_managed() == managed
                && matches!(&r.rule.kind, RuleKind::Network(pattern) if pattern.matches(target))
        };
        let first =
            |list: RuleList, managed: bool| self.rules.iter().find(|r| matches(r, list, managed));
        let verdict = |r: &PolicyRule| {
            let decision = match r.list {
                RuleList::Allow => Decision::Allow,
                RuleList::Ask => Decision::Ask {
                    why: format!("rule {} asks before connecting to {target}", r.rule.text),
                },
                RuleList::Deny => Decision::Deny {
                    why: format!("{target} is denied by rule {}", r.rule.text),
                },
            };
            Verdict::new(decision, r.rule.text.clone(), r.source.clone())
        };
        for managed in [true, false] {
            if let Some(r) = first(RuleList::Deny, managed) {
                return verdict(r);
            }
        }
        if let Some(r) = first(RuleList::Ask, true) {
            return verdict(r);
        }
        let grant = network_grant(&target.host);
        if grants.contains(&grant) {
            return Verdict::new(Decision::Allow, grant, RuleSource::SessionGrant);
        }
        if let Some(r) = first(RuleList::Ask, false) {
            return verdict(r);
        }
        let allow_layers: &[bool] = if self.managed_rules_only {
            &[true]
        } else {
            &[true, false]
        };
        for &managed in allow_layers {
            if let Some(r) = first(RuleList::Allow, managed) {
                return verdict(r);
            }
        }
        for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
            if let Some(r) = self.defaults.iter().find(|r| matches(r, list, false)) {
                return verdict(r);
            }
        }
        Verdict::new(
            Decision::Ask {
                why: format!("no rule mentions {target}"),
            },
            NETWORK_DEFAULT_RULE,
            RuleSource::Default,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Rule, RuleList, RuleSource};
    use super::*;
    use std::collections::BTreeSet;

    fn target(text: &str) -> Target {
        let (host, port) = text.rsplit_once(':').unwrap();
        Target {
            host: Host::parse(host).unwrap(),
            port: port.parse().unwrap(),
        }
    }

    fn covers(pattern: &str, t: &str) -> bool {
        HostPattern::parse(pattern).unwrap().matches(&target(t))
    }

    #[test]
    fn patterns_cover_names_ports_domains_and_literals() {
        assert!(covers("registry.npmjs.org", "Registry.npmjs.org:443"));
        assert!(covers("registry.npmjs.org", "registry.npmjs.org:80"));
        assert!(!covers("registry.npmjs.org:443", "registry.npmjs.org:80"));
        assert!(covers("*.npmjs.org", "registry.npmjs.org:443"));
        assert!(!covers("*.npmjs.org", "npmjs.org:443"));
        assert!(!covers("*.npmjs.org", "evilnpmjs.org:443"));
        assert!(covers("127.0.0.2", "127.0.0.2:8080"));
        assert!(!covers("127.0.0.2", "127.0.0.3:8080"));
        assert!(covers("[::1]:80", "[::1]:80"));
        assert!(covers("*", "example.com:1"));
        for bad in [
            "",
            "a b",
            "*.",
            "ex*.com",
            "host:0",
            "host:99999",
            "*.127.0.0.1",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} parsed");
        }
        assert_eq!(
            HostPattern::parse("Example.COM:8443").unwrap().to_string(),
            "example.com:8443"
        );
    }

    fn rule(text: &str, list: RuleList, source: RuleSource) -> PolicyRule {
        PolicyRule {
            rule: Rule::parse(text).unwrap(),
            list,
            source,
        }
    }

    #[test]
    fn deny_wins_managed_cannot_be_overridden_and_an_unlisted_host_asks() {
        let managed = RuleSource::Managed("/etc/toolgate/managed.toml".into());
        let user = RuleSource::UserConfig("/u/config.toml".into());
        let mut policy = Policy::empty();
        policy.add_rules([
            rule("Network(*.example.com)", RuleList::Allow, user.clone()),
            rule("Network(bad.example.com)", RuleList::Deny, user.clone()),
            rule("Network(evil.org)", RuleList::Deny, managed.clone()),
            rule("Network(evil.org)", RuleList::Allow, user.clone()),
            rule("*", RuleList::Ask, user.clone()),
        ]);
        let none = BTreeSet::new();
        let decide = |t: &str| policy.decide_network(&target(t), &none);
        assert_eq!(decide("api.example.com:443").decision, Decision::Allow);
        assert!(matches!(
            decide("bad.example.com:443").decision,
            Decision::Deny { .. }
        ));
        let evil = decide("evil.org:443");
        assert!(matches!(evil.decision, Decision::Deny { .. }));
        assert_eq!(evil.source, managed);
        let other = decide("other.net:443");
        assert!(matches!(other.decision, Decision::Ask { .. }));
        assert_eq!(other.rule, NETWORK_DEFAULT_RULE);
        // A session grant covers the host on every port, but not a denied one.
        let grants: BTreeSet<String> = [network_grant(&Host::parse("other.net").unwrap())]
            .into_iter()
            .collect();
        let granted = policy.decide_network(&target("other.net:8080"), &grants);
        assert_eq!(granted.source, RuleSource::SessionGrant);
        policy.set_managed_rules_only(true);
        assert!(matches!(
            policy
                .decide_network(&target("api.example.com:443"), &none)
                .decision,
            Decision::Ask { .. }
        ));
    }

    #[test]
    fn malformed_network_rules_say_where() {
        let e = Rule::parse("Network(ex ample.com)").unwrap_err();
        assert_eq!(e.offset, 8);
        assert!(e.message.contains("ex ample.com"), "{}", e.message);
        assert!(Rule::parse("Network").is_err());
        assert_eq!(
            network_always_rule(&Host::parse("Registry.npmjs.org").unwrap()),
            "Network(registry.npmjs.org)"
        );
    }
}
