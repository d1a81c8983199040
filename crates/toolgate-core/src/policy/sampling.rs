//! Who may sample the host's model: `sampling(SERVER)` rules in the same allow / ask /
//! deny lists as tool rules. Deny wins over ask over allow (configured layers first, then
//! the shipped defaults); with no rule the person is asked. Session grants for sampling are
//! kept by the agent, not here: they are per server, not per tool.

use super::rule::RuleKind;
use super::{Decision, Policy, PolicyRule, RuleList, RuleSource, Verdict};

/// The rule text of the fallback: nothing mentions this server's sampling.
pub const SAMPLING_DEFAULT_RULE: &str = "default: sampling asks";

impl Policy {
    /// The verdict for a sampling request from `server`. Pure, like [`Policy::decide`].
    pub fn decide_sampling(&self, server: &str) -> Verdict {
        let matches = |r: &PolicyRule, list: RuleList| {
            r.list == list
                && match &r.rule.kind {
                    RuleKind::Sampling { server: None } => true,
                    RuleKind::Sampling {
                        server: Some(pattern),
                    } => pattern.matches(server),
                    _ => false,
                }
        };
        for rules in [&self.rules, &self.defaults] {
            for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
                if let Some(r) = rules.iter().find(|r| matches(r, list)) {
                    let decision = match list {
                        RuleList::Allow => Decision::Allow,
                        RuleList::Ask => Decision::Ask {
                            why: format!("rule {} asks before '{server}' samples", r.rule.text),
                        },
                        RuleList::Deny => Decision::Deny {
                            why: format!("denied by rule {}", r.rule.text),
                        },
                    };
                    return Verdict::new(decision, r.rule.text.clone(), r.source.clone());
                }
            }
        }
        Verdict::new(
            Decision::Ask {
                why: format!("no rule mentions sampling by '{server}'"),
            },
            SAMPLING_DEFAULT_RULE,
            RuleSource::Default,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Rule, RuleList, RuleSource};
    use super::*;

    fn rule(text: &str, list: RuleList) -> PolicyRule {
        PolicyRule {
            rule: Rule::parse(text).unwrap(),
            list,
            source: RuleSource::Flag,
        }
    }

    #[test]
    fn rules_by_server_decide_and_the_default_asks() {
        let mut policy = Policy::empty();
        assert!(matches!(
            policy.decide_sampling("notes").decision,
            Decision::Ask { .. }
        ));
        policy.add_rules([
            rule("sampling(notes)", RuleList::Allow),
            rule("sampling(evil*)", RuleList::Deny),
            rule("mcp__other", RuleList::Allow),
            rule("*", RuleList::Deny),
        ]);
        let allowed = policy.decide_sampling("notes");
        assert_eq!(allowed.decision, Decision::Allow);
        assert_eq!(allowed.rule, "sampling(notes)");
        assert!(matches!(
            policy.decide_sampling("evil-twin").decision,
            Decision::Deny { .. }
        ));
        // Tool rules (even `*`) say nothing about sampling.
        assert_eq!(policy.decide_sampling("other").rule, SAMPLING_DEFAULT_RULE);
        policy.add_rules([rule("Sampling", RuleList::Ask)]);
        assert_eq!(policy.decide_sampling("notes").rule, "Sampling");
        assert!(Rule::parse("sampling(a b)").is_err());
    }
}
