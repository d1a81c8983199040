//! The order of evaluation (see the module above) and the decisions of MCP tools,
//! connectors, tool search and the resource tools; bash and file tools are in `guards.rs`.

use serde_json::Value;

use super::mode;
use super::rule::{self, RuleKind};
use super::{Decision, Policy, PolicyContext, PolicyRule, Rule, RuleList, RuleSource, Verdict};
use crate::builtin::{BuiltinId, Judgement};
use crate::pool::{PoolTool, ToolOrigin};
use crate::protocol::PermissionMode;

/// A guard's opinion about one unit of a call.
pub(super) enum Guard {
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
    // ---- decisions ----

    pub fn decide(&self, tool: &PoolTool, input: &Value, ctx: &PolicyContext<'_>) -> Verdict {
        let kind = match &tool.origin {
            ToolOrigin::Mcp { .. } => {
                return self.evaluate(
                    tool,
                    ctx,
                    &|r, _| r.matches_tool(tool),
                    unlisted_mcp(tool, ctx.mode),
                );
            }
            ToolOrigin::Builtin(kind) => *kind,
        };
        match kind.judgement() {
            Judgement::Shell => self.decide_bash(tool, input, ctx),
            Judgement::File(_) => self.decide_file(kind, tool, input, ctx),
            Judgement::Resource { reads } => {
                self.decide_resource_tool(kind, reads, tool, input, ctx)
            }
            Judgement::Connector => {
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
                    ctx,
                    &matches,
                    Guard::Fallback(Verdict::new(
                        Decision::Allow,
                        "default: connector",
                        RuleSource::Default,
                    )),
                )
            }
            // search_tools only reads the listings toolgate already holds; exit_plan_mode
            // hands the decision to the person in its own question. A rule can still deny.
            Judgement::Harmless { default_rule } => self.evaluate(
                tool,
                ctx,
                &|r, _| r.matches_tool(tool),
                Guard::Fallback(Verdict::new(
                    Decision::Allow,
                    default_rule,
                    RuleSource::Default,
                )),
            ),
        }
    }

    /// The pool panel's badge: how the tool is treated before any input is known. bash and
    /// the file tools are "guarded": Allow with the guard's name unless a rule names the
    /// whole tool.
    pub fn badge(&self, tool: &PoolTool, ctx: &PolicyContext<'_>) -> Verdict {
        let guard_name = match tool.origin.builtin().map(BuiltinId::judgement) {
            Some(Judgement::Shell) => "bash guard",
            Some(Judgement::File(_)) => "workspace guard",
            Some(
                Judgement::Connector | Judgement::Resource { .. } | Judgement::Harmless { .. },
            )
            | None => {
                return self.decide(tool, &Value::Object(Default::default()), ctx);
            }
        };
        let whole_tool = |r: &Rule, _: RuleList| r.matches_tool(tool) && names_whole_tool(r);
        self.evaluate(
            tool,
            ctx,
            &whole_tool,
            Guard::Fallback(Verdict::new(
                Decision::Allow,
                guard_name,
                RuleSource::Default,
            )),
        )
    }

    /// The first rule of `list` that matches, among the managed policy's rules only
    /// (`managed`) or among the others.
    fn first_rule<'a>(
        rules: &'a [PolicyRule],
        list: RuleList,
        managed: bool,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
    ) -> Option<&'a PolicyRule> {
        rules
            .iter()
            .find(|r| r.list == list && r.source.is_managed() == managed && matches(&r.rule, list))
    }

    pub(super) fn evaluate(
        &self,
        tool: &PoolTool,
        ctx: &PolicyContext<'_>,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
        guard: Guard,
    ) -> Verdict {
        self.evaluate_keyed(tool, ctx, &tool.name, matches, guard)
    }

    /// [`evaluate`](Self::evaluate) where the session grant that counts is `grant_key`
    /// (`read_mcp_resource(docs)` covers one server's resources, not every server's).
    /// The managed policy's deny and ask rules come before every other layer's rules and
    /// before session grants; its allow rules are allow rules like the others, the only
    /// ones with `managed_rules_only` (decision 0082).
    fn evaluate_keyed(
        &self,
        tool: &PoolTool,
        ctx: &PolicyContext<'_>,
        grant_key: &str,
        matches: &dyn Fn(&Rule, RuleList) -> bool,
        guard: Guard,
    ) -> Verdict {
        if let Guard::Hard(v) = guard {
            return v;
        }
        for managed in [true, false] {
            if let Some(r) = Self::first_rule(&self.rules, RuleList::Deny, managed, matches) {
                return rule_verdict(r, tool);
            }
        }
        let guard = match guard {
            Guard::Firm(v) => return v,
            other => other,
        };
        if let Some(r) = Self::first_rule(&self.rules, RuleList::Ask, true, matches) {
            return rule_verdict(r, tool);
        }
        let soft_deny =
            matches!(&guard, Guard::Soft(v) if matches!(v.decision, Decision::Deny { .. }));
        if !soft_deny && ctx.grants.contains(grant_key) {
            return Verdict::new(Decision::Allow, grant_key, RuleSource::SessionGrant);
        }
        if let Some(r) = Self::first_rule(&self.rules, RuleList::Ask, false, matches) {
            return rule_verdict(r, tool);
        }
        let allow_layers: &[bool] = if self.managed_rules_only {
            &[true]
        } else {
            &[true, false]
        };
        for &managed in allow_layers {
            if let Some(r) = Self::first_rule(&self.rules, RuleList::Allow, managed, matches) {
                return rule_verdict(r, tool);
            }
        }
        let fallback = match guard {
            Guard::Soft(v) => return v,
            Guard::Fallback(v) => v,
            Guard::Hard(v) | Guard::Firm(v) => return v,
        };
        for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
            if let Some(r) = Self::first_rule(&self.defaults, list, false, matches) {
                return rule_verdict(r, tool);
            }
        }
        fallback
    }
}

/// Rules that name a tool as a whole, without looking at its input.
pub(super) fn names_whole_tool(r: &Rule) -> bool {
    matches!(
        r.kind,
        RuleKind::Everything
            | RuleKind::AnyMcp
            | RuleKind::Tools(_)
            | RuleKind::Bash(rule::BashPattern::Any)
    )
}

/// The session grant a person's "allow for this session" gives: the tool's name, or for
/// the resource tools the tool and the server (`read_mcp_resource(docs)`), since reading
/// one server's resources says nothing about another's.
pub fn grant_key(tool: &PoolTool, input: &Value) -> String {
    match tool.builtin_kind() {
        Some(kind) if matches!(kind.judgement(), Judgement::Resource { .. }) => {
            match resource_server(input) {
                "" => tool.name.clone(),
                server => format!("{}({server})", tool.name),
            }
        }
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
    fn decide_resource_tool(
        &self,
        kind: BuiltinId,
        reads: bool,
        tool: &PoolTool,
        input: &Value,
        ctx: &PolicyContext<'_>,
    ) -> Verdict {
        let server = resource_server(input);
        let matches = |r: &Rule, _: RuleList| match &r.kind {
            RuleKind::Connector { tool: named, name } => *named == kind && name.matches(server),
            RuleKind::McpServer { server: s } if reads => {
                !server.is_empty() && (*s == server || *s == crate::pool::normalize(server))
            }
            RuleKind::AnyMcp => reads,
            _ => r.matches_tool(tool),
        };
        let fallback = if !reads {
            Verdict::new(
                Decision::Allow,
                "default: resource listing",
                RuleSource::Default,
            )
        } else if ctx.mode == PermissionMode::Auto {
            // Like an unlisted MCP tool: auto mode reads it.
            mode::allowed_by(PermissionMode::Auto)
        } else {
            Verdict::new(
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
            )
        };
        self.evaluate_keyed(
            tool,
            ctx,
            &grant_key(tool, input),
            &matches,
            Guard::Fallback(fallback),
        )
    }
}

/// An MCP tool no rule mentions: it asks, plan mode refuses it, auto mode runs it.
fn unlisted_mcp(tool: &PoolTool, mode: PermissionMode) -> Guard {
    match mode {
        PermissionMode::Plan => {
            return Guard::Fallback(mode::plan_refusal(&format!(
                "no allow rule covers the MCP tool {}, which may change something",
                tool.name
            )));
        }
        PermissionMode::Auto => return Guard::Fallback(mode::allowed_by(mode)),
        _ => {}
    }
    Guard::Fallback(Verdict::new(
        Decision::Ask {
            why: format!("no rule mentions {}", tool.name),
        },
        "default: unlisted MCP tool",
        RuleSource::Default,
    ))
}

fn rule_verdict(r: &PolicyRule, tool: &PoolTool) -> Verdict {
    if let RuleSource::Managed(file) = &r.source {
        return managed_verdict(r, tool, file);
    }
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

/// A managed rule's verdict: its reason names the managed policy, so that the model and
/// the person know no answer or other rule of theirs can change it.
fn managed_verdict(r: &PolicyRule, tool: &PoolTool, file: &std::path::Path) -> Verdict {
    let decision = match r.list {
        RuleList::Allow => Decision::Allow,
        RuleList::Ask => Decision::Ask {
            why: format!(
                "the managed policy asks before {} runs (rule {} in {})",
                tool.name,
                r.rule.text,
                file.display()
            ),
        },
        RuleList::Deny => Decision::Deny {
            why: format!(
                "denied by the managed policy (rule {} in {}); no user, project or command-line setting can allow it",
                r.rule.text,
                file.display()
            ),
        },
    };
    Verdict::new(decision, r.rule.text.clone(), r.source.clone())
}
