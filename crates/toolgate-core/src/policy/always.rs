//! "Always allow": which allow rule would let a call through from now on, and which file
//! it belongs in. Pure: writing it is settings' (`crate::settings::append_allow_rule`, which
//! the gate runs where blocking I/O belongs), applying it to the session is
//! [`Policy::apply_always`].

use serde_json::Value;
use std::path::PathBuf;

use super::bash;
use super::rule::{Rule, escape_glob};
use super::target::path_request;
use super::{Decision, Policy, PolicyContext, PolicyError, PolicyRule, RuleList, RuleSource};
use crate::builtin::{BuiltinId, Judgement, Locate};
use crate::pool::{PoolTool, ToolOrigin};

/// An allow rule chosen by "always", with the file it is written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlwaysRule {
    /// The rule text, e.g. `Bash(rm:*)`; always one the loader accepts.
    pub text: String,
    /// The workspace's `.toolgate/config.toml`.
    pub file: PathBuf,
}

/// The rule that would allow this call from now on: `Bash(<first word>:*)` for bash (the
/// first word of the first command the policy would ask about), the tool name for MCP
/// tools, `Read(path)`/`Edit(path)`/`Write(path)` for the file tools (the path as resolved
/// in `ctx`), `connect_mcp(NAME)`; and the workspace's config file it belongs in.
pub fn always_rule(
    policy: &Policy,
    tool: &PoolTool,
    input: &Value,
    ctx: &PolicyContext<'_>,
) -> Result<AlwaysRule, PolicyError> {
    let text = match tool.origin {
        ToolOrigin::Mcp { .. } => tool.name.clone(),
        ToolOrigin::Builtin(kind) => builtin_rule(policy, kind, tool, input, ctx)?,
    };
    // What we write must load again; never write a rule the loader would skip.
    match Rule::parse(&text) {
        Ok(r) if !r.allows_everything() => Ok(AlwaysRule {
            text,
            file: crate::settings::project_config_path(ctx.workspace),
        }),
        Ok(_) => Err(PolicyError::NoRule(format!(
            "{text} would allow everything"
        ))),
        Err(e) => Err(PolicyError::NoRule(format!(
            "{text} is not a valid rule: {e}"
        ))),
    }
}

fn builtin_rule(
    policy: &Policy,
    kind: BuiltinId,
    tool: &PoolTool,
    input: &Value,
    ctx: &PolicyContext<'_>,
) -> Result<String, PolicyError> {
    let text_field = |field: &str| {
        input
            .get(field)
            .and_then(Value::as_str)
            .ok_or_else(|| PolicyError::NoRule(format!("the input has no `{field}` string")))
    };
    Ok(match kind.judgement() {
        Judgement::Shell => {
            let command = text_field("command")?;
            let units = bash::analyze(command)
                .map_err(|e| PolicyError::NoRule(format!("the command cannot be parsed ({e})")))?;
            // An allow rule never lets an unresolved command run, so none is offered.
            if let Some(unit) = units.iter().find(|u| u.unresolved.is_some()) {
                return Err(PolicyError::NoRule(format!(
                    "`{}` cannot be checked, so no rule can allow it",
                    unit.shown()
                )));
            }
            let asking = units.iter().find(|u| {
                let single = serde_json::json!({ "command": u.texts().join(" ") });
                !u.words.is_empty()
                    && !matches!(policy.decide(tool, &single, ctx).decision, Decision::Allow)
            });
            let word = asking
                .or_else(|| units.iter().find(|u| !u.words.is_empty()))
                .and_then(|u| u.words.first())
                .map(|w| w.text.clone())
                .ok_or_else(|| PolicyError::NoRule("the command is empty".into()))?;
            if word.contains(['(', ')', '*', ':']) || word.chars().any(char::is_whitespace) {
                return Err(PolicyError::NoRule(format!(
                    "the program name {word:?} cannot be written as a rule"
                )));
            }
            format!("Bash({word}:*)")
        }
        Judgement::File(access) if access.locate == Locate::Path => {
            let path = text_field("path")?;
            let resolved = path_request(kind, input)
                .and_then(|request| ctx.resolved(&request.to_resolve))
                .ok_or_else(|| {
                    PolicyError::NoRule(format!("`{path}` was not resolved in the workspace"))
                })?;
            format!(
                "{}({})",
                access.family.rule_name(),
                escape_glob(&resolved.rule_path())
            )
        }
        // glob's rule is its pattern as written, in its family.
        Judgement::File(access) => format!(
            "{}({})",
            access.family.rule_name(),
            escape_glob(text_field(access.locate.field())?)
        ),
        Judgement::Harmless { .. } => kind.name().to_string(),
        Judgement::Connector | Judgement::Resource { .. } => {
            let name = input
                .get("name")
                .or_else(|| input.get("server"))
                .and_then(Value::as_str)
                .ok_or_else(|| PolicyError::NoRule("the input names no server".into()))?;
            format!("{kind}({name})")
        }
    })
}

impl Policy {
    /// Applies an "always" rule to this session at once (after the caller wrote it with
    /// `crate::settings::append_allow_rule`); a rule already present is not added twice.
    pub fn apply_always(&mut self, always: &AlwaysRule) -> Result<(), PolicyError> {
        let rule = Rule::parse(&always.text).map_err(|e| {
            PolicyError::NoRule(format!("{} is not a valid rule: {e}", always.text))
        })?;
        let already = self
            .rules()
            .iter()
            .any(|r| r.list == RuleList::Allow && r.rule.text == always.text);
        if !already {
            let rule = PolicyRule {
                rule,
                list: RuleList::Allow,
                source: RuleSource::ProjectConfig(always.file.clone()),
            };
            self.session_always.push(rule.clone());
            self.add_rules([rule]);
        }
        Ok(())
    }
}
