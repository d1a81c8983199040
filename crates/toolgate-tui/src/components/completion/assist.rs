//! The composer's help with MCP resources and prompts, on `update`'s side: the completion
//! popup (`@server:uri`, template variables and prompt arguments completed by the server,
//! `/mcp__server__prompt`), and the questions for a prompt's missing arguments.
//!
//! It works on its own state and the composer's text; what it means for the rest of the
//! console (a short message, a prompt sent) it returns as an [`Outcome`].

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent};

use super::query::{
    Catalogs, Choice, MAX_CHOICES, Query, RemoteQuery, prompt_command, prompt_query,
    remote_choices, resource_query,
};
use crate::components::composer::ComposerState;
use crate::effect::Effect;
use crate::protocol::UiCommand;
use crate::protocol::catalog::PromptEntry;
use crate::protocol::{Catalog, CompletionTarget};
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
    /// Resources, templates and prompts of the connected servers (for `@` and `/`).
    pub catalogs: Catalogs,
    /// The command files (for `/`).
    pub commands: Vec<crate::protocol::FileCommand>,
    /// The workspace's files (for `@`).
    pub files: Vec<String>,
    /// The provider's own list of models (for `/model`): asked for the first time `/model`
    /// is completed.
    pub models: ModelList,
}

/// The provider's list of models, as far as the console knows it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum ModelList {
    #[default]
    NotAsked,
    Asked,
    Known(Vec<String>),
}

/// What the completion did that the rest of the console shows.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Only the popup, the form or the composer changed.
    Shown,
    /// A short message for the status line.
    Flash(String),
    /// A prompt was sent (the effect is queued): the line the transcript notes; the turn
    /// runs from now.
    PromptSent(String),
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

impl Assist {
    /// A server's catalog arrived (or changed); one that offers nothing is dropped.
    pub fn on_catalog(
        &mut self,
        server: String,
        catalog: std::sync::Arc<Catalog>,
        composer: &ComposerState,
        effects: &mut Vec<Effect>,
    ) {
        if catalog.has_resources || catalog.has_prompts {
            self.catalogs.insert(server, catalog);
        } else {
            self.catalogs.remove(&server);
        }
        self.refresh(composer, effects);
    }

    /// A server is no longer ready: what it offered goes.
    pub fn forget_server(&mut self, server: &str) {
        self.catalogs.remove(server);
    }

    /// Recomputes the popup after the composer changed (or an answer or catalog arrived).
    pub fn refresh(&mut self, composer: &ComposerState, effects: &mut Vec<Effect>) {
        let query = if let Some(form) = &self.form {
            form.prompt.arguments.get(form.asking).map(|arg| {
                Query::Remote(RemoteQuery {
                    server: form.server.clone(),
                    target: CompletionTarget::Prompt(form.prompt.name.clone()),
                    argument: arg.name.clone(),
                    value: composer.text(),
                    context: form.values.clone(),
                    before: String::new(),
                })
            })
        } else {
            composer.cursor_word().and_then(|(start, word)| {
                if self.dismissed.as_deref() == Some(word.as_str()) {
                    return None;
                }
                let first_word = start == 0 && composer.on_first_line();
                if word.starts_with('@') {
                    let files = super::project::file_choices(&word, &self.files);
                    super::project::with(resource_query(&word, &self.catalogs), files)
                } else if let Some(models) = super::project::model_choices(
                    &composer.text(),
                    start,
                    &word,
                    match &self.models {
                        ModelList::Known(names) => names,
                        _ => &[],
                    },
                ) {
                    if self.models == ModelList::NotAsked {
                        self.models = ModelList::Asked;
                        effects.push(Effect::SendCommand(UiCommand::ListModels));
                    }
                    Some(Query::Local(models))
                } else if first_word && word.starts_with('/') {
                    let commands = super::project::command_choices(&word, &self.commands);
                    super::project::with(prompt_query(&word, &self.catalogs), commands)
                } else {
                    None
                }
            })
        };
        let word_len = if self.form.is_some() {
            composer.text().chars().count()
        } else {
            composer.cursor_word().map_or(0, |(_, w)| w.chars().count())
        };
        let (choices, waiting) = match query {
            None => {
                self.popup = None;
                return;
            }
            Some(Query::Local(choices)) => (choices, false),
            Some(Query::Remote(query)) => {
                let known = self.form.is_none() || self.prompt_completes(&query.server);
                if !known {
                    self.popup = None;
                    return;
                }
                match &self.answer {
                    Some((answered, values)) if *answered == query => {
                        (remote_choices(&query, values), false)
                    }
                    _ => {
                        if self.asked.as_ref().map(|(_, q)| q) != Some(&query) {
                            self.next_id += 1;
                            let id = self.next_id;
                            effects.push(Effect::SendCommand(UiCommand::Complete {
                                id,
                                server: query.server.clone().into(),
                                target: query.target.clone(),
                                argument: query.argument.clone(),
                                value: query.value.clone(),
                                context: query.context.clone(),
                            }));
                            self.asked = Some((id, query));
                        }
                        (Vec::new(), true)
                    }
                }
            }
        };
        if choices.is_empty() && !waiting {
            self.popup = None;
            return;
        }
        let selected = self
            .popup
            .as_ref()
            .map_or(0, |p| p.selected.min(choices.len().saturating_sub(1)));
        self.popup = Some(Popup {
            word_len,
            choices: choices.into_iter().take(MAX_CHOICES).collect(),
            selected,
            waiting,
        });
    }

    fn prompt_completes(&self, server: &str) -> bool {
        self.catalogs.get(server).is_some_and(|c| c.completions)
    }

    /// The agent's answer to a completion request.
    pub fn on_completions(
        &mut self,
        id: u64,
        values: Vec<String>,
        composer: &ComposerState,
        effects: &mut Vec<Effect>,
    ) {
        let Some((asked_id, query)) = &self.asked else {
            return;
        };
        if *asked_id != id {
            return; // an answer to a word the person has typed past
        }
        let values = values.into_iter().map(|v| for_terminal(&v)).collect();
        self.answer = Some((query.clone(), values));
        self.refresh(composer, effects);
    }

    /// Keys the popup or the form take before the composer; None: not theirs.
    pub fn on_key(
        &mut self,
        key: KeyEvent,
        composer: &mut ComposerState,
        effects: &mut Vec<Effect>,
    ) -> Option<Outcome> {
        // Esc closes the popup also while it waits for the server (its title says so):
        // an Esc here is never the turn's interrupt.
        if self.popup.is_some() && self.form.is_none() && key.code == KeyCode::Esc {
            self.dismissed = composer.cursor_word().map(|(_, w)| w);
            self.popup = None;
            return Some(Outcome::Shown);
        }
        if let Some(popup) = &mut self.popup
            && !popup.choices.is_empty()
        {
            let count = popup.choices.len();
            match key.code {
                KeyCode::Up => {
                    popup.selected = (popup.selected + count - 1) % count;
                    return Some(Outcome::Shown);
                }
                KeyCode::Down => {
                    popup.selected = (popup.selected + 1) % count;
                    return Some(Outcome::Shown);
                }
                KeyCode::Tab => {
                    self.accept(composer, effects);
                    return Some(Outcome::Shown);
                }
                KeyCode::Enter if self.accept_changes(composer) => {
                    self.accept(composer, effects);
                    return Some(Outcome::Shown);
                }
                _ => {}
            }
        }
        if self.form.is_some() {
            match key.code {
                KeyCode::Enter => return Some(self.form_enter(composer, effects)),
                KeyCode::Esc => {
                    self.form = None;
                    self.popup = None;
                    composer.reset();
                    return Some(Outcome::Flash("prompt cancelled".into()));
                }
                _ => {}
            }
        }
        None
    }

    /// Whether accepting the selected choice would change the word (else Enter sends).
    fn accept_changes(&self, composer: &ComposerState) -> bool {
        let Some(popup) = &self.popup else {
            return false;
        };
        let Some(choice) = popup.choices.get(popup.selected) else {
            return false;
        };
        let word = if self.form.is_some() {
            composer.text()
        } else {
            composer.cursor_word().map(|(_, w)| w).unwrap_or_default()
        };
        choice.insert.trim_end() != word
    }

    fn accept(&mut self, composer: &mut ComposerState, effects: &mut Vec<Effect>) {
        let Some(popup) = self.popup.take() else {
            return;
        };
        let Some(choice) = popup.choices.get(popup.selected) else {
            return;
        };
        composer.replace_before_cursor(popup.word_len, &choice.insert);
        self.refresh(composer, effects);
    }

    /// `/mcp__server__prompt …`: None when `name` is no prompt of a connected server;
    /// else it was run, or its missing arguments are being asked for, or (`busy`: a turn
    /// runs or the agent is gone) it was refused.
    pub fn run_prompt_command(
        &mut self,
        name: &str,
        rest: &str,
        busy: bool,
        composer: &ComposerState,
        effects: &mut Vec<Effect>,
    ) -> Option<Outcome> {
        let (server, prompt) = self.catalogs.iter().find_map(|(server, catalog)| {
            catalog
                .prompts
                .iter()
                .find(|p| prompt_command(server, &p.name) == name)
                .map(|p| (server.clone(), p.clone()))
        })?;
        if busy {
            return Some(Outcome::Flash(
                "a turn is running — run the prompt once it ends (Esc interrupts)".into(),
            ));
        }
        let values = parse_arguments(&prompt, rest);
        let form = PromptForm {
            server,
            prompt,
            values,
            asking: 0,
        };
        Some(match form.next_missing(0) {
            Some(asking) => {
                self.form = Some(PromptForm { asking, ..form });
                self.refresh(composer, effects);
                Outcome::Shown
            }
            None => self.send_prompt(form, effects),
        })
    }

    fn form_enter(&mut self, composer: &mut ComposerState, effects: &mut Vec<Effect>) -> Outcome {
        let Some(mut form) = self.form.take() else {
            return Outcome::Shown;
        };
        let value = composer.text().trim().to_string();
        let Some(arg) = form.prompt.arguments.get(form.asking).cloned() else {
            return self.send_prompt(form, effects);
        };
        if value.is_empty() && arg.required {
            self.form = Some(form);
            return Outcome::Flash(format!("{} is required", arg.name));
        }
        if !value.is_empty() {
            form.values.insert(arg.name, value);
        }
        composer.reset();
        match form.next_missing(form.asking + 1) {
            Some(asking) => {
                form.asking = asking;
                self.form = Some(form);
                self.refresh(composer, effects);
                Outcome::Shown
            }
            None => self.send_prompt(form, effects),
        }
    }

    fn send_prompt(&mut self, form: PromptForm, effects: &mut Vec<Effect>) -> Outcome {
        self.form = None;
        self.popup = None;
        let mut shown: Vec<String> = form
            .prompt
            .arguments
            .iter()
            .filter_map(|a| Some(format!(" {}={}", a.name, form.values.get(&a.name)?)))
            .collect();
        shown.sort();
        let line = for_terminal(&format!(
            "/{}{}",
            prompt_command(&form.server, &form.prompt.name),
            shown.concat()
        ));
        effects.push(Effect::SendCommand(UiCommand::RunPrompt {
            server: form.server.into(),
            prompt: form.prompt.name,
            arguments: form.values,
        }));
        Outcome::PromptSent(line)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::catalog::PromptArg;

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
