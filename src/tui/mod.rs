//! The full-screen console (ratatui + crossterm).
//!
//! [`run`] owns the terminal and the [`App`]; one `select!` waits on terminal input, agent
//! events, signals and — only when something is due — a deadline (next frame, spinner
//! frame, a highlight running out). `update` is pure and says whether the screen may have
//! changed; `view` only draws, composing the widgets of the [`components`].
//!
//! Layers, bottom up: `theme`, `wrap`, `layout`, `effect`, `limiter`, `terminal`; the
//! `components` (each its state, its update and its widget); `app` (the state that holds
//! them); `update` (with `submit`: Enter, Esc and the queue around a turn) and `view`;
//! this runtime.

mod app;
mod components;
mod effect;
mod layout;
mod limiter;
mod submit;
mod terminal;
mod theme;
mod update;
mod view;
mod wrap;

pub use app::{App, ConsoleInfo, Msg, QUIT_WINDOW, ServerInfo, Update};
pub use components::commands::words as builtin_command_words;
pub use components::inbox::state::{Entry as InboxEntry, GUARD_WINDOW, Inbox, LIST_KEY};
pub use components::overlays::{Overlay, RuleLine};
pub use components::pool::state::CHANGE_HIGHLIGHT;
pub use components::status::Turn;
pub use components::transcript::state::{EntryKind, Scroll, ToolState};
pub use effect::Effect;
pub use layout::Focus;
pub use limiter::{FRAME_INTERVAL, FrameLimiter};
pub use terminal::TerminalGuard;
pub use theme::Theme;
pub use update::update;
pub use view::view;

use std::time::Instant;

use futures::StreamExt;
use tokio::sync::mpsc::error::{TryRecvError, TrySendError};

use crate::agent::AgentHandle;
use crate::protocol::{AgentEvent, UiCommand};

/// How many queued agent events are folded into one frame before drawing, so a flood of
/// deltas never starves input handling yet never builds a backlog either.
const MAX_EVENTS_PER_BATCH: usize = 512;
const SHUTDOWN_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// How the console ended (an error is the `Err` beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The person quit, or the terminal's input ended.
    Quit,
    /// This signal asked it to end (its number).
    Signal(i32),
}

/// Runs the console until the user quits (or a signal asks it to). Restores the terminal
/// on every way out, including a panic.
pub async fn run(mut handle: AgentHandle, mut info: ConsoleInfo) -> anyhow::Result<Ending> {
    info.no_color |= !Theme::from_env().color;
    // Signals first: a SIGTERM arriving while the screen is being set up still restores it.
    let signals = terminal::Signals::new()?;
    let mut term = terminal::TerminalGuard::enter()?;
    let result = event_loop(&mut term, &mut handle, info, signals).await;
    // Tell the agent first so it can close servers while we restore the screen.
    // A stuck agent must not keep the terminal hostage, hence the bound.
    let _ = handle
        .commands
        .send_timeout(UiCommand::Shutdown, SHUTDOWN_SEND_TIMEOUT)
        .await;
    term.restore();
    result
}

#[allow(clippy::large_enum_variant)] // see `Msg`
enum Wake {
    Msg(Msg),
    Quit,
    Signal(i32),
    Deadline,
}

async fn event_loop(
    term: &mut terminal::TerminalGuard,
    handle: &mut AgentHandle,
    info: ConsoleInfo,
    mut signals: terminal::Signals,
) -> anyhow::Result<Ending> {
    let mut app = App::new(info, Instant::now());
    let mut limiter = FrameLimiter::default();
    // The layout reaches `update` through resize messages; the first one is the size now.
    let size = term.terminal.size()?;
    let _ = update(
        &mut app,
        Msg::Terminal(crossterm::event::Event::Resize(size.width, size.height)),
    );
    let mut input = crossterm::event::EventStream::new();
    let mut agent_open = true;

    loop {
        let now = Instant::now();
        if limiter.should_draw(now) {
            app.now = now;
            term.terminal.draw(|f| view(&app, f))?;
            limiter.drawn(now);
        }
        let deadline = [limiter.next_draw_at(now), app.next_deadline()]
            .into_iter()
            .flatten()
            .min();

        let wake = tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => Wake::Msg(Msg::Terminal(ev)),
                Some(Err(e)) => return Err(anyhow::anyhow!("reading the terminal failed: {e}")),
                None => Wake::Quit,
            },
            ev = handle.events.recv(), if agent_open => match ev {
                Some(ev) => Wake::Msg(Msg::Agent(ev)),
                None => {
                    agent_open = false;
                    Wake::Msg(Msg::AgentGone)
                }
            },
            signal = signals.recv() => Wake::Signal(signal),
            _ = sleep_until(deadline), if deadline.is_some() => Wake::Deadline,
        };

        app.now = Instant::now();
        let msg = match wake {
            Wake::Quit => return Ok(Ending::Quit),
            Wake::Signal(signal) => return Ok(Ending::Signal(signal)),
            Wake::Deadline => Msg::Tick,
            Wake::Msg(m) => m,
        };
        // Only what may have changed the screen costs a frame: a key that moves nothing or a
        // mouse move does not. A tick only comes when a deadline fell due (spinner frame,
        // highlight ending) and always redraws.
        if apply(&mut app, msg, &mut limiter, handle) {
            return Ok(Ending::Quit);
        }
        // Fold whatever else the agent already sent into the same frame.
        for _ in 0..MAX_EVENTS_PER_BATCH {
            if !agent_open {
                break;
            }
            match handle.events.try_recv() {
                Ok(ev) => {
                    if apply(&mut app, Msg::Agent(ev), &mut limiter, handle) {
                        return Ok(Ending::Quit);
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    agent_open = false;
                    if apply(&mut app, Msg::AgentGone, &mut limiter, handle) {
                        return Ok(Ending::Quit);
                    }
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(d) = deadline {
        tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await;
    }
}

/// Runs one message through `update`, asks for a frame if the screen may have changed, and
/// carries out the effects; true when the console should close.
fn apply(app: &mut App, msg: Msg, limiter: &mut FrameLimiter, handle: &AgentHandle) -> bool {
    let Update { effects, redraw } = update(app, msg);
    if redraw {
        limiter.mark_dirty();
    }
    perform(app, effects, limiter, handle)
}

/// Carries out effects; true when the console should close.
fn perform(
    app: &mut App,
    effects: Vec<Effect>,
    limiter: &mut FrameLimiter,
    handle: &AgentHandle,
) -> bool {
    let mut quit = false;
    for effect in effects {
        match effect {
            Effect::Quit => quit = true,
            Effect::SendCommand(cmd) => match handle.commands.try_send(cmd) {
                Ok(()) => {}
                // A busy agent must not freeze the screen: deliver in the background.
                Err(TrySendError::Full(cmd)) => {
                    let commands = handle.commands.clone();
                    tokio::spawn(async move {
                        let _ = commands.send(cmd).await;
                    });
                }
                // The agent may be gone (it reported why); the console stays usable to quit.
                Err(TrySendError::Closed(_)) => {
                    let _ = update(
                        app,
                        Msg::Agent(AgentEvent::Error(
                            "the agent is not running; the command was not sent".into(),
                        )),
                    );
                    limiter.mark_dirty();
                }
            },
        }
    }
    quit
}
