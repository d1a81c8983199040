//! The permission mode on the agent's side: the mode a session starts in (or goes back to
//! on resume), Shift+Tab beside a running turn, and what each change leaves behind (a
//! session record, an event, new badges). Every change itself goes through the gate's
//! [`ModeSwitch::change`](crate::gate::ModeSwitch::change).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::conversation::Conversation;
use super::intake::Work;
use super::sampling::SamplingHost;
use super::session::{self, Record};
use super::tools::ToolHost;
use crate::gate::ModeSwitch;
use crate::protocol::{AgentEvent, ModeCause, ModeChange, PermissionMode};

/// The mode a session starts in: `--permission-mode`, else `[permissions] default_mode`,
/// else default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModeStart {
    pub mode: PermissionMode,
    /// Given on the command line: it wins over the mode a resumed session was in.
    pub from_flag: bool,
}

/// Puts the starting mode in force (a resumed session's own, unless the flag said one),
/// then records and announces it unless it is plain default from the start.
pub(super) async fn start(
    tools: &mut ToolHost,
    conv: &mut Conversation,
    wanted: ModeStart,
    resumed: Option<PermissionMode>,
) {
    let (mode, cause) = match resumed {
        Some(mode) if !wanted.from_flag => (mode, ModeCause::Resume),
        _ => (wanted.mode, ModeCause::Start),
    };
    let change = match tools.gate.mode().change(mode, cause) {
        Ok(change) => change,
        Err(refused) => {
            let current = tools.gate.mode().current();
            conv.emit(AgentEvent::Error(format!(
                "{refused}; the session stays in {current} mode"
            )))
            .await;
            return;
        }
    };
    if change.mode == PermissionMode::Default && cause == ModeCause::Start {
        return;
    }
    conv.record(Record::PermissionMode(change)).await;
    conv.emit(AgentEvent::ModeChanged(change)).await;
}

/// Shift+Tab, answered beside a running turn so the turn's next call sees the new mode:
/// the change is logged through the shared log and announced at once; the agent loop
/// refreshes the badges afterwards.
pub(super) async fn cycle_beside_turn(
    modes: &ModeSwitch,
    host: &Arc<SamplingHost>,
    work: &mpsc::UnboundedSender<Work>,
) {
    match modes.cycle() {
        Ok(change) => {
            announce_shared(host, change).await;
            let _ = work.send(Work::ModeChanged);
        }
        Err(refused) => {
            let _ = host
                .events
                .send(AgentEvent::Notice(refused.to_string()))
                .await;
        }
    }
}

/// Records a change in the session log (through the shared handle) and tells the front end.
pub(super) async fn announce_shared(host: &SamplingHost, change: ModeChange) {
    session::append_shared(&host.log, Record::PermissionMode(change));
    let _ = host.events.send(AgentEvent::ModeChanged(change)).await;
}
