//! The console's inbox: the queue of host requests waiting for the person, which one the
//! modal shows, the highlighted choice, a note being typed, the list view, deadlines, and
//! the guard window that swallows keys typed before the person could have read a request.
//!
//! Answering sends on the request's own oneshot (a non-blocking hand-over, no I/O), so the
//! asker resumes on its own task; `update` only learns how the request ended.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::inbox::{Card, ChoiceView, Closed, Fact, HostRequest, Open, Origin, short_duration};
use crate::sanitize::for_terminal;

/// Keys arriving this soon after a request is shown are ignored.
pub const GUARD_WINDOW: Duration = Duration::from_millis(250);
/// The key that opens the list of every waiting request.
pub const LIST_KEY: char = 'l';

/// One waiting request with what the modal needs to show it, cleaned for the terminal.
#[derive(Debug)]
pub struct Entry {
    request: Box<dyn Open>,
    pub card: Card,
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
        let meta = request.meta();
        Entry {
            kind: request.kind_name(),
            origin: for_terminal(&meta.origin.to_string()),
            created: meta.created,
            deadline: meta.deadline,
            card,
            choices,
            highlight,
            note: None,
            scroll: 0,
            request,
        }
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
        if let Some(entry) = self.entries.get_mut(self.current)
            && let Some(note) = &mut entry.note
        {
            note.push_str(&for_terminal(text).replace('\n', " "));
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> KeyResult {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
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
