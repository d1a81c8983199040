//! "Always allow": the allow rule for a call, written into the workspace's
//! `.toolgate/config.toml` with toml_edit so the user's other content and comments stay.

use serde_json::Value;
use std::path::{Path, PathBuf};

use super::bash_guard;
use super::rule::{Rule, escape_glob};
use super::workspace;
use super::{Decision, Policy, PolicyContext, PolicyError, PolicyRule, RuleList, RuleSource};
use crate::pool::{PoolTool, ToolOrigin};

/// The rule that would allow this call from now on: `Bash(<first word>:*)` for bash (the
/// first word of the first command the policy would ask about), the tool name for MCP
/// tools, `Read(path)`/`Edit(path)`/`Write(path)` for the file tools, `connect_mcp(NAME)`.
pub fn always_rule(
    policy: &Policy,
    tool: &PoolTool,
    input: &Value,
    ctx: &PolicyContext<'_>,
) -> Result<String, PolicyError> {
    if let ToolOrigin::Mcp { .. } = tool.origin {
        return Ok(tool.name.clone());
    }
    let text_field = |field: &str| {
        input
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| PolicyError::NoRule(format!("the input has no `{field}` string")))
    };
    let rule = match tool.name.as_str() {
        "bash" => {
            let command = text_field("command")?;
            let units = bash_guard::analyze(command)
                .map_err(|e| PolicyError::NoRule(format!("the command cannot be parsed ({e})")))?;
            let asking = units.iter().find(|u| {
                let single = serde_json::json!({ "command": u.words.join(" ") });
                !u.words.is_empty()
                    && !matches!(policy.decide(tool, &single, ctx).decision, Decision::Allow)
            });
            let word = asking
                .or_else(|| units.iter().find(|u| !u.words.is_empty()))
                .and_then(|u| u.words.first())
                .ok_or_else(|| PolicyError::NoRule("the command is empty".into()))?;
            if word.contains(['(', ')', '*', ':']) || word.chars().any(char::is_whitespace) {
                return Err(PolicyError::NoRule(format!(
                    "the program name {word:?} cannot be written as a rule"
                )));
            }
            format!("Bash({word}:*)")
        }
        "read_file" | "write_file" | "edit_file" => {
            let path = workspace::resolve(ctx.workspace, text_field("path")?).rule_path();
            let family = match tool.name.as_str() {
                "read_file" => "Read",
                "edit_file" => "Edit",
                _ => "Write",
            };
            format!("{family}({})", escape_glob(&path))
        }
        "glob" => format!("Read({})", escape_glob(text_field("pattern")?)),
        "connect_mcp" | "disconnect_mcp" => {
            let name = input
                .get("name")
                .or_else(|| input.get("server"))
                .and_then(Value::as_str)
                .ok_or_else(|| PolicyError::NoRule("the input names no server".into()))?;
            format!("{}({name})", tool.name)
        }
        other => other.to_string(),
    };
    // What we write must load again; never write a rule the loader would skip.
    match Rule::parse(&rule) {
        Ok(r) if !r.allows_everything() => Ok(rule),
        Ok(_) => Err(PolicyError::NoRule(format!(
            "{rule} would allow everything"
        ))),
        Err(e) => Err(PolicyError::NoRule(format!(
            "{rule} is not a valid rule: {e}"
        ))),
    }
}

/// Adds `rule` to `[permissions] allow` of the TOML file at `path`, creating file and table
/// as needed. Returns false when the rule was already there. A file that is not valid TOML,
/// or whose `permissions`/`allow` have another shape, is left untouched and reported.
pub fn write_allow_rule(path: &Path, rule: &str) -> Result<bool, PolicyError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(PolicyError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| PolicyError::Toml {
                path: path.to_path_buf(),
                message: e.message().trim().to_string(),
            })?;
    let shape = |what: &str| PolicyError::Shape {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    let permissions = doc
        .entry("permissions")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| shape("permissions"))?;
    let allow = permissions
        .entry("allow")
        .or_insert(toml_edit::Item::Value(toml_edit::Value::Array(
            toml_edit::Array::new(),
        )))
        .as_array_mut()
        .ok_or_else(|| shape("permissions.allow"))?;
    if allow.iter().any(|v| v.as_str() == Some(rule)) {
        return Ok(false);
    }
    allow.push(rule);
    write_atomically(path, &doc.to_string())?;
    Ok(true)
}

/// Writes through a temporary file in the same folder, so a crash never leaves half a file.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), PolicyError> {
    let io = |source| PolicyError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

impl Policy {
    /// "Always allow": writes the rule into the workspace's `.toolgate/config.toml` and
    /// applies it to this session at once. Returns the file and the rule text.
    pub fn save_always(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        ctx: &PolicyContext<'_>,
    ) -> Result<(PathBuf, String), PolicyError> {
        let rule_text = always_rule(self, tool, input, ctx)?;
        let path = super::load::project_config_path(ctx.workspace);
        write_allow_rule(&path, &rule_text)?;
        let rule = Rule::parse(&rule_text)
            .map_err(|e| PolicyError::NoRule(format!("{rule_text} is not a valid rule: {e}")))?;
        let already = self
            .rules()
            .iter()
            .any(|r| r.list == RuleList::Allow && r.rule.text == rule_text);
        if !already {
            self.add_rules([PolicyRule {
                rule,
                list: RuleList::Allow,
                source: RuleSource::ProjectConfig(path.clone()),
            }]);
        }
        Ok((path, rule_text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_other_keys_and_does_not_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# my settings\n[model]\nname = \"local\" # keep me\n\n[permissions]\n# reviewed rules\nallow = [\"mcp__docs__search\"]\ndeny = [\"Bash(curl:*)\"]\n";
        std::fs::write(&path, original).unwrap();
        assert!(write_allow_rule(&path, "Bash(rm:*)").unwrap());
        assert!(!write_allow_rule(&path, "Bash(rm:*)").unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        for kept in [
            "# my settings",
            "name = \"local\" # keep me",
            "# reviewed rules",
            "deny = [\"Bash(curl:*)\"]",
        ] {
            assert!(text.contains(kept), "{kept} missing from:\n{text}");
        }
        assert_eq!(text.matches("Bash(rm:*)").count(), 1);
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let allow = parsed["permissions"]["allow"].as_array().unwrap();
        assert_eq!(allow.len(), 2);
    }

    #[test]
    fn malformed_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[permissions\n").unwrap();
        assert!(matches!(
            write_allow_rule(&path, "mcp__x").unwrap_err(),
            PolicyError::Toml { .. }
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[permissions\n");
        std::fs::write(&path, "permissions = 3\n").unwrap();
        assert!(matches!(
            write_allow_rule(&path, "mcp__x").unwrap_err(),
            PolicyError::Shape { .. }
        ));
    }

    #[test]
    fn creates_missing_file_and_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".toolgate/config.toml");
        assert!(write_allow_rule(&path, "mcp__deploy__trigger").unwrap());
        let parsed: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            parsed["permissions"]["allow"][0].as_str(),
            Some("mcp__deploy__trigger")
        );
    }
}
