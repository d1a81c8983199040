//! The one gate: every call that needs the person's permission is decided here — tool
//! calls (the host policy's verdict, session grants, and for Ask the person's answer, or
//! headless a denial that says how to allow the call), bash escalations out of the
//! sandbox (`escalation.rs`), changed or new definitions (`pins/`), project servers
//! (`project_server.rs`) and sampling requests (`sampling.rs`). Every decision returns a
//! [`GateOutcome`]; every "allow for this session" lands in one store ([`Grants`]).
//!
//! A tool call goes through one pipeline of named stages over one call context
//! (`pipeline/`, decision 0092), hooks included.
//!
//! The agent uses it through: [`Gate::judge`] (and [`AfterRun`]), [`Gate::badge`], [`Gate::revoke`],
//! [`Gate::approve_project_server`] / [`Gate::approve_changed_project_server`],
//! [`Gate::reload_rules`], the pinning calls ([`Gate::observe_listings`],
//! [`Gate::pool_marks`], [`Gate::take_pins_problem`]) and [`Gate::sampling`] (a handle
//! for sampling requests, decided beside the agent loop).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

mod ask;
pub mod clock;
mod error;
mod escalation;
mod grants;
mod limited;
mod mode;
mod network;
mod outcome;
mod pins;
mod pipeline;
mod preview;
mod project_server;
mod resolve;
mod sampling;
mod store;
mod trust;

#[cfg(test)]
mod ask_tests;
#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod mode_tests;
#[cfg(test)]
mod tests;

pub use ask::ask;
pub use error::GateError;
pub use grants::{Grants, Spent, is_revoked_at_once};
pub use mode::{ModeLimits, ModeRefused, ModeSwitch, bash_writes};
pub use network::{Connection, HostList, NetworkDecision, NetworkGate};
pub use outcome::{GateOutcome, Gated};
pub use pipeline::{AfterRun, Decided, GateCall, Judged};
pub use resolve::resolve_target;
pub use sampling::SamplingGate;
pub use store::append_allow_rule;
pub use trust::TrustStore;

use crate::policy::{AlwaysRule, Policy, PolicyContext, RuleChanges, Verdict};
use crate::pool::{Pool, PoolTool, ServerTools};
use crate::protocol::{ExcludedTool, ToolMark};
use crate::sandbox::Sandbox;
use pins::state::Pinning;
use pipeline::CallContext;

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
    /// Where values came from (decision 0098): the labels of untrusted results, which the
    /// `flow` stage checks a call's arguments against.
    flow: Arc<Mutex<crate::flow::FlowLabels>>,
    /// `[flow]`: whether the stage runs, which servers are trusted, whether it denies.
    flow_settings: crate::settings::FlowSettings,
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
            flow: Default::default(),
            flow_settings: Default::default(),
            workspace,
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

    /// `[flow] enabled = false` turns the flow stage off (the labels are still kept, so a
    /// resumed session with it on again knows them).
    pub fn set_flow_enabled(&mut self, enabled: bool) {
        self.flow_settings.enabled = enabled;
    }

    /// `[flow]` as loaded (with the managed file's choices in it).
    pub fn set_flow(&mut self, settings: crate::settings::FlowSettings) {
        self.flow_settings = settings;
    }

    /// Whether `[flow] trusted` names `server`: its results are the person's own data.
    pub fn trusts_server(&self, server: &str) -> bool {
        self.flow_settings.trusts(server)
    }

    /// The session's flow labels: the agent adds each untrusted result's, and the person's
    /// messages. Shared with the network gate (a host that came from untrusted free text
    /// asks), so held only for a moment.
    pub fn flow_labels(&self) -> std::sync::MutexGuard<'_, crate::flow::FlowLabels> {
        self.flow.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// The handle connections through the network gate's proxy are decided through: the
    /// same rules (kept in step on reload) and the same grants as tool calls.
    pub fn network(&self) -> NetworkGate {
        NetworkGate::new(
            self.sampling_rules.clone(),
            self.grants.clone(),
            self.headless,
            self.ask_timeout,
            crate::settings::project_config_path(&self.workspace),
            (self.flow.clone(), self.flow_settings.clone()),
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
    async fn save_always(&mut self, ctx: &CallContext<'_>) -> Result<AlwaysRule, GateError> {
        let rule = self.always_rule(ctx)?;
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

    /// The session's grants, once after each change (see [`Grants::change_event`]).
    pub fn grants_changed(&self) -> Option<crate::protocol::AgentEvent> {
        self.grants.change_event()
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

    /// Non-interactive: nobody can be asked (the agent's hooks need to know too).
    pub fn is_headless(&self) -> bool {
        self.headless
    }
}
