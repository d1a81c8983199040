//! The rules of `[permissions]` (as [`crate::settings`] read them from the user's and the
//! workspace's `config.toml`) and of the rule flags, made into a [`Policy`]. Every problem
//! becomes a `Diagnostic` with file, line and column; the rules that could be read load.
//! A problem that may hide a deny or ask rule is marked [`Severity::Refuses`]: skipping
//! such a rule would let calls through that the person meant to stop (decision 0068).

use super::rule::RuleKind;
use super::{OutsideWorkspace, Policy, PolicyRule, Rule, RuleList, RuleSource};
use crate::settings::{
    Diagnostic, FileLayer, OutsideSetting, PermissionEntry, PermissionList, Permissions,
};

/// How much a problem in the rules matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Only an allow rule was lost (or a file was ignored on purpose): the rules in force
    /// are stricter than written, never looser. Reported; the session starts.
    Notice,
    /// A deny or ask rule may be lost (it does not parse, its list is misshapen, the file
    /// cannot be read): the rules would be looser than written, so they are not used.
    Refuses,
}

/// One problem in the rules, with what it means for the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleProblem {
    pub diagnostic: Diagnostic,
    pub severity: Severity,
}

impl RuleProblem {
    fn notice(diagnostic: Diagnostic) -> RuleProblem {
        RuleProblem {
            diagnostic,
            severity: Severity::Notice,
        }
    }

    fn refuses(diagnostic: Diagnostic) -> RuleProblem {
        RuleProblem {
            diagnostic,
            severity: Severity::Refuses,
        }
    }
}

/// [`from_settings_checked`] with every problem as a diagnostic, whatever its severity (the live reload
/// refuses any new problem anyway).
pub fn from_settings(permissions: &Permissions) -> (Policy, Vec<Diagnostic>) {
    let (policy, problems) = from_settings_checked(permissions);
    (policy, problems.into_iter().map(|p| p.diagnostic).collect())
}

/// Shipped defaults < user config < project config (when trusted) < flags. The problems
/// come with their severity; the caller must not use the policy if one refuses.
pub fn from_settings_checked(permissions: &Permissions) -> (Policy, Vec<RuleProblem>) {
    let mut policy = Policy::default();
    let mut diagnostics = Vec::new();
    let mut outside = OutsideWorkspace::Ask;

    if let Some(project) = &permissions.ignored_project_file {
        diagnostics.push(RuleProblem::notice(Diagnostic::whole_file(
            project,
            "ignored: this workspace is not trusted, so its permission rules do not apply".into(),
        )));
    }

    for file in &permissions.files {
        let source = match file.layer {
            FileLayer::User => RuleSource::UserConfig(file.path.clone()),
            FileLayer::Project => RuleSource::ProjectConfig(file.path.clone()),
            FileLayer::Managed => RuleSource::Managed(file.path.clone()),
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
                // Typed just now: any flag that does not parse stops the start.
                Err((offset, message)) => diagnostics.push(RuleProblem::refuses(Diagnostic {
                    file,
                    line: 1,
                    column: offset + 1,
                    message,
                })),
            }
        }
    }
    // The managed layer (decision 0082): every problem refuses, even one confined to an
    // allow list (the administrator's file is read strictly), and its
    // outside_workspace = "deny" cannot be loosened.
    for file in &permissions.managed {
        let name = file.path.display().to_string();
        let source = RuleSource::Managed(file.path.clone());
        let (rules, mode, problems) = rules_of(&file.entries, &file.text, &name, source);
        diagnostics.extend(
            problems
                .into_iter()
                .map(|p| RuleProblem::refuses(p.diagnostic)),
        );
        policy.add_rules(rules);
        if mode == Some(OutsideWorkspace::Deny) {
            outside = OutsideWorkspace::Deny;
        }
    }
    policy.set_managed_rules_only(permissions.managed_rules_only);
    if permissions.managed_rules_only && !permissions.allow_flags.is_empty() {
        diagnostics.push(RuleProblem::notice(Diagnostic {
            file: "command line".into(),
            line: 0,
            column: 0,
            message: "ignored: the managed policy sets managed_rules_only, so only its own allow rules apply".into(),
        }));
    }
    policy.set_outside_workspace(outside);
    (policy, diagnostics)
}

/// Parses a rule for `list`, refusing allow-everything rules in allow lists.
fn check_rule(text: &str, list: RuleList) -> Result<Rule, (usize, String)> {
    let rule = Rule::parse(text).map_err(|e| {
        let message = match list {
            RuleList::Allow => format!("invalid rule {text:?}: {e}; skipped"),
            RuleList::Ask => format!("invalid ask rule {text:?}: {e}"),
            RuleList::Deny => format!("invalid deny rule {text:?}: {e}"),
        };
        (e.offset, message)
    })?;
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
    let (rules, outside, problems) = rules_of(
        &crate::settings::parse_permissions_table(text, file),
        text,
        file,
        source,
    );
    let diagnostics = problems.into_iter().map(|p| p.diagnostic).collect();
    (rules, outside, diagnostics)
}

/// The rules of a table's entries, in order; a rule that does not parse (or allows
/// everything) is a problem at its position in `text`. Only problems confined to the
/// allow list are notices.
fn rules_of(
    entries: &[PermissionEntry],
    text: &str,
    file: &str,
    source: RuleSource,
) -> (Vec<PolicyRule>, Option<OutsideWorkspace>, Vec<RuleProblem>) {
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
                        let diagnostic = Diagnostic::at(text, file, at + 1 + offset, message);
                        // A malformed network rule refuses the start in every list
                        // (decision 0101): a host list is easy to get subtly wrong, and
                        // a session that silently lost one would ask about every host.
                        let network = rule_text.trim_start().starts_with("Network");
                        diagnostics.push(match list {
                            RuleList::Allow if !network => RuleProblem::notice(diagnostic),
                            _ => RuleProblem::refuses(diagnostic),
                        })
                    }
                }
            }
            PermissionEntry::OutsideWorkspace(setting) => {
                outside = Some(match setting {
                    OutsideSetting::Ask => OutsideWorkspace::Ask,
                    OutsideSetting::Deny => OutsideWorkspace::Deny,
                })
            }
            // The session's starting mode: read by the bootstrap, not a rule.
            PermissionEntry::DefaultMode(_) => {}
            PermissionEntry::Problem {
                diagnostic,
                list: Some(PermissionList::Allow),
            } => diagnostics.push(RuleProblem::notice(diagnostic.clone())),
            PermissionEntry::Problem { diagnostic, .. } => {
                diagnostics.push(RuleProblem::refuses(diagnostic.clone()))
            }
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

    fn severities(text: &str) -> Vec<(usize, usize, Severity)> {
        let (_, _, problems) = rules_of(
            &crate::settings::parse_permissions_table(text, "config.toml"),
            text,
            "config.toml",
            RuleSource::Flag,
        );
        problems
            .iter()
            .map(|p| (p.diagnostic.line, p.diagnostic.column, p.severity))
            .collect()
    }

    #[test]
    fn only_problems_confined_to_allow_are_notices() {
        let text = "[permissions]\nallow = [\"Bash(ls\", 3, \"*\"]\ndeny = [\"mcp__good__pad(\", 4]\nask = [\"Nope((\"]\n";
        assert_eq!(
            severities(text),
            vec![
                (2, 18, Severity::Notice),
                (2, 21, Severity::Notice),
                (2, 25, Severity::Notice),
                (3, 25, Severity::Refuses),
                (3, 28, Severity::Refuses),
                (4, 15, Severity::Refuses),
            ]
        );
        let (_, _, diags) = parse(text);
        assert!(
            diags[3]
                .message
                .starts_with("invalid deny rule \"mcp__good__pad(\""),
            "{}",
            diags[3].message
        );
        // Whatever may hide a deny rule refuses too: a misshapen list, a file that does
        // not parse, an unknown key (a misspelt "deny"), an unknown outside_workspace.
        for text in [
            "[permissions]\ndeny = \"Bash\"\n",
            "[permissions]\ndeny = [\"Bash\"\n",
            "[permissions]\ndenny = [\"Bash\"]\n",
            "[permissions]\noutside_workspace = \"dney\"\n",
        ] {
            let found = severities(text);
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            assert_eq!(found[0].2, Severity::Refuses, "{text}");
        }
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
