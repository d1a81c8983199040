//! The rules of `[permissions]` (as [`crate::settings`] read them from the user's and the
//! workspace's `config.toml`) and of the rule flags, made into a [`Policy`]. Every problem
//! becomes a `Diagnostic` with file, line and column; the rules that could be read load.

use super::rule::RuleKind;
use super::{OutsideWorkspace, Policy, PolicyRule, Rule, RuleList, RuleSource};
use crate::settings::{
    Diagnostic, FileLayer, OutsideSetting, PermissionEntry, PermissionList, Permissions,
};

/// Shipped defaults < user config < project config (when trusted) < flags.
pub fn from_settings(permissions: &Permissions) -> (Policy, Vec<Diagnostic>) {
    let mut policy = Policy::default();
    let mut diagnostics = Vec::new();
    let mut outside = OutsideWorkspace::Ask;

    if let Some(project) = &permissions.ignored_project_file {
        diagnostics.push(Diagnostic::whole_file(
            project,
            "ignored: this workspace is not trusted, so its permission rules do not apply".into(),
        ));
    }

    for file in &permissions.files {
        let source = match file.layer {
            FileLayer::User => RuleSource::UserConfig(file.path.clone()),
            FileLayer::Project => RuleSource::ProjectConfig(file.path.clone()),
        };
        let name = file.path.display().to_string();
        let (rules, mode, mut diags) = rules_of(&file.entries, &file.text, &name, source);
        diagnostics.append(&mut diags);
        policy.add_rules(rules);
        // The strictest setting wins: a project cannot loosen the user's "deny".
        if mode == Some(OutsideWorkspace::Deny) {
            outside = OutsideWorkspace::Deny;
        }
    }

    for (flags, list, label) in [
        (&permissions.deny_flags, RuleList::Deny, "--deny"),
        (&permissions.allow_flags, RuleList::Allow, "--allow"),
    ] {
        for text in flags {
            let file = format!("{label} {text}");
            match check_rule(text, list) {
                Ok(rule) => policy.add_rules([PolicyRule {
                    rule,
                    list,
                    source: RuleSource::Flag,
                }]),
                Err((offset, message)) => diagnostics.push(Diagnostic {
                    file,
                    line: 1,
                    column: offset + 1,
                    message,
                }),
            }
        }
    }
    policy.set_outside_workspace(outside);
    (policy, diagnostics)
}

/// Parses a rule for `list`, refusing allow-everything rules in allow lists.
fn check_rule(text: &str, list: RuleList) -> Result<Rule, (usize, String)> {
    let rule = Rule::parse(text)
        .map_err(|e| (e.offset, format!("invalid rule {text:?}: {e}; skipped")))?;
    if list == RuleList::Allow && rule.allows_everything() {
        return Err((
            0,
            format!(
                "refused: allow rule {:?} would allow every call of {}; name the tools or commands instead",
                rule.text,
                match rule.kind {
                    RuleKind::AnyMcp => "every MCP tool",
                    RuleKind::Bash(_) => "bash",
                    _ => "every tool",
                }
            ),
        ));
    }
    Ok(rule)
}

/// Pure: the `[permissions]` table of one config file. Returns the rules, the
/// `outside_workspace` setting if present, and diagnostics. Other tables are left alone
/// (they belong to other parts of toolgate).
pub fn parse_permissions(
    text: &str,
    file: &str,
    source: RuleSource,
) -> (Vec<PolicyRule>, Option<OutsideWorkspace>, Vec<Diagnostic>) {
    rules_of(
        &crate::settings::parse_permissions_table(text, file),
        text,
        file,
        source,
    )
}

/// The rules of a table's entries, in order; a rule that does not parse (or allows
/// everything) is a diagnostic at its position in `text`.
fn rules_of(
    entries: &[PermissionEntry],
    text: &str,
    file: &str,
    source: RuleSource,
) -> (Vec<PolicyRule>, Option<OutsideWorkspace>, Vec<Diagnostic>) {
    let mut rules = Vec::new();
    let mut diagnostics = Vec::new();
    let mut outside = None;
    for entry in entries {
        match entry {
            PermissionEntry::Rule {
                list,
                text: rule_text,
                offset: at,
            } => {
                let list = match list {
                    PermissionList::Allow => RuleList::Allow,
                    PermissionList::Ask => RuleList::Ask,
                    PermissionList::Deny => RuleList::Deny,
                };
                match check_rule(rule_text, list) {
                    Ok(rule) => rules.push(PolicyRule {
                        rule,
                        list,
                        source: source.clone(),
                    }),
                    // +1 for the opening quote; exact for strings without escapes.
                    Err((offset, message)) => {
                        diagnostics.push(Diagnostic::at(text, file, at + 1 + offset, message))
                    }
                }
            }
            PermissionEntry::OutsideWorkspace(setting) => {
                outside = Some(match setting {
                    OutsideSetting::Ask => OutsideWorkspace::Ask,
                    OutsideSetting::Deny => OutsideWorkspace::Deny,
                })
            }
            PermissionEntry::Problem(diagnostic) => diagnostics.push(diagnostic.clone()),
        }
    }
    (rules, outside, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Vec<PolicyRule>, Option<OutsideWorkspace>, Vec<Diagnostic>) {
        parse_permissions(text, "config.toml", RuleSource::Flag)
    }

    #[test]
    fn shipped_defaults_parse_cleanly() {
        let (rules, _, diags) = parse(super::super::DEFAULT_PERMISSIONS);
        assert!(diags.is_empty(), "{diags:?}");
        let texts: Vec<_> = rules
            .iter()
            .map(|r| (r.list, r.rule.text.as_str()))
            .collect();
        assert!(texts.contains(&(RuleList::Allow, "mcp__docs__search")));
        assert!(texts.contains(&(RuleList::Allow, "mcp__docs__get_version")));
        assert!(texts.contains(&(RuleList::Allow, "mcp__deploy__status")));
        assert!(texts.contains(&(RuleList::Ask, "mcp__deploy__trigger")));
    }

    #[test]
    fn invalid_rules_are_reported_with_position_and_skipped() {
        let text = "[model]\nname = \"x\"\n\n[permissions]\nallow = [\n  \"mcp__docs__search\",\n  \"Bash(ls\",\n]\n";
        let (rules, _, diags) = parse(text);
        assert_eq!(rules.len(), 1);
        assert_eq!(diags.len(), 1);
        assert_eq!((diags[0].line, diags[0].column), (7, 11));
        assert!(diags[0].message.contains("Bash(ls"), "{}", diags[0].message);
    }

    #[test]
    fn allow_everything_is_refused_with_a_warning() {
        let (rules, _, diags) = parse(
            "[permissions]\nallow = [\"*\", \"mcp__*\", \"Bash\", \"Bash(*)\"]\ndeny = [\"mcp__*\"]\n",
        );
        assert_eq!(rules.len(), 1, "only the deny rule stays");
        assert_eq!(rules[0].list, RuleList::Deny);
        assert_eq!(diags.len(), 4);
        assert!(diags.iter().all(|d| d.message.starts_with("refused")));
        assert_eq!(diags[0].line, 2);
    }

    #[test]
    fn malformed_toml_and_wrong_shapes() {
        let (_, _, diags) = parse("[permissions\nallow = 1");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].line, 1);
        let (_, mode, diags) = parse(
            "[permissions]\nallow = \"mcp__docs\"\nask = [1]\noutside_workspace = \"deny\"\nmode = 2\n",
        );
        assert_eq!(mode, Some(OutsideWorkspace::Deny));
        assert_eq!(diags.len(), 3, "{diags:?}");
        assert_eq!(diags[0].line, 2);
        assert_eq!(diags[1].line, 3);
        assert_eq!(diags[2].line, 5);
    }
}
