//! The gate's side of pinned definitions: a tool whose definition changed since a grant or
//! rule covered it, or that appeared mid-session, asks with what changed (headless: is
//! refused, saying why); grants and rule uses pin what they covered. `state.rs` keeps the
//! session's pins and which tools are new, `file.rs` the pins files.

use std::ops::ControlFlow;
use std::time::Instant;

pub mod file;
pub(super) mod state;

use self::file::{Pin, PinCheck, definition_diff};
use super::Gate;
use super::outcome::{GateOutcome, Gated, answered, person_refusal, refused};
use super::pipeline::person::person_answer;
use super::pipeline::{CallContext, Stage};
use crate::policy::{Decider, Decision, Permit, PersonAnswer, Rule, RuleSource, Verdict};
use crate::pool::PoolTool;
use crate::protocol::questions::{ChangedDefinition, DefinitionNews, Origin, Request};

/// Why a call cannot go by its grant or rule alone.
enum Pending {
    Changed(Box<Pin>),
    New,
}

/// A tool that appeared mid-session is covered by a session grant (given after it
/// appeared) or by a rule naming exactly it, not by a server-wide or prefix rule.
fn covers_new_tool(verdict: &Verdict) -> bool {
    verdict.decision == Decision::Allow
        && (verdict.source == RuleSource::SessionGrant
            || Rule::parse(&verdict.rule).is_ok_and(|r| r.names_one_mcp_tool()))
}

/// Rules a person wrote (config files, `--allow`): their first use pins the definition.
fn hand_written(source: &RuleSource) -> bool {
    matches!(
        source,
        RuleSource::UserConfig(_)
            | RuleSource::ProjectConfig(_)
            | RuleSource::Flag
            | RuleSource::Managed(_)
    )
}

/// Writes one pin into its file on a blocking thread; a failure keeps the pin for this
/// session (it is already in memory) and says so.
async fn write_pin(
    tool: &PoolTool,
    (path, key, pin): (std::path::PathBuf, String, Pin),
) -> Vec<String> {
    let written = tokio::task::spawn_blocking(move || file::save(&path, &key, &pin)).await;
    match written {
        Ok(Ok(())) => Vec::new(),
        Ok(Err(e)) => vec![format!(
            "{e}; the definition of {} is pinned for this session only.",
            tool.name
        )],
        Err(e) => vec![format!(
            "saving the pinned definition of {} failed ({e}); it is pinned for this session only.",
            tool.name
        )],
    }
}

impl Gate {
    fn pending(&self, tool: &PoolTool, verdict: &Verdict) -> Option<Pending> {
        if tool.server().is_none() || matches!(verdict.decision, Decision::Deny { .. }) {
            return None;
        }
        match self.pinning.check(tool) {
            PinCheck::Changed(pin) => Some(Pending::Changed(pin)),
            _ if self.pinning.is_new(tool) && !covers_new_tool(verdict) => Some(Pending::New),
            _ => None,
        }
    }

    /// What the person must see before this call runs, if anything.
    pub(super) fn definition_news(
        &self,
        tool: &PoolTool,
        verdict: &Verdict,
    ) -> Option<DefinitionNews> {
        Some(match self.pending(tool, verdict)? {
            Pending::Changed(pin) => DefinitionNews::Changed {
                pinned_by: pin.pinned_by.clone(),
                diff: definition_diff(&pin, tool),
            },
            Pending::New => DefinitionNews::New,
        })
    }

    /// The panel's badge: Ask for a changed or new tool, whatever the rule says.
    pub(super) fn pinned_badge(&self, tool: &PoolTool, verdict: Verdict) -> Verdict {
        let why = match self.pending(tool, &verdict) {
            None => return verdict,
            Some(Pending::Changed(_)) => "its definition changed since it was allowed",
            Some(Pending::New) => "it appeared mid-session",
        };
        Verdict {
            decision: Decision::Ask { why: why.into() },
            ..verdict
        }
    }

    /// A hand-written rule let an MCP tool through: pin what it covered, once per workspace.
    pub(super) async fn pin_on_rule_use(
        &mut self,
        tool: &PoolTool,
        verdict: &Verdict,
    ) -> Vec<String> {
        if tool.server().is_none()
            || !hand_written(&verdict.source)
            || self.pinning.check(tool) != PinCheck::Unpinned
        {
            return Vec::new();
        }
        let pinned_by = format!("rule {}", verdict.rule);
        let Some(write) = self.pinning.pin_used(tool, &pinned_by) else {
            return Vec::new();
        };
        write_pin(tool, write).await
    }

    /// Pins `tool` for the project and writes the pins file off the executor; a failed
    /// write keeps the pin for this session and says so.
    pub(super) async fn save_project_pin(
        &mut self,
        tool: &PoolTool,
        pinned_by: &str,
    ) -> Vec<String> {
        let Some(write) = self.pinning.pin_project(tool, pinned_by) else {
            return Vec::new();
        };
        write_pin(tool, write).await
    }

    /// Stage 8 of the pipeline: a call whose definition changed or is new asks about it
    /// (headless: is refused), whatever its verdict.
    pub(super) async fn definition_stage(
        &mut self,
        ctx: &CallContext<'_>,
        verdict: &Verdict,
    ) -> Stage {
        match self.definition_news(ctx.tool(), verdict) {
            None => ControlFlow::Continue(()),
            Some(news) => ControlFlow::Break(self.ask_definition(ctx, news, verdict.clone()).await),
        }
    }

    /// Asks about a call whose definition changed or is new (headless: refuses, saying why).
    async fn ask_definition(
        &mut self,
        ctx: &CallContext<'_>,
        news: DefinitionNews,
        verdict: Verdict,
    ) -> GateOutcome {
        let (tool, input) = (ctx.tool(), ctx.input());
        let asked_by = match &news {
            DefinitionNews::Changed { .. } => "pinned definition: changed",
            DefinitionNews::New => "pinned definition: new tool",
        }
        .to_string();
        let changed = matches!(news, DefinitionNews::Changed { .. });
        let allowed_by_rule =
            verdict.decision == Decision::Allow && verdict.source != RuleSource::SessionGrant;
        let payload = ChangedDefinition {
            call_id: ctx.call_id().to_string(),
            tool: crate::views::pool_tool(tool),
            input: input.clone(),
            news,
            verdict,
        };
        let why = payload.why();
        if self.headless {
            let why = format!(
                "{why}; approval is unavailable in non-interactive mode (review it in the console)"
            );
            return refused(tool, input, why, Decider::Headless { asked_by });
        }
        let now = Instant::now();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: tool.server().map(str::to_string),
            },
            payload,
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let answer = match person_answer(ctx, request, answer, &asked_by).await {
            Ok(answer) => answer,
            Err(outcome) => return outcome,
        };
        if answer.permit() == Permit::Allow {
            self.pinning.acknowledge(tool);
        }
        let mut notices = Vec::new();
        let gated = match &answer {
            // The question offers no limited grant; one would allow this call only.
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => Gated::Run,
            PersonAnswer::AllowSession => {
                self.grant_session(&tool.name, tool);
                notices.push(format!(
                    "{} is allowed for the rest of this session, as it is defined now.",
                    tool.name
                ));
                Gated::Run
            }
            PersonAnswer::AllowAlways => {
                if !allowed_by_rule {
                    match self.save_always(ctx).await {
                        Ok(always) => notices.push(format!(
                            "Always allowed: wrote the allow rule {} to {}.",
                            always.text,
                            always.file.display()
                        )),
                        Err(e) => {
                            self.grants.grant(&tool.name);
                            notices.push(format!(
                                "{e}; {} is allowed for this session only.",
                                tool.name
                            ));
                        }
                    }
                }
                notices.extend(self.save_project_pin(tool, "always grant").await);
                notices.push(format!("{} is pinned as it is defined now.", tool.name));
                Gated::Run
            }
            PersonAnswer::Deny if changed => Gated::Refused(format!(
                "Permission denied: the user did not accept the changed definition of {}",
                tool.name
            )),
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => {
                person_refusal(&answer, "Permission denied: the user denied this call")
            }
        };
        answered(tool, input, answer, asked_by, gated, notices)
    }
}
