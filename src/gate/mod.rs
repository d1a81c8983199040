//! The one gate: every call that needs the person's permission is decided here — tool
//! calls (the host policy's verdict, session grants, and for Ask the person's answer, or
//! headless a denial that says how to allow the call), bash escalations out of the
//! sandbox (`escalation.rs`), changed or new definitions (`pins/`), project servers
//! (`project_server.rs`) and sampling requests (`sampling.rs`). Every decision returns a
//! [`GateOutcome`]; every "allow for this session" lands in one store ([`Grants`]).
//!
//! The agent uses it through: [`Gate::check`], [`Gate::badge`], [`Gate::revoke`],
//! [`Gate::approve_project_server`] / [`Gate::approve_changed_project_server`],
//! [`Gate::reload_rules`], the pinning calls ([`Gate::observe_listings`],
//! [`Gate::pool_marks`], [`Gate::take_pins_problem`]) and [`Gate::sampling`] (a handle
//! for sampling requests, decided beside the agent loop).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod ask;
pub mod clock;
mod error;
mod escalation;
mod grants;
mod hooked;
mod limited;
mod mode;
mod outcome;
mod pins;
mod preview;
mod project_server;
mod resolve;
mod sampling;
mod store;
mod trust;

#[cfg(test)]
mod mode_tests;
#[cfg(test)]
mod tests;

pub use ask::ask;
pub use error::GateError;
pub use grants::{Grants, Spent, is_sampling_grant};
pub use mode::{ModeLimits, ModeRefused, ModeSwitch, bash_writes};
pub use outcome::{GateOutcome, Gated};
pub use resolve::resolve_target;
pub use sampling::SamplingGate;
pub use store::append_allow_rule;
pub use trust::TrustStore;

use crate::builtin::BuiltinId;
use crate::policy::{
    AlwaysRule, AuditRecord, Decider, Decision, Permit, PersonAnswer, Policy, PolicyContext,
    ResolvedTarget, RuleChanges, Verdict, always_rule, grant_key, path_to_resolve,
};
use crate::pool::{Pool, PoolTool, ServerTools};
use crate::protocol::PermissionMode;
use crate::protocol::questions::{Origin, Request, ToolCall};
use crate::protocol::{AgentEvent, ExcludedTool, ToolMark};
use crate::sandbox::Sandbox;
use escalation::NoEscalation;
use outcome::{answered, headless_refusal, person_refusal, suggested_rule};
use pins::state::Pinning;

pub struct Gate {
    policy: Policy,
    workspace: PathBuf,
    headless: bool,
    /// How long a tool-call question waits before its safe default (deny) applies.
    ask_timeout: Option<Duration>,
    /// The session's sandbox: whether bash can run confined here.
    sandbox: Sandbox,
    /// Every session grant (tools, unsandboxed bash, sampling); shared with sampling.
    grants: Grants,
    /// The rules sampling requests are decided by (a copy of `policy`, kept in step with it
    /// on reload; read by requests beside the agent loop).
    sampling_rules: Arc<Mutex<Policy>>,
    /// Project servers approved this session, by name and command line.
    approved_projects: project_server::Approved,
    /// Pinned definitions and new tools (see `pins/`).
    pinning: Pinning,
    /// The permission mode in force (shared with the command reader).
    mode: ModeSwitch,
    /// The mode the decision under way is taken in, read once when it starts: a Shift+Tab
    /// while it runs (a question open) changes neither the decision nor the sandbox the
    /// call runs in (see [`GateOutcome::decided_in`]).
    deciding_in: Option<PermissionMode>,
    /// The path of the call being checked, resolved once as its check starts: the
    /// decision is made on it and the tool opens it (decision 0089).
    call_target: Option<ResolvedTarget>,
}

impl Gate {
    pub fn new(policy: Policy, workspace: PathBuf, headless: bool) -> Self {
        Gate {
            sampling_rules: Arc::new(Mutex::new(policy.clone())),
            policy,
            headless,
            ask_timeout: None,
            sandbox: Sandbox::default(),
            grants: Grants::default(),
            approved_projects: Default::default(),
            pinning: Pinning::default(),
            mode: ModeSwitch::default(),
            deciding_in: None,
            call_target: None,
            workspace,
        }
    }

    /// The mode the decision under way is taken in (the current one between decisions).
    fn decision_mode(&self) -> PermissionMode {
        self.deciding_in.unwrap_or_else(|| self.mode.current())
    }

    /// Starts a decision in the mode in force now; [`Self::decided`] ends it.
    fn start_decision(&mut self) -> PermissionMode {
        let mode = self.mode.current();
        self.deciding_in = Some(mode);
        mode
    }

    /// Ends the decision started in `mode`, stamping the outcome with it.
    fn decided(&mut self, mode: PermissionMode, outcome: GateOutcome) -> GateOutcome {
        self.deciding_in = None;
        GateOutcome {
            decided_in: mode,
            ..outcome
        }
    }

    /// The session's mode; every change goes through [`ModeSwitch::change`].
    pub fn mode(&self) -> &ModeSwitch {
        &self.mode
    }

    pub fn set_sandbox(&mut self, sandbox: Sandbox) {
        self.sandbox = sandbox;
    }

    /// Reads the pinned definitions of this workspace (`pins_dir`: where rules' first uses
    /// are pinned; None keeps those in memory).
    pub fn load_pins(&mut self, pins_dir: Option<&std::path::Path>) {
        self.pinning = Pinning::load(&self.workspace, pins_dir);
    }

    pub fn set_ask_timeout(&mut self, timeout: Option<Duration>) {
        self.ask_timeout = timeout;
    }

    /// The handle sampling requests are decided through: the same rules (kept in step on
    /// reload) and the same grants as tool calls.
    pub fn sampling(&self) -> SamplingGate {
        SamplingGate::new(
            self.sampling_rules.clone(),
            self.grants.clone(),
            self.headless,
            self.ask_timeout,
        )
    }

    /// Puts the rules of `fresh` (the rule files loaded again) in force, for tool calls and
    /// sampling alike; see [`Policy::reload_rules`].
    pub fn reload_rules(&mut self, fresh: Policy, read: &[PathBuf]) -> RuleChanges {
        let changes = self.policy.reload_rules(fresh, read);
        *self
            .sampling_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = self.policy.clone();
        changes
    }

    /// The policy's context for one call. A file tool's path is resolved here (file-system
    /// metadata: symlinks, `..`), so the policy's decision itself does no I/O.
    fn context(&self, tool: &PoolTool, input: &Value) -> PolicyContext<'_> {
        let checked = self
            .call_target
            .as_ref()
            .filter(|t| path_to_resolve(tool, input).as_deref() == Some(t.requested.as_str()));
        let target = match checked {
            Some(target) => Some(target.clone()),
            None => resolve_target(&self.workspace, tool, input),
        };
        PolicyContext::new(&self.workspace)
            .with_target(target)
            .with_mode(self.decision_mode())
    }

    /// Starts the check of one call: its path resolved once, for the decision and the run.
    fn begin_call(&mut self, tool: &PoolTool, input: &Value) {
        self.call_target = resolve_target(&self.workspace, tool, input);
    }

    /// Ends the check: a call that may run carries the location it was decided on.
    fn end_call(&mut self, outcome: GateOutcome) -> GateOutcome {
        let target = self.call_target.take();
        outcome.with_target(target.map(|t| t.resolved.file_target()))
    }

    /// The policy's verdict for one call (session grants included).
    fn verdict(&self, tool: &PoolTool, input: &Value) -> Verdict {
        let ctx = self.context(tool, input);
        self.grants
            .with(|grants| self.policy.decide(tool, input, &ctx.with_grants(grants)))
    }

    /// The "always" rule for this call (session grants included, as in [`Self::verdict`]).
    fn always_rule(&self, tool: &PoolTool, input: &Value) -> Result<AlwaysRule, GateError> {
        let ctx = self.context(tool, input);
        self.grants
            .with(|grants| always_rule(&self.policy, tool, input, &ctx.with_grants(grants)))
            .map_err(GateError::from)
    }

    /// How the pool panel shows a tool before any input is known (a changed or new
    /// definition asks whatever the rules say).
    pub fn badge(&self, tool: &PoolTool) -> Verdict {
        let ctx = PolicyContext::new(&self.workspace).with_mode(self.mode.current());
        let verdict = self
            .grants
            .with(|grants| self.policy.badge(tool, &ctx.with_grants(grants)));
        self.pinned_badge(tool, verdict)
    }

    /// "Always allow": works out the rule, writes it into the workspace's config file on a
    /// blocking thread (never on the async executor), then applies it to this session.
    async fn save_always(
        &mut self,
        tool: &PoolTool,
        input: &Value,
    ) -> Result<AlwaysRule, GateError> {
        let rule = self.always_rule(tool, input)?;
        let (file, text) = (rule.file.clone(), rule.text.clone());
        tokio::task::spawn_blocking(move || store::append_allow_rule(&file, &text))
            .await
            .map_err(|e| GateError::Io {
                path: rule.file.clone(),
                source: std::io::Error::other(e),
            })??;
        self.policy.apply_always(&rule)?;
        Ok(rule)
    }

    /// "Allow for this session": the grant, and the definition it was given for.
    fn grant_session(&mut self, key: &str, tool: &PoolTool) {
        self.grants.grant(key);
        self.pinning.pin_session(tool);
    }

    /// Revokes the session grant named `name` (with the definition it pinned); returns
    /// the notice for the person.
    pub fn revoke(&mut self, name: &str) -> String {
        self.pinning.forget_session(name);
        self.grants.revoke(name)
    }

    /// Lets the gate see the servers' listings (new tools, changed definitions);
    /// `trusts_new`: whether a server's entry says `"trustNewTools": true`.
    pub fn observe_listings(
        &mut self,
        listings: &[Arc<ServerTools>],
        trusts_new: impl Fn(&str) -> bool,
    ) {
        self.pinning.observe(listings, trusts_new);
    }

    /// The panel's marks (changed, new) and excluded tools, when they changed.
    pub fn pool_marks(
        &mut self,
        pool: &Pool,
        deferred: &[Arc<PoolTool>],
        listings: &[Arc<ServerTools>],
    ) -> Option<(Vec<ToolMark>, Vec<ExcludedTool>)> {
        self.pinning.marks_if_changed(pool, deferred, listings)
    }

    /// Why the project's pins could not be read, once.
    pub fn take_pins_problem(&mut self) -> Option<String> {
        self.pinning.load_problem.take()
    }

    /// Decides one call, asking the person when the policy says Ask.
    pub async fn check(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let mode = self.start_decision();
        self.begin_call(tool, input);
        let verdict = self.verdict(tool, input);
        let outcome = self
            .check_verdict(tool, input, call_id, verdict, events, cancel)
            .await;
        let outcome = self.end_call(outcome);
        self.decided(mode, outcome)
    }

    /// [`Self::check`] once the policy's verdict is known (or a hook has changed it).
    async fn check_verdict(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        verdict: Verdict,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        // A grant is checked (time) and spent (calls) at the moment of the call.
        let (verdict, limited) = self.spend_grant(tool, input, verdict);
        if !matches!(verdict.decision, Decision::Deny { .. })
            && tool.builtin_kind().is_some_and(BuiltinId::is_shell)
        {
            match self.escalation_reason(input) {
                Ok(None) => {}
                Ok(Some(reason)) => {
                    return self
                        .escalate(tool, input, call_id, reason, &verdict, events, cancel)
                        .await;
                }
                Err(NoEscalation::Invalid(problem)) => {
                    return GateOutcome::new(Gated::Refused(problem), None);
                }
                Err(NoEscalation::ReadOnly { why, verdict }) => {
                    return GateOutcome::new(
                        Gated::Refused(format!("Permission denied: {why}")),
                        AuditRecord::from_verdict(&tool.name, input, &verdict),
                    );
                }
            }
        }
        if let Some(news) = self.definition_news(tool, &verdict) {
            return self
                .ask_definition(tool, input, call_id, news, verdict, events, cancel)
                .await;
        }
        match verdict.decision.clone() {
            Decision::Allow => GateOutcome::new(
                Gated::Run,
                Self::allow_record(tool, input, &verdict, limited),
            )
            .with_notices(self.pin_on_rule_use(tool, &verdict).await),
            Decision::Deny { why } => GateOutcome::new(
                Gated::Refused(format!("Permission denied: {why}")),
                AuditRecord::from_verdict(&tool.name, input, &verdict),
            ),
            Decision::Ask { why } if self.headless => {
                let rule = self
                    .always_rule(tool, input)
                    .map_or_else(|_| suggested_rule(tool, input), |always| always.text);
                let record = AuditRecord::new(
                    &tool.name,
                    input,
                    Permit::Deny,
                    Some(format!(
                        "{why}; approval is unavailable in non-interactive mode"
                    )),
                    Decider::Headless {
                        asked_by: verdict.rule.clone(),
                    },
                );
                GateOutcome::new(
                    Gated::Refused(headless_refusal(&self.policy, &verdict, &why, &rule)),
                    Some(record),
                )
            }
            Decision::Ask { why } => {
                self.ask_person(tool, input, call_id, why, verdict, events, cancel)
                    .await
            }
        }
    }

    /// Asks the person about a call the policy asks about.
    #[allow(clippy::too_many_arguments)]
    async fn ask_person(
        &mut self,
        tool: &PoolTool,
        input: &Value,
        call_id: &str,
        why: String,
        verdict: Verdict,
        events: &mpsc::Sender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> GateOutcome {
        let preview = preview::for_call(tool, input, &self.workspace).await;
        let now = Instant::now();
        let asked_by = verdict.rule.clone();
        let (request, answer) = Request::new(
            Origin::Tool {
                tool: tool.name.clone(),
                server: tool.server().map(str::to_string),
            },
            ToolCall {
                call_id: call_id.to_string(),
                tool: tool.clone(),
                input: input.clone(),
                why,
                verdict,
                preview,
            },
            now,
            self.ask_timeout.map(|t| now + t),
        );
        let answer =
            match ask::person_answer(tool, input, request, answer, &asked_by, events, cancel).await
            {
                Ok(answer) => answer,
                Err(outcome) => return outcome,
            };
        let mut notices = Vec::new();
        if answer.permit() == Permit::Allow {
            self.pinning.acknowledge(tool);
        }
        let gated = match &answer {
            PersonAnswer::AllowOnce => Gated::Run,
            PersonAnswer::AllowSession => {
                let key = grant_key(tool, input);
                self.grant_session(&key, tool);
                notices.push(format!("{key} is allowed for the rest of this session."));
                Gated::Run
            }
            PersonAnswer::AllowLimited(limit) => {
                notices.push(self.grant_limited(tool, input, *limit));
                Gated::Run
            }
            PersonAnswer::AllowAlways => {
                match self.save_always(tool, input).await {
                    Ok(always) => {
                        notices.push(format!(
                            "Always allowed: wrote the allow rule {} to {}.",
                            always.text,
                            always.file.display()
                        ));
                        notices.extend(self.save_project_pin(tool, "always grant").await);
                    }
                    Err(e) => {
                        let key = grant_key(tool, input);
                        self.grant_session(&key, tool);
                        notices.push(format!("{e}; {key} is allowed for this session only."));
                    }
                }
                Gated::Run
            }
            PersonAnswer::Deny | PersonAnswer::DenyWithNote(_) => {
                person_refusal(&answer, "Permission denied: the user denied this call")
            }
        };
        answered(tool, input, answer, asked_by, gated, notices)
    }
}
