//! The guards' side of a decision: every command a bash line would run (deny list,
//! destructive commands, unparsable lines) and the path a file tool would touch (outside
//! the workspace, toolgate's own configuration, not resolved).

use serde_json::Value;

use super::bash::{self, Class, Unit};
use super::decide::{Guard, names_whole_tool};
use super::mode::{self, BashEffect};
use super::rule::{RuleKind, WordsMatch};
use super::target::{self, PathRequest};
use super::{
    Decision, OutsideWorkspace, Policy, PolicyContext, Rule, RuleList, RuleSource, Verdict,
};
use crate::builtin::BuiltinId;
use crate::pool::PoolTool;
use crate::protocol::PermissionMode;

impl Policy {
    pub(super) fn decide_bash(
        &self,
        tool: &PoolTool,
        input: &Value,
        ctx: &PolicyContext<'_>,
    ) -> Verdict {
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return Verdict::new(
                Decision::Ask {
                    why: "bash call without a `command` string".into(),
                },
                "bash guard: no command",
                RuleSource::Default,
            );
        };
        let units = match bash::analyze(command) {
            Ok(units) => units,
            Err(e) => return self.unparsable_bash(tool, ctx, command, &e),
        };
        let mut first_ask = None;
        let mut allowed_by_rule = None;
        for unit in &units {
            let v = self.decide_unit(tool, ctx, unit);
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
                ctx,
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

    /// A line the grammar cannot read: it asks (plan mode refuses it); deny and ask rules
    /// are matched against its plain words, allow rules never.
    fn unparsable_bash(
        &self,
        tool: &PoolTool,
        ctx: &PolicyContext<'_>,
        command: &str,
        e: &bash::BashError,
    ) -> Verdict {
        let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        let matches = |r: &Rule, list: RuleList| match &r.kind {
            RuleKind::Bash(p) => list != RuleList::Allow && p.matches(&words),
            _ => r.matches_tool(tool),
        };
        self.evaluate(
            tool,
            ctx,
            &matches,
            Guard::Firm(if ctx.mode == PermissionMode::Plan {
                mode::plan_refusal(&format!(
                    "this command cannot be checked ({e}), so it may change something"
                ))
            } else {
                Verdict::new(
                    Decision::Ask {
                        why: format!(
                            "cannot check this command ({e}), so it is not run without asking"
                        ),
                    },
                    "bash guard: unparsable",
                    RuleSource::Default,
                )
            }),
        )
    }

    /// One command of a line. Deny and ask rules match it as written or as run; allow rules
    /// only as run, and only when every word they look at is known. A command the analysis
    /// cannot resolve, or whose words made by expansions might match a deny or ask rule,
    /// asks (plan mode refuses): no allow rule, grant or mode lets it run.
    fn decide_unit(&self, tool: &PoolTool, ctx: &PolicyContext<'_>, unit: &Unit) -> Verdict {
        let resolved = unit.unresolved.is_none();
        let matches = |r: &Rule, list: RuleList| match &r.kind {
            RuleKind::Bash(p) => {
                let run = p.match_words(&unit.words);
                let written = p.match_words(&unit.written);
                match list {
                    RuleList::Allow => resolved && run == WordsMatch::Yes,
                    _ => run == WordsMatch::Yes || written == WordsMatch::Yes,
                }
            }
            _ => r.matches_tool(tool),
        };
        let shown = unit.shown();
        let effect = mode::bash_effect(unit, ctx.workspace);
        let unchecked = match &unit.unresolved {
            Some(why) => Some(format!("`{shown}` cannot be checked: {why}")),
            None => self.possibly_matching(unit).map(|rule| {
                format!("`{shown}` has words made by expansions that may match the rule {rule}")
            }),
        };
        let guard = match (&unit.class, ctx.mode, unchecked) {
            (Class::Denied(pattern), _, _) => Guard::Hard(Verdict::new(
                Decision::Deny {
                    why: format!("`{shown}` matches the bash deny list ({pattern})"),
                },
                format!("bash deny list: {pattern}"),
                RuleSource::Default,
            )),
            (_, PermissionMode::Plan, Some(why)) => Guard::Firm(mode::plan_refusal(&format!(
                "{why}, so it may change files"
            ))),
            (_, _, Some(why)) => Guard::Firm(Verdict::new(
                Decision::Ask {
                    why: format!("{why}; it is not run without asking"),
                },
                super::BASH_UNRESOLVED,
                RuleSource::Default,
            )),
            (_, PermissionMode::Plan, None) if effect != BashEffect::ReadOnly => {
                let why = match &unit.changes {
                    Some(what) => format!("`{shown}` may change files ({what})"),
                    None => format!("`{shown}` may change files"),
                };
                Guard::Firm(mode::plan_refusal(&why))
            }
            (Class::Destructive(_), PermissionMode::AcceptEdits, None)
                if effect == BashEffect::WorkspaceEdit =>
            {
                Guard::Fallback(mode::allowed_by(PermissionMode::AcceptEdits))
            }
            (Class::Destructive(_), PermissionMode::Auto, None) => {
                Guard::Fallback(mode::allowed_by(PermissionMode::Auto))
            }
            (Class::Destructive(what), _, None) => Guard::Soft(Verdict::new(
                Decision::Ask {
                    why: format!("`{shown}` is destructive ({what})"),
                },
                format!("bash guard: destructive ({what})"),
                RuleSource::Default,
            )),
            (Class::Ordinary, PermissionMode::Ask, None) => {
                Guard::Fallback(mode::ask_mode(&format!("`{shown}`")))
            }
            (Class::Ordinary, _, None) => Guard::Fallback(Verdict::new(
                Decision::Allow,
                "bash guard",
                RuleSource::Default,
            )),
        };
        self.evaluate(tool, ctx, &matches, guard)
    }

    /// The first deny or ask rule (the person's or the shipped ones) that the unit's
    /// dynamic words might match, though its known words do not decide it.
    fn possibly_matching(&self, unit: &Unit) -> Option<&str> {
        self.rules
            .iter()
            .chain(self.defaults.iter())
            .filter(|r| r.list != RuleList::Allow)
            .find(|r| match &r.rule.kind {
                RuleKind::Bash(p) => {
                    let run = p.match_words(&unit.words);
                    let written = p.match_words(&unit.written);
                    run != WordsMatch::Yes
                        && written != WordsMatch::Yes
                        && (run == WordsMatch::Possibly || written == WordsMatch::Possibly)
                }
                _ => false,
            })
            .map(|r| r.rule.text.as_str())
    }

    pub(super) fn decide_file(
        &self,
        kind: BuiltinId,
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
        if ctx.mode == PermissionMode::Plan && kind.writes_files() {
            return self.evaluate(
                tool,
                ctx,
                &|r, _| r.matches_tool(tool) && names_whole_tool(r),
                Guard::Firm(mode::plan_refusal(&format!(
                    "{} would change `{}`",
                    tool.name, request.shown
                ))),
            );
        }
        let Some(resolved) = ctx.resolved(&request.to_resolve) else {
            return self.unresolved(tool, ctx, &request);
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
        } else if ctx.mode == PermissionMode::Ask && kind.writes_files() {
            Guard::Fallback(mode::ask_mode(&format!("{} of `{path}`", tool.name)))
        } else {
            Guard::Fallback(Verdict::new(
                Decision::Allow,
                "workspace guard",
                RuleSource::Default,
            ))
        };
        self.evaluate(tool, ctx, &matches, guard)
    }

    /// A file tool's call whose path the caller did not resolve: nothing is known about
    /// where it points, so it asks (a deny rule for the whole tool still denies).
    fn unresolved(
        &self,
        tool: &PoolTool,
        ctx: &PolicyContext<'_>,
        request: &PathRequest,
    ) -> Verdict {
        self.evaluate(
            tool,
            ctx,
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

/// Writing these would let the model change its own permissions or servers.
fn is_toolgate_config(relative: &str) -> bool {
    relative == ".mcp.json" || relative == ".toolgate" || relative.starts_with(".toolgate/")
}
