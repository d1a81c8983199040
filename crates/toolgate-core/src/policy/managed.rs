//! What the managed policy overrides in the other layers, for `toolgate status` and
//! `/permissions` (decision 0082). The decision itself is in `decide.rs`: managed deny and
//! ask rules come first; with `managed_rules_only` no other layer's allow rule counts.

use super::rule::RuleKind;
use super::{Policy, PolicyRule, RuleList};
use crate::settings::ManagedSettings;

/// The managed layer as `toolgate status` and `/permissions` show it: its files, rules,
/// switches, server lists and sandbox floor, then what it overrides in the other layers.
/// Empty when no managed file was read.
pub fn managed_summary(managed: &ManagedSettings, policy: &Policy) -> Vec<String> {
    if !managed.is_active() {
        return Vec::new();
    }
    let mut lines = vec![format!("Managed policy: {}", managed.files_shown())];
    let mut items: Vec<String> = policy
        .rules
        .iter()
        .filter(|r| r.source.is_managed())
        .map(|r| format!("{} {}", r.list.key(), r.rule.text))
        .collect();
    if managed.managed_rules_only {
        items.push("managed_rules_only = true".into());
    }
    if managed.disable_auto_mode {
        items.push("disable_auto_mode = true".into());
    }
    items.extend(managed.servers.describe());
    items.extend(managed.sandbox.describe());
    lines.extend(items.into_iter().map(|i| format!("  {i}")));
    let overrides: Vec<String> = policy
        .managed_overrides()
        .into_iter()
        .chain(managed.overrides.iter().cloned())
        .collect();
    if overrides.is_empty() {
        lines.push("  overrides: nothing in the user's or project's settings".into());
    } else {
        lines.push("  overrides:".into());
        lines.extend(overrides.into_iter().map(|o| format!("    {o}")));
    }
    lines
}

impl Policy {
    /// The user's, project's and flags' allow rules the managed policy overrides, each
    /// with why: all of them under `managed_rules_only`; else those a managed deny or ask
    /// rule covers (the same rule, or a managed rule for the whole server or prefix).
    pub fn managed_overrides(&self) -> Vec<String> {
        let managed: Vec<&PolicyRule> = self
            .rules
            .iter()
            .filter(|r| r.source.is_managed() && r.list != RuleList::Allow)
            .collect();
        self.rules
            .iter()
            .filter(|r| !r.source.is_managed() && r.list == RuleList::Allow)
            .filter_map(|allow| {
                let what = format!("allow {} ({})", allow.rule.text, allow.source);
                if self.managed_rules_only {
                    return Some(format!(
                        "{what}: ignored, the managed policy sets managed_rules_only"
                    ));
                }
                let by = managed.iter().find(|m| covers(m, allow))?;
                let verb = if by.list == RuleList::Deny {
                    "denied"
                } else {
                    "asked"
                };
                Some(format!(
                    "{what}: {verb} by managed rule {} ({})",
                    by.rule.text, by.source
                ))
            })
            .collect()
    }
}

/// Whether the managed rule `m` decides at least the calls the rule `r` names: the same
/// text, a rule for every tool, or a server-wide or prefix rule `r`'s name falls under.
fn covers(m: &PolicyRule, r: &PolicyRule) -> bool {
    let (mt, rt) = (m.rule.text.as_str(), r.rule.text.as_str());
    match &m.rule.kind {
        RuleKind::Everything => true,
        RuleKind::AnyMcp => rt.starts_with("mcp__"),
        RuleKind::McpServer { .. } => rt == mt || rt.starts_with(&format!("{mt}__")),
        RuleKind::McpPrefix { .. } => rt.starts_with(mt.trim_end_matches('*')),
        _ => rt == mt,
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::tests::{ctx, grants, kind, mcp, project, user, with_rules};
    use crate::policy::{Decision, Policy, PolicyRule, Rule, RuleList, RuleSource};
    use serde_json::json;
    use std::path::Path;

    fn managed() -> RuleSource {
        RuleSource::Managed("/etc/toolgate/managed.toml".into())
    }

    #[test]
    fn managed_deny_and_ask_beat_every_other_layer_and_grants() {
        let trigger = mcp("deploy", "trigger");
        let status = mcp("deploy", "status");
        let policy = with_rules(&[
            (RuleList::Allow, "mcp__deploy__trigger", user()),
            (RuleList::Allow, "mcp__deploy__trigger", project()),
            (RuleList::Allow, "mcp__deploy__trigger", RuleSource::Flag),
            (RuleList::Allow, "mcp__deploy__status", RuleSource::Flag),
            (RuleList::Deny, "mcp__deploy__trigger", managed()),
            (RuleList::Ask, "mcp__deploy__status", managed()),
        ]);
        let ws = Path::new("/w");
        let granted = grants(&["mcp__deploy__trigger", "mcp__deploy__status"]);
        let with_grants = ctx(ws).with_grants(&granted);
        let denied = policy.decide(&trigger, &json!({}), &with_grants);
        assert_eq!(denied.source, managed());
        let Decision::Deny { why } = &denied.decision else {
            panic!("{denied:?}");
        };
        assert!(why.contains("denied by the managed policy"), "{why}");
        assert!(why.contains("/etc/toolgate/managed.toml"), "{why}");
        let asked = policy.decide(&status, &json!({}), &with_grants);
        assert_eq!((kind(&asked), asked.source.clone()), ("ask", managed()));
    }

    #[test]
    fn managed_rules_only_ignores_other_allow_rules_but_not_managed_ones_or_denies() {
        let mut policy = with_rules(&[
            (RuleList::Allow, "mcp__deploy__trigger", user()),
            (RuleList::Allow, "mcp__deploy__trigger", RuleSource::Flag),
            (RuleList::Allow, "mcp__docs__search", managed()),
            (RuleList::Deny, "mcp__docs__search", project()),
            (RuleList::Allow, "mcp__docs__get_version", managed()),
        ]);
        let ws = Path::new("/w");
        let decide = |p: &Policy, server: &str, tool: &str| {
            let v = p.decide(&mcp(server, tool), &json!({}), &ctx(ws));
            (kind(&v), v.source)
        };
        assert_eq!(decide(&policy, "deploy", "trigger"), ("allow", user()));
        policy.set_managed_rules_only(true);
        assert_eq!(decide(&policy, "deploy", "trigger").0, "ask");
        assert_eq!(decide(&policy, "docs", "get_version"), ("allow", managed()));
        // A deny of another layer still tightens a managed allow.
        assert_eq!(decide(&policy, "docs", "search"), ("deny", project()));
    }

    fn rule(text: &str, list: RuleList, source: RuleSource) -> PolicyRule {
        PolicyRule {
            rule: Rule::parse(text).unwrap(),
            list,
            source,
        }
    }

    #[test]
    fn overrides_name_the_allow_rule_and_the_managed_rule() {
        let managed = RuleSource::Managed("/etc/toolgate/managed.toml".into());
        let user = RuleSource::UserConfig("/u/config.toml".into());
        let mut policy = Policy::empty();
        policy.add_rules([
            rule("mcp__deploy", RuleList::Deny, managed.clone()),
            rule("mcp__deploy__trigger", RuleList::Allow, user.clone()),
            rule("mcp__docs__search", RuleList::Allow, RuleSource::Flag),
        ]);
        assert_eq!(
            policy.managed_overrides(),
            [
                "allow mcp__deploy__trigger (user config /u/config.toml): denied by managed rule mcp__deploy (managed policy /etc/toolgate/managed.toml)"
            ]
        );
        policy.set_managed_rules_only(true);
        let all = policy.managed_overrides();
        assert_eq!(all.len(), 2);
        assert!(all[1].ends_with("ignored, the managed policy sets managed_rules_only"));
    }
}
