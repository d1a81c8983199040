//! Which part of the conversation is on screen: following the bottom or anchored where the
//! user scrolled to, and whether output arrived below meanwhile. Paging and the wheel move
//! it, counted in the conversation's lines at its current size.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;

use super::state::{Scroll, Transcript};

/// Lines per mouse-wheel notch.
const WHEEL_LINES: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Viewport {
    pub scroll: Scroll,
    /// Output arrived while the user was scrolled up.
    pub unseen_below: bool,
}

impl Viewport {
    /// Back to following the bottom (a message sent, the conversation cleared).
    pub fn follow(&mut self) {
        self.scroll = Scroll::Follow;
        self.unseen_below = false;
    }

    /// Something was added to the conversation: marked when the user is scrolled up.
    pub fn content_changed(&mut self) {
        if self.scroll != Scroll::Follow {
            self.unseen_below = true;
        }
    }

    fn up(&mut self, transcript: &Transcript, n: usize, area: Rect) {
        let (w, h) = metrics(area);
        self.scroll = transcript.scroll_up(self.scroll, n, w, h);
    }

    fn down(&mut self, transcript: &Transcript, n: usize, area: Rect) {
        let (w, h) = metrics(area);
        self.scroll = transcript.scroll_down(self.scroll, n, w, h);
        if self.scroll == Scroll::Follow {
            self.unseen_below = false;
        }
    }

    /// Paging keys and Ctrl+Home / Ctrl+End over the conversation in `area`; None: not
    /// one of them, else whether the view moved.
    pub fn on_key(&mut self, key: KeyEvent, transcript: &Transcript, area: Rect) -> Option<bool> {
        let before = *self;
        let page = (area.height as usize).saturating_sub(2).max(1);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::PageUp => self.up(transcript, page, area),
            KeyCode::PageDown => self.down(transcript, page, area),
            KeyCode::Home if ctrl => self.scroll = Scroll::Anchored { entry: 0, line: 0 },
            KeyCode::End if ctrl => self.follow(),
            _ => return None,
        }
        Some(*self != before)
    }

    /// The mouse wheel; true when the view moved (moves and clicks show nothing).
    pub fn on_mouse(&mut self, kind: MouseEventKind, transcript: &Transcript, area: Rect) -> bool {
        let before = *self;
        match kind {
            MouseEventKind::ScrollUp => self.up(transcript, WHEEL_LINES, area),
            MouseEventKind::ScrollDown => self.down(transcript, WHEEL_LINES, area),
            _ => return false,
        }
        *self != before
    }
}

fn metrics(area: Rect) -> (u16, usize) {
    (area.width.max(1), area.height.max(1) as usize)
}
