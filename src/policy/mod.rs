//! Host-side permission policy: a pure decision from (tool, input, context) to
//! Allow / Ask / Deny, with the rule that decided it and where that rule came from.
//! Servers never authorize anything: annotations and descriptions are ignored here.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Ask { why: String },
    Deny { why: String },
}

/// Where the deciding rule came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", content = "path", rename_all = "snake_case")]
pub enum RuleSource {
    /// Shipped defaults (assets/) and built-in guards.
    Default,
    UserConfig(PathBuf),
    ProjectConfig(PathBuf),
    Flag,
    SessionGrant,
    UserAnswer,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub decision: Decision,
    /// The rule text (`mcp__deploy__trigger`, `Bash(rm:*)`, `default: unlisted MCP tool`).
    pub rule: String,
    pub source: RuleSource,
}

use crate::pool::{PoolTool, ToolOrigin};
use serde_json::Value;
use std::path::Path;

/// What the decision may depend on besides the tool and its input.
#[derive(Debug, Clone)]
pub struct PolicyContext<'a> {
    pub workspace: &'a Path,
}

/// The host policy for one session.
// CONTRACT (policy issue replaces the body): built-ins allow, MCP tools ask.
#[derive(Debug, Clone, Default)]
pub struct Policy {}

impl Policy {
    pub fn decide(&self, tool: &PoolTool, _input: &Value, _ctx: &PolicyContext<'_>) -> Verdict {
        match &tool.origin {
            ToolOrigin::Mcp { .. } => Verdict {
                decision: Decision::Ask {
                    why: format!("no rule mentions {}", tool.name),
                },
                rule: "default: unlisted MCP tool".into(),
                source: RuleSource::Default,
            },
            _ => Verdict {
                decision: Decision::Allow,
                rule: "default: built-in".into(),
                source: RuleSource::Default,
            },
        }
    }
}
