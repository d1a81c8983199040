//! `exit_plan_mode`: the plan goes to the person as an inbox question; approving switches
//! the mode (through the gate's one validation point) and the turn goes on, declining keeps
//! plan mode and hands the person's note to the model. Headless nobody can approve: the
//! question is dismissed and the run stays in plan mode, which the result says.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::conversation::Conversation;
use super::tool_run::ToolRun;
use crate::gate::{ModeSwitch, ask};
use crate::protocol::Event;
use crate::protocol::questions::{Origin, PlanAnswer, PlanReview, Reply, Request};
use crate::protocol::{ModeCause, PermissionMode, ToolOutcome};

pub(super) async fn run(
    modes: &ModeSwitch,
    conv: &mut Conversation,
    input: &Value,
    cancel: &CancellationToken,
) -> ToolRun {
    if modes.current() != PermissionMode::Plan {
        return ToolRun::error(format!(
            "toolgate is not in plan mode (it is in {} mode): go on with the work.",
            modes.current()
        ));
    }
    let plan = input
        .get("plan")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let (request, answer) = Request::new(
        Origin::Tool {
            tool: crate::builtin::tools::exit_plan_mode::ID.name().into(),
            server: None,
        },
        PlanReview { plan },
        std::time::Instant::now(),
        None,
    );
    let reply = match ask(conv.events(), request, answer, Some(cancel)).await {
        Some(reply) => reply,
        None => return ToolRun::cancelled(),
    };
    let note = match reply {
        Reply::Person(PlanAnswer::Approve(mode)) => {
            return match modes.change(mode, ModeCause::PlanApproved) {
                Ok(change) => {
                    conv.tell(Event::PermissionMode(change)).await;
                    ToolRun::ok(format!(
                        "The user approved the plan. toolgate is now in {mode} mode: carry out \
                         the plan."
                    ))
                }
                Err(refused) => refused_result(format!("{refused}; still in plan mode")),
            };
        }
        Reply::Person(PlanAnswer::KeepPlanning(note)) => note,
        Reply::Expired(_) | Reply::Dismissed(_) => {
            return refused_result(
                "Nobody could review the plan (non-interactive run): toolgate stays in plan \
                 mode, so nothing may be changed. Report the plan as your answer."
                    .into(),
            );
        }
    };
    refused_result(if note.is_empty() {
        "The user did not approve the plan: toolgate stays in plan mode. Ask what to change, \
         or revise the plan and present it again."
            .into()
    } else {
        format!(
            "The user did not approve the plan and says: {note}\ntoolgate stays in plan mode; \
             revise the plan and present it again."
        )
    })
}

fn refused_result(text: String) -> ToolRun {
    ToolRun {
        outcome: ToolOutcome::Denied,
        text,
        images: Vec::new(),
    }
}
