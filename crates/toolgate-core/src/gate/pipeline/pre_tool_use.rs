//! Stage 1, PreToolUse: the hooks' say on this call, and the input it is decided on and
//! runs with (a hook's `updatedInput`, checked like the model's own input). Runs before
//! the decision starts, so the mode and the path are those of the input that runs.

use super::GateCall;
use crate::hooks::{HookEvent, PreToolDecision, PreToolSay};
use crate::protocol::AgentEvent;
use crate::protocol::Event;

/// The hooks' decision (None: no hook had a say); Err: the changed input's problem.
pub(super) async fn run(call: &mut GateCall<'_>) -> Result<Option<PreToolDecision>, String> {
    if !call.hooks.has(HookEvent::PreToolUse) {
        return Ok(None);
    }
    let Some(decision) = call.hooks.pre_tool_use(&call.tool.name, &call.input).await else {
        return Ok(None);
    };
    if let PreToolSay::Failed(why) = &decision.say {
        // A front end that went away gets its Shutdown from the command reader.
        let _ = call
            .events
            .send(AgentEvent::Fact(Event::Notice {
                message: format!(
                    "hooks: the {} {why}; the call asks instead of running on its word",
                    decision.hook
                ),
            }))
            .await;
    }
    if let Some(updated) = &decision.updated_input
        && !matches!(decision.say, PreToolSay::Deny(_))
    {
        call.input = updated.clone();
    }
    // A hook's updatedInput is checked like the model's own.
    if decision.updated_input.is_some()
        && let Err(problem) = (call.check_arguments)(&call.input)
    {
        return Err(format!(
            "Invalid arguments for {}: {problem}",
            call.tool.name
        ));
    }
    Ok(Some(decision))
}
