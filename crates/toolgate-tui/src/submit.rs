//! What Enter and Esc do around a turn (decision 0076): Enter sends at once while idle and
//! queues while a turn runs; the queue is sent in order when the turn ends; Esc (Ctrl+C
//! too) interrupts the turn and holds the queue until the next Enter. Part of `update`: no
//! I/O, effects only.

use crossterm::event::KeyEvent;

use super::app::App;
use super::components::commands::{self, Parsed};
use super::components::inbox::state::GUARD_WINDOW;
use super::components::memory;
use super::components::overlays::Overlay;
use super::components::queue::{QueueKey, Queued};
use super::components::status::Turn;
use super::components::transcript::state::EntryKind;
use super::editor::EditTarget;
use super::effect::Effect;
use crate::protocol::UiCommand;
use crate::sanitize::for_terminal;

/// Enter in the composer.
pub(super) fn submit(app: &mut App, effects: &mut Vec<Effect>) {
    let text = app.composer_text();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        // Enter on an empty composer lets a queue held by an interrupt go on.
        if app.queue.is_held() {
            app.queue.release();
            send_queued(app, effects);
        }
        return;
    }
    super::recall::remember(app, trimmed, effects);
    // Idle with something still queued (held after an interrupt): what is typed now goes
    // after it, never ahead.
    let busy = app.turn.is_running() || !app.queue.is_empty();
    // `/init` and the command files are messages: the agent expands them.
    if let Some(command) = trimmed.strip_prefix('/')
        && !memory::sends_as_message(&app.project, command)
    {
        let command = command.to_string();
        app.composer.reset();
        if busy && waits_for_turn(app, &command) {
            return enqueue(app, Queued::Command(command), effects);
        }
        return run_command(app, &command, effects);
    }
    if app.agent_gone {
        app.set_flash("the agent has stopped; Ctrl+D quits");
        return;
    }
    let message = trimmed.to_string();
    app.composer.reset();
    if busy {
        return enqueue(app, Queued::Message(message), effects);
    }
    send_message(app, message, effects);
}

/// A built-in command that changes the conversation, the servers or the files waits for
/// the turn; one that only shows something, or is answered beside a turn, runs at once.
/// Prompts (`/mcp__…`) are not built-in: they keep asking the person to wait, since
/// their arguments would be asked for in the composer the person is typing in.
fn waits_for_turn(app: &App, command: &str) -> bool {
    if commands::prompt_call(command).is_some() {
        return false;
    }
    let servers: Vec<&str> = app.pool.servers().iter().map(|s| s.name.as_str()).collect();
    commands::parse(command, &servers).waits_for_turn()
}

fn enqueue(app: &mut App, item: Queued, effects: &mut Vec<Effect>) {
    app.queue.push(item);
    // Sending again after an interrupt means "go on".
    app.queue.release();
    send_queued(app, effects);
}

/// Sends what is queued, in order, while no turn runs: a message starts a turn (the rest
/// waits for its end), a command runs and the next item follows it.
pub(super) fn send_queued(app: &mut App, effects: &mut Vec<Effect>) {
    while !app.turn.is_running() && !app.agent_gone {
        let Some(item) = app.queue.next_to_send() else {
            return;
        };
        match item {
            Queued::Message(text) => send_message(app, text, effects),
            Queued::Command(command) => run_command(app, &command, effects),
        }
    }
}

fn send_message(app: &mut App, message: String, effects: &mut Vec<Effect>) {
    app.transcript.push(EntryKind::User(for_terminal(&message)));
    app.viewport.follow();
    app.turn = Turn::start(app.now);
    effects.push(Effect::SendCommand(UiCommand::Submit(message)));
}

/// Asks the agent to stop the running turn (what was said and done stays) and holds the
/// queue: "stop" never starts the next turn by itself. False when no turn runs or the
/// cancel was already sent.
pub(super) fn interrupt(app: &mut App, effects: &mut Vec<Effect>) -> bool {
    let Turn::Running {
        since,
        cancel_sent: false,
    } = app.turn
    else {
        return false;
    };
    effects.push(Effect::SendCommand(UiCommand::Cancel));
    app.turn = Turn::Running {
        since,
        cancel_sent: true,
    };
    app.queue.hold();
    true
}

/// Esc in the composer (no question, overlay, popup or form took it): interrupts a running
/// turn. An Esc just after a dialog went away (answered, expired, withdrawn) was meant for
/// the dialog: within the inbox's guard window it does nothing.
pub(super) fn on_esc(app: &mut App, effects: &mut Vec<Effect>) -> bool {
    if app
        .dialog_closed_at
        .is_some_and(|closed| app.now < closed + GUARD_WINDOW)
    {
        return false;
    }
    if !interrupt(app, effects) {
        return false;
    }
    app.set_flash(if app.queue.is_held() {
        "interrupting… queue held"
    } else {
        "interrupting…"
    });
    true
}

/// ↑ and Delete on an empty composer while something is queued: edit or drop the last
/// queued item. None: the key is the composer's.
pub(super) fn on_queue_key(app: &mut App, key: KeyEvent) -> Option<bool> {
    if !app.composer.is_empty() || app.queue.is_empty() {
        return None;
    }
    match app.queue.on_key(key)? {
        QueueKey::Edit(text) => {
            app.composer.textarea.insert_str(text);
        }
        QueueKey::Dropped => app.set_flash("dropped the last queued message"),
    }
    Some(true)
}

/// Carries out a slash command (the text after the slash).
fn run_command(app: &mut App, command: &str, effects: &mut Vec<Effect>) {
    if let Some((name, rest)) = commands::prompt_call(command) {
        let busy = app.agent_gone || app.turn.is_running();
        if let Some(outcome) =
            app.assist
                .run_prompt_command(name, rest, busy, &app.composer, effects)
        {
            return app.completion_outcome(outcome);
        }
    }
    let servers: Vec<&str> = app.pool.servers().iter().map(|s| s.name.as_str()).collect();
    match commands::parse(command, &servers) {
        Parsed::Send(cmd) => effects.push(Effect::SendCommand(cmd)),
        Parsed::Reload => {
            app.set_flash("reloading the MCP configuration…");
            effects.push(Effect::SendCommand(UiCommand::ReloadConfig));
        }
        Parsed::OpenMcp => app.overlay = Overlay::Mcp { selected: 0 },
        Parsed::OpenPermissions => app.overlay = Overlay::Permissions { selected: 0 },
        Parsed::OpenHelp => app.overlay = Overlay::Help,
        Parsed::Clear => {
            app.transcript.clear();
            app.viewport.follow();
            effects.push(Effect::SendCommand(UiCommand::Clear));
        }
        Parsed::Undo => effects.push(Effect::SendCommand(UiCommand::Undo)),
        Parsed::ShowMemory => {
            let lines = memory::lines(&app.project);
            app.note(EntryKind::Notice(lines));
        }
        Parsed::OpenMemory(number) => match memory::nth_file(&app.project, number) {
            Some(path) => effects.push(Effect::Edit(EditTarget::File(path))),
            None => app.note(EntryKind::Error(format!(
                "/memory {number}: there are {} instruction files (/memory lists them)",
                app.project.files.len()
            ))),
        },
        // Reached only from the queue's order of things; a message all the same.
        Parsed::Message => send_message(app, format!("/{command}"), effects),
        Parsed::Quit => effects.push(Effect::Quit),
        Parsed::Problem(line) => app.note(EntryKind::Error(line)),
    }
}
