//! The composer's help with MCP resources and prompts, on `update`'s side: the completion
//! popup (`@server:uri`, template variables and prompt arguments completed by the server,
//! `/mcp__server__prompt`), and the questions for a prompt's missing arguments.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect, Turn};
use super::completion::{
    Choice, MAX_CHOICES, Query, RemoteQuery, prompt_command, prompt_query, remote_choices,
    resource_query, word_at,
};
use super::transcript::EntryKind;
use crate::agent::events::UiCommand;
use crate::mcp::CompletionTarget;
use crate::mcp::catalog::PromptEntry;
use crate::sanitize::for_terminal;

/// The popup under the word at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Popup {
    /// Characters of the word before the cursor (replaced on accept).
    pub word_len: usize,
    pub choices: Vec<Choice>,
    pub selected: usize,
    /// The server has not answered yet.
    pub waiting: bool,
}

/// Completion state kept in the App.
#[derive(Debug, Default)]
pub struct Assist {
    pub popup: Option<Popup>,
    /// Esc closed the popup for this word; it opens again when the word changes.
    dismissed: Option<String>,
    next_id: u64,
    /// The last remote query sent, with its id.
    asked: Option<(u64, RemoteQuery)>,
    /// The last answer, for the query it answers.
    answer: Option<(RemoteQuery, Vec<String>)>,
    /// Asking for a prompt's missing arguments.
    pub form: Option<PromptForm>,
}

/// `/mcp__server__prompt` run with required arguments missing: they are asked one by one
/// in the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptForm {
    pub server: String,
    pub prompt: PromptEntry,
    pub values: HashMap<String, String>,
    /// Index into `prompt.arguments` of the argument asked now.
    pub asking: usize,
}

impl PromptForm {
    /// What the composer's title says while the form asks.
    pub fn question(&self) -> String {
        let Some(arg) = self.prompt.arguments.get(self.asking) else {
            return String::new();
        };
        let mut text = format!(
            " /{} — {}{}",
            prompt_command(&self.server, &self.prompt.name),
            arg.name,
            if arg.required { " (required)" } else { "" }
        );
        if let Some(d) = &arg.description {
            text.push_str(&format!(": {d}"));
        }
        text.push_str(" · Enter confirms, Esc cancels ");
        for_terminal(&text)
    }

    fn next_missing(&self, from: usize) -> Option<usize> {
        (from..self.prompt.arguments.len()).find(|&i| {
            let a = &self.prompt.arguments[i];
            a.required && !self.values.contains_key(&a.name)
        })
    }
}

fn cursor_word(app: &App) -> Option<(usize, String)> {
    let ratatui_textarea::DataCursor(row, col) = app.composer.cursor();
    let line = app.composer.lines().get(row)?;
    word_at(line, col)
}

/// Recomputes the popup after the composer changed (or an answer or catalog arrived).
pub(super) fn refresh(app: &mut App, effects: &mut Vec<Effect>) {
    let query = if let Some(form) = &app.assist.form {
        form.prompt.arguments.get(form.asking).map(|arg| {
            Query::Remote(RemoteQuery {
                server: form.server.clone(),
                target: CompletionTarget::Prompt(form.prompt.name.clone()),
                argument: arg.name.clone(),
                value: app.composer_text(),
                context: form.values.clone(),
                before: String::new(),
            })
        })
    } else {
        cursor_word(app).and_then(|(start, word)| {
            if app.assist.dismissed.as_deref() == Some(word.as_str()) {
                return None;
            }
            let first_word = start == 0 && app.composer.cursor().0 == 0;
            if word.starts_with('@') {
                resource_query(&word, &app.catalogs)
            } else if first_word && word.starts_with('/') {
                prompt_query(&word, &app.catalogs)
            } else {
                None
            }
        })
    };
    let word_len = if app.assist.form.is_some() {
        app.composer_text().chars().count()
    } else {
        cursor_word(app).map_or(0, |(_, w)| w.chars().count())
    };
    let (choices, waiting) = match query {
        None => {
            app.assist.popup = None;
            return;
        }
        Some(Query::Local(choices)) => (choices, false),
        Some(Query::Remote(query)) => {
            let known = app.assist.form.is_none() || prompt_completes(app, &query.server);
            if !known {
                app.assist.popup = None;
                return;
            }
            match &app.assist.answer {
                Some((answered, values)) if *answered == query => {
                    (remote_choices(&query, values), false)
                }
                _ => {
                    if app.assist.asked.as_ref().map(|(_, q)| q) != Some(&query) {
                        app.assist.next_id += 1;
                        let id = app.assist.next_id;
                        effects.push(Effect::SendCommand(UiCommand::Complete {
                            id,
                            server: query.server.clone(),
                            target: query.target.clone(),
                            argument: query.argument.clone(),
                            value: query.value.clone(),
                            context: query.context.clone(),
                        }));
                        app.assist.asked = Some((id, query));
                    }
                    (Vec::new(), true)
                }
            }
        }
    };
    if choices.is_empty() && !waiting {
        app.assist.popup = None;
        return;
    }
    let selected = app
        .assist
        .popup
        .as_ref()
        .map_or(0, |p| p.selected.min(choices.len().saturating_sub(1)));
    app.assist.popup = Some(Popup {
        word_len,
        choices: choices.into_iter().take(MAX_CHOICES).collect(),
        selected,
        waiting,
    });
}

fn prompt_completes(app: &App, server: &str) -> bool {
    app.catalogs.get(server).is_some_and(|c| c.completions)
}

/// The agent's answer to a completion request.
pub(super) fn on_completions(
    app: &mut App,
    id: u64,
    values: Vec<String>,
    effects: &mut Vec<Effect>,
) {
    let Some((asked_id, query)) = &app.assist.asked else {
        return;
    };
    if *asked_id != id {
        return; // an answer to a word the person has typed past
    }
    let values = values.into_iter().map(|v| for_terminal(&v)).collect();
    app.assist.answer = Some((query.clone(), values));
    refresh(app, effects);
}

/// Keys the popup or the form take before the composer; None: not theirs.
pub(super) fn on_key(app: &mut App, key: KeyEvent, effects: &mut Vec<Effect>) -> Option<bool> {
    if let Some(popup) = &mut app.assist.popup
        && !popup.choices.is_empty()
    {
        let count = popup.choices.len();
        match key.code {
            KeyCode::Up => {
                popup.selected = (popup.selected + count - 1) % count;
                return Some(true);
            }
            KeyCode::Down => {
                popup.selected = (popup.selected + 1) % count;
                return Some(true);
            }
            KeyCode::Tab => {
                accept(app, effects);
                return Some(true);
            }
            KeyCode::Enter if accept_changes(app) => {
                accept(app, effects);
                return Some(true);
            }
            KeyCode::Esc if app.assist.form.is_none() => {
                app.assist.dismissed = cursor_word(app).map(|(_, w)| w);
                app.assist.popup = None;
                return Some(true);
            }
            _ => {}
        }
    }
    if app.assist.form.is_some() {
        match key.code {
            KeyCode::Enter => {
                form_enter(app, effects);
                return Some(true);
            }
            KeyCode::Esc => {
                app.assist.form = None;
                app.assist.popup = None;
                app.reset_composer();
                app.set_flash("prompt cancelled");
                return Some(true);
            }
            _ => {}
        }
    }
    None
}

/// Whether accepting the selected choice would change the word (else Enter sends).
fn accept_changes(app: &App) -> bool {
    let Some(popup) = &app.assist.popup else {
        return false;
    };
    let Some(choice) = popup.choices.get(popup.selected) else {
        return false;
    };
    let word = if app.assist.form.is_some() {
        app.composer_text()
    } else {
        cursor_word(app).map(|(_, w)| w).unwrap_or_default()
    };
    choice.insert.trim_end() != word
}

fn accept(app: &mut App, effects: &mut Vec<Effect>) {
    let Some(popup) = app.assist.popup.take() else {
        return;
    };
    let Some(choice) = popup.choices.get(popup.selected) else {
        return;
    };
    for _ in 0..popup.word_len {
        app.composer.delete_char();
    }
    app.composer.insert_str(&choice.insert);
    refresh(app, effects);
}

/// `/mcp__server__prompt …`: true when `name` is a prompt of a connected server (then it
/// was run, or its missing arguments are being asked for).
pub(super) fn run_prompt_command(
    app: &mut App,
    name: &str,
    rest: &str,
    effects: &mut Vec<Effect>,
) -> bool {
    let found = app.catalogs.iter().find_map(|(server, catalog)| {
        catalog
            .prompts
            .iter()
            .find(|p| prompt_command(server, &p.name) == name)
            .map(|p| (server.clone(), p.clone()))
    });
    let Some((server, prompt)) = found else {
        return false;
    };
    if app.agent_gone || matches!(app.turn, Turn::Running { .. }) {
        app.set_flash("a turn is running — wait for it or press Ctrl+C to cancel");
        return true;
    }
    let values = parse_arguments(&prompt, rest);
    let form = PromptForm {
        server,
        prompt,
        values,
        asking: 0,
    };
    match form.next_missing(0) {
        Some(asking) => {
            app.assist.form = Some(PromptForm { asking, ..form });
            refresh(app, effects);
        }
        None => send_prompt(app, form, effects),
    }
    true
}

/// `name=value` words for named arguments; other words fill the arguments in order, the
/// last one taking the rest of the line.
pub fn parse_arguments(prompt: &PromptEntry, rest: &str) -> HashMap<String, String> {
    let mut values = HashMap::new();
    let mut positional = Vec::new();
    for word in rest.split_whitespace() {
        match word.split_once('=') {
            Some((k, v)) if prompt.arguments.iter().any(|a| a.name == k) => {
                values.insert(k.to_string(), v.to_string());
            }
            _ => positional.push(word),
        }
    }
    let open: Vec<&str> = prompt
        .arguments
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| !values.contains_key(*n))
        .collect();
    for (i, name) in open.iter().enumerate() {
        if positional.is_empty() {
            break;
        }
        let value = if i + 1 == open.len() {
            std::mem::take(&mut positional).join(" ")
        } else {
            positional.remove(0).to_string()
        };
        values.insert(name.to_string(), value);
    }
    values
}

fn form_enter(app: &mut App, effects: &mut Vec<Effect>) {
    let Some(mut form) = app.assist.form.take() else {
        return;
    };
    let value = app.composer_text().trim().to_string();
    let Some(arg) = form.prompt.arguments.get(form.asking).cloned() else {
        return send_prompt(app, form, effects);
    };
    if value.is_empty() && arg.required {
        app.set_flash(format!("{} is required", arg.name));
        app.assist.form = Some(form);
        return;
    }
    if !value.is_empty() {
        form.values.insert(arg.name, value);
    }
    app.reset_composer();
    match form.next_missing(form.asking + 1) {
        Some(asking) => {
            form.asking = asking;
            app.assist.form = Some(form);
            refresh(app, effects);
        }
        None => send_prompt(app, form, effects),
    }
}

fn send_prompt(app: &mut App, form: PromptForm, effects: &mut Vec<Effect>) {
    app.assist.form = None;
    app.assist.popup = None;
    app.transcript.push(EntryKind::Notice(for_terminal(&format!(
        "/{}{}",
        prompt_command(&form.server, &form.prompt.name),
        {
            let mut shown: Vec<String> = form
                .prompt
                .arguments
                .iter()
                .filter_map(|a| Some(format!(" {}={}", a.name, form.values.get(&a.name)?)))
                .collect();
            shown.sort();
            shown.concat()
        }
    ))));
    app.content_changed();
    app.turn = Turn::Running {
        since: app.now,
        cancel_sent: false,
    };
    effects.push(Effect::SendCommand(UiCommand::RunPrompt {
        server: form.server,
        prompt: form.prompt.name,
        arguments: form.values,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::catalog::PromptArg;

    fn prompt() -> PromptEntry {
        PromptEntry {
            name: "review".into(),
            title: None,
            description: None,
            arguments: ["file", "focus"]
                .iter()
                .map(|n| PromptArg {
                    name: n.to_string(),
                    description: None,
                    required: true,
                })
                .collect(),
        }
    }

    #[test]
    fn arguments_by_name_or_in_order_with_the_rest_of_the_line_last() {
        let v = parse_arguments(&prompt(), "src/main.rs error handling");
        assert_eq!(v["file"], "src/main.rs");
        assert_eq!(v["focus"], "error handling");
        let v = parse_arguments(&prompt(), "focus=speed a.rs");
        assert_eq!(v["file"], "a.rs");
        assert_eq!(v["focus"], "speed");
        assert!(parse_arguments(&prompt(), "").is_empty());
    }
}
