//! What the person sent while a turn runs: queued in the console, in order, shown dimmed
//! above the composer, editable (↑ on an empty composer takes the last one back) and
//! removable (Delete on an empty composer) until it is sent, when the turn ends. The text
//! stays the person's until then: the agent sees nothing of it (decision 0076).

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::draw::{draw_lines, truncate};
use crate::sanitize::for_terminal;
use crate::theme::Theme;

/// Queued items drawn above the composer; an older rest is counted on a line of its own.
const MAX_SHOWN: usize = 3;

/// One queued item, as the person typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queued {
    /// A message for the model (trimmed).
    Message(String),
    /// A slash command that waits for the turn (the text after the slash).
    Command(String),
}

impl Queued {
    /// The text as it was typed, to edit it again.
    pub fn typed(&self) -> String {
        match self {
            Queued::Message(text) => text.clone(),
            Queued::Command(command) => format!("/{command}"),
        }
    }
}

/// The queue and whether an interrupt holds it.
#[derive(Debug, Default)]
pub struct Queue {
    items: VecDeque<Queued>,
    /// An interrupt (Esc, Ctrl+C) holds the queue: "stop" never starts the next turn by
    /// itself. The next Enter lets it go.
    held: bool,
}

/// What a key did to the queue (only on an empty composer; else it is the composer's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueKey {
    /// ↑: the last item, taken out of the queue, to go back into the composer.
    Edit(String),
    /// Delete: the last item was dropped.
    Dropped,
}

impl Queue {
    pub fn push(&mut self, item: Queued) {
        self.items.push_back(item);
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn items(&self) -> impl Iterator<Item = &Queued> {
        self.items.iter()
    }

    pub fn is_held(&self) -> bool {
        self.held && !self.items.is_empty()
    }

    /// An interrupt was asked for: what is queued now waits for the next Enter.
    pub fn hold(&mut self) {
        self.held = !self.items.is_empty();
    }

    /// Enter after an interrupt: the queue goes on.
    pub fn release(&mut self) {
        self.held = false;
    }

    /// The next item to send, unless the queue is held.
    pub fn next_to_send(&mut self) -> Option<Queued> {
        if self.is_held() {
            return None;
        }
        self.items.pop_front()
    }

    /// ↑ and Delete on an empty composer while something is queued; None: not the
    /// queue's key.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<QueueKey> {
        if !key.modifiers.difference(KeyModifiers::SHIFT).is_empty() {
            return None;
        }
        let outcome = match key.code {
            KeyCode::Up => QueueKey::Edit(self.items.pop_back()?.typed()),
            KeyCode::Delete => {
                self.items.pop_back()?;
                QueueKey::Dropped
            }
            _ => return None,
        };
        if self.items.is_empty() {
            self.held = false;
        }
        Some(outcome)
    }

    /// Rows the queue takes above the composer.
    pub fn rows(&self) -> u16 {
        let shown = self.items.len().min(MAX_SHOWN);
        (shown + usize::from(self.items.len() > MAX_SHOWN)) as u16
    }
}

/// The queued items, dimmed, one line each (the first line of a longer text), the next to
/// be sent on top; the last line says how to edit or drop.
pub struct QueuedLines<'a> {
    pub queue: &'a Queue,
    pub theme: &'a Theme,
}

impl Widget for QueuedLines<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let width = area.width as usize;
        let count = self.queue.len();
        let hidden = count.saturating_sub(MAX_SHOWN);
        let mut lines = Vec::new();
        if hidden > 0 {
            lines.push(Line::from(Span::styled(
                format!("  … {hidden} more queued before these"),
                t.dim(),
            )));
        }
        let label = if self.queue.is_held() {
            "queued, held after the interrupt (Enter sends) ›"
        } else {
            "queued ›"
        };
        for item in self.queue.items().skip(hidden) {
            let typed = for_terminal(&item.typed());
            let mut first = typed.lines().next().unwrap_or_default().to_string();
            if typed.lines().nth(1).is_some() {
                first.push_str(" …");
            }
            let text = format!("  {label} {first}");
            lines.push(Line::from(Span::styled(truncate(&text, width), t.dim())));
        }
        draw_lines(&lines, area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::draw::testing::{render, text};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn sent_in_order_edited_and_dropped_from_the_end() {
        let mut queue = Queue::default();
        queue.push(Queued::Message("one".into()));
        queue.push(Queued::Command("clear".into()));
        queue.push(Queued::Message("three".into()));
        assert_eq!(queue.on_key(key(KeyCode::Delete)), Some(QueueKey::Dropped));
        assert_eq!(
            queue.on_key(key(KeyCode::Up)),
            Some(QueueKey::Edit("/clear".into()))
        );
        assert_eq!(queue.on_key(key(KeyCode::Left)), None);
        assert_eq!(queue.next_to_send(), Some(Queued::Message("one".into())));
        assert_eq!(queue.on_key(key(KeyCode::Up)), None, "nothing left");
    }

    #[test]
    fn an_interrupt_holds_what_is_queued_until_released() {
        let mut queue = Queue::default();
        queue.hold();
        assert!(!queue.is_held(), "an empty queue is never held");
        queue.push(Queued::Message("next".into()));
        queue.hold();
        assert_eq!(queue.next_to_send(), None);
        queue.release();
        assert_eq!(queue.next_to_send(), Some(Queued::Message("next".into())));
    }

    #[test]
    fn lines_show_the_last_three_and_count_the_rest() {
        let theme = Theme::new(true);
        let mut queue = Queue::default();
        for text in ["a", "b", "c", "d\nsecond line", "e"] {
            queue.push(Queued::Message(text.into()));
        }
        assert_eq!(queue.rows(), 4);
        let screen = text(&render(
            QueuedLines {
                queue: &queue,
                theme: &theme,
            },
            40,
            4,
        ));
        assert_eq!(
            screen,
            "  … 2 more queued before these\n  queued › c\n  queued › d …\n  queued › e\n"
        );
    }
}
