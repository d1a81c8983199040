//! A policy's answer for one call: the decision, the rule that made it and where that rule
//! came from. The policy (in the core) produces it; the front ends show it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::PermissionMode;

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
    /// The permission mode decided (no rule did).
    Mode(PermissionMode),
    /// A managed file (decision 0082): above every other layer.
    Managed(PathBuf),
}

impl RuleSource {
    /// Whether the rule is the managed policy's.
    pub fn is_managed(&self) -> bool {
        matches!(self, RuleSource::Managed(_))
    }
}

impl std::fmt::Display for RuleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleSource::Default => write!(f, "default"),
            RuleSource::UserConfig(p) => write!(f, "user config {}", p.display()),
            RuleSource::ProjectConfig(p) => write!(f, "project config {}", p.display()),
            RuleSource::Flag => write!(f, "command line"),
            RuleSource::SessionGrant => write!(f, "session grant"),
            RuleSource::Mode(mode) => write!(f, "{mode} mode"),
            RuleSource::Managed(p) => write!(f, "managed policy {}", p.display()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub decision: Decision,
    /// The rule text (`mcp__deploy__trigger`, `Bash(rm:*)`, `default: unlisted MCP tool`).
    pub rule: String,
    pub source: RuleSource,
}

impl Verdict {
    pub fn new(decision: Decision, rule: impl Into<String>, source: RuleSource) -> Verdict {
        Verdict {
            decision,
            rule: rule.into(),
            source,
        }
    }

    pub fn is_allow(&self) -> bool {
        self.decision == Decision::Allow
    }
}
