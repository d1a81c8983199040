//! The permission mode on the agent's side: the mode a session starts in (or goes back to
//! on resume), Shift+Tab beside a running turn, and what each change leaves behind (a
//! session record, an event, new badges). Every change itself goes through the gate's
//! [`ModeSwitch::change`](crate::gate::ModeSwitch::change).

use std::sync::Arc;

use super::conversation::Conversation;
use super::sampling::SamplingHost;
use crate::gate::{ModeLimits, ModeRefused, ModeSwitch};
use crate::journal;
use crate::protocol::Event;
use crate::protocol::{AgentEvent, ModeCause, ModeChange, PermissionMode};

/// The mode a session starts in: `--permission-mode`, else `[permissions] default_mode`,
/// else default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModeStart {
    pub mode: PermissionMode,
    /// Given on the command line: it wins over the mode a resumed session was in.
    pub from_flag: bool,
}

/// The starting mode once it is in force, until the session can announce it.
pub(super) struct PendingStart {
    wanted: ModeStart,
    /// Why the starting mode was refused, reported once the session is open.
    refused: Option<ModeRefused>,
}

/// Sets the limits and puts the starting mode in force before anything can change it (the
/// command reader starts after this).
pub(super) fn apply_start(
    modes: &ModeSwitch,
    wanted: ModeStart,
    limits: ModeLimits,
) -> PendingStart {
    modes.set_limits(limits);
    PendingStart {
        wanted,
        refused: modes.change(wanted.mode, ModeCause::Start).err(),
    }
}

impl PendingStart {
    /// Once the session is open: reports a refused starting mode, goes back to a resumed
    /// session's own mode (unless the flag said one, or the person already chose one), and
    /// records and announces the mode unless it is plain default from the start.
    pub(super) async fn announce(
        &mut self,
        modes: &ModeSwitch,
        conv: &mut Conversation,
        resumed: Option<PermissionMode>,
    ) {
        let wanted = self.wanted;
        if let Some(refused) = self.refused.take() {
            let current = modes.current();
            conv.emit(AgentEvent::Fact(Event::Error {
                message: format!("{refused}; the session stays in {current} mode"),
            }))
            .await;
            return;
        }
        // Shift+Tab may have come first: the person's choice stands.
        if modes.current() != wanted.mode {
            return;
        }
        let change = match resumed {
            Some(mode) if !wanted.from_flag => match modes.change(mode, ModeCause::Resume) {
                Ok(change) => change,
                Err(refused) => {
                    conv.emit(AgentEvent::Fact(Event::Error {
                        message: format!(
                            "{refused}; the resumed session is in {} mode",
                            modes.current()
                        ),
                    }))
                    .await;
                    return;
                }
            },
            _ if wanted.mode == PermissionMode::Default => return,
            _ => ModeChange {
                mode: wanted.mode,
                from: PermissionMode::Default,
                cause: ModeCause::Start,
            },
        };
        conv.tell(Event::PermissionMode(change)).await;
    }
}

/// Shift+Tab, answered beside a running turn so the turn's next call sees the new mode:
/// the change is logged through the shared log and announced at once. Whether the mode
/// changed (the agent loop then refreshes the badges).
pub(super) async fn cycle_beside_turn(modes: &ModeSwitch, host: &Arc<SamplingHost>) -> bool {
    match modes.cycle() {
        Ok(change) => {
            announce_shared(host, change).await;
            true
        }
        Err(refused) => {
            let _ = host
                .events
                .send(AgentEvent::Fact(Event::Notice {
                    message: refused.to_string(),
                }))
                .await;
            false
        }
    }
}

/// Records a change in the session log (through the shared handle) and tells the front end.
pub(super) async fn announce_shared(host: &SamplingHost, change: ModeChange) {
    journal::append_shared(&host.log, Event::PermissionMode(change));
    let _ = host
        .events
        .send(AgentEvent::Fact(Event::PermissionMode(change)))
        .await;
}
