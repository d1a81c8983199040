//! Earlier prompts in the composer (decision 0079): ↑ on the composer's first line takes
//! the previous prompt, ↓ on its last line the next one and finally what was being written;
//! Ctrl+R opens a search over them (type to filter, Ctrl+R/↑/↓ move, Enter takes the match,
//! Esc gives back what was in the composer). The prompts come from the workspace's history
//! file, read by the runtime; this part only holds them.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::draw::{above_composer, draw_lines, popup_frame, truncate};
use crate::history_file::{KEEP, MAX_PROMPT_BYTES};
use crate::sanitize::for_terminal;
use crate::theme::Theme;

/// Matches listed in the search popup.
const SHOWN: usize = 8;

#[derive(Debug, Default)]
pub struct History {
    /// Oldest first.
    prompts: Vec<String>,
    walk: Option<Walk>,
    pub search: Option<Search>,
}

/// Where ↑/↓ are in the history, and what the composer held before the first ↑.
#[derive(Debug)]
struct Walk {
    index: usize,
    draft: String,
}

/// The open Ctrl+R search.
#[derive(Debug, Default)]
pub struct Search {
    pub query: String,
    /// Index into the matches, newest first.
    pub selected: usize,
    /// The composer's text when the search opened (Esc gives it back).
    pub saved: String,
}

/// What a key did in the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchKey {
    /// The query or the selection changed (true) or nothing did (false).
    Moved(bool),
    /// Enter: this prompt goes into the composer.
    Take(String),
    /// Esc (or Enter with no match): the composer gets back what it held.
    Restore(String),
}

impl History {
    pub fn new(prompts: Vec<String>) -> Self {
        History {
            prompts,
            ..History::default()
        }
    }

    /// A prompt was sent: it becomes the newest (unless it repeats the newest, or is too
    /// long to keep). True when it should be written to the file.
    pub fn record(&mut self, prompt: &str) -> bool {
        self.walk = None;
        if prompt.len() > MAX_PROMPT_BYTES || self.prompts.last().is_some_and(|last| last == prompt)
        {
            return false;
        }
        self.prompts.push(prompt.to_string());
        if self.prompts.len() > KEEP {
            self.prompts.remove(0);
        }
        true
    }

    /// ↑: the prompt before the one shown (the newest on the first ↑, remembering
    /// `current`). None when there is nothing older.
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let walk = self.walk.get_or_insert_with(|| Walk {
            index: self.prompts.len(),
            draft: current.to_string(),
        });
        if walk.index == 0 {
            return None;
        }
        walk.index -= 1;
        self.prompts.get(walk.index).map(String::as_str)
    }

    /// ↓ while walking: the next newer prompt, and past the newest what was being written
    /// (the walk then ends). None when not walking.
    pub fn newer(&mut self) -> Option<String> {
        let walk = self.walk.as_mut()?;
        walk.index += 1;
        if let Some(prompt) = self.prompts.get(walk.index) {
            return Some(prompt.clone());
        }
        self.walk.take().map(|w| w.draft)
    }

    pub fn is_walking(&self) -> bool {
        self.walk.is_some()
    }

    /// `text` is the prompt the walk shows, unedited.
    pub fn shows(&self, text: &str) -> bool {
        self.walk
            .as_ref()
            .and_then(|w| self.prompts.get(w.index))
            .is_some_and(|p| p == text)
    }

    /// The walk is over (the person wrote over what it showed).
    pub fn stop_walk(&mut self) {
        self.walk = None;
    }

    /// Opens the search, keeping what the composer holds.
    pub fn open_search(&mut self, composer_text: String) {
        self.walk = None;
        self.search = Some(Search {
            saved: composer_text,
            ..Search::default()
        });
    }

    /// Prompts containing the query (any case), newest first, each once.
    pub fn matches(&self, query: &str) -> Vec<&str> {
        let query = query.to_lowercase();
        let mut seen = std::collections::HashSet::new();
        self.prompts
            .iter()
            .rev()
            .filter(|p| p.to_lowercase().contains(&query))
            .filter(|p| seen.insert(p.as_str()))
            .map(String::as_str)
            .collect()
    }

    /// A key while the search is open.
    pub fn on_search_key(&mut self, key: KeyEvent) -> SearchKey {
        let Some(search) = self.search.as_mut() else {
            return SearchKey::Moved(false);
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let count = {
            let query = search.query.clone();
            self.matches(&query).len()
        };
        let Some(search) = self.search.as_mut() else {
            return SearchKey::Moved(false);
        };
        match key.code {
            KeyCode::Esc => SearchKey::Restore(self.close()),
            KeyCode::Char('c') if ctrl => SearchKey::Restore(self.close()),
            KeyCode::Enter => {
                let query = search.query.clone();
                let selected = search.selected;
                let taken = self.matches(&query).get(selected).map(|p| p.to_string());
                let saved = self.close();
                match taken {
                    Some(prompt) => SearchKey::Take(prompt),
                    None => SearchKey::Restore(saved),
                }
            }
            KeyCode::Char('r') | KeyCode::Up if ctrl || key.code == KeyCode::Up => {
                let before = search.selected;
                search.selected = (search.selected + 1).min(count.saturating_sub(1));
                SearchKey::Moved(search.selected != before)
            }
            KeyCode::Down => {
                let before = search.selected;
                search.selected = search.selected.saturating_sub(1);
                SearchKey::Moved(search.selected != before)
            }
            KeyCode::Backspace => {
                let changed = search.query.pop().is_some();
                search.selected = 0;
                SearchKey::Moved(changed)
            }
            KeyCode::Char(c) if !ctrl && !key.modifiers.contains(KeyModifiers::ALT) => {
                search.query.push(c);
                search.selected = 0;
                SearchKey::Moved(true)
            }
            _ => SearchKey::Moved(false),
        }
    }

    /// Closes the search: what the composer held when it opened.
    fn close(&mut self) -> String {
        self.search.take().map(|s| s.saved).unwrap_or_default()
    }
}

/// The search popup, just above the composer: the query, then the matches, newest first.
pub struct SearchPopup<'a> {
    pub history: &'a History,
    pub search: &'a Search,
    pub theme: &'a Theme,
}

impl SearchPopup<'_> {
    /// Just above the composer, as tall as the matches shown.
    pub fn area(&self, composer: Rect, screen: Rect) -> Rect {
        let shown = self.history.matches(&self.search.query).len().min(SHOWN);
        above_composer(composer, screen, shown.max(1) as u16 + 3, composer.width)
    }
}

impl Widget for SearchPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height < 3 {
            return;
        }
        let t = self.theme;
        let inner = popup_frame(
            area,
            buf,
            t,
            " history · ↑↓ Ctrl+R move · Enter take · Esc back ",
        );
        let width = inner.width as usize;
        let matches = self.history.matches(&self.search.query);
        let mut lines = vec![Line::from(vec![
            Span::styled("search: ", t.dim()),
            Span::styled(for_terminal(&self.search.query), t.bold()),
            Span::styled("▏", t.accent()),
        ])];
        if matches.is_empty() {
            lines.push(Line::from(Span::styled(
                "no earlier prompt matches",
                t.dim(),
            )));
        }
        // Keep the selection in view when it is past the first rows.
        let first = self.search.selected.saturating_sub(SHOWN - 1);
        for (i, prompt) in matches.iter().enumerate().skip(first).take(SHOWN) {
            let text = for_terminal(prompt);
            let mut shown = text.lines().next().unwrap_or_default().to_string();
            if text.lines().nth(1).is_some() {
                shown.push_str(" …");
            }
            let style = if i == self.search.selected {
                t.selected()
            } else {
                t.plain()
            };
            lines.push(Line::from(Span::styled(truncate(&shown, width), style)));
        }
        draw_lines(&lines, inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn up_and_down_walk_back_to_the_draft() {
        let mut history = History::new(vec!["one".into(), "two".into()]);
        assert_eq!(history.older("draft"), Some("two"));
        assert_eq!(history.older("two"), Some("one"));
        assert_eq!(history.older("one"), None);
        assert_eq!(history.newer().as_deref(), Some("two"));
        assert_eq!(history.newer().as_deref(), Some("draft"));
        assert!(!history.is_walking());
        assert_eq!(history.newer(), None);
    }

    #[test]
    fn search_filters_moves_takes_and_restores() {
        let mut history = History::new(vec![
            "deploy web".into(),
            "run tests".into(),
            "deploy api".into(),
        ]);
        assert!(!history.record("deploy api"), "a repeat is not kept twice");
        history.open_search("half written".into());
        for c in "DEPLOY".chars() {
            history.on_search_key(key(KeyCode::Char(c)));
        }
        assert_eq!(history.matches("deploy"), ["deploy api", "deploy web"]);
        let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        assert_eq!(history.on_search_key(ctrl_r), SearchKey::Moved(true));
        assert_eq!(history.on_search_key(ctrl_r), SearchKey::Moved(false));
        assert_eq!(
            history.on_search_key(key(KeyCode::Enter)),
            SearchKey::Take("deploy web".into())
        );
        history.open_search("half written".into());
        assert_eq!(
            history.on_search_key(key(KeyCode::Esc)),
            SearchKey::Restore("half written".into())
        );
        assert!(history.search.is_none());
    }
}
