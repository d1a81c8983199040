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

use super::host_pattern::HostPattern;
use super::rule::RuleKind;
use super::{Decision, Policy, PolicyRule, RuleList, RuleSource, Verdict};
use crate::egress::{Host, Target};

/// The rule text of the fallback: nothing mentions this host.
pub const NETWORK_DEFAULT_RULE: &str = "default: a new host asks";

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
