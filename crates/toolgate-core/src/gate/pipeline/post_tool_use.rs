//! Stage 12, after the agent ran the call: PostToolUse hooks see its response; a block's
//! reason is added to what the model reads (the call has run: nothing is undone).

use serde_json::Value;
use tokio::sync::mpsc;

use crate::hooks::{HookEvent, Hooks};
use crate::protocol::AgentEvent;
use crate::protocol::Event;

/// The text the model reads: `response`, with the reason of a hook that blocks.
pub(super) async fn run(
    hooks: &mut Hooks,
    events: &mpsc::Sender<AgentEvent>,
    tool: &str,
    input: &Value,
    response: String,
) -> String {
    if !hooks.has(HookEvent::PostToolUse) {
        return response;
    }
    let result = hooks.post_tool_use(tool, input, &response).await;
    for notice in &result.notices {
        // A front end that went away gets its Shutdown from the command reader.
        let _ = events
            .send(AgentEvent::Fact(Event::Notice {
                message: format!("hooks: {notice}"),
            }))
            .await;
    }
    match result.block {
        Some(block) => format!(
            "{}\n\nThe {} says: {}",
            response.trim_end(),
            block.hook,
            block.reason
        ),
        None => response,
    }
}
