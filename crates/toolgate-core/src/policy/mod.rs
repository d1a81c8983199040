//! Host-side permission policy: a pure decision from (tool, input, context) to
//! Allow / Ask / Deny, with the rule that decided it and where that rule came from.
//! Servers never authorize anything: annotations and descriptions are ignored here.
//!
//! Nothing here does I/O or keeps session state: where a file tool's path really points
//! and which session grants exist are handed in through [`PolicyContext`] by the gate
//! (`crate::gate`), which also writes "always" rules and keeps the grants.
//!
//! Order of evaluation for one call (for bash: for every command the line would run; the
//! most restrictive result wins):
//! 1. hard guards — the bash deny list; nothing overrides it;
//! 2. deny rules (user, project, flags);
//! 3. firm guards — an unparsable bash line asks; only a deny rule beats it;
//! 4. session grants; 5. ask rules; 6. allow rules;
//! 7. soft guards — destructive bash, files outside the workspace, toolgate's own config;
//! 8. the shipped defaults (assets/permissions.toml), deny → ask → allow;
//! 9. the built-in fallback: MCP tools ask, built-ins allow.
//!
//! Files: `decide.rs` (the order above, MCP tools, connectors, resources), `guards.rs`
//! (bash and file tools), `sampling.rs`, `always.rs` (which rule "always" writes).

mod always;

pub mod bash;
mod bash_pattern;
mod decide;
mod guards;
mod host_pattern;

mod load;
mod managed;
mod mode;
mod network;
mod rule;
mod sampling;
mod target;

pub use always::{AlwaysRule, always_rule};

/// The rule named by a bash command the analysis cannot resolve (decision 0087): it asks
/// and no allow rule, grant or mode lets it run.
pub const BASH_UNRESOLVED: &str = "bash guard: unresolved";
pub use crate::protocol::audit::{AuditRecord, Decider, Permit, PersonAnswer, input_digest};
pub use crate::protocol::{GrantLeft, GrantLimit};
pub use decide::grant_key;
pub use host_pattern::HostPattern;
pub use load::{RuleProblem, Severity, from_settings, from_settings_checked, parse_permissions};
pub use managed::managed_summary;
pub use mode::{BashEffect, READ_ONLY, WORKSPACE_EDITS, bash_effect, plan_refusal};
pub use network::{NETWORK_DEFAULT_RULE, network_always_rule, network_grant};
pub use rule::{Rule, RuleError};
pub use sampling::SAMPLING_DEFAULT_RULE;
pub use target::{Resolved, ResolvedTarget, path_to_resolve};

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::protocol::PermissionMode;

pub use crate::protocol::{Decision, RuleSource, Verdict};

use std::path::Path;

/// What the decision may depend on besides the tool and its input.
#[derive(Debug, Clone)]
pub struct PolicyContext<'a> {
    pub workspace: &'a Path,
    /// Where this call's path points, resolved by the caller (the gate). A file tool's
    /// call without it (or with one resolved for another path) asks.
    pub target: Option<ResolvedTarget>,
    /// The session grants in force, by grant name ([`grant_key`]); kept by the gate.
    pub grants: &'a BTreeSet<String>,
    /// The permission mode in force (see `mode.rs`).
    pub mode: PermissionMode,
}

/// No session grants (badges before any grant, tests).
static NO_GRANTS: BTreeSet<String> = BTreeSet::new();

impl<'a> PolicyContext<'a> {
    /// A context without a resolved path and without grants: enough for bash, connectors,
    /// MCP tools and badges.
    pub fn new(workspace: &'a Path) -> Self {
        PolicyContext {
            workspace,
            target: None,
            grants: &NO_GRANTS,
            mode: PermissionMode::Default,
        }
    }

    pub fn with_mode(self, mode: PermissionMode) -> Self {
        PolicyContext { mode, ..self }
    }

    pub fn with_target(self, target: Option<ResolvedTarget>) -> Self {
        PolicyContext { target, ..self }
    }

    pub fn with_grants(self, grants: &'a BTreeSet<String>) -> Self {
        PolicyContext { grants, ..self }
    }

    /// The resolved location for `requested`, if the caller resolved exactly that.
    fn resolved(&self, requested: &str) -> Option<&Resolved> {
        self.target
            .as_ref()
            .filter(|target| target.requested == requested)
            .map(|target| &target.resolved)
    }
}

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleList {
    Allow,
    Ask,
    Deny,
}

impl RuleList {
    pub fn key(self) -> &'static str {
        match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        }
    }
}

/// A parsed rule with its list and origin.
#[derive(Debug, Clone)]
pub struct PolicyRule {
    pub rule: Rule,
    pub list: RuleList,
    pub source: RuleSource,
}

/// What a file tool does with a path outside the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutsideWorkspace {
    #[default]
    Ask,
    Deny,
}

/// What reloading the rule files changed: rules as `list text (source)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// The new `outside_workspace` setting, when it changed.
    pub outside_workspace: Option<OutsideWorkspace>,
}

impl RuleChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.outside_workspace.is_none()
    }
}

/// Why no "always" rule can be written for a call (writing one is the gate's, with its
/// own errors).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot write an always-allow rule for this call: {0}")]
    NoRule(String),
}

/// The embedded shipped defaults.
pub const DEFAULT_PERMISSIONS: &str = include_str!("../../../../assets/permissions.toml");

/// The host policy for one session.
#[derive(Debug, Clone)]
pub struct Policy {
    defaults: Vec<PolicyRule>,
    rules: Vec<PolicyRule>,
    outside_workspace: OutsideWorkspace,
    /// "Always" rules the person chose this session (also in `rules`): a reload keeps those
    /// whose file it did not read (an untrusted workspace's config), so the choice holds for
    /// the rest of the session as it did before the reload.
    session_always: Vec<PolicyRule>,
    /// `managed_rules_only` of the managed policy: allow rules of every other layer are
    /// ignored (the managed rules themselves are in `rules`, marked by their source).
    managed_rules_only: bool,
}

impl Default for Policy {
    /// The shipped defaults and nothing else.
    fn default() -> Self {
        let (defaults, _, diagnostics) = parse_permissions(
            DEFAULT_PERMISSIONS,
            "assets/permissions.toml",
            RuleSource::Default,
        );
        // The asset is covered by a unit test; a diagnostic here means a broken build.
        for d in diagnostics {
            tracing::error!("shipped permission defaults: {d}");
        }
        Policy {
            defaults: defaults
                .into_iter()
                .filter(|r| !(r.list == RuleList::Allow && r.rule.allows_everything()))
                .collect(),
            rules: Vec::new(),
            outside_workspace: OutsideWorkspace::Ask,
            session_always: Vec::new(),
            managed_rules_only: false,
        }
    }
}

impl Policy {
    /// No rules at all, not even the shipped defaults (tests, `--no-defaults` style setups).
    pub fn empty() -> Policy {
        Policy {
            defaults: Vec::new(),
            ..Policy::default()
        }
    }

    /// Adds rules of a layer above the defaults (user, project, flags). Allow-everything
    /// rules are dropped here too, so no path around the loader's refusal exists.
    pub fn add_rules(&mut self, rules: impl IntoIterator<Item = PolicyRule>) {
        self.rules.extend(
            rules
                .into_iter()
                .filter(|r| !(r.list == RuleList::Allow && r.rule.allows_everything())),
        );
    }

    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    /// Takes the rules and the outside-workspace setting of `fresh`, a policy just loaded
    /// again from the same files and flags (`read`: the files it read); the "always" rules
    /// chosen this session in a file it did not read stay (session grants and project-server
    /// approvals are the gate's, untouched by a reload). Says which rules came and went (order within a
    /// list does not decide, so a rule that only moved is no change).
    pub fn reload_rules(&mut self, mut fresh: Policy, read: &[PathBuf]) -> RuleChanges {
        for always in &self.session_always {
            let unread = match &always.source {
                RuleSource::ProjectConfig(file) | RuleSource::UserConfig(file) => {
                    !read.contains(file)
                }
                _ => false,
            };
            let present = fresh.rules.iter().any(|r| {
                r.list == always.list
                    && r.rule.text == always.rule.text
                    && r.source == always.source
            });
            if unread && !present {
                fresh.rules.push(always.clone());
            }
        }
        let describe = |rules: &[PolicyRule]| -> BTreeSet<String> {
            rules
                .iter()
                .map(|r| format!("{} {} ({})", r.list.key(), r.rule.text, r.source))
                .collect()
        };
        let before = describe(&self.rules);
        let after = describe(&fresh.rules);
        let changes = RuleChanges {
            added: after.difference(&before).cloned().collect(),
            removed: before.difference(&after).cloned().collect(),
            outside_workspace: (self.outside_workspace != fresh.outside_workspace)
                .then_some(fresh.outside_workspace),
        };
        self.rules = fresh.rules;
        self.outside_workspace = fresh.outside_workspace;
        self.managed_rules_only = fresh.managed_rules_only;
        changes
    }

    /// Whether only the managed policy's allow rules count.
    pub fn managed_rules_only(&self) -> bool {
        self.managed_rules_only
    }

    pub fn set_managed_rules_only(&mut self, on: bool) {
        self.managed_rules_only = on;
    }

    pub fn outside_workspace(&self) -> OutsideWorkspace {
        self.outside_workspace
    }

    pub fn set_outside_workspace(&mut self, mode: OutsideWorkspace) {
        self.outside_workspace = mode;
    }
}

#[cfg(test)]
pub(crate) mod tests;
