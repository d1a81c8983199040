//! The composer: the text area the user writes in, and its keys (Enter sends, Shift+Enter
//! or Alt+Enter breaks the line, Tab goes to the pool, `?` on an empty composer opens the
//! help).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Widget};
use ratatui_textarea::TextArea;

use crate::theme::Theme;

/// The text being written.
pub struct ComposerState {
    pub textarea: TextArea<'static>,
    theme: Theme,
}

/// What a key did in the composer, for what lies outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComposerKey {
    /// Enter: send what is written (a message or a command).
    Submit,
    /// Tab with the pool shown.
    FocusPool,
    /// `?` in an empty composer.
    Help,
    /// Shift+Enter or Alt+Enter broke the line.
    Newline,
    /// Any other key: the text, the cursor or the selection moved (true) or nothing did
    /// (false).
    Edited(bool),
}

fn empty_textarea(theme: &Theme) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text("Message the agent — /help for commands, ? for keys");
    t.set_cursor_line_style(ratatui::style::Style::new());
    t.set_placeholder_style(theme.dim());
    t
}

impl ComposerState {
    pub fn new(theme: Theme) -> Self {
        ComposerState {
            textarea: empty_textarea(&theme),
            theme,
        }
    }

    /// Empties the composer (after sending, or when a question is cancelled).
    pub fn reset(&mut self) {
        self.textarea = empty_textarea(&self.theme);
    }

    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    /// Lines of text (the layout grows the composer with them).
    pub fn line_count(&self) -> usize {
        self.textarea.lines().len()
    }

    /// The word that ends at the cursor, with its start column and whether it is on the
    /// first line.
    pub fn cursor_word(&self) -> Option<(usize, String)> {
        let ratatui_textarea::DataCursor(row, col) = self.textarea.cursor();
        let line = self.textarea.lines().get(row)?;
        word_at(line, col)
    }

    /// The cursor is on the first line.
    pub fn on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    /// The cursor is on the last line.
    pub fn on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Replaces the whole text (a prompt from the history, the editor's result), the
    /// cursor at its start or its end: after ↑ the next ↑ goes on walking, after ↓ the
    /// next ↓ does.
    pub fn set_text(&mut self, text: &str, cursor_at_end: bool) {
        self.reset();
        self.textarea.insert_str(text);
        if !cursor_at_end {
            self.textarea.move_cursor(ratatui_textarea::CursorMove::Top);
            self.textarea
                .move_cursor(ratatui_textarea::CursorMove::Head);
        }
    }

    /// Replaces the last `chars` characters before the cursor with `text`.
    pub fn replace_before_cursor(&mut self, chars: usize, text: &str) {
        for _ in 0..chars {
            self.textarea.delete_char();
        }
        self.textarea.insert_str(text);
    }

    pub fn on_key(&mut self, key: KeyEvent, pool_shown: bool) -> ComposerKey {
        let newline_mod = key
            .modifiers
            .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if newline_mod => {
                self.textarea.insert_newline();
                ComposerKey::Newline
            }
            KeyCode::Enter => ComposerKey::Submit,
            KeyCode::Tab if pool_shown => ComposerKey::FocusPool,
            KeyCode::Char('?') if self.is_empty() => ComposerKey::Help,
            KeyCode::Esc => ComposerKey::Edited(false),
            _ => {
                // The text area reports edits; cursor and selection moves show too.
                let before = (self.textarea.cursor(), self.textarea.selection_range());
                let edited = self.textarea.input(key);
                let moved = (self.textarea.cursor(), self.textarea.selection_range()) != before;
                ComposerKey::Edited(edited || moved)
            }
        }
    }
}

/// The word that ends at `col` on `line` (characters), with its start column.
fn word_at(line: &str, col: usize) -> Option<(usize, String)> {
    let chars: Vec<char> = line.chars().collect();
    let end = col.min(chars.len());
    let start = chars[..end]
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |p| p + 1);
    (start < end).then(|| (start, chars[start..end].iter().collect()))
}

pub struct Composer<'a> {
    pub textarea: &'a TextArea<'static>,
    /// Typing goes here (no dialog open, the pool not focused): the border lights up.
    pub focused: bool,
    pub theme: &'a Theme,
}

impl Widget for Composer<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(self.theme.border_for(self.focused));
        let inner = block.inner(area);
        block.render(area, buf);
        self.textarea.render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::draw::testing::{render, text};

    #[test]
    fn the_word_at_the_cursor() {
        assert_eq!(word_at("see @fx:fi", 10), Some((4, "@fx:fi".into())));
        assert_eq!(word_at("see @fx:fi", 4), None);
        assert_eq!(word_at("@a b", 2), Some((0, "@a".into())));
    }

    #[test]
    fn composer_shows_text_and_focus() {
        let theme = Theme::new(true);
        let mut textarea = TextArea::default();
        textarea.insert_str("deploy 1.4.2\nto staging");
        let buf = render(
            Composer {
                textarea: &textarea,
                focused: true,
                theme: &theme,
            },
            40,
            4,
        );
        let screen = text(&buf);
        assert!(screen.contains("deploy 1.4.2\nto staging"), "{screen}");
        assert_eq!(
            buf[(0, 0)].fg,
            ratatui::style::Color::Cyan,
            "focused border"
        );
        insta::assert_snapshot!(screen);
    }
}
