//! Loading `[permissions]` from the user's and the workspace's `config.toml` and from flags.
//! Every problem becomes a `Diagnostic` with file, line and column; what could be read loads.

use std::path::{Path, PathBuf};

use super::rule::RuleKind;
use super::{OutsideWorkspace, Policy, PolicyRule, Rule, RuleList, RuleSource};
use crate::config::Diagnostic;

/// Everything the loader reads. `user_config_dir` is normally `paths::user_config_dir()`.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub workspace: PathBuf,
    pub user_config_dir: Option<PathBuf>,
    /// Whether the user trusts this workspace; project files are ignored otherwise.
    pub trusted: bool,
    /// `--allow RULE` and `--deny RULE`.
    pub allow_flags: Vec<String>,
    pub deny_flags: Vec<String>,
}

impl LoadOptions {
    pub fn new(workspace: &Path, trusted: bool) -> LoadOptions {
        LoadOptions {
            workspace: workspace.to_path_buf(),
            user_config_dir: crate::paths::user_config_dir(),
            trusted,
            allow_flags: Vec::new(),
            deny_flags: Vec::new(),
        }
    }
}

/// The workspace's `.toolgate/config.toml`.
pub fn project_config_path(workspace: &Path) -> PathBuf {
    crate::paths::workspace_dir(workspace).join("config.toml")
}

/// The files whose `[permissions]` [`load`] reads, each with the source its rules get:
/// the user's `config.toml`, and the project's when the workspace is trusted.
pub fn rule_files(opts: &LoadOptions) -> Vec<(PathBuf, RuleSource)> {
    let mut files = Vec::new();
    if let Some(dir) = &opts.user_config_dir {
        let path = dir.join("config.toml");
        files.push((path.clone(), RuleSource::UserConfig(path)));
    }
    if opts.trusted {
        let project = project_config_path(&opts.workspace);
        files.push((project.clone(), RuleSource::ProjectConfig(project)));
    }
    files
}

/// Shipped defaults < user config < project config (when trusted) < flags.
pub fn load(opts: &LoadOptions) -> (Policy, Vec<Diagnostic>) {
    let mut policy = Policy::default();
    let mut diagnostics = Vec::new();
    let mut outside = OutsideWorkspace::Ask;

    let files = rule_files(opts);
    let project = project_config_path(&opts.workspace);
    if !opts.trusted && project.exists() {
        diagnostics.push(Diagnostic {
            file: project.display().to_string(),
            line: 0,
            column: 0,
            message: "ignored: this workspace is not trusted, so its permission rules do not apply"
                .into(),
        });
    }

    for (path, source) in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                diagnostics.push(Diagnostic {
                    file: path.display().to_string(),
                    line: 0,
                    column: 0,
                    message: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        let (rules, mode, mut diags) =
            parse_permissions(&text, &path.display().to_string(), source);
        diagnostics.append(&mut diags);
        policy.add_rules(rules);
        // The strictest setting wins: a project cannot loosen the user's "deny".
        if mode == Some(OutsideWorkspace::Deny) {
            outside = OutsideWorkspace::Deny;
        }
    }

    for (flags, list, label) in [
        (&opts.deny_flags, RuleList::Deny, "--deny"),
        (&opts.allow_flags, RuleList::Allow, "--allow"),
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
    let mut rules = Vec::new();
    let mut diagnostics = Vec::new();
    let mut outside = None;
    let diag = |offset: usize, message: String| Diagnostic::at(text, file, offset, message);
    let doc = match toml_edit::Document::parse(text) {
        Ok(d) => d,
        Err(e) => {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            diagnostics.push(diag(
                offset,
                format!(
                    "not valid TOML ({}); no permission rules loaded from this file",
                    e.message().trim()
                ),
            ));
            return (rules, outside, diagnostics);
        }
    };
    let Some(item) = doc.get("permissions") else {
        return (rules, outside, diagnostics);
    };
    let Some(table) = item.as_table_like() else {
        diagnostics.push(diag(
            item.span().map(|s| s.start).unwrap_or(0),
            "expected [permissions] to be a table".into(),
        ));
        return (rules, outside, diagnostics);
    };
    for (key, value) in table.iter() {
        let at = value.span().map(|s| s.start).unwrap_or(0);
        let list = match key {
            "allow" => RuleList::Allow,
            "ask" => RuleList::Ask,
            "deny" => RuleList::Deny,
            "outside_workspace" => {
                match value.as_str() {
                    Some("ask") => outside = Some(OutsideWorkspace::Ask),
                    Some("deny") => outside = Some(OutsideWorkspace::Deny),
                    _ => diagnostics.push(diag(
                        at,
                        "expected outside_workspace = \"ask\" or \"deny\"".into(),
                    )),
                }
                continue;
            }
            other => {
                diagnostics.push(diag(
                    at,
                    format!("unknown key permissions.{other} (expected allow, ask, deny or outside_workspace); ignored"),
                ));
                continue;
            }
        };
        let Some(array) = value.as_array() else {
            diagnostics.push(diag(
                at,
                format!("expected permissions.{key} to be an array of rule strings"),
            ));
            continue;
        };
        for element in array.iter() {
            let at = element.span().map(|s| s.start).unwrap_or(0);
            let Some(rule_text) = element.as_str() else {
                diagnostics.push(diag(
                    at,
                    format!("expected a rule string in permissions.{key}"),
                ));
                continue;
            };
            match check_rule(rule_text, list) {
                Ok(rule) => rules.push(PolicyRule {
                    rule,
                    list,
                    source: source.clone(),
                }),
                // +1 for the opening quote; exact for strings without escapes.
                Err((offset, message)) => diagnostics.push(diag(at + 1 + offset, message)),
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

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(crate::config::line_column("ab\ncd", 4), (2, 2));
        assert_eq!(crate::config::line_column("é\nx", 3), (2, 1));
        assert_eq!(crate::config::line_column("x", 99), (1, 2));
    }
}
