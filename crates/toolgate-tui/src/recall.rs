//! The composer's reach beyond its text (decision 0079): earlier prompts (↑/↓ at the
//! edges, the Ctrl+R search) and the person's editor (Ctrl+G). Part of `update`: no I/O,
//! effects only; the runtime writes the history file and runs the editor.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::App;
use super::components::history::SearchKey;
use super::components::transcript::state::EntryKind;
use super::editor::{EditTarget, Edited};
use super::effect::Effect;

/// A prompt is being sent: the history keeps it (and the file, through the runtime).
pub(super) fn remember(app: &mut App, prompt: &str, effects: &mut Vec<Effect>) {
    if app.history.record(prompt) {
        effects.push(Effect::Remember(prompt.to_string()));
    }
}

/// ↑ on the composer's first line, ↓ on its last line: the previous or next prompt, when
/// the composer is empty or shows an earlier prompt unedited (as in Codex): text being
/// written, or taken back from the queue, is never swapped out by an arrow key. None: the
/// key is the composer's.
pub(super) fn on_walk_key(app: &mut App, key: KeyEvent) -> Option<bool> {
    if !key.modifiers.is_empty() {
        return None;
    }
    let current = app.composer.text();
    let unedited = app.history.shows(&current);
    if !unedited {
        app.history.stop_walk();
    }
    match key.code {
        KeyCode::Up if app.composer.on_first_line() && (unedited || current.is_empty()) => {
            let older = app.history.older(&current)?.to_string();
            app.composer.set_text(&older, false);
            Some(true)
        }
        KeyCode::Down if app.composer.on_last_line() && unedited => {
            let newer = app.history.newer()?;
            app.composer.set_text(&newer, true);
            Some(true)
        }
        _ => None,
    }
}

/// Ctrl+R in the composer: the search opens over what is written.
pub(super) fn open_search(app: &mut App) {
    app.history.open_search(app.composer.text());
}

/// A key while the search is open; true when the screen may have changed.
pub(super) fn on_search_key(app: &mut App, key: KeyEvent) -> bool {
    match app.history.on_search_key(key) {
        SearchKey::Moved(changed) => changed,
        SearchKey::Take(prompt) | SearchKey::Restore(prompt) => {
            app.composer.set_text(&prompt, true);
            true
        }
    }
}

/// Ctrl+G: the composer's text goes to the editor.
pub(super) fn edit_composer(app: &App, effects: &mut Vec<Effect>) {
    effects.push(Effect::Edit(EditTarget::Composer(app.composer.text())));
}

/// The editor exited: its text replaces the composer's; a failure leaves the text as it
/// was and says why.
pub(super) fn edited(app: &mut App, outcome: Edited) {
    match outcome {
        Edited::Composer(Ok(text)) => {
            // Editors end a file with a newline the person did not mean to send.
            let text = text.strip_suffix('\n').unwrap_or(&text);
            app.composer.set_text(text, true);
        }
        Edited::Composer(Err(why)) => app.note(EntryKind::Error(format!(
            "the editor failed, the message is as it was: {why}"
        ))),
        Edited::File(Ok(())) => {}
        Edited::File(Err(why)) => app.note(EntryKind::Error(format!("the editor failed: {why}"))),
    }
}
