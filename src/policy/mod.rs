//! Host-side permission policy: a pure decision from (tool, input, context) to
//! Allow / Ask / Deny, with the rule that decided it and where that rule came from.
//! Servers never authorize anything: annotations and descriptions are ignored here.
//!
//! `decide` and `badge` do no I/O: where a file tool's path really points is resolved by
//! the caller ([`resolve_target`]) and handed in through [`PolicyContext`]. The I/O lives
//! in explicit functions: [`load`], [`TrustStore`], [`resolve_target`] and
//! [`store::append_allow_rule`].
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

mod always;
mod audit;
mod bash_guard;
mod load;
pub mod pins;
mod rule;
mod sampling;
pub mod shell;
pub mod store;
mod target;
mod trust;
mod workspace;

pub use always::{AlwaysRule, always_rule};
pub use audit::{AuditRecord, Decider, Permit, PersonAnswer, input_digest};
pub use load::{from_settings, parse_permissions};
pub use rule::{Rule, RuleError};
pub use sampling::SAMPLING_DEFAULT_RULE;
pub use target::{Resolved, ResolvedTarget, path_to_resolve};
pub use trust::TrustStore;
pub use workspace::{resolve as resolve_path, resolve_target};

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::PathBuf;

use bash_guard::Class;
use rule::RuleKind;
use target::PathRequest;

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
}

impl std::fmt::Display for RuleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleSource::Default => write!(f, "default"),
            RuleSource::UserConfig(p) => write!(f, "user config {}", p.display()),
            RuleSource::ProjectConfig(p) => write!(f, "project config {}", p.display()),
            RuleSource::Flag => write!(f, "command line"),
            RuleSource::SessionGrant => write!(f, "session grant"),
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
    fn new(decision: Decision, rule: impl Into<String>, source: RuleSource) -> Verdict {
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

use crate::builtin::BuiltinTool;
use crate::pool::{PoolTool, ToolOrigin};
use crate::settings::ServerConfig;
use serde_json::Value;
use std::path::Path;

/// What the decision may depend on besides the tool and its input.
#[derive(Debug, Clone)]
pub struct PolicyContext<'a> {
    pub workspace: &'a Path,
    /// Where this call's path points, resolved by the caller ([`resolve_target`]). A file
    /// tool's call without it (or with one resolved for another path) asks.
    pub target: Option<ResolvedTarget>,
}

impl<'a> PolicyContext<'a> {
    /// A context without a resolved path: enough for bash, connectors, MCP tools and
    /// badges.
    pub fn new(workspace: &'a Path) -> Self {
        PolicyContext {
            workspace,
            target: None,
        }
    }

    pub fn with_target(self, target: Option<ResolvedTarget>) -> Self {
        PolicyContext { target, ..self }
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

/// A project-defined server that needs the user's one-time approval this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectServerQuestion {
    pub server: String,
    pub command_line: String,
    pub why: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid TOML, left unchanged: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{path}: {what} is not a table/array as expected, left unchanged")]
    Shape { path: PathBuf, what: String },
    #[error("{path}: not a valid trust store: {message}")]
    TrustStore { path: PathBuf, message: String },
    #[error("cannot write an always-allow rule for this call: {0}")]
    NoRule(String),
    #[error("no state directory to keep trusted folders in (set TOOLGATE_STATE_DIR)")]
    NoStateDir,
    #[error("{path}: not a valid pins file, left unchanged: {message}")]
    PinsFile { path: PathBuf, message: String },
}

/// The embedded shipped defaults.
pub const DEFAULT_PERMISSIONS: &str = include_str!("../../assets/permissions.toml");

/// The host policy for one session.
#[derive(Debug, Clone)]
pub struct Policy {
    defaults: Vec<PolicyRule>,
    rules: Vec<PolicyRule>,
    outside_workspace: OutsideWorkspace,
    grants: BTreeSet<String>,
    approved_project_servers: BTreeSet<(String, String)>,
    /// "Always" rules the person chose this session (also in `rules`): a reload keeps those
    /// whose file it did not read (an untrusted workspace's config), so the choice holds for
    /// the rest of the session as it did before the reload.
    session_always: Vec<PolicyRule>,
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
            grants: BTreeSet::new(),
            approved_project_servers: BTreeSet::new(),
            session_always: Vec::new(),
        }
    }
}

/// A guard's opinion about one unit of a call.
enum Guard {
    /// Returned before any rule is consulted (the bash deny list).
    Hard(Verdict),
    /// Only deny rules beat it (unparsable bash).
    Firm(Verdict),
    /// Grants and allow rules beat it (a Deny here is not lifted by a grant).
    Soft(Verdict),
    /// Nothing to say; use this if no rule matches.
    Fallback(Verdict),
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
    /// again from the same files and flags (`read`: the files it read); this session's
    /// grants and project-server approvals stay, and so do the "always" rules chosen this
    /// session in a file it did not read. Says which rules came and went (order within a
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
        changes
    }

    pub fn outside_workspace(&self) -> OutsideWorkspace {
        self.outside_workspace
    }

    pub fn set_outside_workspace(&mut self, mode: OutsideWorkspace) {
        self.outside_workspace = mode;
    }

    // ---- session grants ----

    /// "Allow this tool for the rest of the session" (model-facing tool name).
    pub fn grant(&mut self, tool: &str) {
        self.grants.insert(tool.to_string());
    }

    /// Returns whether a grant existed.
    pub fn revoke(&mut self, tool: &str) -> bool {
        self.grants.remove(tool)
    }

    pub fn grants(&self) -> Vec<String> {
        self.grants.iter().cloned().collect()
    }

    // ---- project servers ----

    /// Whether connecting `server` needs the one-time question (servers from the project's
    /// `.mcp.json` ask once per session, showing the command line; approval is keyed by the
    /// command line, so a changed definition asks again).
    pub fn project_server_question(&self, server: &ServerConfig) -> Option<ProjectServerQuestion> {
        if !server.source.is_project() {
            return None;
        }
        let command_line = server.command_line();
        if self
            .approved_project_servers
            .contains(&(server.name.clone(), command_line.clone()))
        {
            return None;
        }
        Some(ProjectServerQuestion {
            server: server.name.clone(),
            why: format!(
                "server '{}' is defined by this project and would run: {command_line}",
                server.name
            ),
            command_line,
        })
    }

    pub fn approve_project_server(&mut self, server: &ServerConfig) {
        self.approved_project_servers
            .insert((server.name.clone(), server.command_line()));
    }

    // ---- decisions ----

    pub fn decide(&self, tool: &PoolTool, input: &Value, ctx: &PolicyContext<'_>) -> Verdict {
        match tool.origin {
            ToolOrigin::Mcp { .. } => {
                self.evaluate(tool, &|r, _| r.matches_tool(tool), unlisted_mcp(tool))
            }
            ToolOrigin::Builtin(BuiltinTool::Bash) => self.decide_bash(tool, input),
            ToolOrigin::Builtin(
                kind @ (BuiltinTool::ReadFile
                | BuiltinTool::WriteFile
                | BuiltinTool::EditFile
                | BuiltinTool::Glob),
            ) => self.decide_file(kind, tool, input, ctx),
            ToolOrigin::Builtin(
                kind @ (BuiltinTool::ListMcpResources | BuiltinTool::ReadMcpResource),
            ) => self.decide_resource_tool(kind, tool, input),
            ToolOrigin::Builtin(BuiltinTool::ConnectMcp | BuiltinTool::DisconnectMcp) => {
                let name = input
                    .get("name")
                    .or_else(|| input.get("server"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let matches = |r: &Rule, _: RuleList| match &r.kind {
                    RuleKind::Connector { name: pattern, .. } => {
                        r.matches_tool(tool) && pattern.matches(name)
                    }
                    _ => r.matches_tool(tool),
                };
                self.evaluate(
                    tool,
                    &matches,
                    Guard::Fallback(Verdict::new(
                        Decision::Allow,
                        "default: connector",
                        RuleSource::Default,
                    )),
                )
            }
            // It only reads the listings toolgate already holds; loading a tool grants
            // nothing (each call of it is decided on its own). A rule can still deny it.
            ToolOrigin::Builtin(BuiltinTool::SearchTools) => self.evaluate(
                tool,
                &|r, _| r.matches_tool(tool),
                Guard::Fallback(Verdict::new(
                    Decision::Allow,
                    "default: tool search",
                    RuleSource::Default,
                )),
            ),
        }
    }

    /// The pool panel's badge: how the tool is treated before any input is known. bash and
    /// the file tools are "guarded": Allow with the guard's name unless a rule names the
    /// whole tool.
    pub fn badge(&self, tool: &PoolTool, ctx: &PolicyContext<'_>) -> Verdict {
        let guard_name = match tool.origin {
            ToolOrigin::Builtin(BuiltinTool::Bash) => "bash guard",
            ToolOrigin::Builtin(
                BuiltinTool::ReadFile
                | BuiltinTool::WriteFile
                | BuiltinTool::EditFile
                | BuiltinTool::Glob,
            ) => "workspace guard",
            ToolOrigin::Builtin(
                BuiltinTool::ConnectMcp
                | BuiltinTool::DisconnectMcp
                | BuiltinTool::ListMcpResources
                | BuiltinTool::ReadMcpResource
                | BuiltinTool::SearchTools,
            )
            | ToolOrigin::Mcp { .. } => {
                return self.decide(tool, &Value::Object(Default::default()), ctx);
            }
        };
        let whole_tool = |r: &Rule, _: RuleList| r.matches_tool(tool) && names_whole_tool(r);
        self.evaluate(
            tool,
            &whole_tool,
            Guard::Fallback(Verdict::new(
                Decision::Allow,
                guard_name,
                RuleSource::Default,
            )),
        )
    }

    fn first_rule<'a>(
        rules: &'a [PolicyRule],
        list: RuleList,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
    ) -> Option<&'a PolicyRule> {
        rules
            .iter()
            .find(|r| r.list == list && matches(&r.rule, list))
    }

    fn evaluate(
        &self,
        tool: &PoolTool,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
        guard: Guard,
    ) -> Verdict {
        self.evaluate_keyed(tool, &tool.name, matches, guard)
    }

    /// [`evaluate`](Self::evaluate) where the session grant that counts is `grant_key`
    /// (`read_mcp_resource(docs)` covers one server's resources, not every server's).
    fn evaluate_keyed(
        &self,
        tool: &PoolTool,
        grant_key: &str,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
        guard: Guard,
    ) -> Verdict {
        if let Guard::Hard(v) = guard {
            return v;
        }
        if let Some(r) = Self::first_rule(&self.rules, RuleList::Deny, matches) {
            return rule_verdict(r, tool);
        }
        let guard = match guard {
            Guard::Firm(v) => return v,
            other => other,
        };
        let soft_deny =
            matches!(&guard, Guard::Soft(v) if matches!(v.decision, Decision::Deny { .. }));
        if !soft_deny && self.grants.contains(grant_key) {
            return Verdict::new(Decision::Allow, grant_key, RuleSource::SessionGrant);
        }
        for list in [RuleList::Ask, RuleList::Allow] {
            if let Some(r) = Self::first_rule(&self.rules, list, matches) {
                return rule_verdict(r, tool);
            }
        }
        let fallback = match guard {
            Guard::Soft(v) => return v,
            Guard::Fallback(v) => v,
            Guard::Hard(v) | Guard::Firm(v) => return v,
        };
        for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
            if let Some(r) = Self::first_rule(&self.defaults, list, matches) {
                return rule_verdict(r, tool);
            }
        }
        fallback
    }

    fn decide_bash(&self, tool: &PoolTool, input: &Value) -> Verdict {
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return Verdict::new(
                Decision::Ask {
                    why: "bash call without a `command` string".into(),
                },
                "bash guard: no command",
                RuleSource::Default,
            );
        };
        let units = match bash_guard::analyze(command) {
            Ok(units) => units,
            Err(e) => {
                let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
                let matches = |r: &Rule, list: RuleList| match &r.kind {
                    RuleKind::Bash(p) => list != RuleList::Allow && p.matches(&words),
                    _ => r.matches_tool(tool),
                };
                return self.evaluate(
                    tool,
                    &matches,
                    Guard::Firm(Verdict::new(
                        Decision::Ask {
                            why: format!(
                                "cannot check this command ({e}), so it is not run without asking"
                            ),
                        },
                        "bash guard: unparsable",
                        RuleSource::Default,
                    )),
                );
            }
        };
        let mut first_ask = None;
        let mut allowed_by_rule = None;
        for unit in &units {
            let raw_words: Vec<String> = unit.raw.split(' ').map(str::to_string).collect();
            // Deny and ask rules match the command as written or as run; allow rules only as
            // run, so `env rm x` is not allowed by `Bash(env:*)`.
            let matches = |r: &Rule, list: RuleList| match &r.kind {
                RuleKind::Bash(p) => {
                    p.matches(&unit.words) || (list != RuleList::Allow && p.matches(&raw_words))
                }
                _ => r.matches_tool(tool),
            };
            let shown = if unit.raw.is_empty() {
                "(redirection)".to_string()
            } else {
                unit.raw.clone()
            };
            let guard = match unit.class {
                Class::Denied(pattern) => Guard::Hard(Verdict::new(
                    Decision::Deny {
                        why: format!("`{shown}` matches the bash deny list ({pattern})"),
                    },
                    format!("bash deny list: {pattern}"),
                    RuleSource::Default,
                )),
                Class::Destructive(what) => Guard::Soft(Verdict::new(
                    Decision::Ask {
                        why: format!("`{shown}` is destructive ({what})"),
                    },
                    format!("bash guard: destructive ({what})"),
                    RuleSource::Default,
                )),
                Class::Ordinary => Guard::Fallback(Verdict::new(
                    Decision::Allow,
                    "bash guard",
                    RuleSource::Default,
                )),
            };
            let v = self.evaluate(tool, &matches, guard);
            match v.decision {
                Decision::Deny { .. } => return v,
                Decision::Ask { .. } => {
                    first_ask.get_or_insert(v);
                }
                Decision::Allow => {
                    if v.source != RuleSource::Default {
                        allowed_by_rule.get_or_insert(v);
                    }
                }
            }
        }
        if let Some(v) = first_ask {
            return v;
        }
        if let Some(v) = allowed_by_rule {
            return v;
        }
        // No command at all (an empty line) or only ordinary ones; a whole-tool rule may
        // still apply to an empty line.
        if units.is_empty() {
            return self.evaluate(
                tool,
                &|r, _| r.matches_tool(tool) && names_whole_tool(r),
                Guard::Fallback(Verdict::new(
                    Decision::Allow,
                    "bash guard",
                    RuleSource::Default,
                )),
            );
        }
        Verdict::new(Decision::Allow, "bash guard", RuleSource::Default)
    }

    fn decide_file(
        &self,
        kind: BuiltinTool,
        tool: &PoolTool,
        input: &Value,
        ctx: &PolicyContext<'_>,
    ) -> Verdict {
        let Some(request) = target::path_request(kind, input) else {
            let field = kind.path_field().unwrap_or("path");
            return Verdict::new(
                Decision::Ask {
                    why: format!("{} call without a `{field}` string", tool.name),
                },
                "workspace guard: no path",
                RuleSource::Default,
            );
        };
        let Some(resolved) = ctx.resolved(&request.to_resolve) else {
            return self.unresolved(tool, &request);
        };
        let path = &request.shown;
        let candidates = request.rule_candidates(resolved);
        let matches = |r: &Rule, _: RuleList| match &r.kind {
            RuleKind::Files { glob, .. } => {
                r.matches_tool(tool) && candidates.iter().any(|c| glob.matches(c))
            }
            _ => r.matches_tool(tool),
        };
        let guard = if !resolved.inside() || request.escapes {
            let why = format!(
                "`{path}` resolves outside the workspace ({})",
                resolved.absolute.display()
            );
            let decision = match self.outside_workspace {
                OutsideWorkspace::Ask => Decision::Ask { why },
                OutsideWorkspace::Deny => Decision::Deny { why },
            };
            Guard::Soft(Verdict::new(
                decision,
                "workspace guard: outside the workspace",
                RuleSource::Default,
            ))
        } else if kind.writes_files()
            && is_toolgate_config(resolved.relative.as_deref().unwrap_or(""))
        {
            Guard::Soft(Verdict::new(
                Decision::Ask {
                    why: format!("`{path}` is toolgate's own configuration"),
                },
                "workspace guard: toolgate configuration",
                RuleSource::Default,
            ))
        } else {
            Guard::Fallback(Verdict::new(
                Decision::Allow,
                "workspace guard",
                RuleSource::Default,
            ))
        };
        self.evaluate(tool, &matches, guard)
    }

    /// A file tool's call whose path the caller did not resolve: nothing is known about
    /// where it points, so it asks (a deny rule for the whole tool still denies).
    fn unresolved(&self, tool: &PoolTool, request: &PathRequest) -> Verdict {
        self.evaluate(
            tool,
            &|r, _| r.matches_tool(tool) && names_whole_tool(r),
            Guard::Firm(Verdict::new(
                Decision::Ask {
                    why: format!(
                        "`{}` was not resolved in the workspace before the decision",
                        request.shown
                    ),
                },
                "workspace guard: unresolved path",
                RuleSource::Default,
            )),
        )
    }
}

/// Rules that name a tool as a whole, without looking at its input.
fn names_whole_tool(r: &Rule) -> bool {
    matches!(
        r.kind,
        RuleKind::Everything
            | RuleKind::AnyMcp
            | RuleKind::Tools(_)
            | RuleKind::Bash(rule::BashPattern::Any)
    )
}

/// Writing these would let the model change its own permissions or servers.
fn is_toolgate_config(relative: &str) -> bool {
    relative == ".mcp.json" || relative == ".toolgate" || relative.starts_with(".toolgate/")
}

/// The session grant a person's "allow for this session" gives: the tool's name, or for
/// the resource tools the tool and the server (`read_mcp_resource(docs)`), since reading
/// one server's resources says nothing about another's.
pub fn grant_key(tool: &PoolTool, input: &Value) -> String {
    match tool.builtin_kind() {
        Some(kind) if kind.is_resource_tool() => match resource_server(input) {
            "" => tool.name.clone(),
            server => format!("{}({server})", tool.name),
        },
        _ => tool.name.clone(),
    }
}

fn resource_server(input: &Value) -> &str {
    input.get("server").and_then(Value::as_str).unwrap_or("")
}

impl Policy {
    /// The resource tools. Reading a resource is treated like calling one of that server's
    /// tools: server-wide MCP rules (`mcp__docs`, `mcp__docs__*`, `mcp__*`) and
    /// `read_mcp_resource(docs)` rules decide, and with none the default asks, as for an
    /// unlisted MCP tool. Listing shows only what the server already published about
    /// itself (names, URIs), like tools/list, so it is allowed unless a rule says otherwise.
    fn decide_resource_tool(&self, kind: BuiltinTool, tool: &PoolTool, input: &Value) -> Verdict {
        let server = resource_server(input);
        let matches = |r: &Rule, _: RuleList| match &r.kind {
            RuleKind::Connector { tool: named, name } => *named == kind && name.matches(server),
            RuleKind::McpServer { server: s } if kind == BuiltinTool::ReadMcpResource => {
                !server.is_empty() && (*s == server || *s == crate::pool::normalize(server))
            }
            RuleKind::AnyMcp => kind == BuiltinTool::ReadMcpResource,
            _ => r.matches_tool(tool),
        };
        let fallback = match kind {
            BuiltinTool::ReadMcpResource => Verdict::new(
                Decision::Ask {
                    why: match server {
                        "" => "reading an MCP resource is like calling the server's tool".into(),
                        s => format!(
                            "no rule mentions MCP server '{s}'; reading its resource is like calling one of its tools"
                        ),
                    },
                },
                "default: MCP resource read",
                RuleSource::Default,
            ),
            _ => Verdict::new(
                Decision::Allow,
                "default: resource listing",
                RuleSource::Default,
            ),
        };
        self.evaluate_keyed(
            tool,
            &grant_key(tool, input),
            &matches,
            Guard::Fallback(fallback),
        )
    }
}

fn unlisted_mcp(tool: &PoolTool) -> Guard {
    Guard::Fallback(Verdict::new(
        Decision::Ask {
            why: format!("no rule mentions {}", tool.name),
        },
        "default: unlisted MCP tool",
        RuleSource::Default,
    ))
}

fn rule_verdict(r: &PolicyRule, tool: &PoolTool) -> Verdict {
    let decision = match r.list {
        RuleList::Allow => Decision::Allow,
        RuleList::Ask => Decision::Ask {
            why: format!("rule {} asks before {} runs", r.rule.text, tool.name),
        },
        RuleList::Deny => Decision::Deny {
            why: format!("denied by rule {}", r.rule.text),
        },
    };
    Verdict::new(decision, r.rule.text.clone(), r.source.clone())
}

#[cfg(test)]
mod tests;
