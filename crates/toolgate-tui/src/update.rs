//! `update`: every input (key, mouse, paste, resize, agent event, timer) arrives as a
//! [`Msg`]; `update` changes the [`App`] and returns an [`Update`]: the [`Effect`]s for the
//! runtime to carry out and whether the screen may have changed.
//!
//! It routes to the components: agent events by what they concern, keys by who has them
//! (inbox, overlay, pool, completion, composer). What a component cannot decide alone
//! (focus, the turn, the status line's message) it reports back, and this applies it.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
// crossterm's `Event` is the terminal's in this file; the agent's facts are `Fact`.
use crate::protocol::Event as Fact;
use ratatui::layout::Rect;

use super::app::{App, Msg, QUIT_WINDOW, Update};
use super::components::completion::assist::ModelList;
use super::components::composer::ComposerKey;
use super::components::inbox::state::KeyResult;
use super::components::overlays::Overlay;
use super::components::pool::events as pool_events;
use super::components::pool::panel::{self, PoolKey};
use super::components::status::{RetryCountdown, Turn};
use super::components::transcript::events as transcript_events;
use super::components::transcript::state::EntryKind;
use super::effect::Effect;
use super::layout::Focus;
use super::recall;
use super::submit;
use crate::protocol::AgentEvent;
use crate::protocol::{Live, PermissionLine, Reply, ToolCallStart, View};
use crate::sanitize::for_terminal;

pub fn update(app: &mut App, msg: Msg) -> Update {
    let dialog_before = app.dialog_open();
    let mut effects = Vec::new();
    let mut redraw = false;
    if let Some((_, until)) = &app.flash
        && *until <= app.now
    {
        app.flash = None;
        redraw = true;
    }
    if app.quit_armed_until.is_some_and(|t| t <= app.now) {
        app.quit_armed_until = None;
    }
    redraw |= match msg {
        Msg::Terminal(event) => on_terminal(app, event, &mut effects),
        Msg::Agent(event) => {
            on_agent(app, event, &mut effects);
            true
        }
        Msg::AgentGone => {
            if !app.agent_gone {
                app.agent_gone = true;
                app.turn = Turn::Idle;
                app.note(EntryKind::Error(
                    "the agent stopped; press Ctrl+D to quit".into(),
                ));
            }
            true
        }
        // Ticks come only when something due changes the screen (spinner frame, a highlight,
        // the inbox's guard ending, a countdown second, a deadline).
        Msg::Tick => true,
        Msg::Edited(outcome) => {
            recall::edited(app, outcome);
            true
        }
    };
    redraw |= app.pool.expire(app.now);
    redraw |= app.inbox.prune(app.now);
    for expired in app.inbox.expire_due(app.now) {
        app.note(EntryKind::Notice(for_terminal(&expired.message())));
        redraw = true;
    }
    if dialog_before && !app.dialog_open() {
        app.dialog_closed_at = Some(app.now);
    }
    app.relayout();
    Update { effects, redraw }
}

/// Routes an agent event to the components whose state it concerns.
fn on_agent(app: &mut App, event: AgentEvent, effects: &mut Vec<Effect>) {
    if let AgentEvent::Fact(Fact::ServerStatus { server, status }) = &event
        && !matches!(status, crate::protocol::ServerStatus::Ready { .. })
    {
        app.assist.forget_server(server);
    }
    let Some(event) = pool_events::on_event(&mut app.pool, event, app.now) else {
        return;
    };
    // The model answered again (or the turn ended): the retry countdown is over.
    if matches!(
        event,
        AgentEvent::Live(Live::TextDelta(_))
            | AgentEvent::Fact(Fact::ToolStarted(ToolCallStart { .. }))
            | AgentEvent::Fact(Fact::TurnFinished { .. })
            | AgentEvent::Fact(Fact::Error { message: _ })
    ) {
        app.model_retry = None;
    }
    match event {
        AgentEvent::Fact(Fact::ModelRetry(retry)) => {
            app.model_retry = Some(RetryCountdown::new(retry, app.now));
            return;
        }
        AgentEvent::Reply(Reply::Completions { id, values }) => {
            return app
                .assist
                .on_completions(id, values, &app.composer, effects);
        }
        AgentEvent::View(View::Catalog { server, catalog }) => {
            return app
                .assist
                .on_catalog(server.into_string(), catalog, &app.composer, effects);
        }
        AgentEvent::Request(request) => {
            app.inbox.push(request, app.now);
            return super::notify::question_arrived(app, effects);
        }
        AgentEvent::View(View::Project(project)) => {
            app.assist.commands = project.commands.clone();
            app.project = project;
            return;
        }
        AgentEvent::View(View::WorkspaceFiles(files)) => {
            app.assist.files = files;
            return;
        }
        AgentEvent::Reply(Reply::ModelNames(names)) => {
            app.assist.models = ModelList::Known(names);
            app.assist.refresh(&app.composer, effects);
        }
        AgentEvent::View(View::ModelChanged { label }) => {
            app.model_label = for_terminal(&label);
            app.note(EntryKind::Notice(format!(
                "The model is now {} (from the next request)",
                app.model_label
            )));
        }
        AgentEvent::Live(Live::Context(gauge)) => {
            app.context = Some(gauge);
            return;
        }
        AgentEvent::Fact(Fact::Compacted(report)) => {
            app.note(EntryKind::Notice(format!("── {} ──", report.describe())));
        }
        AgentEvent::Reply(Reply::ContextBreakdown(breakdown)) => {
            app.note(EntryKind::Notice(breakdown.lines().join("\n")));
        }
        AgentEvent::View(View::SessionStarted {
            session_id,
            model_label,
            workspace,
            servers,
            sandbox_problem,
        }) => {
            app.sandbox_problem = sandbox_problem.map(|p| for_terminal(&p));
            app.session_id = for_terminal(&session_id);
            app.model_label = for_terminal(&model_label);
            app.info.workspace = workspace;
            for server in &servers {
                app.pool.add_configured(&server.name);
            }
            app.info.servers = servers;
            return;
        }
        AgentEvent::Fact(Fact::PermissionMode(change)) => {
            // The status line names it; the conversation is unchanged.
            app.permission_mode = change.mode;
            return;
        }
        AgentEvent::View(View::ServerEnabled { server, enabled }) => {
            if let Some(info) = app.info.servers.iter_mut().find(|s| s.name == server) {
                info.enabled = enabled;
            }
            return;
        }
        AgentEvent::View(View::ServersChanged { servers }) => {
            let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
            app.pool.set_configured(&names);
            app.info.servers = servers;
        }
        // The gate's own list: /permissions shows what it says.
        AgentEvent::View(View::GrantsChanged(grants)) => app.session_grants = grants,
        AgentEvent::Fact(Fact::PermissionDecided(PermissionLine { call_id, record })) => {
            transcript_events::decided(&mut app.transcript, &call_id, &record);
        }
        AgentEvent::Fact(Fact::TurnFinished {
            usage, cancelled, ..
        }) => {
            app.usage.add(&usage);
            app.turn = Turn::Idle;
            transcript_events::turn_finished(&mut app.transcript, cancelled);
            // However the turn ended; after an interrupt the queue waits for Enter.
            submit::send_queued(app, effects);
        }
        AgentEvent::Fact(Fact::Sampling(report)) => {
            // Spent on the person's model like a turn's tokens.
            let used = report.usage();
            app.usage.input_tokens += used.input_tokens;
            app.usage.output_tokens += used.output_tokens;
            transcript_events::sampling(&mut app.transcript, &report);
        }
        event => {
            let turn_running = app.turn.is_running();
            if let Some(other) =
                transcript_events::on_event(&mut app.transcript, event, turn_running)
            {
                tracing::debug!(event = ?other, "an agent event the console does not show");
                return;
            }
        }
    }
    app.viewport.content_changed();
}

/// Handles terminal input; true when the screen may have changed.
fn on_terminal(app: &mut App, event: Event, effects: &mut Vec<Effect>) -> bool {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => on_key(app, key, effects),
        Event::Mouse(mouse) => {
            app.viewport
                .on_mouse(mouse.kind, &app.transcript, app.areas.conversation)
        }
        Event::Paste(text) => {
            if !app.inbox.is_empty() {
                app.inbox.paste(&text);
            } else {
                // Pasted text keeps its newlines but loses anything that could drive the terminal.
                app.composer.textarea.insert_str(for_terminal(&text));
                app.focus = Focus::Composer;
            }
            true
        }
        Event::FocusGained | Event::FocusLost => {
            app.focused = matches!(event, Event::FocusGained);
            false
        }
        // The layout follows in `relayout`; cached wraps re-key on width.
        Event::Resize(width, height) => {
            app.screen = Rect::new(0, 0, width, height);
            true
        }
        _ => false,
    }
}

fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

/// Handles a key; true when the screen may have changed.
fn on_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    // The history search takes every key (Ctrl+C closes it) unless a question waits.
    if app.history.search.is_some() && app.inbox.is_empty() {
        return recall::on_search_key(app, key);
    }
    if ctrl(&key, 'c') {
        on_ctrl_c(app, effects);
        return true;
    }
    if ctrl(&key, 'd') {
        effects.push(Effect::Quit);
        return true;
    }
    // The inbox owns the keyboard while a request waits.
    if !app.inbox.is_empty() {
        match app.inbox.handle_key(key, app.now) {
            // The asker was told through the request's own channel; a tool call's card
            // shows the outcome when the agent reports the decision.
            KeyResult::Answered(closed) => {
                tracing::debug!(request = %closed.id, kind = closed.kind, outcome = %closed.outcome, delivered = closed.delivered, "answered");
                return true;
            }
            KeyResult::Consumed => return true,
            KeyResult::NotHandled => {}
        }
    }
    if ctrl(&key, 'o') {
        app.transcript.expand_tools = !app.transcript.expand_tools;
        return true;
    }
    if ctrl(&key, 'p') {
        app.pool_collapsed = !app.pool_collapsed;
        if app.pool_collapsed && app.focus == Focus::Pool {
            app.focus = Focus::Composer;
        }
        return true;
    }
    // With the pool focused its details cover the conversation, so paging moves them.
    if app.focus == Focus::Pool
        && app.overlay == Overlay::None
        && let Some(moved) = app.detail.on_key(key)
    {
        return moved;
    }
    if let Some(moved) = app
        .viewport
        .on_key(key, &app.transcript, app.areas.conversation)
    {
        return moved;
    }
    if app.overlay != Overlay::None {
        let (redraw, flash) =
            app.overlay
                .on_key(key, app.pool.servers(), &mut app.session_grants, effects);
        if let Some(text) = flash {
            app.set_flash(text);
        }
        return redraw;
    }
    match app.focus {
        Focus::Pool => match panel::on_key(&mut app.pool, &mut app.detail, key) {
            PoolKey::Moved(moved) => moved,
            PoolKey::Leave => {
                app.focus = Focus::Composer;
                true
            }
            PoolKey::Type(c) => {
                app.focus = Focus::Composer;
                app.composer.textarea.insert_char(c);
                true
            }
        },
        Focus::Composer => on_composer_key(app, key, effects),
    }
}

fn on_ctrl_c(app: &mut App, effects: &mut Vec<Effect>) {
    let armed = app.quit_armed_until.is_some_and(|t| t > app.now);
    match app.turn {
        Turn::Running {
            cancel_sent: false, ..
        } => {
            submit::interrupt(app, effects);
            app.quit_armed_until = Some(app.now + QUIT_WINDOW);
            app.set_flash("cancelling… (Ctrl+C again to quit)");
        }
        _ if armed => effects.push(Effect::Quit),
        _ if !app.composer.is_empty() => app.composer.reset(),
        _ => {
            app.quit_armed_until = Some(app.now + QUIT_WINDOW);
            app.set_flash("press Ctrl+C again to quit");
        }
    }
}

/// The completion's keys first, then the composer's.
fn on_composer_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> bool {
    if let Some(outcome) = app.assist.on_key(key, &mut app.composer, effects) {
        app.completion_outcome(outcome);
        return true;
    }
    if key.code == KeyCode::Esc && key.modifiers.is_empty() {
        return submit::on_esc(app, effects);
    }
    // Shift+Tab: the agent switches to the next mode and says which (the status line).
    if key.code == KeyCode::BackTab {
        effects.push(Effect::SendCommand(
            crate::protocol::UiCommand::CyclePermissionMode,
        ));
        return false;
    }
    if let Some(changed) = submit::on_queue_key(app, key) {
        return changed;
    }
    if ctrl(&key, 'r') {
        recall::open_search(app);
        return true;
    }
    if ctrl(&key, 'g') {
        recall::edit_composer(app, effects);
        return false;
    }
    if let Some(changed) = recall::on_walk_key(app, key) {
        return changed;
    }
    match app.composer.on_key(key, !app.pool_collapsed) {
        ComposerKey::Submit => submit::submit(app, effects),
        ComposerKey::FocusPool => app.focus = Focus::Pool,
        ComposerKey::Help => app.overlay = Overlay::Help,
        ComposerKey::Newline => {}
        ComposerKey::Edited(changed) => {
            if changed {
                app.assist.refresh(&app.composer, effects);
            }
            return changed;
        }
    }
    true
}
