//! The console's inbox: the queue of host requests waiting for the person, which one the
//! modal shows, the highlighted choice, a note being typed, the list view, deadlines, and
//! the guard window that swallows keys typed before the person could have read a request.
//!
//! Answering sends on the request's own oneshot (a non-blocking hand-over, no I/O), so the
//! asker resumes on its own task; `update` only learns how the request ended.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::form::{Field, FieldKind, Form, Item};
use crate::protocol::questions::{
    Card, ChoiceView, Closed, DiffLine, Fact, FileDiff, HostRequest, Open, Origin, Preview,
    short_duration,
};
use crate::sanitize::for_terminal;

/// Keys arriving this soon after a request is shown are ignored.
pub const GUARD_WINDOW: Duration = Duration::from_millis(250);
/// The key that opens the list of every waiting request.
pub const LIST_KEY: char = 'l';
/// The key that switches between a preview (diff, command) and the raw arguments.
pub const RAW_KEY: char = 'v';

/// One waiting request with what the modal needs to show it, cleaned for the terminal.
#[derive(Debug)]
pub struct Entry {
    request: Box<dyn Open>,
    pub card: Card,
    /// The details are markdown (a plan), rendered as such.
    pub markdown: bool,
    pub choices: Vec<ChoiceView>,
    pub kind: &'static str,
    /// Who asked, cleaned.
    pub origin: String,
    pub created: Instant,
    pub deadline: Option<Instant>,
    /// Index into `choices`.
    pub highlight: usize,
    /// Some while the person types the note a choice asks for.
    pub note: Option<String>,
    pub scroll: u16,
    /// The form being filled in (kinds with one), its texts cleaned.
    pub form: Option<Form>,
    /// The field that takes the keys.
    pub field: usize,
    /// Set by a submit that found problems: from then on every problem is shown.
    pub tried: bool,
    /// The kind's preview of the details (a diff, a command), cleaned.
    pub preview: Option<Preview>,
    /// The raw details are shown instead of the preview.
    pub raw: bool,
}

impl Entry {
    fn new(request: Box<dyn Open>) -> Entry {
        let mut card = request.card();
        clean_card(&mut card);
        let choices: Vec<ChoiceView> = request
            .choices()
            .into_iter()
            .map(|mut c| {
                c.label = for_terminal(&c.label);
                c
            })
            .collect();
        let highlight = choices.iter().position(|c| c.safe).unwrap_or(0);
        let mut form = request.form();
        if let Some(form) = &mut form {
            clean_form(form);
        }
        let meta = request.meta();
        let preview = request.preview().map(cleaned);
        Entry {
            preview,
            raw: false,
            kind: request.kind_name(),
            origin: for_terminal(&meta.origin.to_string()),
            created: meta.created,
            deadline: meta.deadline,
            card,
            markdown: request.markdown_details(),
            choices,
            highlight,
            note: None,
            scroll: 0,
            form,
            field: 0,
            tried: false,
            request,
        }
    }

    /// The focused field of the form, if there is a form.
    pub fn focused(&self) -> Option<&Field> {
        self.form.as_ref().and_then(|f| f.fields.get(self.field))
    }

    /// The problem to show under a field: once it holds input, or after a submit.
    pub fn shown_problem(&self, index: usize) -> Option<String> {
        let field = self.form.as_ref()?.fields.get(index)?;
        let touched = !field.shown().is_empty();
        (self.tried || touched).then(|| field.problem()).flatten()
    }

    pub fn age(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.created)
    }

    pub fn remaining(&self, now: Instant) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(now))
    }

    pub fn safe_choice(&self) -> Option<&ChoiceView> {
        self.choices.iter().find(|c| c.safe)
    }

    pub fn origin_of(&self) -> &Origin {
        &self.request.meta().origin
    }
}

fn clean_form(form: &mut Form) {
    for field in &mut form.fields {
        field.name = for_terminal(&field.name);
        field.title = field.title.as_deref().map(for_terminal);
        field.description = field.description.as_deref().map(for_terminal);
        if let FieldKind::OneOf { items } | FieldKind::ManyOf { items, .. } = &mut field.kind {
            for Item { label, .. } in items {
                *label = for_terminal(label);
            }
        }
    }
}

fn clean_card(card: &mut Card) {
    card.title = for_terminal(&card.title);
    card.asker = for_terminal(&card.asker);
    card.effect = for_terminal(&card.effect);
    card.details_title = for_terminal(&card.details_title);
    card.details = for_terminal(&card.details);
    for Fact { value, .. } in &mut card.facts {
        *value = for_terminal(value);
    }
}

/// What a key did in the inbox.
#[derive(Debug)]
pub enum KeyResult {
    /// Swallowed (guard window, scrolling, typing, moving the highlight, the list).
    Consumed,
    /// The shown request was answered and left the queue.
    Answered(Closed),
    /// Not for the inbox (Ctrl+C goes through to cancel the turn).
    NotHandled,
}

/// A request that left the queue by itself.
#[derive(Debug)]
pub struct Expired {
    pub closed: Closed,
    pub kind: &'static str,
    pub origin: String,
    pub waited: Duration,
}

impl Expired {
    /// The transcript line that says what happened.
    pub fn message(&self) -> String {
        format!(
            "{} from {} expired after {} unanswered; its safe default applied: {}",
            self.kind,
            self.origin,
            short_duration(self.waited),
            self.closed.outcome
        )
    }
}

#[derive(Debug, Default)]
pub struct Inbox {
    /// In order of arrival.
    entries: Vec<Entry>,
    /// The entry the modal shows.
    current: usize,
    /// When the shown entry was put on screen (the guard window counts from here).
    shown_at: Option<Instant>,
    /// Some(selected row) while the list of all requests is open.
    list: Option<usize>,
}

impl Inbox {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// In order of arrival.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry the modal shows, with its position in the queue.
    pub fn current(&self) -> Option<(usize, &Entry)> {
        self.entries.get(self.current).map(|e| (self.current, e))
    }

    /// The selected row while the list is open.
    pub fn list_selection(&self) -> Option<usize> {
        self.list
    }

    pub fn push(&mut self, request: HostRequest, now: Instant) {
        self.entries.push(Entry::new(request.into_open()));
        if self.entries.len() == 1 {
            self.show(0, now);
        }
    }

    fn show(&mut self, index: usize, now: Instant) {
        self.current = index.min(self.entries.len().saturating_sub(1));
        self.shown_at = (!self.entries.is_empty()).then_some(now);
    }

    /// Removes an entry; the modal goes back to the head of the queue.
    fn remove(&mut self, index: usize, now: Instant) -> Entry {
        let entry = self.entries.remove(index);
        let shown_changed = index == self.current || self.current >= self.entries.len();
        if index < self.current {
            self.current -= 1;
        }
        if shown_changed {
            self.show(0, now);
        }
        if let Some(row) = &mut self.list {
            *row = (*row).min(self.entries.len().saturating_sub(1));
            if self.entries.len() < 2 {
                self.list = None;
            }
        }
        entry
    }

    /// Drops requests the asker stopped waiting for (turn cancelled). True if any went.
    pub fn prune(&mut self, now: Instant) -> bool {
        let mut removed = false;
        let mut i = 0;
        while i < self.entries.len() {
            if self.entries[i].request.is_withdrawn() {
                self.remove(i, now);
                removed = true;
            } else {
                i += 1;
            }
        }
        removed
    }

    /// Answers every request whose deadline passed with its safe default.
    pub fn expire_due(&mut self, now: Instant) -> Vec<Expired> {
        let mut expired = Vec::new();
        let mut i = 0;
        while i < self.entries.len() {
            if self.entries[i].deadline.is_some_and(|d| d <= now) {
                let entry = self.remove(i, now);
                let waited = entry.age(now);
                let (kind, origin) = (entry.kind, entry.origin.clone());
                expired.push(Expired {
                    closed: entry.request.expire(),
                    kind,
                    origin,
                    waited,
                });
            } else {
                i += 1;
            }
        }
        expired
    }

    /// When the shown request starts accepting keys, if that is still ahead.
    pub fn guard_ends(&self, now: Instant) -> Option<Instant> {
        let end = self.shown_at? + GUARD_WINDOW;
        (end > now).then_some(end)
    }

    pub fn in_guard(&self, now: Instant) -> bool {
        self.guard_ends(now).is_some()
    }

    /// The next moment the inbox changes by itself: the guard ending, a deadline, or the
    /// next second of a countdown on screen.
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let countdown = self.current().and_then(|(_, e)| {
            let remaining = e.remaining(now)?;
            let fraction = remaining.subsec_nanos();
            let step = if fraction == 0 {
                Duration::from_secs(1)
            } else {
                Duration::from_nanos(u64::from(fraction))
            };
            Some(now + step.min(remaining))
        });
        let deadlines = self.entries.iter().filter_map(|e| e.deadline);
        [self.guard_ends(now), countdown]
            .into_iter()
            .flatten()
            .chain(deadlines)
            .filter(|t| *t > now)
            .min()
    }

    fn answer_current(&mut self, choice: usize, note: Option<String>, now: Instant) -> KeyResult {
        if self.current >= self.entries.len() {
            return KeyResult::NotHandled;
        }
        let entry = self.remove(self.current, now);
        KeyResult::Answered(entry.request.choose(choice, note))
    }

    fn pick(&mut self, choice: usize, now: Instant) -> KeyResult {
        let Some(entry) = self.entries.get_mut(self.current) else {
            return KeyResult::NotHandled;
        };
        if entry.choices.get(choice).is_some_and(|c| c.asks_note) {
            entry.highlight = choice;
            entry.note = Some(String::new());
            return KeyResult::Consumed;
        }
        self.answer_current(choice, None, now)
    }

    pub fn paste(&mut self, text: &str) {
        let Some(entry) = self.entries.get_mut(self.current) else {
            return;
        };
        if let Some(note) = &mut entry.note {
            note.push_str(&for_terminal(text).replace('\n', " "));
        } else if let Some(form) = &mut entry.form
            && let Some(field) = form.fields.get_mut(entry.field)
        {
            field.paste(&for_terminal(text));
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> KeyResult {
        let in_form = self.list.is_none()
            && self
                .entries
                .get(self.current)
                .is_some_and(|e| e.form.is_some() && e.note.is_none());
        let form_control = |c: char| {
            c == LIST_KEY
                || self.entries.get(self.current).is_some_and(|e| {
                    e.choices
                        .iter()
                        .any(|ch| ch.key == c && !ch.submits_form && !ch.safe)
                })
        };
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && !(in_form && matches!(key.code, KeyCode::Char(c) if form_control(c)))
        {
            // Ctrl+C and the like go on to the console (cancel the turn, quit).
            return KeyResult::NotHandled;
        }
        if self.entries.is_empty() {
            return KeyResult::NotHandled;
        }
        if self.in_guard(now) {
            return KeyResult::Consumed;
        }
        if let Some(row) = self.list {
            return self.list_key(key, row, now);
        }
        if in_form {
            return self.form_key(key, now);
        }
        let current = self.current;
        let Some(entry) = self.entries.get_mut(current) else {
            return KeyResult::NotHandled;
        };
        if let Some(note) = &mut entry.note {
            match key.code {
                KeyCode::Enter => {
                    let note = std::mem::take(note);
                    let choice = entry.highlight;
                    return self.answer_current(choice, Some(note), now);
                }
                KeyCode::Esc => entry.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                _ => {}
            }
            return KeyResult::Consumed;
        }
        let last = entry.choices.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc => {
                let safe = entry.choices.iter().position(|c| c.safe).unwrap_or(last);
                return self.answer_current(safe, None, now);
            }
            KeyCode::Char(LIST_KEY) => self.list = Some(current),
            KeyCode::Char(RAW_KEY) if entry.preview.is_some() => {
                entry.raw = !entry.raw;
                entry.scroll = 0;
            }
            KeyCode::Home => entry.scroll = 0,
            KeyCode::Char(c) => {
                if let Some(choice) = entry.choices.iter().position(|ch| ch.key == c) {
                    return self.pick(choice, now);
                }
            }
            KeyCode::Enter => {
                let choice = entry.highlight;
                return self.pick(choice, now);
            }
            KeyCode::Left | KeyCode::BackTab => entry.highlight = entry.highlight.saturating_sub(1),
            KeyCode::Right | KeyCode::Tab => entry.highlight = (entry.highlight + 1).min(last),
            KeyCode::Up => entry.scroll = entry.scroll.saturating_sub(1),
            KeyCode::Down => entry.scroll = entry.scroll.saturating_add(1),
            KeyCode::PageUp => entry.scroll = entry.scroll.saturating_sub(10),
            KeyCode::PageDown => entry.scroll = entry.scroll.saturating_add(10),
            _ => {}
        }
        KeyResult::Consumed
    }

    /// Keys while a form is shown: letters type into the focused field, so the choices
    /// move to Enter (the form's own choice), Esc (the safe one) and Ctrl+key (the others);
    /// Ctrl+L lists the waiting requests.
    fn form_key(&mut self, key: KeyEvent, now: Instant) -> KeyResult {
        let current = self.current;
        let Some(entry) = self.entries.get_mut(current) else {
            return KeyResult::NotHandled;
        };
        let count = entry.form.as_ref().map_or(0, |f| f.fields.len());
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return match key.code {
                KeyCode::Char(LIST_KEY) => {
                    self.list = Some(current);
                    KeyResult::Consumed
                }
                KeyCode::Char(c) => {
                    match entry
                        .choices
                        .iter()
                        .position(|ch| ch.key == c && !ch.submits_form && !ch.safe)
                    {
                        Some(choice) => self.answer_current(choice, None, now),
                        // Ctrl+C and the rest go on to the console.
                        None => KeyResult::NotHandled,
                    }
                }
                _ => KeyResult::NotHandled,
            };
        }
        match key.code {
            KeyCode::Esc => {
                let last = entry.choices.len().saturating_sub(1);
                let safe = entry.choices.iter().position(|c| c.safe).unwrap_or(last);
                return self.answer_current(safe, None, now);
            }
            KeyCode::Enter => return self.submit_form(now),
            KeyCode::Tab | KeyCode::Down => {
                entry.field = (entry.field + 1).min(count.saturating_sub(1))
            }
            KeyCode::BackTab | KeyCode::Up => entry.field = entry.field.saturating_sub(1),
            KeyCode::PageUp => entry.scroll = entry.scroll.saturating_sub(10),
            KeyCode::PageDown => entry.scroll = entry.scroll.saturating_add(10),
            code => {
                let Some(field) = entry
                    .form
                    .as_mut()
                    .and_then(|f| f.fields.get_mut(entry.field))
                else {
                    return KeyResult::Consumed;
                };
                let typing = matches!(
                    field.kind,
                    FieldKind::Text { .. } | FieldKind::Number { .. }
                );
                match code {
                    KeyCode::Left => field.step(false),
                    KeyCode::Right => field.step(true),
                    KeyCode::Home if typing => field.cursor = 0,
                    KeyCode::End if typing => field.caret_to_end(),
                    KeyCode::Char(' ') if !typing => field.toggle(),
                    KeyCode::Char(c) => field.type_char(c),
                    KeyCode::Backspace => field.backspace(),
                    _ => {}
                }
            }
        }
        KeyResult::Consumed
    }

    /// Enter in a form: sends it when nothing is wrong, else shows every problem and
    /// moves to the first field that has one.
    fn submit_form(&mut self, now: Instant) -> KeyResult {
        let current = self.current;
        let Some(entry) = self.entries.get_mut(current) else {
            return KeyResult::NotHandled;
        };
        let Some(form) = &entry.form else {
            return KeyResult::NotHandled;
        };
        let Some(choice) = entry.choices.iter().position(|c| c.submits_form) else {
            return KeyResult::Consumed;
        };
        match form.content() {
            Ok(content) => {
                let entry = self.remove(current, now);
                KeyResult::Answered(entry.request.submit(choice, content))
            }
            Err(problems) => {
                entry.tried = true;
                if let Some(first) = problems.first() {
                    entry.field = first.field;
                }
                KeyResult::Consumed
            }
        }
    }

    fn list_key(&mut self, key: KeyEvent, row: usize, now: Instant) -> KeyResult {
        let last = self.entries.len().saturating_sub(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.list = Some(row.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.list = Some((row + 1).min(last)),
            KeyCode::Enter => {
                self.list = None;
                if row != self.current {
                    // A different request on screen: the guard window starts again.
                    self.show(row, now);
                }
            }
            KeyCode::Esc | KeyCode::Char(LIST_KEY) => self.list = None,
            _ => {}
        }
        KeyResult::Consumed
    }
}

/// The preview with every text from the call cleaned for the terminal.
fn cleaned(preview: Preview) -> Preview {
    match preview {
        Preview::Diff(diff) => Preview::Diff(FileDiff {
            path: for_terminal(&diff.path),
            lines: diff
                .lines
                .into_iter()
                .map(|l| DiffLine {
                    kind: l.kind,
                    text: for_terminal(&l.text),
                })
                .collect(),
            ..diff
        }),
        Preview::NoDiff { path, reason } => Preview::NoDiff {
            path: path.as_deref().map(for_terminal),
            reason: for_terminal(&reason),
        },
        Preview::Shell { command } => Preview::Shell {
            command: for_terminal(&command),
        },
    }
}
