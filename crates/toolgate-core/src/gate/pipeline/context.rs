//! The one context a call is decided in: the call as the agent handed it, the mode and
//! the path its decision is made on (each read once, as the decision starts), the
//! PreToolUse hooks' say, and the notices the stages collect on the way.

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::GateCall;
use crate::gate::{Gate, resolve_target};
use crate::hooks::{Hooks, PreToolDecision};
use crate::policy::ResolvedTarget;
use crate::pool::PoolTool;
use crate::protocol::{AgentEvent, PermissionMode};

pub(in crate::gate) struct CallContext<'a> {
    pub call: GateCall<'a>,
    /// The mode the call is decided in: a Shift+Tab while a question is open changes
    /// neither the decision nor the sandbox the call runs in (see `GateOutcome::decided_in`).
    pub mode: PermissionMode,
    /// The call's path, resolved once: the decision is made on it and the tool opens it
    /// (decision 0089).
    pub target: Option<ResolvedTarget>,
    /// What the PreToolUse hooks said (None: no hook had a say).
    pub hook: Option<PreToolDecision>,
    /// A PreToolUse hook failed: no other hook may answer the question, the person decides.
    pub person_decides: bool,
    /// The hook stages' notices, shown before the outcome's own.
    pub notices: Vec<String>,
}

impl<'a> CallContext<'a> {
    /// The start of a decision: the mode in force now, and the call's path resolved.
    pub fn start(gate: &Gate, call: GateCall<'a>, hook: Option<PreToolDecision>) -> Self {
        let mode = gate.mode.current();
        let target = resolve_target(&gate.workspace, call.tool, &call.input);
        CallContext {
            call,
            mode,
            target,
            hook,
            person_decides: false,
            notices: Vec::new(),
        }
    }

    pub fn tool(&self) -> &'a PoolTool {
        self.call.tool
    }

    pub fn input(&self) -> &Value {
        &self.call.input
    }

    pub fn call_id(&self) -> &'a str {
        self.call.call_id
    }

    pub fn events(&self) -> &'a mpsc::Sender<AgentEvent> {
        self.call.events
    }

    pub fn cancel(&self) -> &'a CancellationToken {
        self.call.cancel
    }

    pub fn hooks(&mut self) -> &mut Hooks {
        self.call.hooks
    }
}
