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

use toolgate_base::{ids, paths, sanitize};
use toolgate_protocol as protocol;

mod app;
mod components;
mod editor;
mod effect;
mod hangup;
mod history_file;
mod layout;
mod limiter;
mod notify;
mod recall;
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

use crate::protocol::AgentHandle;
use crate::protocol::Event;
use crate::protocol::{AgentEvent, UiCommand};

/// How many queued agent events are folded into one frame before drawing, so a flood of
/// deltas never starves input handling yet never builds a backlog either.
const MAX_EVENTS_PER_BATCH: usize = 512;
const SHUTDOWN_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// How the console ended (an error is the `Err` beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The person quit.
    Quit,
    /// This signal asked it to end (its number).
    Signal(i32),
    /// The terminal is gone without a signal saying so: its input ended or failed (a
    /// hung-up pty that is not the controlling terminal), or drawing on it failed. The
    /// caller ends as on SIGHUP (decision 0090).
    TerminalGone,
}

/// Runs the console until the user quits (or a signal asks it to). Restores the terminal
/// on every way out, including a panic.
pub async fn run(mut handle: AgentHandle, mut info: ConsoleInfo) -> anyhow::Result<Ending> {
    info.no_color |= !Theme::from_env().color;
    // Signals first: a SIGTERM arriving while the screen is being set up still restores it.
    let signals = terminal::Signals::new()?;
    let mut term = terminal::TerminalGuard::enter()?;
    let hangup = hangup::HangupWatch::new()
        .map_err(|e| anyhow::anyhow!("the terminal cannot be watched for a hang-up: {e}"))?;
    let result = event_loop(&mut term, &mut handle, info, signals, &hangup).await;
    let sighup_on_dead_terminal =
        matches!(result, Ok(Ending::Signal(libc::SIGHUP))) && hangup.is_gone_now();
    if matches!(result, Ok(Ending::TerminalGone)) || sighup_on_dead_terminal {
        // Restore is attempted (on a dead terminal each write fails at once, nothing
        // waits), then the process lets go of the dead terminal: crossterm's reader stops
        // spinning on it while the agent shuts down, and nothing written after can fail.
        term.restore();
        hangup.detach();
    }
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
    Signal(i32),
    TerminalGone,
    Deadline,
}

async fn event_loop(
    term: &mut terminal::TerminalGuard,
    handle: &mut AgentHandle,
    info: ConsoleInfo,
    mut signals: terminal::Signals,
    hangup: &hangup::HangupWatch,
) -> anyhow::Result<Ending> {
    let mut history = history_file::open_for(&info.workspace);
    let mut app = App::new(info, Instant::now());
    app.history = components::history::History::new(std::mem::take(&mut history.prompts));
    if let Some(problem) = history.problem.take() {
        app.note(components::transcript::state::EntryKind::Notice(problem));
    }
    let mut limiter = FrameLimiter::default();
    let mut out = Outside {
        history: history.file,
        history_failed: false,
        edit: None,
        notifier: notify::Notifier::new(app.info.notify, |name| std::env::var(name).ok()),
        attention: Vec::new(),
    };
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
        if !out.attention.is_empty() {
            // Written between frames, never inside one (a bell or an OSC string cannot
            // land in the middle of a cursor move).
            use std::io::Write;
            let backend = term.terminal.backend_mut();
            let _ = backend.write_all(&std::mem::take(&mut out.attention));
            let _ = backend.flush();
        }
        if limiter.should_draw(now) {
            app.now = now;
            if let Err(e) = term.terminal.draw(|f| view(&app, f)) {
                // A terminal that cannot be written to is gone, whatever the watch saw yet.
                tracing::warn!("drawing on the terminal failed: {e}");
                return Ok(Ending::TerminalGone);
            }
            limiter.drawn(now);
        }
        let deadline = [limiter.next_draw_at(now), app.next_deadline()]
            .into_iter()
            .flatten()
            .min();

        let wake = tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => Wake::Msg(Msg::Terminal(ev)),
                Some(Err(e)) => {
                    tracing::warn!("reading the terminal failed: {e}");
                    Wake::TerminalGone
                }
                None => Wake::TerminalGone,
            },
            // crossterm never reports a hang-up (its reader spins on it): watched here.
            () = hangup.gone() => Wake::TerminalGone,
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
            Wake::Signal(signal) => return Ok(Ending::Signal(signal)),
            Wake::TerminalGone => return Ok(Ending::TerminalGone),
            Wake::Deadline => Msg::Tick,
            Wake::Msg(m) => m,
        };
        // Only what may have changed the screen costs a frame: a key that moves nothing or a
        // mouse move does not. A tick only comes when a deadline fell due (spinner frame,
        // highlight ending) and always redraws.
        if apply(&mut app, msg, &mut limiter, handle, &mut out) {
            return Ok(Ending::Quit);
        }
        // Fold whatever else the agent already sent into the same frame.
        for _ in 0..MAX_EVENTS_PER_BATCH {
            if !agent_open {
                break;
            }
            match handle.events.try_recv() {
                Ok(ev) => {
                    if apply(&mut app, Msg::Agent(ev), &mut limiter, handle, &mut out) {
                        return Ok(Ending::Quit);
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    agent_open = false;
                    if apply(&mut app, Msg::AgentGone, &mut limiter, handle, &mut out) {
                        return Ok(Ending::Quit);
                    }
                }
            }
        }
        // The editor gets the terminal with nobody reading keys: the event stream (and
        // its reading thread) ends first and a new one starts after (decision 0079).
        if let Some(target) = out.edit.take() {
            drop(input);
            let outcome = editor::hand_over(term, target).await;
            input = crossterm::event::EventStream::new();
            app.now = Instant::now();
            if apply(
                &mut app,
                Msg::Edited(outcome),
                &mut limiter,
                handle,
                &mut out,
            ) {
                return Ok(Ending::Quit);
            }
            limiter.mark_dirty();
        }
    }
}

/// What the runtime does for the console besides the agent: the history file, and an
/// editor to run once the current batch of messages is done.
struct Outside {
    history: Option<history_file::HistoryFile>,
    /// A failed write is reported once, not for every prompt.
    history_failed: bool,
    edit: Option<editor::EditTarget>,
    notifier: notify::Notifier,
    /// Notification bytes to write to the terminal before the next frame.
    attention: Vec<u8>,
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(d) = deadline {
        tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await;
    }
}

/// Runs one message through `update`, asks for a frame if the screen may have changed, and
/// carries out the effects; true when the console should close.
fn apply(
    app: &mut App,
    msg: Msg,
    limiter: &mut FrameLimiter,
    handle: &AgentHandle,
    out: &mut Outside,
) -> bool {
    let Update { effects, redraw } = update(app, msg);
    if redraw {
        limiter.mark_dirty();
    }
    perform(app, effects, limiter, handle, out)
}

/// Carries out effects; true when the console should close.
fn perform(
    app: &mut App,
    effects: Vec<Effect>,
    limiter: &mut FrameLimiter,
    handle: &AgentHandle,
    out: &mut Outside,
) -> bool {
    let mut quit = false;
    for effect in effects {
        match effect {
            Effect::Quit => quit = true,
            Effect::Edit(target) => out.edit = Some(target),
            Effect::Notify { title, body } => {
                let bytes = out.notifier.bytes(&title, &body);
                out.attention.extend(bytes);
            }
            Effect::Remember(prompt) => {
                let written = match out.history.as_mut() {
                    Some(file) => file
                        .append(&prompt)
                        .map_err(|e| format!("prompt history {}: {e}", file.path().display())),
                    None => Err("prompt history: no state folder (set TOOLGATE_STATE_DIR)".into()),
                };
                if let Err(problem) = written
                    && !std::mem::replace(&mut out.history_failed, true)
                {
                    app.note(components::transcript::state::EntryKind::Notice(format!(
                        "{problem}; prompts of this session are not kept"
                    )));
                    limiter.mark_dirty();
                }
            }
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
                        Msg::Agent(AgentEvent::Fact(Event::Error {
                            message: "the agent is not running; the command was not sent".into(),
                        })),
                    );
                    limiter.mark_dirty();
                }
            },
        }
    }
    quit
}
