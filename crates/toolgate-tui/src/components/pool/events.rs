//! The agent events that change what the console knows of the pool, handled in this one
//! place: the pool itself (snapshot, deferred tools, marks) and its servers (state,
//! sign-in, log, instructions).

use std::time::Instant;

use super::state::PoolView;
use crate::protocol::AgentEvent;
use crate::protocol::ServerStatus;
use crate::protocol::{Event, ServerLogLine, View};
use crate::sanitize::for_terminal;

/// Applies a pool event; any other event is handed back.
pub fn on_event(pool: &mut PoolView, event: AgentEvent, now: Instant) -> Option<AgentEvent> {
    match event {
        AgentEvent::View(View::PoolChanged(update)) => pool.apply_update(update, now),
        AgentEvent::Fact(Event::ServerStatus { server, status }) => {
            // A server a reload removed says "disconnected" after its row went (hub events
            // travel on their own task): that must not bring the row back.
            let removed = matches!(status, ServerStatus::Disconnected { .. })
                && pool.server(&for_terminal(&server)).is_none();
            if !removed {
                pool.set_status(&server, status);
            }
        }
        AgentEvent::Fact(Event::ServerAuth { server, status }) => pool.set_auth(&server, status),
        AgentEvent::Fact(Event::ServerLog(ServerLogLine {
            server,
            level,
            message,
        })) => pool.add_log(&server, level, &message),
        AgentEvent::Fact(Event::ServerInstructions { server, text }) => {
            pool.set_instructions(&server, &text)
        }
        other => return Some(other),
    }
    None
}
